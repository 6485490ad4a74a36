"""`cannpilot knowledge` subcommands: ls, show, slice, explain (JSON contracts and bad input)."""

from __future__ import annotations

import argparse
import json


from copilot.commands import knowledge as cmd


def _run(capsys, *argv) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser(prog="cannpilot")
    sub = parser.add_subparsers(dest="command")
    cmd.register(sub)
    args = parser.parse_args(["knowledge", *argv])
    code = args.func(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_ls_json_lists_cards_and_filters_by_level(capsys):
    code, out, _ = _run(capsys, "ls", "--json")
    cards = json.loads(out)
    assert code == 0 and len(cards) >= 60
    code, out, _ = _run(capsys, "ls", "--level", "L5", "--json")
    assert code == 0 and {c["level"] for c in json.loads(out)} == {"L5"}


def test_ls_table(capsys):
    code, out, _ = _run(capsys, "ls", "--level", "L0")
    assert code == 0 and "L0.memory-hierarchy" in out


def test_show_prints_the_card_and_its_kernel(capsys):
    code, out, _ = _run(capsys, "show", "L5.elementwise-sigmoid")
    assert code == 0 and "id: L5.elementwise-sigmoid" in out and "sigmoid_custom" in out
    code, out, _ = _run(capsys, "show", "L2.UB_CAPACITY", "--json")
    assert code == 0 and json.loads(out)["level"] == "L2"


def test_show_unknown_id_exits_2_with_one_line(capsys):
    code, out, err = _run(capsys, "show", "L9.nothing")
    assert code == 2 and out == "" and err.count("\n") == 1 and "L9.nothing" in err


def test_slice_json_contract(capsys):
    code, out, _ = _run(capsys, "slice", "--task", "softmax", "--phase", "tuning", "--json")
    doc = json.loads(out)
    assert code == 0 and set(doc) == {"phase", "total_tokens", "cards"}
    assert doc["phase"] == "tuning" and doc["total_tokens"] == sum(c["tokens"] for c in doc["cards"])
    assert all(set(c) == {"id", "level", "tokens", "reason"} for c in doc["cards"])


def test_slice_on_a_builtin_task_and_repair_with_diag(capsys):
    code, out, _ = _run(capsys, "slice", "--task", "rms_norm", "--phase", "repair", "--diag", "L2.UB_CAPACITY",
                        "--json")
    ids = [c["id"] for c in json.loads(out)["cards"]]
    assert code == 0 and "L2.UB_CAPACITY" in ids and "L5.normalization-rms_norm" in ids
    code, out, _ = _run(capsys, "slice", "--task", "rms_norm", "--phase", "init")
    assert code == 0 and "tokens" in out


def test_slice_text_renders_the_prompt(capsys):
    code, out, _ = _run(capsys, "slice", "--task", "reduction", "--phase", "tuning", "--text")
    assert code == 0 and out.startswith("## Tiling strategies")


def test_slice_bad_phase_or_task_exits_2(capsys):
    code, out, err = _run(capsys, "slice", "--task", "softmax", "--phase", "deploy")
    assert code == 2 and out == "" and err.count("\n") == 1 and "deploy" in err
    code, out, err = _run(capsys, "slice", "--task", "no_such_task_xyz", "--phase", "init")
    assert code == 2 and out == "" and err.count("\n") == 1


def test_explain_json_contract(capsys):
    msg = "errorStr: The DDR address of the MTE instruction is out of range."
    code, out, _ = _run(capsys, "explain", msg, "--json")
    doc = json.loads(out)
    assert code == 0 and doc[0]["id"] == "L2.GM_BOUNDS"
    assert {"id", "message", "hint", "cards"} <= set(doc[0])


def test_explain_file_and_missing_file(capsys, tmp_path):
    log = tmp_path / "build.log"
    log.write_text("/tmp/k.cpp:9:3: error: 'Foo' is not a member of 'AscendC'\n", encoding="utf-8")
    code, out, _ = _run(capsys, "explain", "--file", str(log))
    assert code == 0 and "L4.API_UNKNOWN" in out and "line 9" in out
    code, _, err = _run(capsys, "explain", "--file", str(tmp_path / "missing.log"))
    assert code == 2 and "missing.log" in err
    code, _, err = _run(capsys, "explain")
    assert code == 2
