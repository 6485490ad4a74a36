import torch
import torch.nn.functional as F


def mse_loss(x, target):
    return F.mse_loss(x.float(), target.float(), reduction="mean").to(x.dtype)
