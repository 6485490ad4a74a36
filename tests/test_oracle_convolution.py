"""The golden's fp16 convolutions run on the fp32 kernels and round once: the same bits as torch's
own (50x slower) fp16 CPU kernels, for every form a CANN-Bench golden uses."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from copilot.oracle.golden import HalfConvolutionsInFloat


def _half(*shape, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).half()


FORMS = {
    "conv2d": lambda: F.conv2d(_half(1, 4, 7, 6, seed=1), _half(4, 2, 3, 3, seed=2), _half(4, seed=3),
                               stride=2, padding=1, groups=2),
    "depthwise conv2d": lambda: F.conv2d(_half(1, 3, 6, 6, seed=4), _half(3, 1, 3, 3, seed=5), groups=3,
                                         dilation=2, padding=2),
    "conv_transpose2d": lambda: F.conv_transpose2d(_half(1, 3, 4, 4, seed=6), _half(3, 2, 3, 3, seed=7),
                                                   stride=2),
    "conv3d weight gradient": lambda: F.grad.conv3d_weight(_half(1, 3, 4, 5, 5, seed=8), (4, 3, 3, 3, 3),
                                                           _half(1, 4, 2, 3, 3, seed=9)),
}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_fp16_convolutions_are_bit_identical_to_torchs_fp16_kernels(form):
    native = FORMS[form]()
    with HalfConvolutionsInFloat() as mode:
        fast = FORMS[form]()
    assert mode.widened >= 1                               # it did run on the fp32 kernels
    assert fast.dtype == torch.float16 and fast.shape == native.shape
    assert torch.equal(fast, native)


def test_other_ops_and_dtypes_pass_through_untouched():
    x = _half(3, 5, seed=12)
    with HalfConvolutionsInFloat() as mode:
        y = torch.softmax(x, dim=-1)                      # not a convolution: torch's fp16 kernel
        z = F.conv2d(x.float()[None, None], torch.ones(1, 1, 2, 2))   # fp32: unchanged
    assert y.dtype == torch.float16 and torch.equal(y, torch.softmax(x, dim=-1))
    assert z.dtype == torch.float32 and mode.widened == 0
