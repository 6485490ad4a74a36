import torch
import torch.nn.functional as F


def residual_add_layer_norm(x, residual, gamma, beta, epsilon=1e-5):
    acc = torch.promote_types(x.dtype, torch.float32)
    s = x.to(acc) + residual.to(acc)
    y = F.layer_norm(s, (s.shape[-1],), gamma.to(acc), beta.to(acc), eps=epsilon)
    return y.to(x.dtype), s.to(x.dtype)
