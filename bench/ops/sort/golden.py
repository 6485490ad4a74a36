import torch


def sort(x):
    # stable: equal values keep their input order, so the indices are defined for ties too
    values, indices = torch.sort(x, dim=-1, descending=True, stable=True)
    return values, indices.to(torch.int32)
