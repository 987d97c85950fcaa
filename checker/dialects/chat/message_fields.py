"""What the chat machine reads of a streamed choice beyond its delta and of a tool-call fragment's identity:
a `message` object beside the delta (CHT029: openai-node puts it over the message it built) and a later fragment
that names its call again (CHT030); and the findings told only at the end, once it is known what each SDK's
final completion holds: chunks after the usage chunk (CHT020) and a vendor reasoning field (CHT025)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from checker.findings import Finding, Position, Severity
from checker.rules import chat as rules

if TYPE_CHECKING:
    from checker.dialects.chat.machine import Choice, ToolCall


def note_message(state: "Choice", message: dict[str, Any], pos: Position) -> None:
    """A streamed choice carried `message`: openai-node will put it over the message its deltas built."""
    state.messages += 1
    if state.message_at is None:
        state.message_at = pos
    state.message_calls_null = "tool_calls" in message and not isinstance(message["tool_calls"], list)
    state.built_before_message = bool(state.lengths) or bool(state.calls)
    state.calls_before_message = bool(state.calls)
    state.calls_after_message = False  # a tool-call delta of this chunk or a later one sets it again


def message_finding(state: "Choice", at: Position) -> Finding:
    """CHT029 for a choice that carried `message`; what the last one does to openai-node's final message decides
    its effect, and a message that replaced nothing the deltas built is a warning (nothing is lost)."""
    if state.calls_before_message and not state.calls_after_message:
        effect, what = "calls", ": the last one replaces the streamed tool calls"
    elif state.message_calls_null and not state.calls_after_message:
        effect, what = "null", ": the last one has tool_calls: null"
    elif state.built_before_message:
        effect, what = "lost", ": the last one replaces what the deltas built before it"
    else:
        effect, what = None, ""
    finding = rules.CHOICE_MESSAGE.finding(at, details={"index": state.index, "count": state.messages,
                                                        "effect": effect},
                                           index=state.index, count=state.messages, what=what)
    return finding if effect is not None else replace(finding, severity=Severity.WARNING)


def resent(fragment: dict[str, Any], function: dict[str, Any], call: "ToolCall") -> str:
    """What a later fragment names again that it should not (CHT030): an empty id or name, the same type."""
    parts = []
    if fragment.get("id") == "":
        parts.append("an empty id")
    if function.get("name") == "":
        parts.append("an empty function.name")
    if isinstance(fragment.get("type"), str) and fragment["type"] and fragment["type"] == call.type:
        parts.append(f"its type {call.type!r} again")
    return " and ".join(parts)


def late_usage_findings(after: list[tuple[Position, str]], streamed: dict[str, Any] | None,
                        kept: list[dict[str, Any] | None]) -> list[Finding]:
    """CHT020 for each chunk after the usage chunk, told at the end what each SDK's final usage is: openai-python
    takes the last chunk's usage (``completion_snapshot.usage = chunk.usage``), openai-node the last one a chunk
    carried (its fields copied over the snapshot). Where both end with the usage the server streamed (a vendor
    that repeats the usage chunk: Groq, Hugging Face), no client's result differs and the finding is a warning
    (docs/severity.md)."""
    if not after:
        return []
    python, node = (_usage_outcome(value, streamed) for value in kept)
    out = []
    for pos, what in after:
        finding = rules.USAGE_NOT_LAST.finding(pos, what=what, python=python, node=node)
        if python == node == "the same":
            finding = replace(finding, severity=Severity.WARNING)
        out.append(finding)
    return out


def _usage_outcome(value: dict[str, Any] | None, streamed: dict[str, Any] | None) -> str:
    if value == streamed:
        return "the same"
    return "None" if value is None else "other counts"


def reasoning_findings(state: "Choice") -> list[Finding]:
    """CHT025 for each vendor reasoning field of a choice, at its first fragment, told whether it came in more
    than one: openai-node assigns each fragment over the last, so only then does its message lose reasoning."""
    return [rules.VENDOR_REASONING.finding(pos, index=state.index, field=name,
                                           fragments="one" if state.lengths.get(name) == first else "several")
            for name, (pos, first) in state.reasoning_at.items()]
