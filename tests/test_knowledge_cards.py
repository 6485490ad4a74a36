"""The knowledge cards: front matter validated, every emulator constraint id covered by an L2 card,
every L4 card naming APIs the emulator implements, L3 strategies, L5 exemplars tied to tasks."""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from knowledge.cards import (LEVELS, PATTERNS, CardError, card_index, chip_arch, get_card, load_cards,
                             parse_card)

REPO = Path(__file__).resolve().parents[1]
SIM_INCLUDE = REPO / "copilot" / "backends" / "sim" / "include"

# The emulator's constraint ids (issue 3) and the oracle's precision failure classes.
CONSTRAINT_IDS = [
    "L2.UB_CAPACITY", "L2.BUFFER_COUNT", "L2.ALIGN_32B", "L2.DATACOPY_32B", "L2.REPEAT_LIMIT",
    "L2.MASK_RANGE", "L2.DTYPE_UNSUPPORTED", "L2.QUEUE_PROTOCOL", "L2.GM_BOUNDS", "L2.UB_BOUNDS",
    "L2.CORE_COUNT", "L2.SYNC_PAIRING", "L2.SYNC_MISSING", "L2.TMP_BUFFER", "L4.API_SIGNATURE",
    "L4.API_UNKNOWN", "CPP.COMPILE", "RUN.CRASH", "RUN.TIMEOUT", "RUN.MEMORY",
    # also reported by the emulator, beyond the table
    "L2.CMP_COUNT_256B", "RUN.TILING",
    # the sort and library APIs (issue 15)
    "L2.API_PARAM", "L2.OPERAND_OVERLAP",
    # the integer, gather, atomic and SyncAll APIs (issue 15)
    "L2.SHIFT_RANGE", "L2.GATHER_OFFSET", "L2.GATHER_PATTERN", "L2.ARANGE_ARGS", "L2.ATOMIC_DTYPE",
    "L2.SYNCALL_CORES", "L2.SYNCALL_MISMATCH", "L2.SYNCALL_WORKSPACE",
    # evaluator integrity (issue 24)
    "RUN.INTEGRITY",
    # building the halves as CANN builds them (issue 23)
    "L4.SPLIT_UNIT", "L4.NAME_CLASH", "L4.OPDEF_MISSING", "L4.OPDEF_MISMATCH", "L4.DEVICE_LIBC",
    # the cube unit (issue 17)
    "L2.L1_CAPACITY", "L2.L0A_CAPACITY", "L2.L0B_CAPACITY", "L2.L0C_CAPACITY", "L2.BT_CAPACITY", "L2.FB_CAPACITY",
    "L2.CUBE_POSITION", "L2.CUBE_ALIGN", "L2.CUBE_BOUNDS", "L2.CUBE_PARAMS", "L2.MMAD_DTYPE", "L2.FIXPIPE_QUANT",
    "L2.CROSS_CORE_FLAG", "L2.CORE_TYPE",
    "L2.MATMUL_USAGE", "L2.MATMUL_SHAPE", "L2.MATMUL_TILING", "L2.MATMUL_DTYPE",
    "L2.LOAD3D_PARAMS", "L2.LOAD3D_ALIGN",
    "PREC.nan_inf_introduced", "PREC.zero_output", "PREC.localized_outlier", "PREC.systematic_drift",
    "PREC.small_value_error",
]

# API groups the emulator supports (issue 3); each must be named by some L4 card.
EMULATED_APIS = [
    "Add", "Sub", "Mul", "Div", "Max", "Min", "Adds", "Muls", "Maxs", "Mins", "Exp", "Ln", "Abs", "Sqrt",
    "Rsqrt", "Reciprocal", "Relu", "LeakyRelu", "Duplicate", "Cast", "ReduceSum", "ReduceMax", "ReduceMin",
    "WholeReduceSum", "BlockReduceSum", "ReduceRepeat", "ReduceDataBlock", "Compare", "Compares", "Select",
    "DataCopy", "DataCopyPad", "TPipe", "TQue", "TBuf", "LocalTensor", "GlobalTensor", "SetFlag", "WaitFlag",
    "PipeBarrier", "GetBlockIdx", "GetBlockNum",
]


def test_all_cards_load_and_every_level_is_populated():
    cards = load_cards()
    counts = Counter(c.level for c in cards)
    assert set(counts) == set(LEVELS)
    assert counts["L5"] == 12 and counts["L2"] >= len(CONSTRAINT_IDS)
    assert len({c.id for c in cards}) == len(cards)


def test_front_matter_is_complete_and_consistent():
    for c in load_cards():
        assert c.title and c.summary and c.sources, c.id
        assert c.id.split(".")[0] in ("L0", "L1", "L2", "L3", "L4", "L5", "CPP", "RUN", "PREC"), c.id
        assert all(p == "all" or p in PATTERNS for p in c.patterns), c.id
        assert c.body.strip(), c.id
        assert len(c.summary) <= 300, c.id


@pytest.mark.parametrize("cid", CONSTRAINT_IDS)
def test_every_constraint_id_has_an_l2_card(cid):
    card = get_card(cid)
    assert card.level == "L2"
    assert cid in card.constraints
    assert "repair" in card.phases


def test_cards_name_only_known_constraints_and_sources():
    known = set(CONSTRAINT_IDS)
    for c in load_cards():
        assert set(c.constraints) <= known, (c.id, set(c.constraints) - known)


def test_l2_hardware_cards_give_numbers_per_chip():
    for cid in ("L2.UB_CAPACITY", "L2.CORE_COUNT", "L2.BUFFER_COUNT", "L2.DTYPE_UNSUPPORTED"):
        body = get_card(cid).body
        assert "910B" in body and ("950" in body or "910A" in body), cid


def test_every_l3_card_has_an_imperative_strategy():
    l3 = [c for c in load_cards() if c.level == "L3"]
    assert len(l3) >= 11
    for c in l3:
        assert c.strategy and c.strategy[0].isupper() and len(c.strategy) < 200, c.id


def test_l4_cards_cover_the_emulated_apis():
    named = {a for c in load_cards() if c.level == "L4" for a in c.apis}
    assert not set(EMULATED_APIS) - named


def _emulator_text() -> str:
    return "\n".join(p.read_text(errors="replace") for p in SIM_INCLUDE.rglob("*")
                     if p.is_file() and p.suffix in (".h", ".hpp", ".cpp"))


def test_every_l4_api_is_implemented_by_the_emulator():
    text = _emulator_text()
    missing = {}
    for c in load_cards():
        if c.level != "L4":
            continue
        absent = [a for a in c.apis if not re.search(r"\b" + re.escape(a) + r"\b", text)]
        if absent:
            missing[c.id] = absent
    assert not missing


def test_l5_exemplars_have_kernels_and_tasks():
    bench = REPO / "bench" / "ops"
    pats = set()
    for c in load_cards():
        if c.level != "L5":
            continue
        assert c.kernel_path is not None and c.kernel_path.is_file(), c.id
        task_dir = bench / c.task if (bench / c.task).is_dir() else REPO / c.task   # built-in, or a test fixture
        assert c.task and task_dir.is_dir(), c.id
        src = c.kernel_source()
        assert "extern \"C\" __global__ __aicore__ void " + task_dir.name + "_custom(" in src
        assert "REGISTER_TILING_DEFAULT" in src and "GET_TILING_DATA" in src
        assert "namespace optiling" in src and "TilingFunc(gert::TilingContext*" in src
        assert "DataCopyPad" in src
        assert len(c.patterns) == 1
        pats.add(c.patterns[0])
    assert pats == set(PATTERNS)


def test_full_render_of_an_exemplar_carries_its_kernel():
    card = get_card("L5.elementwise-sigmoid")
    text = card.render("full")
    assert "```cpp" in text and "sigmoid_custom" in text
    assert card.render("summary").count("\n") == 0


def test_chip_matching():
    assert chip_arch("910B2") == "2201" and chip_arch("950PR") == "3510" and chip_arch("310P3") == "2002"
    pad = get_card("L4.DataCopyPad")
    assert pad.chips == ("910B", "910_93", "950")
    assert pad.fits_chip("910_93")
    assert pad.fits_chip("910B4") and pad.fits_chip("950PR") and not pad.fits_chip("310P")
    assert get_card("L2.UB_CAPACITY").fits_chip("310P")


def test_get_card_unknown_id_raises_keyerror():
    with pytest.raises(KeyError):
        get_card("L9.nope")
    assert get_card("l2.ub_capacity").id == "L2.UB_CAPACITY"


@pytest.mark.parametrize("front,problem", [
    ("id: L2.X\nlevel: L2\n", "lacks"),
    ("id: L2.X\nlevel: L7\ntitle: t\npatterns: [all]\nchips: [all]\nphases: [init]\napis: []\n"
     "constraints: []\nsummary: s\nsources: [x]\n", "level"),
    ("id: L2.X\nlevel: L2\ntitle: t\npatterns: [sorting]\nchips: [all]\nphases: [init]\napis: []\n"
     "constraints: []\nsummary: s\nsources: [x]\n", "pattern"),
    ("id: L2.X\nlevel: L2\ntitle: t\npatterns: [all]\nchips: [all]\nphases: [deploy]\napis: []\n"
     "constraints: []\nsummary: s\nsources: [x]\n", "phases"),
    ("id: L2.X\nlevel: L2\ntitle: t\npatterns: [all]\nchips: [all]\nphases: [init]\napis: []\n"
     "constraints: []\nsummary: s\nsources: []\n", "sources"),
    ("id: L2.X\nlevel: L2\ntitle: a: b: c\n", "YAML"),
    ("id: L2.X\nlevel: L2\ntitle: t\npatterns: [all]\nchips: [910_93]\nphases: [init]\napis: []\n"
     "constraints: []\nsummary: s\nsources: [x]\n", "quote"),
])
def test_loader_rejects_bad_front_matter(tmp_path, front, problem):
    d = tmp_path / "L2"
    d.mkdir()
    p = d / "bad.md"
    p.write_text(f"---\n{front}---\nbody\n", encoding="utf-8")
    with pytest.raises(CardError, match=problem):
        parse_card(p)


def test_l3_card_without_strategy_is_rejected(tmp_path):
    d = tmp_path / "L3"
    d.mkdir()
    p = d / "s.md"
    p.write_text("---\nid: L3.s\nlevel: L3\ntitle: t\npatterns: [all]\nchips: [all]\nphases: [tuning]\n"
                 "apis: []\nconstraints: []\nsummary: s\nsources: [x]\n---\nbody\n", encoding="utf-8")
    with pytest.raises(CardError, match="strategy"):
        parse_card(p)


def test_knowledge_imports_no_ui_library_and_no_litellm():
    code = ("import sys, knowledge; from knowledge import assemble, route, explain; "
            "assemble(['softmax'], 'tuning'); "
            "bad = [m for m in ('textual', 'rich', 'prompt_toolkit', 'litellm') if m in sys.modules]; "
            "print(bad); sys.exit(1 if bad else 0)")
    r = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr


def test_every_id_the_emulator_reports_has_a_card():
    sim = REPO / "copilot" / "backends" / "sim"
    text = "\n".join(p.read_text(errors="replace") for p in sim.rglob("*")
                     if p.is_file() and p.suffix in (".h", ".hpp", ".cpp", ".py"))
    reported = set(re.findall(r'"((?:L2|L4|CPP|RUN)\.[A-Z][A-Z0-9_]+)"', text))
    assert reported, "no ids found in the emulator sources"
    assert not reported - set(card_index())


def test_bare_failure_classes_resolve_to_prec_cards():
    from knowledge.cards import cards_for_constraint, resolve_id

    assert resolve_id("localized_outlier") == "PREC.localized_outlier"
    assert cards_for_constraint("zero_output")[0] == "PREC.zero_output"


def test_card_index_matches_load_cards():
    assert set(card_index()) == {c.id for c in load_cards()}
