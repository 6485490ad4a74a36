"""Settings and paths.

Precedence: command-line flags (applied by the CLI) > `CANNPILOT_*` environment variables >
`<config dir>/settings.yaml` > defaults. Paths come from platformdirs, each overridable by an
environment variable (tests point them at temporary directories):

    CANNPILOT_CONFIG_DIR  CANNPILOT_DATA_DIR  CANNPILOT_CACHE_DIR  CANNPILOT_STATE_DIR

Settings overrides: CANNPILOT_MODEL (a model name or alias; `offline` for none), CANNPILOT_CHIP,
CANNPILOT_BACKEND, CANNPILOT_ROUNDS, CANNPILOT_VARIANTS, CANNPILOT_THEME, CANNPILOT_BUDGET_USD,
CANNPILOT_BUDGET_TOKENS (`none` lifts a cap), CANNPILOT_STORE (the session store file),
CANNPILOT_AUTO_CONTINUE (the TUI's auto-continue).

One model for every front end: the CLI and the TUI read these `Settings` (the TUI's own
preferences, keymap and auto-continue, are its `tui` section) and apply their flags with
`Settings.with_flags`. A bad value anywhere (file, variable, flag) is one `BadInput` line naming
where it came from. A `tui.json` left by an older TUI is folded into settings.yaml once.

The settings file never holds an API key: a model entry names the environment variable that does.
"""

from __future__ import annotations

import copy
import json
import logging
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator

from copilot.atomic import atomic_write_text  # noqa: F401  (re-exported: callers import it from here)
from copilot.errors import BadInput
from copilot.llm.accounting import Budget
from copilot.llm.models import ModelConfig, ModelTable
from copilot.paths import APP, cache_dir, config_dir, data_dir, state_dir  # noqa: F401  (re-exported)

SETTINGS_FILE = "settings.yaml"
LEGACY_TUI_FILE = "tui.json"            # the TUI's own file before settings.yaml held its preferences
OFFLINE_NAMES = {"", "offline", "none"}


log = logging.getLogger(__name__)


# --- paths ----------------------------------------------------------------------------------------

def settings_path() -> Path:
    return config_dir() / SETTINGS_FILE


# --- settings -------------------------------------------------------------------------------------

class BudgetSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    max_tokens: int | None = Field(default=None, ge=0)
    max_usd: float | None = Field(default=None, ge=0)

    def to_budget(self) -> Budget:
        return Budget(max_tokens=self.max_tokens, max_usd=self.max_usd)


class AgencySettings(BaseModel):
    """Stage-adaptive agency of the LLM agents: a tool-using agent (or one pass) for generation 1,
    single-pass edits or a bounded fix loop afterwards, and the bounds of each."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    generation1: Literal["tool_agent", "single_pass"] = "tool_agent"
    later: Literal["single_pass", "fix_loop"] = "single_pass"
    max_tool_turns: int = Field(default=8, ge=1)
    max_tool_tokens: int = Field(default=400_000, ge=1000)
    build_repairs: int = Field(default=3, ge=0)
    precision_repairs: int = Field(default=2, ge=0)


class TUISettings(BaseModel):
    """The TUI's own preferences (the theme is shared: `Settings.theme`)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    auto_continue: bool = False
    keymap: dict[str, str] = Field(default_factory=dict)   # binding id -> keys, e.g. {"pin": "P"}


class Settings(BaseModel):
    """What a user can set once instead of passing flags every time."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    model: str | None = None                     # a model name or alias; None: the offline agent
    models: list[ModelConfig] = Field(default_factory=list)
    budget: BudgetSettings = Field(default_factory=BudgetSettings)
    agency: AgencySettings = Field(default_factory=AgencySettings)
    chip: str = "910B2"
    backend: Literal["sim", "npu", "auto"] = "sim"
    rounds: int = Field(default=3, ge=0)           # 0: generation 1 only (the baseline)
    variants: int = Field(default=4, ge=1)
    theme: str = "cannpilot-dark"
    store: str | None = None                     # session store file; None: <data dir>/sessions.sqlite
    evaluators: str = "local"                    # "local" processes, or a Ray head: ray://HOST:PORT, HOST:PORT
    tui: TUISettings = Field(default_factory=TUISettings)

    _path: Path | None = PrivateAttr(default=None)
    _file_data: dict[str, Any] = PrivateAttr(default_factory=dict)
    # setting path -> (the variable or flag that set it, the value it set): not saved to the file
    _overrides: dict[tuple[str, ...], tuple[str, Any]] = PrivateAttr(default_factory=dict)

    @field_validator("chip")
    @classmethod
    def _known_chip(cls, value: str) -> str:
        from copilot.chips import list_chips

        known = list_chips()
        match = next((k for k in known if k.lower() == value.strip().lower()), None)
        if match is None:
            raise ValueError(f"unknown chip '{value}' (known: {', '.join(known)})")
        return match

    @field_validator("evaluators")
    @classmethod
    def _evaluators(cls, value: str) -> str:
        value = value.strip()
        if value != "local" and not re.fullmatch(r"(ray://)?[^\s:/]+:\d+", value):
            raise ValueError(f"'{value}' is neither local nor a Ray head as ray://HOST:PORT or HOST:PORT")
        return value

    @model_validator(mode="after")
    def _check(self) -> Settings:
        if self.model is not None and self.model.strip().lower() in OFFLINE_NAMES:
            object.__setattr__(self, "model", None)
        try:
            ModelTable(self.models)
        except ValueError as e:
            raise ValueError(f"models: {e}") from None
        return self

    # lookups -------------------------------------------------------------------------------------

    def model_table(self) -> ModelTable:
        return ModelTable(self.models)

    def resolve_model(self, name: str | None = None) -> ModelConfig | None:
        """The model to use (`name` or the default), or None for the offline agent."""
        name = self.model if name is None else name
        if name is None or name.strip().lower() in OFFLINE_NAMES:
            return None
        return self.model_table().resolve(name.strip())

    def budget_caps(self) -> Budget:
        return self.budget.to_budget()

    def store_path(self) -> Path:
        return Path(self.store).expanduser() if self.store else data_dir() / "sessions.sqlite"

    @property
    def path(self) -> Path:
        return self._path or settings_path()

    def overridden_by_env(self) -> dict[str, str]:
        """Setting (dotted) -> the environment variable that set it."""
        return {".".join(p): src for p, (src, _) in self._overrides.items() if src.startswith("CANNPILOT_")}

    def source_of(self, dotted: str) -> str:
        """Where a setting's value comes from: a flag, a variable, `<file>:<line>` or "default"."""
        p = tuple(dotted.split("."))
        if p in self._overrides:
            return self._overrides[p][0]
        if _get(self._file_data, p, _MISSING) is not _MISSING:
            line = _yaml_line(_read_text(self.path), p)
            return f"{self.path}:{line}" if line else str(self.path)
        return "default"

    def with_flags(self, flags: Mapping[str, tuple[str, Any]]) -> Settings:
        """A copy with command-line values on top: flags > environment > file > defaults.

        `flags` maps a flag (`--chip`) to (dotted setting, value); a None value is an absent flag.
        A bad value raises `BadInput` naming the flag. Flag values are never saved to the file."""
        data = self.model_dump(mode="json")
        applied: dict[tuple[str, ...], str] = {}
        for flag, (dotted, value) in flags.items():
            if value is None:
                continue
            p = tuple(dotted.split("."))
            _set(data, p, value)
            applied[p] = flag
        try:
            new = Settings.model_validate(data)
        except ValidationError as e:
            raise BadInput(_explain(e, self.path, "", applied)) from None
        new._path, new._file_data = self._path, self._file_data
        dumped = new.model_dump(mode="json")
        new._overrides = {**self._overrides, **{p: (f, _get(dumped, p)) for p, f in applied.items()}}
        return new

    # persistence ---------------------------------------------------------------------------------

    def save(self, path: Path | None = None) -> Path:
        """Write the settings file atomically. Values that came from the environment or a flag and
        were not changed since are not written (the file keeps what it had)."""
        target = Path(path) if path is not None else self.path
        data = self.model_dump(mode="json", exclude_defaults=True)
        for p, (_, env_value) in self._overrides.items():
            if _get(self.model_dump(mode="json"), p) != env_value:
                continue                          # changed after loading: the new value is saved
            file_value = _get(self._file_data, p, _MISSING)
            if file_value is _MISSING:
                _delete(data, p)
            else:
                _set(data, p, file_value)
        text = ("# Cannpilot settings. Keys never go here: name their environment variable in\n"
                "# `api_key_env` of a model entry. See docs/llm.md.\n")
        if data:
            text += yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
        atomic_write_text(target, text)
        self._path = target
        self._file_data = yaml.safe_load(text) or {}
        return target


_MISSING = object()

# environment variable -> setting path
ENV_OVERRIDES: dict[str, tuple[str, ...]] = {
    "CANNPILOT_MODEL": ("model",),
    "CANNPILOT_CHIP": ("chip",),
    "CANNPILOT_BACKEND": ("backend",),
    "CANNPILOT_ROUNDS": ("rounds",),
    "CANNPILOT_VARIANTS": ("variants",),
    "CANNPILOT_THEME": ("theme",),
    "CANNPILOT_BUDGET_USD": ("budget", "max_usd"),
    "CANNPILOT_BUDGET_TOKENS": ("budget", "max_tokens"),
    "CANNPILOT_STORE": ("store",),
    "CANNPILOT_AUTO_CONTINUE": ("tui", "auto_continue"),
}
_NULLABLE = {("model",), ("budget", "max_usd"), ("budget", "max_tokens"), ("store",)}


def load_settings(path: Path | None = None, env: Mapping[str, str] | None = None) -> Settings:
    """Settings from the file (missing file: defaults) with the environment's overrides applied.

    A malformed file or variable raises `BadInput` naming the file and line (or the variable)."""
    path = Path(path) if path is not None else settings_path()
    env = os.environ if env is None else env
    _migrate_legacy_tui_file(path)
    text = _read_text(path)
    file_data = _parse_yaml(path, text)

    data = copy.deepcopy(file_data)
    applied: dict[tuple[str, ...], str] = {}
    for var, p in ENV_OVERRIDES.items():
        if var not in env:
            continue
        raw = env[var].strip()
        value: Any = None if (p in _NULLABLE and raw.lower() in OFFLINE_NAMES) else raw
        if p == ("store",) and value is not None:
            value = str(Path(value).expanduser())
        _set(data, p, value)
        applied[p] = var

    try:
        settings = Settings.model_validate(data)
    except ValidationError as e:
        raise BadInput(_explain(e, path, text, applied)) from None
    settings._path = path
    settings._file_data = file_data
    dumped = settings.model_dump(mode="json")
    settings._overrides = {p: (var, _get(dumped, p)) for p, var in applied.items()}
    return settings


def _read_text(path: Path) -> str:
    """The settings file's text; "" when there is none."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""
    except OSError as e:
        raise BadInput(f"{path}: cannot read the settings file ({e.strerror}); fix its permissions "
                       f"or point CANNPILOT_CONFIG_DIR elsewhere") from None


# tui.json key -> (setting path, conversion of its value)
_LEGACY_TUI_KEYS: dict[str, tuple[tuple[str, ...], Any]] = {
    "theme": (("theme",), None),
    "auto_continue": (("tui", "auto_continue"), None),
    "keymap": (("tui", "keymap"), None),
    "chip": (("chip",), None),
    "backend": (("backend",), None),
    "agent": (("model",), lambda v: None if str(v).strip().lower() in OFFLINE_NAMES else v),
    "budget_usd": (("budget", "max_usd"), lambda v: v or None),     # 0 meant "no budget"
    "rounds": (("rounds",), None),
    "variants": (("variants",), None),
}


def _migrate_legacy_tui_file(path: Path) -> None:
    """Fold a `tui.json` beside the settings file into it, once: its values fill what the settings
    file does not set, the merged file is written atomically and tui.json is renamed
    `tui.json.migrated`. A bad value in it is a `BadInput` naming tui.json and the key."""
    legacy = path.parent / LEGACY_TUI_FILE
    if not legacy.is_file():
        return
    try:
        raw = json.loads(legacy.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise BadInput(f"{legacy}: cannot read the old TUI settings ({e}); fix or delete the file "
                       f"(its settings now live in {path.name})") from None
    if not isinstance(raw, dict):
        raise BadInput(f"{legacy}: the old TUI settings must be a JSON object; fix or delete the file")
    text = _read_text(path)
    data = _parse_yaml(path, text)
    merged = copy.deepcopy(data)
    applied: dict[tuple[str, ...], str] = {}
    for key, value in raw.items():
        if key not in _LEGACY_TUI_KEYS:
            raise BadInput(f"{legacy}: unknown setting `{key}`; remove it or delete the file "
                           f"(its settings now live in {path.name})")
        p, convert = _LEGACY_TUI_KEYS[key]
        if _get(data, p, _MISSING) is not _MISSING:
            continue                              # the settings file wins
        _set(merged, p, convert(value) if convert else value)
        applied[p] = f"{legacy}: `{key}`"
    try:
        Settings.model_validate(merged)
    except ValidationError as e:
        err = e.errors()[0]
        loc = tuple(err.get("loc", ()))
        source = next((src for p, src in applied.items() if loc[:len(p)] == p), None)
        if source is None:                        # the settings file itself is bad: say so there
            raise BadInput(_explain(e, path, text, {})) from None
        raise BadInput(f"{source}: {err.get('msg', 'invalid value')} (got {err.get('input')!r}); "
                       f"fix or delete {legacy.name}") from None
    if merged != data:
        Settings.model_validate(merged).save(path)
    os.replace(legacy, legacy.with_name(LEGACY_TUI_FILE + ".migrated"))
    log.info("folded %s into %s", legacy, path)


def _parse_yaml(path: Path, text: str) -> dict[str, Any]:
    try:
        data = yaml.safe_load(text) if text.strip() else {}
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise BadInput(f"{path}{line}: the settings file is not valid YAML ({problem}); fix that "
                       f"line, or delete the file to start from the defaults") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise BadInput(f"{path}:1: the settings file must be a mapping of `key: value` lines, "
                       f"not a {type(data).__name__}; fix it or delete the file")
    return data


def _explain(e: ValidationError, path: Path, text: str, applied: dict[tuple[str, ...], str]) -> str:
    err = e.errors()[0]
    loc = tuple(err.get("loc", ()))
    msg = err.get("msg", "invalid value")
    if err.get("type") == "extra_forbidden":
        msg = f"unknown setting `{loc[-1]}`"
    elif err.get("type") == "value_error":            # our validators name the value themselves
        msg = msg.removeprefix("Value error, ")
    elif "input" in err and not isinstance(err["input"], (dict, list)):
        msg = f"{msg} (got {err['input']!r})"
    dotted = ".".join(str(x) for x in loc) or "settings"
    for p, var in applied.items():
        if loc[:len(p)] == p:
            if var.startswith("-"):
                return f"{var}: {msg}"
            return f"{var}: `{dotted}`: {msg}; fix or unset the environment variable"
    line = _yaml_line(text, loc)
    where = f"{path}:{line}" if line else str(path)
    return f"{where}: `{dotted}`: {msg}; fix that line, or delete it to use the default"


def _yaml_line(text: str, loc: tuple[Any, ...]) -> int | None:
    """1-based line of the YAML node at `loc` (the deepest one that exists)."""
    try:
        node = yaml.compose(text)
    except yaml.YAMLError:
        return None
    line = None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            nxt = None
            for k, v in node.value:
                if k.value == str(part):
                    line = k.start_mark.line + 1
                    nxt = v
                    break
            if nxt is None:
                break
            node = nxt
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            break
    return line


def _get(data: Any, p: tuple[str, ...], default: Any = None) -> Any:
    for k in p:
        if not isinstance(data, dict) or k not in data:
            return default
        data = data[k]
    return data


def _set(data: dict[str, Any], p: tuple[str, ...], value: Any) -> None:
    for k in p[:-1]:
        if not isinstance(data.get(k), dict):
            data[k] = {}
        data = data[k]
    data[p[-1]] = value


def _delete(data: dict[str, Any], p: tuple[str, ...]) -> None:
    parents = []
    for k in p[:-1]:
        if not isinstance(data.get(k), dict):
            return
        parents.append((data, k))
        data = data[k]
    data.pop(p[-1], None)
    for parent, k in reversed(parents):
        if not parent[k]:
            del parent[k]
