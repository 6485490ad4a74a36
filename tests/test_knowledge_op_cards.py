"""Cards reached through a golden's own operations: the public unique and roi_align tasks get the
strategy written for them first, other operators do not, and every API a new card names exists in
the emulator."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from copilot.tasks import load_task
from knowledge.cards import get_card

REPO = Path(__file__).resolve().parents[1]
CANNBENCH = REPO.parent / "shared" / "cannbench"
SIM_INCLUDE = REPO / "copilot" / "backends" / "sim" / "include"
NEW_CARDS = ("L3.gm-sort-unique", "L3.roi-align", "L3.large-table-gather", "L3.histogram-atomics",
             "L3.window-stencil")


def _public(rel: str):
    d = CANNBENCH / "tasks" / rel
    if not d.is_dir():
        pytest.skip(f"CANN-Bench task {rel} not found beside the repository ({d})")
    return load_task(str(d))


def _shown(text: str) -> list[str]:
    return re.findall(r"^### \[([\w.-]+)\]", text, re.M)


def test_unique_gets_the_gm_sort_recipe_first_with_the_sort_and_gather_apis():
    from copilot.agents.llm import op_cards

    text = op_cards(_public("level3/unique"), [], "910B2")
    ids = _shown(text)
    assert ids[0] == "L3.gm-sort-unique"
    assert {"L4.sort-topk", "L4.Gather", "L4.Atomic-SyncAll"} <= set(ids)
    assert "GatherMask" in text and "rsvdCnt" in text


def test_roi_align_gets_its_card_through_the_goldens_name():
    from copilot.agents.llm import golden_ops, op_cards

    task = _public("level3/roi_align")
    ops = golden_ops(task)
    assert "index" in ops and ops[-1] == "roi_align"       # the fallback's aten ops, then its name
    ids = _shown(op_cards(task, [], "910B2"))
    assert ids[0] == "L3.roi-align" and "L4.Gather" in ids


def test_the_operator_strategies_lead_the_variant_directions():
    from copilot.evolution.strategies import round_one_strategies

    assert round_one_strategies(_public("level3/unique"))[0].id == "L3.gm-sort-unique"
    assert round_one_strategies(_public("level3/roi_align"))[0].id == "L3.roi-align"


def test_other_operators_do_not_get_the_unique_or_roi_cards():
    from copilot.agents.llm import op_cards

    ids = _shown(op_cards(_public("level2/gather"), [], "910B2"))
    assert not {"L3.gm-sort-unique", "L3.roi-align"} & set(ids)


@pytest.mark.parametrize("cid", NEW_CARDS)
def test_new_op_cards_stay_out_of_every_pattern_slice(cid):
    card = get_card(cid)
    assert card.ops and not card.fits_pattern(["elementwise", "reduction", "broadcast", "fusion"])


@pytest.mark.parametrize("cid", NEW_CARDS)
def test_every_api_a_new_card_names_exists_in_the_emulator(cid):
    text = "\n".join(p.read_text(errors="replace") for p in SIM_INCLUDE.rglob("*.h"))
    absent = [a for a in get_card(cid).apis if not re.search(r"\b" + re.escape(a) + r"\b", text)]
    assert not absent



# -- the API facts the cards state, run on the emulator (tests/sim_device/card_facts_main.cpp) ----------

needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is required")


@pytest.fixture(scope="module")
def facts_bin(tmp_path_factory) -> Path:
    src = REPO / "tests" / "sim_device" / "card_facts_main.cpp"
    out = tmp_path_factory.mktemp("card_facts") / "card_facts_main"
    r = subprocess.run(["g++", "-std=c++20", "-O0", "-I", str(SIM_INCLUDE), str(src), "-o", str(out)],
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    return out


def _facts(binary: Path, scenario: str, tmp_path: Path) -> tuple[dict, list[dict]]:
    diag = tmp_path / f"{scenario}.jsonl"
    r = subprocess.run([str(binary), scenario, str(diag)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    values = dict(ln.split("=", 1) for ln in r.stdout.splitlines() if "=" in ln and not ln.startswith("{"))
    found = [json.loads(x) for x in diag.read_text().splitlines() if x.startswith("{")]
    return values, found


@needs_gxx
def test_compare_mask_drives_gathermask_counter_mode_with_rsvdcnt(facts_bin, tmp_path):
    values, found = _facts(facts_bin, "dedup", tmp_path)
    assert not found
    assert values["first_mask_byte"] == str(0b00100001)      # bits 0 and 5: LSB first, bit i = element i
    assert values["rsvdCnt"] == "15"                          # 13 runs of 0..12, each NaN its own value
    assert values["kept"].split(",") == [str(i) for i in range(13)] + ["nan", "nan"]
    text = get_card("L4.Gather").body + get_card("L3.gm-sort-unique").body
    assert "{1, 1, 8, 0}" in text and "rsvdCnt" in text and "least significant bit first" in text


@needs_gxx
def test_gather_srcbaseaddr_is_bytes_and_needs_only_element_alignment(facts_bin, tmp_path):
    values, found = _facts(facts_bin, "gather_base", tmp_path)
    assert not found and values["gathered"] == "1,2,3,4,5,6,7,8"
    assert "**bytes**" in get_card("L4.Gather").body


@needs_gxx
def test_sync_missing_tracks_the_whole_tbuf(facts_bin, tmp_path):
    _, found = _facts(facts_bin, "sync_whole_tbuf", tmp_path)
    assert [d["id"] for d in found] == ["L2.SYNC_MISSING"]    # the shared TBuf's read only
    assert "its own TBuf" in get_card("L2.SYNC_MISSING").body


@needs_gxx
def test_concat_stops_at_255_repeats(facts_bin, tmp_path):
    _, found = _facts(facts_bin, "concat_limit", tmp_path)
    assert [d["id"] for d in found] == ["L2.REPEAT_LIMIT"]
    assert "4080 per call" in get_card("L4.sort-topk").body


# -- the operator family: the knowledge header and the exemplar -------------------------------------

@pytest.mark.parametrize("rel,family,exemplars", [
    ("level3/unique", "sort/select", ["L5.sort-sort_rows", "L5.reduction-to-scalar-mse_loss"]),
    ("level3/roi_align", "gather/index", ["L5.gather-gather_rows"]),
    ("level2/scatter", "scatter", ["L5.gather-gather_rows", "L5.reduction-to-scalar-mse_loss"]),
    ("level3/moe_re_routing", "scatter", ["L5.gather-gather_rows", "L5.reduction-to-scalar-mse_loss"]),
    ("level3/dilation_2d", "window", ["L5.reduction-reduce_sum"]),     # not the cube's matmul exemplar
])
def test_the_family_names_the_header_and_picks_the_exemplar(rel, family, exemplars):
    from knowledge import assemble, route

    task = _public(rel)
    patterns = route(task)
    for phase in ("init", "repair"):
        sl = assemble(task, phase, "910B2")
        head = sl.render().splitlines()
        assert head[0].endswith(f"({family} operator; patterns {', '.join(patterns)}; chip 910B2)")
        assert [c.id for c in sl.cards if c.level == "L5"] == exemplars
        assert head[1].startswith("Note: ") and all(e in head[1] for e in exemplars)
        assert f"{family} strategy" in head[1]
    assert route(task) == patterns          # the patterns (the lowering's template) do not change


def test_operators_without_a_family_keep_the_pattern_header_and_exemplar():
    from knowledge import assemble
    from knowledge.router import op_family

    sl = assemble("elementwise", "init", "910B2")
    assert sl.render().startswith("## AscendC knowledge for writing a new kernel (elementwise; chip 910B2)\n\n")
    assert [c.id for c in sl.cards if c.level == "L5"] == ["L5.elementwise-sigmoid"]
    assert op_family(["exp", "add"]) == "" and op_family(["sort", "index"]) == "sort/select"
    assert op_family([], "SortSelect") == "sort/select" and op_family(["cummin"], "Reduction") == "scan"


def test_cards_name_padding_nans_and_strided_deinterleave():
    assert "Padding is not skipping" in get_card("L4.nan-inf-semantics").body
    assert "(3 * i + k)" in get_card("L4.Gather").body


def test_dilation_and_adaptive_pooling_get_the_window_card():
    from copilot.agents.llm import op_cards

    for rel in ("level3/dilation_2d", "level3/adaptive_avg_pool_3d"):
        ids = _shown(op_cards(_public(rel), [], "910B2"))
        assert "L3.window-stencil" in ids[:2], (rel, ids)         # with the index rules for pooling


# -- session 11: MrgSort's exhausted count, what the sync checker accepts, CreateVecIndex dtypes ----

@needs_gxx
def test_an_exhausted_mrgsort_writes_the_sum_of_its_counts(facts_bin, tmp_path):
    values, found = _facts(facts_bin, "mrgsort_exhausted", tmp_path)
    assert not found
    assert values["counts"] == "4,3,0,0"             # queue 1 (9,7,5,3) ran out after 8,6,4 of queue 2
    assert values["written"] == "7" and values["last"] == "3"
    assert "n1 + n2 + n3 + n4 structures" in get_card("L4.sort-topk").body


@needs_gxx
@pytest.mark.parametrize("kind,flagged", [("none", True), ("barrier_all", False), ("barrier_mte2", False),
                                          ("barrier_v", True), ("flag_mte2_s", False), ("flag_mte2_v", False)])
def test_the_sync_checker_accepts_what_the_sync_card_says(facts_bin, tmp_path, kind, flagged):
    _, found = _facts(facts_bin, f"sync_{kind}", tmp_path)
    assert [d["id"] for d in found] == (["L2.SYNC_MISSING"] if flagged else [])
    body = get_card("L4.sync").body
    assert "`PipeBarrier<PIPE_ALL>()` between a copy-in and `GetValue` satisfies it" in body
    assert "`PipeBarrier<PIPE_V>()` after a `DataCopy` does not" in body and "`MTE2_V` also satisfies" in body


def test_the_fill_index_card_gives_createvecindex_dtypes_per_chip():
    body = get_card("L4.Fill-Index").body
    assert "| Atlas A2/A3 (910B, 910_93), 200I/500 A2, 310P AI Core | int16_t, half, int32_t, float |" in body
    assert "int8_t, int16_t, half, int32_t, float, int64_t" in body


def test_the_sort_gather_and_sync_cards_reach_the_slices_that_use_them():
    from knowledge import assemble

    sort_ids = assemble(load_task("sort"), "init", "910B2").ids
    assert {"L4.sort-topk", "L4.Fill-Index"} <= set(sort_ids)
    gather = assemble(load_task("gather_rows"), "init", "910B2")
    assert "L4.sync" in gather.ids and "L4.DataCopyPad" in gather.ids
    repair = assemble(load_task("gather_rows"), "repair", "910B2",
                      diagnostics=[{"id": "L2.SYNC_MISSING", "api": "PipeBarrier"}])
    assert {"L2.SYNC_MISSING", "L4.sync"} <= set(repair.ids)
