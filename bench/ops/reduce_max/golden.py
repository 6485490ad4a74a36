import torch


def reduce_max(x, dim=-1, keepdim=False):
    return torch.amax(x, dim=dim, keepdim=keepdim)
