import torch
import torch.nn.functional as F


def group_norm(x, gamma, beta, num_groups=32, epsilon=1e-5):
    acc = torch.promote_types(x.dtype, torch.float32)
    y = F.group_norm(x.to(acc), num_groups, gamma.to(acc), beta.to(acc), eps=epsilon)
    return y.to(x.dtype)
