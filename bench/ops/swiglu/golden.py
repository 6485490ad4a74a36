import torch
import torch.nn.functional as F


def swiglu(x):
    a, b = torch.chunk(x, 2, dim=-1)
    return F.silu(a) * b
