import torch
import torch.nn.functional as F


def bias_gelu(x, bias, approximate="none"):
    return F.gelu(x + bias, approximate=approximate)
