import torch


def reduce_mean(x, dim=-1, keepdim=False):
    return torch.mean(x, dim=dim, keepdim=keepdim)
