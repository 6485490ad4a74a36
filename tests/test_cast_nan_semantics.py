"""Cast pairs per arch, the scalar Casts and the NaN readings: the emulator against the reference
tables as the L4.Cast card states them, and the cards that carry these facts reach the slices
where a model needs them."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from knowledge import assemble
from knowledge.cards import card_index
from knowledge.errors import attach_cards
from tests.test_sim_device import _build

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is required")

MODES = {"NONE": 0, "RINT": 1, "FLOOR": 2, "CEIL": 3, "ROUND": 4, "TRUNC": 5, "ODD": 6}
F5 = ["RINT", "FLOOR", "CEIL", "ROUND", "TRUNC"]
CARD_TYPES = {"half": "half", "float": "float", "bf16": "bfloat16_t", "int8": "int8_t", "uint8": "uint8_t",
              "int16": "int16_t", "uint16": "uint16_t", "int32": "int32_t", "uint32": "uint32_t",
              "int64": "int64_t", "double": "double", "int4": None}


@pytest.fixture(scope="module")
def probe():
    binary = _build("cast_nan_main")

    def run(name: str, arch: int, tmp: Path):
        diag = tmp / f"{name}-{arch}.jsonl"
        r = subprocess.run([str(binary), name, str(arch), str(diag)], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stdout + r.stderr
        diags = [json.loads(x) for x in diag.read_text().splitlines() if x.strip()]
        return json.loads(r.stdout.strip().splitlines()[-1]), diags
    return run


def _table_between(start: str, end: str) -> str:
    text = card_index()["L4.Cast"].body
    return text[text.index(start):text.index(end)]


def _emulator_table(probe, arch, tmp) -> set[tuple[str, str, int]]:
    got, _ = probe("cast_table", arch, tmp)
    out = set()
    for item in filter(None, got["accepted"].split(";")):
        pair, mode = item.rsplit(":", 1)
        s, d = pair.split(">")
        out.add((s, d, int(mode)))
    return out


def _parse(section: str) -> set[tuple[str, str, int]]:
    out: set[tuple[str, str, int]] = set()
    for srcs, cell in re.findall(r"^\| ([^|]+) \| ([^|]+) \|$", section, re.M):
        if srcs.strip() in ("src", "---"):
            continue
        for group in cell.split("·"):
            dsts, modes = group.split(":", 1)
            if "SetDeqScale" in modes or "ignored" in modes:
                mode_set = {0}
            else:
                words = re.findall(r"F5|NONE|RINT|FLOOR|CEIL|ROUND|TRUNC|ODD", modes.replace("(no NONE)", ""))
                mode_set = {MODES[m] for w in words for m in (F5 if w == "F5" else [w])}
            for s in (x.strip() for x in srcs.split(",")):
                for d in (x.replace("*", "").strip() for x in dsts.split(",")):
                    if CARD_TYPES[s] and CARD_TYPES[d]:
                        out.update((CARD_TYPES[s], CARD_TYPES[d], m) for m in mode_set)
    return out


def test_a2_cast_table_of_the_emulator_is_the_cards(probe, tmp_path):
    card = _parse(_table_between("Atlas A2 and A3", "Ascend 950 (950PR"))
    assert ("half", "int8_t", 0) in card and ("float", "half", 6) in card
    assert _emulator_table(probe, 2201, tmp_path) == card


def test_950_cast_table_of_the_emulator_is_the_cards(probe, tmp_path):
    card = _parse(_table_between("Ascend 950 (950PR", "(950 also converts"))
    emulated = {t for t in _emulator_table(probe, 3510, tmp_path) if t[0] != "double"}
    assert ("int8_t", "int32_t", 0) in card and ("half", "int8_t", 0) not in card
    assert emulated == card


def test_a_cast_the_arch_does_not_list_is_reported_with_its_line(probe, tmp_path):
    _, a2 = probe("cast_calls", 2201, tmp_path)
    _, c950 = probe("cast_calls", 3510, tmp_path)
    assert [(d["id"], "int8_t -> int32_t" in d["message"]) for d in a2] == [("L2.DTYPE_UNSUPPORTED", True)]
    assert [(d["id"], "CAST_NONE" in d["message"]) for d in c950] == [("L2.DTYPE_UNSUPPORTED", True)]
    assert a2[0]["line"] == c950[0]["line"] + 1


def test_scalar_casts_round_as_the_reference_examples(probe, tmp_path):
    got, diags = probe("scalar_casts", 2201, tmp_path)
    assert not diags
    assert got["odd_half"] == pytest.approx(3.142578125)      # round to odd, not to nearest (3.140625)
    assert (got["round"], got["rint"], got["ceil"], got["floor"]) == (3, 2, 2, -2)
    assert got["bf16"] == got["bf16_back"] == pytest.approx(3.140625)


def test_nan_propagates_through_max_min_relu_and_the_index_reductions(probe, tmp_path):
    got, diags = probe("nan_reductions", 2201, tmp_path)
    assert not diags
    assert got["max"] == "nan" and got["max_index"] == 9       # the first NaN, though 6 > every value
    assert got["min"] == "nan" and got["min_index"] == 9
    assert got["clean_max"] == 6
    assert got["max_b_nan"] == "nan" and got["max_plain"] == 3
    assert got["relu_nan"] == "nan" and got["min_a_nan"] == "nan"


# --- the knowledge a capable model reported missing reaches the slices where it belongs


def _ids(sl):
    return [c.id for c in sl.cards]


def test_pipe_ordering_is_in_every_init_slice_and_with_a_missing_sync():
    for pattern in ("elementwise", "reduction", "softmax"):
        assert "L1.pipe-ordering" in _ids(assemble(pattern, "init"))
    diags = attach_cards([{"id": "L2.SYNC_MISSING", "api": "GetValue"}])
    assert "L1.pipe-ordering" in diags[0]["cards"]
    assert "L1.pipe-ordering" in _ids(assemble("reduction", "repair", diagnostics=diags))


def test_nan_card_comes_with_a_nan_failure_and_with_max_apis():
    diags = attach_cards([{"id": "PREC.nan_inf_introduced"}])
    sl = assemble("softmax", "repair", diagnostics=diags)
    assert "L4.nan-inf-semantics" in _ids(sl)
    assert "L4.nan-inf-semantics" not in _ids(assemble("elementwise", "repair",
                                                       diagnostics=attach_cards([{"id": "L2.ALIGN_32B"}])))


def test_cast_table_card_comes_with_a_cast_dtype_error_in_full_on_every_chip():
    for chip in ("910B2", "950PR"):
        diags = attach_cards([{"id": "L2.DTYPE_UNSUPPORTED", "api": "Cast"}])
        sl = assemble("elementwise", "repair", chip=chip, diagnostics=diags)
        cast = next(c for c in sl.cards if c.id == "L4.Cast")
        assert "Ascend 950" in cast.text or cast.mode == "compact"
    assert "L4.Cast" in _ids(assemble("elementwise", "init"))


def test_repeat_struct_fields_are_given_with_their_widths():
    body = card_index()["L4.repeat-params"].body
    assert re.search(r"dstBlkStride, srcBlkStride \| uint16_t", body)
    assert re.search(r"dstRepStride, src0RepStride, src1RepStride \| uint8_t", body)


def test_scalar_reduction_strategy_reaches_reductions_only():
    from copilot.tasks import load_task
    assert "L3.multicore-scalar-reduction" in _ids(assemble("reduction", "init"))
    assert "L3.multicore-scalar-reduction" in _ids(assemble("reduction", "tuning"))
    # a per-row reduction (norms, softmax) is not a direction towards one value
    for pattern in ("elementwise", "normalization", "softmax"):
        assert "L3.multicore-scalar-reduction" not in _ids(assemble(pattern, "tuning"))
    assert "L3.multicore-scalar-reduction" in _ids(assemble(load_task("reduce_mean"), "mutation"))
