import torch


def gather_rows(x, index):
    return torch.index_select(x, 0, index.long())
