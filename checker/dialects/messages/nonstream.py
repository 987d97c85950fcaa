"""A ``stream: false`` Anthropic message (``POST /v1/messages``), judged as what it is, and compared with the same
request's stream (:data:`NONSTREAMED`, the dialect's hook; docs/spec.md §7).

The answer is the ``Message`` the SDKs build from a stream (anthropic-sdk-python 2.15.0's type, in
schemas/anthropic), so it is checked with the rules that judge that message when it streams: its id (ANT004),
each block's final form (a thinking block's signature, ANT013; a redacted_thinking block's data, ANT014; a tool
id's prefix, ANT015, and uniqueness, ANT016), and ``stop_reason`` against its blocks and the request's
``max_tokens`` (ANT021); and against the ``Message`` schema (SCH001 on ``message``).

Parity compares its content blocks (type, a tool id's prefix, the text, the thinking, or a call's name and input
as canonical JSON) and its stop reason (a digest type of its own) with those of the message the stream built,
rebuilt here from its events as the SDKs accumulate them.

Pure: decoded JSON in, findings out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from checker.dialects.base import Digest, NonStreamed, id_prefix
from checker.dialects.messages import vocabulary as v
from checker.dialects.messages.schema_findings import event_schema_findings
from checker.dialects.messages.structured import nonstream_answers
from checker.findings import Finding, Position
from checker.rules import messages as r

MESSAGE = "message"
_STOP = "stop_reason "


def problem(obj: dict[str, Any]) -> str | None:
    """Why a JSON object is not a message as the SDKs read one (``content`` blocks), if it is not."""
    content = obj.get("content")
    if not isinstance(content, list):
        return "no content array" if content is None else "content is not an array"
    if obj.get("type") not in (None, MESSAGE):
        return f"its type is {str(obj.get('type'))[:40]!r}, not 'message'"
    return None


def consistency(obj: dict[str, Any], request: Mapping[str, Any], pos: Position) -> list[Finding]:
    """The message's id, each block's final form, and its stop_reason, by the stream rules."""
    out: list[Finding] = []
    mid = obj.get("id")
    if not (isinstance(mid, str) and mid.startswith(v.MESSAGE_ID_PREFIX)):
        out.append(r.MESSAGE_ID_PREFIX.finding(pos, id=str(mid)))
    tool_ids: dict[str, int] = {}
    tools: list[int] = []
    for index, block in enumerate(obj["content"]):
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == v.THINKING and not _text(block.get("signature")):
            out.append(r.SIGNATURE_MISSING.finding(pos, index=index, what=" (it is empty)"
                                                   if block.get("signature") == "" else ""))
        elif kind == v.REDACTED_THINKING and not _text(block.get("data")):
            out.append(r.REDACTED_DATA.finding(pos, index=index))
        elif kind in v.TOOL_BLOCKS:
            tools.extend([index] if kind == v.TOOL_USE else [])
            out.extend(_tool_id(block, kind, index, tool_ids, pos))
    reason = obj.get("stop_reason")
    if isinstance(reason, str):
        why = _inconsistency(reason, tools, obj.get("usage"), request)
        if why:
            out.append(r.STOP_REASON_INCONSISTENT.finding(pos, pointer="/stop_reason", stop_reason=reason, why=why))
    return out


def _tool_id(block: dict[str, Any], kind: str, index: int, seen: dict[str, int], pos: Position) -> list[Finding]:
    tid = block.get("id")
    if not isinstance(tid, str) or not tid:
        return [r.TOOL_ID_REPEATED.finding(pos, id=str(tid), index=index, first="none: it has no id")]
    out = []
    prefix = v.TOOL_ID_PREFIXES[kind]
    if not tid.startswith(prefix):
        out.append(r.TOOL_ID_PREFIX.finding(pos, block=kind, index=index, id=tid, prefix=prefix))
    first = seen.setdefault(tid, index)
    if first != index:
        out.append(r.TOOL_ID_REPEATED.finding(pos, id=tid, index=index, first=first))
    return out


def _inconsistency(reason: str, tools: list[int], usage: Any, request: Mapping[str, Any]) -> str | None:
    """What contradicts the stop reason, as the machine says it of a stream's message_delta."""
    if tools and reason not in ("tool_use", "max_tokens", "pause_turn"):
        return f"content block {tools[0]} is a tool_use block"
    if reason == "tool_use" and not tools:
        return "no tool_use block was sent"
    limit = request.get("max_tokens")
    used = usage.get("output_tokens") if isinstance(usage, dict) else None
    if type(limit) is int and type(used) is int and used >= limit and reason not in ("max_tokens", "tool_use"):
        return f"usage.output_tokens ({used}) reached the request's max_tokens ({limit})"
    return None


def schema(obj: dict[str, Any], schemas: Any, pos: Position) -> list[Finding]:
    """The message against the SDK's ``Message`` type (SCH001, as the stream's events are reported)."""
    return event_schema_findings(schemas.validate_object("Message", obj), MESSAGE, pos)


# --- parity ---------------------------------------------------------------------------------------------------


def digest(obj: dict[str, Any]) -> list[Digest]:
    blocks = [b for b in obj.get("content") or () if isinstance(b, dict)]
    return _digests(blocks, obj.get("stop_reason"))


def stream_final(events: Sequence[dict[str, Any]]) -> tuple[str, list[Digest]] | None:
    """(its stop reason as "stop_reason end_turn", or message_stop; the digests) of the message the events build;
    None when the stream never finished it (no stop reason and no message_stop)."""
    blocks: dict[int, dict[str, Any]] = {}
    partial: dict[int, list[str]] = {}
    reason: Any = None
    stopped = False
    for event in events:
        etype, index = event.get("type"), event.get("index")
        if etype == v.BLOCK_START and type(index) is int and isinstance(event.get("content_block"), dict):
            blocks[index] = dict(event["content_block"])
        elif etype == v.BLOCK_DELTA and index in blocks and isinstance(event.get("delta"), dict):
            delta = event["delta"]
            if delta.get("type") == "input_json_delta":
                partial.setdefault(index, []).append(_text(delta.get("partial_json")))
            elif delta.get("type") in ("text_delta", "thinking_delta"):
                name = v.DELTA_FIELD[delta["type"]]
                blocks[index][name] = _text(blocks[index].get(name)) + _text(delta.get(name))
        elif etype == v.MESSAGE_DELTA and isinstance(event.get("delta"), dict):
            reason = event["delta"].get("stop_reason") or reason
        stopped = stopped or etype == v.MESSAGE_STOP
    if reason is None and not stopped:
        return None
    for index, pieces in partial.items():
        joined = "".join(pieces)
        try:
            blocks[index]["input"] = json.loads(joined) if joined.strip() else blocks[index].get("input")
        except ValueError:
            blocks[index]["input"] = joined
    terminal = f"{_STOP}{reason}" if isinstance(reason, str) else v.MESSAGE_STOP
    return terminal, _digests([blocks[i] for i in sorted(blocks)], reason)


def _digests(blocks: list[dict[str, Any]], reason: Any) -> list[Digest]:
    out: list[Digest] = []
    for block in blocks:
        kind = str(block.get("type"))
        if kind in v.TOOL_BLOCKS:
            inputs = block.get("input")
            shown = inputs if isinstance(inputs, str) else json.dumps(inputs, sort_keys=True, separators=(",", ":"),
                                                                      ensure_ascii=False)
            out.append({"type": kind, "id_prefix": id_prefix(block.get("id")),
                        "text": f"{block.get('name')}({shown})"})
        else:
            out.append({"type": kind, "text": _text(block.get("thinking")) + _text(block.get("text"))})
    out.append({"type": f"{_STOP}{reason}", "text": ""})
    return out


def streamed(terminal: str) -> tuple[str, str]:
    return terminal, f"message ({terminal or 'unfinished'})"


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


NONSTREAMED = NonStreamed(what="Message object", problem=problem, consistency=consistency, schema=schema,
                          digest=digest, stream_final=stream_final, streamed=streamed,
                          call_types=v.TOOL_BLOCKS, answer_texts=nonstream_answers)
