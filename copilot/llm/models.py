"""Model configuration: which model, where it is served, which environment variable holds its key.

A `ModelConfig` never holds a key: only the *name* of the environment variable, read at call time.
"""

from __future__ import annotations

import os
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

# Where litellm looks for a provider's key when the model table names none (for messages only).
PROVIDER_KEY_ENV = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "dashscope": "DASHSCOPE_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "groq": "GROQ_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "together_ai": "TOGETHERAI_API_KEY",
    "fireworks_ai": "FIREWORKS_AI_API_KEY",
    "xai": "XAI_API_KEY",
}
_BARE_OPENAI = re.compile(r"^(gpt-|o\d|chatgpt-|text-)")
_BARE_ANTHROPIC = re.compile(r"^claude-")
_USERINFO = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.\-]*://)[^/@]*@")


def safe_url(url: str | None) -> str | None:
    """`url` without any user:password part."""
    return None if url is None else _USERINFO.sub(r"\1***@", url)


class ModelConfig(BaseModel):
    """One entry of the model table.

    `name` is the litellm model string (`deepseek/deepseek-chat`, `openai/qwen2.5-coder` for a local
    OpenAI-compatible server with `api_base`). `api_key_env` names the environment variable that
    holds the key; None means the provider's usual variable, or no key for a local server.
    Prices (USD per million tokens) override litellm's table, e.g. for a self-hosted model.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    api_base: str | None = None
    api_key_env: str | None = None
    aliases: tuple[str, ...] = ()
    timeout_s: float = Field(default=120.0, gt=0)
    max_tokens: int | None = Field(default=None, gt=0)
    temperature: float | None = Field(default=None, ge=0)
    input_usd_per_mtok: float | None = Field(default=None, ge=0)
    output_usd_per_mtok: float | None = Field(default=None, ge=0)

    @model_validator(mode="before")
    @classmethod
    def _no_inline_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for k in data:
                if str(k).lower() in {"api_key", "key", "token", "secret", "password"}:
                    raise ValueError(
                        f"`{k}` cannot be stored in the model table: put the key in an environment "
                        "variable and name that variable in `api_key_env`")
        return data

    @field_validator("name")
    @classmethod
    def _name_not_empty(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("model name is empty")
        return v.strip()

    @field_validator("api_key_env")
    @classmethod
    def _env_name(cls, v: str | None) -> str | None:
        if v is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", v):
            raise ValueError(f"`api_key_env` must be an environment variable name, got {v[:3]}...")
        return v

    @property
    def provider(self) -> str:
        if "/" in self.name:
            return self.name.split("/", 1)[0]
        if _BARE_OPENAI.match(self.name):
            return "openai"
        if _BARE_ANTHROPIC.match(self.name):
            return "anthropic"
        return ""

    @property
    def is_local(self) -> bool:
        """Served by an OpenAI-compatible server we were given the address of."""
        return self.api_base is not None

    def key_env(self) -> str | None:
        """The environment variable that should hold the key (the configured one or the usual one)."""
        if self.api_key_env:
            return self.api_key_env
        if self.is_local:
            return None
        return PROVIDER_KEY_ENV.get(self.provider)

    def read_key(self) -> str | None:
        """The key, read from the environment now. Never store or log the result."""
        env = self.key_env()
        return (os.environ.get(env) or None) if env else None

    def has_key(self) -> bool:
        return self.read_key() is not None

    def __repr__(self) -> str:
        env = self.key_env()
        key_state = "no key needed" if env is None else ("set" if self.has_key() else "not set")
        return (f"ModelConfig(name={self.name!r}, api_base={safe_url(self.api_base)!r}, "
                f"api_key_env={env!r} ({key_state}), aliases={list(self.aliases)!r})")

    __str__ = __repr__


class ModelTable:
    """Looks models up by name or alias; an unknown name is used as a litellm model string as is."""

    def __init__(self, models: list[ModelConfig] | tuple[ModelConfig, ...] = ()) -> None:
        self.models = list(models)
        self._index: dict[str, ModelConfig] = {}
        for m in self.models:
            for key in (m.name, *m.aliases):
                other = self._index.get(key)
                if other is not None and other is not m:
                    raise ValueError(f"`{key}` names two models: {other.name} and {m.name}")
                self._index[key] = m

    def resolve(self, name: str) -> ModelConfig:
        return self._index.get(name) or ModelConfig(name=name)

    def __contains__(self, name: str) -> bool:
        return name in self._index
