import torch
import torch.nn.functional as F


def square(x):
    return x * x
