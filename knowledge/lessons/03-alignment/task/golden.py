import torch


def lesson_relu(x):
    return torch.relu(x)
