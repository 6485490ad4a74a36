import torch


def logsumexp(x, dim=-1, keepdim=False):
    acc = torch.promote_types(x.dtype, torch.float32)
    return torch.logsumexp(x.to(acc), dim=dim, keepdim=keepdim).to(x.dtype)
