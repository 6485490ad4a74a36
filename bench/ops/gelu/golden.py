import torch
import torch.nn.functional as F


def gelu(x, approximate="none"):
    return F.gelu(x, approximate=approximate)
