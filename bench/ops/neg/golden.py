import torch
import torch.nn.functional as F


def neg(x):
    return torch.neg(x)
