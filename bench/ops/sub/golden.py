import torch


def sub(x1, x2):
    return x1 - x2
