import torch


def swish_mul(x, other, beta=1.0):
    return x * torch.sigmoid(beta * x) * other
