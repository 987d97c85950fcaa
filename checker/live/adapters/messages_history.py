"""What an Anthropic Messages client sends back of the thinking the server emitted (RPL008-RPL010).

The rule (docs/spec.md §5 and §7.2): the thinking and redacted_thinking blocks of an assistant message go back
exactly as they came (text, ``signature``, ``data``), in order, first in the message; inside the current turn
(no user message with anything but ``tool_result`` blocks since) they must come back, or Anthropic answers
HTTP 400 ("Expected `thinking` or `redacted_thinking`…"); a thinking block without its signature, or with its
text or signature changed, is refused the same way. Earlier turns may leave them out: Anthropic strips them.

An assistant message is recognised as the answer of an earlier exchange by its place in ``messages`` (a
history only grows) and by what it says besides its thinking (its text and tool_use ids): the anthropic SDKs
send ``message.content`` back as it came, so both are as the server streamed them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from checker.findings import Finding
from checker.live.adapters.base import START, response_number
from checker.live.conversation import Conversation, EmittedThinking, Key, json_list
from checker.rules import replay as rules

THINKING_TYPES = ("thinking", "redacted_thinking")
# The fields of a block that must come back unchanged (others, such as cache_control, are the client's).
_KEPT = {"thinking": ("thinking", "signature"), "redacted_thinking": ("data",)}


def _blocks(content: Any) -> list[Mapping[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in json_list(content) if isinstance(b, Mapping)]


def message_key(position: int, content: Any) -> Key:
    """An assistant message's identity for the thinking it came with: its place and its other blocks."""
    said = [f"text\x1f{b.get('text')}" if b.get("type") == "text" else f"call\x1f{b.get('id')}"
            for b in _blocks(content) if b.get("type") in ("text", "tool_use")]
    return (str(position), *said)


def remember(conversation: Conversation, position: int, content: Any, number: int) -> None:
    """Keep the thinking blocks of an answer that will be message ``position`` of the next request."""
    thinking = tuple(dict(b) for b in _blocks(content) if b.get("type") in THINKING_TYPES)
    if thinking:
        conversation.thinking[message_key(position, content)] = EmittedThinking(blocks=thinking, number=number)


def starts_turn(message: Mapping[str, Any]) -> bool:
    """A user message starts a turn unless it holds only tool results (the tool loop goes on)."""
    return message.get("role") == "user" and any(b.get("type") != "tool_result" for b in _blocks(message.get("content")))


def thinking_findings(request: Mapping[str, Any], conversation: Conversation) -> list[Finding]:
    """RPL008-RPL010 for one Messages request: its assistant messages against the thinking emitted for them."""
    messages = request.get("messages")
    if not isinstance(messages, list) or not conversation.thinking:
        return []
    last_user = max((i for i, m in enumerate(messages) if isinstance(m, Mapping) and starts_turn(m)), default=-1)
    thinking = request.get("thinking")
    disabled = isinstance(thinking, Mapping) and thinking.get("type") == "disabled"
    found: list[Finding] = []
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping) or message.get("role") != "assistant":
            continue
        emitted = conversation.thinking.get(message_key(index, message.get("content")))
        if emitted is None:
            continue
        finding = _judge(index, _blocks(message.get("content")), emitted, current=index > last_user and not disabled)
        if finding is not None:
            found.append(finding)
    return found


def _judge(index: int, blocks: Sequence[Mapping[str, Any]], emitted: EmittedThinking, *, current: bool,
           ) -> Finding | None:
    sent = [b for b in blocks if b.get("type") in THINKING_TYPES]
    pointer, response = f"/messages/{index}", response_number(emitted.number)
    details: dict[str, Any] = {"index": index, "response": emitted.number, "emitted": len(emitted.blocks),
                               "sent": len(sent)}
    if not sent:
        if not current:
            return None  # an earlier turn: Anthropic strips its thinking, the rule leaves it out
        return rules.THINKING_BLOCK_MISSING.finding(START, pointer=pointer, index=index, response=response,
                                                    count=_count(emitted.blocks), details=details)
    for n, (mine, theirs) in enumerate(zip(sent, emitted.blocks)):
        signature = theirs.get("signature")
        if theirs.get("type") == "thinking" and mine.get("type") == "thinking" and signature \
                and not mine.get("signature"):
            return rules.THINKING_SIGNATURE_DROPPED.finding(
                START, pointer=f"{pointer}/content", index=index, block=n, response=response,
                details={**details, "block": n})
    what = _changes(blocks, sent, emitted.blocks)
    if what is None:
        return None
    return rules.THINKING_BLOCK_ALTERED.finding(START, pointer=f"{pointer}/content", index=index, what=what,
                                                response=response, details={**details, "changed": what})


def _count(blocks: Sequence[Mapping[str, Any]]) -> str:
    kinds = [str(b.get("type")) for b in blocks]
    return " and ".join(f"{kinds.count(k)} {k} block{'s' if kinds.count(k) != 1 else ''}"
                        for k in THINKING_TYPES if k in kinds)


def _changes(blocks: Sequence[Mapping[str, Any]], sent: Sequence[Mapping[str, Any]],
             emitted: Sequence[Mapping[str, Any]]) -> str | None:
    """How the thinking sent back differs from the emitted (None: as emitted)."""
    if len(sent) != len(emitted):
        return f"{len(sent)} thinking block(s) where {len(emitted)} were emitted"
    for n, (mine, theirs) in enumerate(zip(sent, emitted)):
        if mine.get("type") != theirs.get("type"):
            return f"block {n} is {mine.get('type')}, it was {theirs.get('type')}"
        changed = [f for f in _KEPT.get(str(theirs.get("type")), ()) if (mine.get(f) or "") != (theirs.get(f) or "")]
        if changed:
            return f"block {n}'s {' and '.join(changed)}"
    first_other = next((i for i, b in enumerate(blocks) if b.get("type") not in THINKING_TYPES), len(blocks))
    if any(b.get("type") in THINKING_TYPES for b in blocks[first_other:]):
        return f"a thinking block after the {blocks[first_other].get('type')} block (it must come first)"
    return None
