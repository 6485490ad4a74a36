"""Settings: platformdirs paths, the YAML file, CANNPILOT_* overrides, atomic saves, clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from copilot import config
from copilot.config import Settings, load_settings
from copilot.errors import BadInput

ALL_ENV = ["CANNPILOT_CONFIG_DIR", "CANNPILOT_DATA_DIR", "CANNPILOT_CACHE_DIR", "CANNPILOT_STATE_DIR",
           *config.ENV_OVERRIDES]


@pytest.fixture(autouse=True)
def dirs(tmp_path, monkeypatch):
    """Every test gets its own config/data/cache/state dirs and no inherited overrides."""
    for var in ALL_ENV:
        monkeypatch.delenv(var, raising=False)
    for kind in ("config", "data", "cache", "state"):
        monkeypatch.setenv(f"CANNPILOT_{kind.upper()}_DIR", str(tmp_path / kind))
    return tmp_path


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_dirs_follow_the_environment(dirs):
    assert config.config_dir() == dirs / "config"
    assert config.settings_path() == dirs / "config" / "settings.yaml"
    assert (config.data_dir(), config.cache_dir(), config.state_dir()) == \
        (dirs / "data", dirs / "cache", dirs / "state")


def test_dirs_default_to_platformdirs(monkeypatch):
    import platformdirs

    monkeypatch.delenv("CANNPILOT_CONFIG_DIR")
    monkeypatch.delenv("CANNPILOT_CACHE_DIR")
    assert config.config_dir() == Path(platformdirs.user_config_dir("cannpilot", appauthor=False))
    assert config.cache_dir() == Path(platformdirs.user_cache_dir("cannpilot", appauthor=False))


def test_no_file_gives_defaults_offline_agent(dirs):
    s = load_settings()
    assert s.model is None and s.resolve_model() is None          # offline agent
    assert (s.chip, s.backend, s.rounds, s.variants) == ("910B2", "sim", 3, 4)
    assert s.budget_caps().max_usd is None
    assert s.store_path() == dirs / "data" / "sessions.sqlite"


def test_file_with_local_server_and_aliases(dirs):
    write(config.settings_path(), """\
model: qwen
models:
  - name: openai/qwen2.5-coder
    api_base: http://127.0.0.1:8000/v1
    aliases: [qwen, local]
  - name: deepseek/deepseek-chat
    api_key_env: DEEPSEEK_API_KEY
    aliases: [ds]
budget:
  max_usd: 2.5
chip: 910B4
rounds: 5
""")
    s = load_settings()
    m = s.resolve_model()
    assert m.name == "openai/qwen2.5-coder" and m.api_base == "http://127.0.0.1:8000/v1"
    assert m.key_env() is None                                    # a local server needs no key
    assert s.resolve_model("ds").key_env() == "DEEPSEEK_API_KEY"
    assert s.resolve_model("gpt-4o").key_env() == "OPENAI_API_KEY"   # not in the table: as is
    assert s.budget_caps().max_usd == 2.5 and s.chip == "910B4" and s.rounds == 5


def test_env_overrides_the_file(dirs, monkeypatch):
    write(config.settings_path(), "model: ds\nchip: 910B4\nbudget: {max_usd: 2.5}\n")
    monkeypatch.setenv("CANNPILOT_MODEL", "offline")
    monkeypatch.setenv("CANNPILOT_CHIP", "910B2")
    monkeypatch.setenv("CANNPILOT_BUDGET_USD", "0.75")
    monkeypatch.setenv("CANNPILOT_BUDGET_TOKENS", "200000")
    monkeypatch.setenv("CANNPILOT_STORE", str(dirs / "elsewhere.sqlite"))
    s = load_settings()
    assert s.model is None and s.chip == "910B2"
    assert s.budget_caps().max_usd == 0.75 and s.budget_caps().max_tokens == 200000
    assert s.store_path() == dirs / "elsewhere.sqlite"
    assert s.overridden_by_env()["chip"] == "CANNPILOT_CHIP"


def test_bad_env_value_names_the_variable(monkeypatch):
    monkeypatch.setenv("CANNPILOT_ROUNDS", "many")
    with pytest.raises(BadInput) as info:
        load_settings()
    assert str(info.value).startswith("CANNPILOT_ROUNDS: `rounds`") and "'many'" in str(info.value)


def test_malformed_yaml_names_file_and_line():
    path = write(config.settings_path(), "chip: 910B2\nrounds: [3\nvariants: 4\n")
    with pytest.raises(BadInput) as info:
        load_settings()
    msg = str(info.value)
    assert msg.startswith(f"{path}:") and "not valid YAML" in msg and "delete the file" in msg
    line = int(msg[len(str(path)) + 1:].split(":")[0])
    assert line in (2, 3)


def test_invalid_value_names_file_line_and_setting():
    path = write(config.settings_path(), "chip: 910B2\nbudget:\n  max_usd: -1\n")
    with pytest.raises(BadInput) as info:
        load_settings()
    assert str(info.value).startswith(f"{path}:3: `budget.max_usd`")


def test_unknown_setting_is_reported_with_its_line():
    path = write(config.settings_path(), "chip: 910B2\n\nrounds: 2\nvarients: 4\n")
    with pytest.raises(BadInput, match=rf"^{path}:4: .*unknown setting `varients`"):
        load_settings()


def test_a_key_in_the_model_table_is_refused():
    write(config.settings_path(), "models:\n  - name: gpt-4o\n    api_key: sk-live-123456789\n")
    with pytest.raises(BadInput) as info:
        load_settings()
    assert "api_key_env" in str(info.value) and "sk-live-123456789" not in str(info.value)


def test_alias_naming_two_models_is_refused():
    write(config.settings_path(), "models:\n  - {name: a/x, aliases: [fast]}\n  - {name: b/y, aliases: [fast]}\n")
    with pytest.raises(BadInput, match="`fast` names two models"):
        load_settings()


def test_save_is_atomic_and_round_trips(dirs):
    s = Settings(model="qwen", chip="910B4", rounds=6,
                 models=[{"name": "openai/qwen2.5-coder", "api_base": "http://127.0.0.1:8000/v1",
                          "aliases": ["qwen"]}])
    path = s.save()
    assert path == config.settings_path()
    assert list(path.parent.iterdir()) == [path]                     # no temp file left behind
    again = load_settings()
    assert again.model_dump() == s.model_dump()
    assert "theme" not in yaml.safe_load(path.read_text())           # defaults are not written


def test_save_does_not_persist_env_overrides(monkeypatch):
    path = write(config.settings_path(), "chip: 910B4\nrounds: 2\n")
    monkeypatch.setenv("CANNPILOT_CHIP", "910B2")
    monkeypatch.setenv("CANNPILOT_BUDGET_USD", "1.5")
    s = load_settings()
    s.rounds = 7                                                     # a change the user made
    s.save()
    data = yaml.safe_load(path.read_text())
    assert data == {"chip": "910B4", "rounds": 7}                   # file value kept, no budget


def test_failed_write_keeps_the_old_file(monkeypatch):
    path = write(config.settings_path(), "chip: 910B4\n")

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(config.os, "replace", boom)
    with pytest.raises(OSError):
        Settings(chip="910B2").save()
    assert path.read_text() == "chip: 910B4\n"
    assert list(path.parent.iterdir()) == [path]


def test_offline_in_the_file_means_no_model():
    write(config.settings_path(), "model: offline\n")
    assert load_settings().resolve_model() is None
    assert Settings(model="qwen").resolve_model("offline") is None


def test_agency_schedule_is_a_setting(tmp_path):
    from copilot.agents.llm import AgencySchedule
    from copilot.config import load_settings

    path = tmp_path / "settings.yaml"
    path.write_text("agency:\n  generation1: single_pass\n  later: fix_loop\n  build_repairs: 1\n")
    s = load_settings(path, env={})
    sched = AgencySchedule(**s.agency.model_dump())
    assert (sched.generation1, sched.later, sched.build_repairs, sched.precision_repairs) == ("single_pass", "fix_loop", 1, 2)
    path.write_text("agency:\n  later: sometimes\n")
    with pytest.raises(BadInput, match="later"):
        load_settings(path, env={})


# --- one model for the CLI and the TUI: flags, the tui section, the old tui.json --------------

def test_flags_beat_the_environment_which_beats_the_file(monkeypatch):
    write(config.settings_path(), "chip: 910B4\nrounds: 5\nvariants: 6\n")
    monkeypatch.setenv("CANNPILOT_ROUNDS", "7")
    s = load_settings().with_flags({"--rounds": ("rounds", 9), "--chip": ("chip", None),
                                    "--agent": ("model", "offline")})
    assert (s.rounds, s.chip, s.variants, s.model) == (9, "910B4", 6, None)
    assert s.source_of("rounds") == "--rounds"
    assert s.source_of("chip") == f"{config.settings_path()}:1"
    assert s.source_of("theme") == "default"
    assert load_settings().with_flags({}).source_of("rounds") == "CANNPILOT_ROUNDS"


def test_a_bad_flag_value_names_the_flag():
    with pytest.raises(BadInput) as info:
        load_settings().with_flags({"--variants": ("variants", 0)})
    assert str(info.value).startswith("--variants: ") and "(got 0)" in str(info.value)


def test_an_unknown_chip_is_one_line_naming_where_it_was_set(monkeypatch):
    monkeypatch.setenv("CANNPILOT_CHIP", "910X")
    with pytest.raises(BadInput) as info:
        load_settings()
    msg = str(info.value)
    assert msg.startswith("CANNPILOT_CHIP: `chip`: unknown chip '910X'") and "910B4" in msg
    assert "\n" not in msg
    monkeypatch.setenv("CANNPILOT_CHIP", "910b4")
    assert load_settings().chip == "910B4"                            # case folded to the profile


def test_flag_values_are_not_saved(monkeypatch):
    path = write(config.settings_path(), "rounds: 2\n")
    s = load_settings().with_flags({"--rounds": ("rounds", 8), "--chip": ("chip", "910B4")})
    s.theme = "cannpilot-light"
    s.save()
    assert yaml.safe_load(path.read_text()) == {"rounds": 2, "theme": "cannpilot-light"}


def test_tui_preferences_live_in_the_settings_file(monkeypatch):
    path = write(config.settings_path(), "theme: cannpilot-light\ntui:\n  auto_continue: true\n"
                                         "  keymap: {pin: P}\n")
    s = load_settings()
    assert (s.theme, s.tui.auto_continue, s.tui.keymap) == ("cannpilot-light", True, {"pin": "P"})
    monkeypatch.setenv("CANNPILOT_AUTO_CONTINUE", "false")
    assert load_settings().tui.auto_continue is False
    write(path, "tui:\n  auto_continue: sometimes\n")
    monkeypatch.delenv("CANNPILOT_AUTO_CONTINUE")
    with pytest.raises(BadInput, match=rf"^{path}:2: `tui.auto_continue`: .*'sometimes'"):
        load_settings()


def test_an_old_tui_json_is_folded_in_once():
    import json

    cfg = config.config_dir()
    write(config.settings_path(), "rounds: 2\n")
    write(cfg / "tui.json", json.dumps({"theme": "cannpilot-light", "auto_continue": True, "rounds": 6,
                                        "agent": "offline", "budget_usd": 0.0, "chip": "910B3",
                                        "keymap": {"pin": "P"}}))
    s = load_settings()
    assert (s.theme, s.tui.auto_continue, s.tui.keymap, s.chip) == ("cannpilot-light", True, {"pin": "P"}, "910B3")
    assert s.rounds == 2                                              # settings.yaml wins
    assert s.model is None and s.budget.max_usd is None
    assert not (cfg / "tui.json").exists() and (cfg / "tui.json.migrated").exists()
    saved = yaml.safe_load(config.settings_path().read_text())
    assert saved == {"rounds": 2, "chip": "910B3", "theme": "cannpilot-light",
                     "tui": {"auto_continue": True, "keymap": {"pin": "P"}}}
    write(config.settings_path(), "rounds: 3\n")
    assert load_settings().chip == "910B2"                            # tui.json.migrated is not read again


def test_a_bad_value_in_the_old_tui_json_is_named_not_dropped():
    import json

    write(config.config_dir() / "tui.json", json.dumps({"rounds": "x"}))
    with pytest.raises(BadInput) as info:
        load_settings()
    msg = str(info.value)
    assert msg.startswith(f"{config.config_dir() / 'tui.json'}: `rounds`: ") and "'x'" in msg
    assert (config.config_dir() / "tui.json").exists()                  # nothing lost
    assert not config.settings_path().exists()


def test_atomic_write_to_a_fifo_writes_through_it_and_leaves_it_a_fifo(tmp_path):
    # `cannpilot lower -o /dev/null` once renamed a temporary file over /dev/null: a path that is
    # not a regular file is written in place, never replaced
    import os
    import stat
    import threading

    from copilot.config import atomic_write_text

    out = tmp_path / "out"
    out.mkdir()
    fifo = out / "sink"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, encoding="utf-8").read()), daemon=True)
    reader.start()
    atomic_write_text(fifo, "kernel text\n")
    reader.join(timeout=10)
    assert got == ["kernel text\n"]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert [p.name for p in out.iterdir()] == ["sink"]
