import torch
import torch.nn.functional as F


def linear_relu(x, weight, bias, scale):
    y = F.linear(x.float(), weight.float(), bias.float())
    return (torch.relu(y) * scale).to(x.dtype)
