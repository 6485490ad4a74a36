import torch


def log_softmax(x, dim=-1):
    acc = torch.promote_types(x.dtype, torch.float32)
    return torch.log_softmax(x.to(acc), dim=dim).to(x.dtype)
