import torch


def lesson_scale_rows(x, gamma):
    return x * gamma
