import torch


def rms_norm(x, gamma, epsilon=1e-6):
    acc = torch.promote_types(x.dtype, torch.float32)
    xf = x.to(acc)
    inv = torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + epsilon)
    return (xf * inv * gamma.to(acc)).to(x.dtype)
