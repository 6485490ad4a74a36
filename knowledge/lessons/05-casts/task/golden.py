import torch


def lesson_exp16(x):
    return torch.exp(x)
