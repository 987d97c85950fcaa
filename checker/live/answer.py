"""What a server answered, as the history checks and the live replay need it: output, reasoning, token usage.

Plain records, filled per dialect by its request adapter (:mod:`checker.live.adapters`): an :class:`Outcome`
holds a Responses answer's output items, or a chat answer's one assistant message; its :class:`Usage` is
read from the dialect's ``usage`` object (:class:`UsageFields` says where its counts are), completed from
llama.cpp's ``timings`` extension (``cache_n`` cached, ``prompt_n`` evaluated): older llama-server builds
report no ``cached_tokens``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# An adapter's name: "responses", "chat" (checker.live.adapters).
Api = str


@dataclass(frozen=True, slots=True)
class Usage:
    """Prompt tokens, the part of them served from the prefix cache, and output tokens (None: not reported)."""

    prompt: int | None
    cached: int | None
    output: int | None
    source: str  # "usage" or "timings": where ``cached`` came from
    written: int | None = None  # prompt tokens written to the cache (Anthropic's cache_creation_input_tokens)

    def as_dict(self) -> dict[str, Any]:
        return {"prompt": self.prompt, "cached": self.cached, "output": self.output, "source": self.source}


@dataclass(frozen=True, slots=True, kw_only=True)
class UsageFields:
    """Where a dialect's ``usage`` object keeps its counts."""

    prompt: str  # input_tokens / prompt_tokens
    output: str  # output_tokens / completion_tokens
    prompt_details: str  # input_tokens_details / prompt_tokens_details (its cached_tokens)
    output_details: str  # output_tokens_details / completion_tokens_details (its reasoning_tokens)

    def reasoning_tokens(self, usage: Any) -> int | None:
        """The reasoning tokens an answer's usage reports (None: not reported)."""
        details = usage.get(self.output_details) if isinstance(usage, Mapping) else None
        return _int(details.get("reasoning_tokens")) if isinstance(details, Mapping) else None


@dataclass(slots=True, kw_only=True)
class Outcome:
    """One answer: for Responses its output items, for chat the one assistant message (with its reasoning)."""

    api: Api
    response_id: str | None = None
    output: list[dict[str, Any]] = field(default_factory=list)
    usage: Usage | None = None
    # chat only: the field the server streamed its reasoning in ("reasoning_content" or "reasoning")
    reasoning_field: str = "reasoning_content"


def _int(value: Any) -> int | None:
    return value if type(value) is int and value >= 0 else None


def usage_from(fields: UsageFields, usage: Any, timings: Any) -> Usage | None:
    """Usage from a dialect's ``usage`` object, completed from llama.cpp's ``timings`` where it is silent."""
    usage = usage if isinstance(usage, Mapping) else {}
    timings = timings if isinstance(timings, Mapping) else {}
    prompt, output = _int(usage.get(fields.prompt)), _int(usage.get(fields.output))
    details = usage.get(fields.prompt_details)
    cached = _int(details.get("cached_tokens")) if isinstance(details, Mapping) else None
    source = "usage"
    cache_n, prompt_n = _int(timings.get("cache_n")), _int(timings.get("prompt_n"))
    if cached is None and cache_n is not None:
        cached, source = cache_n, "timings"
    if prompt is None and cache_n is not None and prompt_n is not None:
        prompt = cache_n + prompt_n
    if prompt is None and cached is None and output is None:
        return None
    return Usage(prompt=prompt, cached=cached, output=output, source=source)
