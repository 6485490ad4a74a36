import torch


def mm_api(a, b, bias, trans_b=False, mode=0):
    bb = b.t() if trans_b else b
    if a.dtype == torch.int8:
        return (a.long() @ bb.long() + bias.long()).to(torch.int32)
    return a.float() @ bb.float() + bias.float()
