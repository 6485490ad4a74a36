import torch


def lesson_affine(x):
    return x * 3 + 1
