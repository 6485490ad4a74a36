import torch


def add_rms_norm_dynamic_quant(x1, x2, gamma, epsilon=1e-6):
    acc = torch.promote_types(x1.dtype, torch.float32)
    s = x1.to(acc) + x2.to(acc)
    n = s * torch.rsqrt(s.pow(2).mean(dim=-1, keepdim=True) + epsilon) * gamma.to(acc)
    scale = n.abs().amax(dim=-1, keepdim=True) / 127.0
    safe = torch.where(scale > 0, scale, torch.ones_like(scale))
    q = torch.clamp(torch.round(n / safe), -127, 127).to(torch.int8)
    return q, scale.squeeze(-1), s.to(x1.dtype)
