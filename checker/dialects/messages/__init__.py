"""Anthropic Messages streamed as Server-Sent Events (``POST /v1/messages``, ``stream: true``; docs/spec.md §7).

``DIALECT`` is what the engine, the reports and the client matrix know of it (see checker/dialects/base.py).
The machine, the schema findings and the client effects are imported when first used, so that recognising a
stream costs none of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from checker.dialects.base import ClientEffects, Dialect, Machine, NonStreamed, Piece, Unit, lazy
from checker.dialects.messages import vocabulary
from checker.findings import Finding, Position
from checker.request_checks import RequestShape


def make_machine(**options: Any) -> Machine:
    from checker.dialects.messages.machine import MessagesMachine

    return MessagesMachine(**options)


def schema_findings(violations: Sequence[Any], etype: str, pos: Position) -> list[Finding]:
    """Each violation as SCH001 (missing properties of one object as one finding), but usage's (ANT006)."""
    from checker.dialects.messages.schema_findings import event_schema_findings

    return event_schema_findings(violations, etype, pos)


def screen(obj: dict[str, Any], pos: Position) -> tuple[list[Finding], bool]:
    """An event without a string ``type`` goes no further (both SDKs dispatch on it)."""
    from checker.rules import schema

    if not isinstance(obj.get("type"), str):
        return [schema.MISSING_TYPE.finding(pos)], False
    return [], True


def unit(obj: dict[str, Any]) -> Unit | None:
    """The content block an event belongs to (``sse-check diff`` draws a lane per block): the block its
    ``content_block_start`` carries (a tool call's id), or the one its ``index`` names; None for the message."""
    if obj.get("type") not in (vocabulary.BLOCK_START, vocabulary.BLOCK_DELTA, vocabulary.BLOCK_STOP):
        return None
    raw = obj.get("index")
    index = raw if type(raw) is int else None
    block = obj.get("content_block")
    if isinstance(block, dict):
        block_id, kind = block.get("id"), block.get("type")
        return Unit(block_id if isinstance(block_id, str) else None, index, kind if isinstance(kind, str) else None,
                    carries=True, opens=True)
    return Unit(None, index)


# The mark kind of each event type (the timelines' marks; diff coalesces runs of "delta" and "keepalive").
_KINDS = {vocabulary.MESSAGE_START: "lifecycle", vocabulary.BLOCK_START: "added", vocabulary.BLOCK_DELTA: "delta",
          vocabulary.BLOCK_STOP: "done", vocabulary.MESSAGE_DELTA: "lifecycle", vocabulary.MESSAGE_STOP: "terminal",
          vocabulary.PING: "keepalive", vocabulary.ERROR: "error"}


def pieces(obj: dict[str, Any]) -> list[Piece]:
    """An event as one piece of its block (or of the message): a delta named by its own type (``text_delta``,
    ``input_json_delta``), so that ``sse-check diff`` counts a run of them as one step of that block."""
    etype = obj.get("type")
    symbol = etype if isinstance(etype, str) else "(no type)"
    if etype == vocabulary.BLOCK_DELTA:
        delta = obj.get("delta")
        kind = delta.get("type") if isinstance(delta, dict) else None
        symbol = kind if isinstance(kind, str) else f"{symbol} (untyped delta)"
    elif etype == vocabulary.MESSAGE_DELTA:
        delta = obj.get("delta")
        reason = delta.get("stop_reason") if isinstance(delta, dict) else None
        symbol = f"{symbol} ({reason})" if isinstance(reason, str) else symbol
    kind = _KINDS.get(etype, "other") if isinstance(etype, str) else "other"
    return [Piece(unit(obj), symbol, kind)]


def effects() -> ClientEffects:
    from checker.dialects.messages.effects import effects as build

    return build()


_MARKS = _KINDS
_LETTERS = {vocabulary.MESSAGE_START: "S", vocabulary.MESSAGE_DELTA: "D", vocabulary.MESSAGE_STOP: "✓"}


def nonstream() -> NonStreamed:
    from checker.dialects.messages.nonstream import NONSTREAMED

    return NONSTREAMED


DIALECT = Dialect(
    name="messages",
    title="Anthropic Messages",
    endpoints=("/messages",),
    recognise=vocabulary.recognise,
    make_machine=make_machine,
    event_type=vocabulary.event_type,
    event_names=True,
    done_sentinel="ignored",
    schema_set="anthropic",
    schema_findings=schema_findings,
    rule_modules=("checker.rules.messages",),
    effects=effects,
    lane=vocabulary.lane,
    terminal_types=vocabulary.TERMINAL_TYPES,
    marks=_MARKS,
    letters=_LETTERS,
    unit=unit,
    unit_words={"tool_use": "tool call", "server_tool_use": "server tool call",
                "redacted_thinking": "redacted thinking"},
    unit_nouns={"text": "text block", "thinking": "thinking block", "tool_use": "tool_use block",
                "redacted_thinking": "redacted_thinking block"},
    pieces=pieces,
    stream_lane="message",
    screen=screen,
    requests=RequestShape("messages", frozenset({"model", "messages", "max_tokens", "stream"})),
    nonstream=nonstream,
    requested_format=lazy("checker.dialects.messages.structured", "requested_format"),
    answer_texts=lazy("checker.dialects.messages.structured", "answer_texts"),
)
