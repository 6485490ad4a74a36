import torch
import torch.nn.functional as F


def silu(x):
    return F.silu(x)
