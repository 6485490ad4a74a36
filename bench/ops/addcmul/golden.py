import torch


def addcmul(input, tensor1, tensor2, value=1.0):
    return torch.addcmul(input, tensor1, tensor2, value=value)
