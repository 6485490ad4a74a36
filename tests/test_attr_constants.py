"""Attrs reach the tiling function at the proto's width (float32, int64), and the host can rebuild
an attr-derived constant exactly from the attr's shortest decimal (knowledge card
L3.attr-constants, docs/precision.md point 10)."""

from __future__ import annotations

import shutil
import struct

import numpy as np
import pytest

from copilot.backends.sim.runner import _attr_line
from knowledge import assemble
from knowledge.errors import attach_cards
from tests.test_sim_host import PROBE

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is required")


def test_attrs_are_packed_at_the_width_the_chip_passes():
    assert _attr_line("float", 0.999) == "attr f " + struct.pack("<f", 0.999).hex()
    assert _attr_line("int", 2 ** 40 + 3) == "attr i " + struct.pack("<q", 2 ** 40 + 3).hex()
    assert _attr_line("list_int", [1, -2]) == "attr I " + struct.pack("<qq", 1, -2).hex()
    assert _attr_line("list_float", [0.5]) == "attr F " + struct.pack("<f", 0.5).hex()


DECIMAL = PROBE.replace('#include "kernel_operator.h"', '#include <charconv>\n#include "kernel_operator.h"').replace(
    "    p->v[8] = *context->GetAttrs()->GetFloat(0);",
    "    const float slope = *context->GetAttrs()->GetFloat(0);\n"
    "    char buf[32];\n"
    "    auto res = std::to_chars(buf, buf + sizeof buf, slope);\n"
    "    double slopeDecimal = slope;\n"
    "    std::from_chars(buf, res.ptr, slopeDecimal);\n"
    "    p->v[8] = static_cast<float>(1.0 - slopeDecimal);\n"
    "    p->v[11] = 1.0f - slope;")


def test_the_host_recovers_the_decimal_of_a_float_attr(tmp_path):
    import dataclasses

    from copilot.backends.sim import build, run
    from copilot.oracle import make_inputs, reference
    from copilot.tasks import load_task
    leaky = load_task("leaky_relu")
    base = next(c for c in leaky.cases if c.dtypes[0] == "float32" and len(c.shapes[0]) == 2)
    slope = 0.999                     # 1 - fp32(0.999) is 111 float32 ulps from fp32(1 - 0.999)
    case = dataclasses.replace(base, attrs={**base.attrs, "negative_slope": slope})
    path = tmp_path / "probe.cpp"
    path.write_text(DECIMAL)
    inputs = make_inputs(leaky, case)
    ref = reference(leaky, case, inputs)
    b = build(path, leaky, list(case.dtypes) + [o.dtype for o in ref.outputs], "910B2")
    assert b.ok, [d.message for d in b.diagnostics]
    r = run(b, leaky, case, inputs, outputs=ref.outputs)
    assert r.ok, [d.message for d in r.diagnostics]
    v = r.outputs[0].flatten()[:12].tolist()
    assert v[7] == np.float32(slope)                                 # the attr itself: float32
    assert v[8] == np.float32(1 - slope)                             # the golden's constant, exactly
    assert v[11] == np.float32(1) - np.float32(slope) != v[8]        # the naive one is off


def test_attr_constant_card_reaches_small_value_repairs_and_tuning():
    diags = attach_cards([{"id": "PREC.small_value_error"}])
    assert "L3.attr-constants" in diags[0]["cards"]
    assert "L3.attr-constants" in [c.id for c in assemble("elementwise", "tuning").cards]
