"""Build conforming Anthropic Messages streams programmatically (the corpus, benchmarks, tests).

The builder writes what Anthropic's API sends (docs/spec.md §7): ``message_start`` with an empty message
(``msg_`` id, empty content, usage), one ``content_block_start`` / deltas / ``content_block_stop`` run per
block in index order, ``message_delta`` with the stop reason and the output tokens, ``message_stop``; an
``event:`` line equal to each event's type, and ``ping`` after ``message_start`` as the API sends it.
Events are yielded one at a time, so a stream of any size can be written without holding it in memory;
the generic writer (:mod:`checker.synth.sse`) frames them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from checker.synth import sse

Event = sse.Event


def make_id(prefix: str, name: str) -> str:
    """A realistic, deterministic id: ``msg_01…`` / ``toolu_01…`` and 22 base62-looking characters."""
    digest = hashlib.sha256(f"{prefix}{name}".encode()).hexdigest()
    alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
    return prefix + "01" + "".join(alphabet[int(digest[i:i + 2], 16) % len(alphabet)] for i in range(0, 44, 2))


def usage(input_tokens: int, output_tokens: int) -> dict[str, Any]:
    return {"input_tokens": input_tokens, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
            "output_tokens": output_tokens, "service_tier": "standard"}


@dataclass
class MessagesStreamBuilder:
    """Describe the content blocks; ``events()`` yields the stream's event objects in order."""

    name: str = "message"
    model: str = "claude-sonnet-4-5"
    blocks: list[tuple[str, Any]] = field(default_factory=list)

    def text(self, deltas: list[str]) -> "MessagesStreamBuilder":
        self.blocks.append(("text", deltas))
        return self

    def thinking(self, deltas: list[str], signature: str = "EqQBCkYIBxgCKkDsig") -> "MessagesStreamBuilder":
        self.blocks.append(("thinking", (deltas, signature)))
        return self

    def redacted_thinking(self, data: str = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT") -> "MessagesStreamBuilder":
        self.blocks.append(("redacted_thinking", data))
        return self

    def tool_use(self, name: str, json_deltas: list[str]) -> "MessagesStreamBuilder":
        self.blocks.append(("tool_use", (name, json_deltas)))
        return self

    @property
    def message_id(self) -> str:
        return make_id("msg_", self.name)

    def events(self, *, stop_reason: str | None = None, ping: bool = True) -> Iterator[Event]:
        yield {"type": "message_start", "message": {
            "id": self.message_id, "type": "message", "role": "assistant", "model": self.model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": usage(25, 1)}}
        if ping:
            yield {"type": "ping"}
        tokens = 0
        for index, (kind, spec) in enumerate(self.blocks):
            for event in _block_events(index, kind, spec, f"{self.name}/{index}"):
                tokens += event["type"] == "content_block_delta"
                yield event
        if stop_reason is None:
            stop_reason = "tool_use" if any(kind == "tool_use" for kind, _ in self.blocks) else "end_turn"
        yield {"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None},
               "usage": {"output_tokens": max(tokens, 1)}}
        yield {"type": "message_stop"}


def _block_events(index: int, kind: str, spec: Any, name: str) -> Iterator[Event]:
    if kind == "text":
        yield {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}
        for piece in spec:
            yield {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}}
    elif kind == "thinking":
        deltas, signature = spec
        yield {"type": "content_block_start", "index": index,
               "content_block": {"type": "thinking", "thinking": "", "signature": ""}}
        for piece in deltas:
            yield {"type": "content_block_delta", "index": index,
                   "delta": {"type": "thinking_delta", "thinking": piece}}
        yield {"type": "content_block_delta", "index": index,
               "delta": {"type": "signature_delta", "signature": signature}}
    elif kind == "redacted_thinking":
        yield {"type": "content_block_start", "index": index,
               "content_block": {"type": "redacted_thinking", "data": spec}}
    else:
        tool, deltas = spec
        yield {"type": "content_block_start", "index": index, "content_block": {
            "type": "tool_use", "id": make_id("toolu_", name), "name": tool, "input": {}}}
        for piece in deltas:
            yield {"type": "content_block_delta", "index": index,
                   "delta": {"type": "input_json_delta", "partial_json": piece}}
    yield {"type": "content_block_stop", "index": index}


def encode(events: Iterable[Event], *, event_line: bool = True) -> bytes:
    """Events as SSE bytes, framed the way Anthropic's API frames them (``event:`` then ``data:``)."""
    return sse.encode(events, event_line="type" if event_line else None)
