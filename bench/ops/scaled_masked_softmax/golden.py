import torch


def scaled_masked_softmax(x, mask, scale=1.0):
    acc = torch.promote_types(x.dtype, torch.float32)
    z = x.to(acc) * scale
    z = z.masked_fill(mask != 0, -10000.0)
    return torch.softmax(z, dim=-1).to(x.dtype)
