import torch
import torch.nn.functional as F


def geglu(x, approximate="none"):
    a, b = torch.chunk(x, 2, dim=-1)
    return F.gelu(a, approximate=approximate) * b
