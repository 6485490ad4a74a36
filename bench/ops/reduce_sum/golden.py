import torch


def reduce_sum(x, dim=-1, keepdim=False):
    return torch.sum(x, dim=dim, keepdim=keepdim)
