import torch


def argmax(x, dim=-1, keepdim=False):
    return torch.argmax(x, dim=dim, keepdim=keepdim)
