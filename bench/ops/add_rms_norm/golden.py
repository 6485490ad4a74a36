import torch


def add_rms_norm(x1, x2, gamma, epsilon=1e-6):
    acc = torch.promote_types(x1.dtype, torch.float32)
    s = x1.to(acc) + x2.to(acc)
    inv = torch.rsqrt(s.pow(2).mean(dim=-1, keepdim=True) + epsilon)
    y = s * inv * gamma.to(acc)
    return y.to(x1.dtype), s.to(x1.dtype)
