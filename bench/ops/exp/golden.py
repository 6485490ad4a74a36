import math

import torch


def exp(x, base=-1.0, scale=1.0, shift=0.0):
    z = x * scale + shift
    if base == -1.0:
        return torch.exp(z)
    return torch.exp(z * math.log(base))
