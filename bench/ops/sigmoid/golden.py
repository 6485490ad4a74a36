import torch


def sigmoid(x):
    return torch.sigmoid(x)
