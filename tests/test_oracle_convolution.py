"""The golden's fp16 convolutions run on the fp32 kernels and round once, for every form a CANN-Bench
golden uses: the same bits as the fp32 result rounded to fp16, and never less exact than torch's own
(50x slower) fp16 CPU kernels, which return those bits on most CPUs but round partial sums to fp16 on
some (conv_transpose2d on an AMD EPYC: 47 of 162 elements differ, up to 3e-3 from the fp64 result)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from copilot.oracle.golden import HalfConvolutionsInFloat


def _half(*shape, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).half()


FORMS = {      # each form on inputs of dtype `dt`
    "conv2d": lambda dt: F.conv2d(_half(1, 4, 7, 6, seed=1).to(dt), _half(4, 2, 3, 3, seed=2).to(dt),
                                  _half(4, seed=3).to(dt), stride=2, padding=1, groups=2),
    "depthwise conv2d": lambda dt: F.conv2d(_half(1, 3, 6, 6, seed=4).to(dt), _half(3, 1, 3, 3, seed=5).to(dt),
                                            groups=3, dilation=2, padding=2),
    "conv_transpose2d": lambda dt: F.conv_transpose2d(_half(1, 3, 4, 4, seed=6).to(dt),
                                                      _half(3, 2, 3, 3, seed=7).to(dt), stride=2),
    "conv3d weight gradient": lambda dt: F.grad.conv3d_weight(_half(1, 3, 4, 5, 5, seed=8).to(dt), (4, 3, 3, 3, 3),
                                                              _half(1, 4, 2, 3, 3, seed=9).to(dt)),
}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_fp16_convolutions_round_the_fp32_result_once(form):
    with HalfConvolutionsInFloat() as mode:
        fast = FORMS[form](torch.float16)
    assert mode.widened >= 1                               # it did run on the fp32 kernels
    assert fast.dtype == torch.float16
    assert torch.equal(fast, FORMS[form](torch.float32).half())
    native, exact = FORMS[form](torch.float16), FORMS[form](torch.float64)   # torch's fp16 kernel, the truth
    assert native.shape == fast.shape
    assert (fast.double() - exact).abs().max() <= (native.double() - exact).abs().max()   # never less exact


def test_other_ops_and_dtypes_pass_through_untouched():
    x = _half(3, 5, seed=12)
    with HalfConvolutionsInFloat() as mode:
        y = torch.softmax(x, dim=-1)                      # not a convolution: torch's fp16 kernel
        z = F.conv2d(x.float()[None, None], torch.ones(1, 1, 2, 2))   # fp32: unchanged
    assert y.dtype == torch.float16 and torch.equal(y, torch.softmax(x, dim=-1))
    assert z.dtype == torch.float32 and mode.widened == 0
