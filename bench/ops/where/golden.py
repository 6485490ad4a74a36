import torch


def where(condition, x, other):
    return torch.where(condition != 0, x, other)
