import torch


def lesson_scale(x):
    return x * 2
