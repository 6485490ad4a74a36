import torch
import torch.nn.functional as F


def l2_normalize(x, dim=-1, epsilon=1e-12):
    acc = torch.promote_types(x.dtype, torch.float32)
    return F.normalize(x.to(acc), p=2.0, dim=dim, eps=epsilon).to(x.dtype)
