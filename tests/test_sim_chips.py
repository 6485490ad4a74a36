"""Chip profiles: every number has a source, unknown chips are bad input, `cannpilot chips`."""

from __future__ import annotations

import json

import pytest

from copilot.chips import list_chips, load_chip
from copilot.errors import BadInput

REQUIRED = {"910B1", "910B2", "910B3", "910B4", "910_93", "950PR", "310P"}


def test_every_required_chip_has_a_profile_with_sources():
    assert REQUIRED <= set(list_chips())
    for name in REQUIRED:
        chip = load_chip(name)
        assert chip.name == name
        doc = chip.to_json()
        for key in ("arch", "vector_cores", "ub_bytes", "max_buffers", "max_queue_buffers"):
            assert doc[key]["source"], f"{name}.{key} has no source"
            assert doc[key]["source"].startswith("provisional") or "ascendc-facts.md" in doc[key]["source"]


def test_profiles_match_the_documented_numbers():
    b2 = load_chip("910B2")
    assert (b2.arch, b2.vector_cores, b2.ub_bytes, b2.max_buffers, b2.max_queue_buffers) == (2201, 48, 196352, 64, 8)
    assert load_chip("910B4").vector_cores == 40
    assert load_chip("950PR").arch == 3510 and load_chip("950PR").ub_bytes == 248 * 1024
    assert load_chip("310P").arch == 2002
    assert load_chip("310P").provisional("vector_cores")


def test_chip_names_are_case_insensitive():
    assert load_chip("910b2").name == "910B2"


def test_unknown_chip_lists_the_known_ones():
    with pytest.raises(BadInput) as err:
        load_chip("910Z")
    assert "910B2" in str(err.value) and "950PR" in str(err.value)


def test_chips_cli_json(cli):
    code, out, _ = cli("chips", "--json")
    assert code == 0
    names = {c["name"] for c in json.loads(out)}
    assert REQUIRED <= names
    code, out, _ = cli("chips", "show", "910B4", "--json")
    assert code == 0 and json.loads(out)["vector_cores"]["value"] == 40
    code, _, err = cli("chips", "show", "nope")
    assert code == 2 and "unknown chip" in err


def test_a_profile_is_parsed_once_and_read_again_when_its_file_changes(tmp_path, monkeypatch):
    import os
    import shutil

    import copilot.chips as chips

    for f in chips.CHIP_DIR.glob("*.yaml"):
        shutil.copy(f, tmp_path / f.name)
    monkeypatch.setattr(chips, "CHIP_DIR", tmp_path)
    first = chips.load_chip("910B2")
    assert chips.load_chip("910b2") is first            # cached
    path = tmp_path / "910B2.yaml"
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    again = chips.load_chip("910B2")
    assert again is not first and again == first        # a new version of the file is read again
