import torch


def reduce_min(x, dim=-1, keepdim=False):
    return torch.amin(x, dim=dim, keepdim=keepdim)
