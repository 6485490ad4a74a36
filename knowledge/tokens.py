"""Token counting for knowledge slices, with a documented fallback chain.

1. A configured model (argument `model`, else env `CANNPILOT_MODEL`): litellm's `token_counter`
   for that model, through the lazy litellm proxy of `copilot.llm.litellm_client` (which imports and
   configures litellm once, with `LITELLM_LOCAL_MODEL_COST_MAP=True` so nothing is fetched). A model
   litellm cannot count for falls through to 2, with a warning logged once per model.
2. Otherwise tiktoken `cl100k_base`, loaded offline from the copy of the BPE file that litellm ships
   (`litellm/litellm_core_utils/tokenizers/`, pointed to by `TIKTOKEN_CACHE_DIR`).
3. If neither works: ceil(chars / 4), the usual estimate for English and code.

`tokenizer_name(model)` says which one is in use, so figures can be labelled.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import math
import os

log = logging.getLogger(__name__)
_WARNED: set[str] = set()               # models whose counting fell back, warned once each


def _litellm_tokenizer_dir() -> str | None:
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.origin:
        return None
    d = os.path.join(os.path.dirname(spec.origin), "litellm_core_utils", "tokenizers")
    return d if os.path.isdir(d) else None


@functools.lru_cache(maxsize=1)
def _tiktoken_encoding():
    try:
        d = _litellm_tokenizer_dir()
        if d and not os.environ.get("TIKTOKEN_CACHE_DIR"):
            os.environ["TIKTOKEN_CACHE_DIR"] = d
        import tiktoken

        return tiktoken.get_encoding("cl100k_base")
    except Exception:  # no tiktoken, or no cached BPE file and no network
        return None


@functools.lru_cache(maxsize=1)
def _litellm_counter():
    """litellm's `token_counter` (through the lazy proxy), or None without a usable litellm."""
    d = _litellm_tokenizer_dir()
    if d is None:
        return None                          # litellm is not installed
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", d)
    from copilot.llm.litellm_client import litellm

    try:
        return litellm.token_counter
    except Exception as exc:                 # installed but not importable: count with tiktoken
        log.warning("litellm's token counter is unavailable (%s: %s); counting with tiktoken",
                    type(exc).__name__, exc)
        return None


def _model(model: str | None) -> str | None:
    return model or os.environ.get("CANNPILOT_MODEL") or None


def tokenizer_name(model: str | None = None) -> str:
    m = _model(model)
    if m and _litellm_counter() is not None:
        return f"litellm:{m}"
    if _tiktoken_encoding() is not None:
        return "tiktoken:cl100k_base"
    return "estimate:chars/4"


@functools.lru_cache(maxsize=4096)
def count_tokens(text: str, model: str | None = None) -> int:
    """Tokens in `text` for `model` (see the module doc for the fallback chain)."""
    if not text:
        return 0
    m = _model(model)
    if m:
        counter = _litellm_counter()
        if counter is not None:
            try:
                return int(counter(model=m, text=text))
            except Exception as exc:         # a model litellm has no tokenizer for: next in the chain
                if m not in _WARNED:
                    _WARNED.add(m)
                    log.warning("litellm cannot count tokens for %s (%s: %s); using %s", m,
                                type(exc).__name__, exc,
                                "tiktoken:cl100k_base" if _tiktoken_encoding() else "chars/4")
    enc = _tiktoken_encoding()
    if enc is not None:
        return len(enc.encode(text, disallowed_special=()))
    return math.ceil(len(text) / 4)
