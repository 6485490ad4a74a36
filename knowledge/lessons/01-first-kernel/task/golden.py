import torch


def lesson_add(x, y):
    return x + y
