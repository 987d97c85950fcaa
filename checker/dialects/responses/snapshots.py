"""Fields of the response that must not change between its snapshots (LIF019).

``response.created``, ``response.queued``, ``response.in_progress`` and the terminal event each carry the
whole Response object. Only what describes progress moves between them (``status``, ``output``, ``usage``,
``error``, ``incomplete_details``, ``completed_at``); the rest echoes the request or names the response
(OpenAI Responses API reference, "The response object":
https://platform.openai.com/docs/api-reference/responses/object). ``id`` has its own rule (LIF012).

Left out on purpose: ``service_tier`` (the request's ``auto`` becomes the tier that served it, and OpenAI's
own streams say ``auto`` first and ``default`` at the end) and ``reasoning`` (its effort and summary may be
resolved from the model's defaults). A field is compared only where both snapshots carry it: a snapshot that
leaves a field out (llama-server's opening ones carry only id, object and status) is the schema's finding.
"""

from __future__ import annotations

from typing import Any

import orjson

from checker.findings import Finding, Position
from checker.rules import lifecycle

STABLE_FIELDS: tuple[str, ...] = (
    "object", "created_at", "model", "instructions", "tools", "tool_choice", "parallel_tool_calls",
    "temperature", "top_p", "top_logprobs", "max_output_tokens", "max_tool_calls", "previous_response_id",
    "conversation", "prompt", "prompt_cache_key", "prompt_cache_retention", "safety_identifier", "user",
    "store", "background", "text", "truncation", "metadata",
)
_SHOWN = 60


class SnapshotFields:
    """Remembers each stable field as first seen and reports its first change."""

    def __init__(self) -> None:
        self._first: dict[str, tuple[Any, str]] = {}  # field -> (value, event type that carried it first)
        self._reported: set[str] = set()

    def observe(self, etype: str, response: dict[str, Any], pos: Position) -> list[Finding]:
        out: list[Finding] = []
        for name in STABLE_FIELDS:
            if name not in response:
                continue
            value = response[name]
            first = self._first.get(name)
            if first is None:
                self._first[name] = (value, etype)
                continue
            if name in self._reported or _same(first[0], value):
                continue
            self._reported.add(name)
            out.append(lifecycle.SNAPSHOT_FIELD_CHANGED.finding(
                pos, type=etype, field=name, before=_show(first[0]), first=first[1], after=_show(value)))
        return out


def _same(a: Any, b: Any) -> bool:
    # 1 and 1.0 are the same JSON number; True and 1 are not the same JSON value.
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def _show(value: Any) -> str:
    try:
        text = orjson.dumps(value).decode()
    except TypeError:
        text = repr(value)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"
