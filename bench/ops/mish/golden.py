import torch
import torch.nn.functional as F


def mish(x):
    return F.mish(x)
