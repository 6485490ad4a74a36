"""Token counting for knowledge slices, with a documented fallback chain.

1. A configured model (argument `model`, else env `CANNPILOT_MODEL`): litellm's `token_counter`
   for that model (imported lazily, with `LITELLM_LOCAL_MODEL_COST_MAP=True` so nothing is fetched).
2. Otherwise tiktoken `cl100k_base`, loaded offline from the copy of the BPE file that litellm ships
   (`litellm/litellm_core_utils/tokenizers/`, pointed to by `TIKTOKEN_CACHE_DIR`).
3. If neither works: ceil(chars / 4), the usual estimate for English and code.

`tokenizer_name(model)` says which one is in use, so figures can be labelled.
"""

from __future__ import annotations

import functools
import importlib.util
import math
import os


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
    try:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        d = _litellm_tokenizer_dir()
        if d:
            os.environ.setdefault("TIKTOKEN_CACHE_DIR", d)
        from litellm import token_counter

        return token_counter
    except Exception:
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
            except Exception:
                pass
    enc = _tiktoken_encoding()
    if enc is not None:
        return len(enc.encode(text, disallowed_special=()))
    return math.ceil(len(text) / 4)
