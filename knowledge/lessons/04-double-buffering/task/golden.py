import torch


def lesson_exp_scale(x):
    return torch.exp(x) * 0.5
