import torch


def clamp(x, min=-1.0, max=1.0):
    return torch.clamp(x, min=min, max=max)
