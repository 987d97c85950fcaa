"""Chat Completions streams (``POST /v1/chat/completions``, ``stream: true``) as OpenAI sends them.

Chunks are framed by the generic writer (:mod:`checker.synth.sse`) the Chat way: ``data:`` lines only, no
``event:`` line, and ``data: [DONE]`` at the end.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from checker.synth.ids import numbered_id
from checker.synth.sse import Event, encode
from checker.synth.sse import done as done_line


@dataclass
class ChatStreamBuilder:
    """Describe the choices' messages; ``chunks()`` yields a Chat Completions stream's chunks in order.

    What OpenAI's API sends (docs/spec.md §6): every chunk with the same id, created, model and
    system_fingerprint; a choice's first delta with ``role: "assistant"`` and empty content, then its text or
    tool-call fragments (the first fragment of a call with id, type and name, then argument pieces), then a
    chunk with an empty delta and the finish_reason; with ``usage`` a last chunk with ``choices: []`` (and
    ``usage: null`` on every other chunk). Choices are streamed one after the other.
    """

    completion_id: str = field(default_factory=lambda: "chatcmpl-" + numbered_id("", 1)[:29])
    model: str = "gpt-test"
    created: int = 1760000000
    system_fingerprint: str | None = "fp_5c6f2d1a8e"
    choices: list[list[tuple[str, Any]]] = field(default_factory=lambda: [[]])

    def _choice(self, index: int) -> list[tuple[str, Any]]:
        while len(self.choices) <= index:
            self.choices.append([])
        return self.choices[index]

    def text(self, deltas: list[str], *, choice: int = 0) -> "ChatStreamBuilder":
        self._choice(choice).append(("content", deltas))
        return self

    def refusal(self, deltas: list[str], *, choice: int = 0) -> "ChatStreamBuilder":
        self._choice(choice).append(("refusal", deltas))
        return self

    def reasoning(self, deltas: list[str], *, field: str = "reasoning_content", choice: int = 0) -> "ChatStreamBuilder":
        self._choice(choice).append((field, deltas))
        return self

    def tool_call(self, name: str, argument_deltas: list[str], *, choice: int = 0) -> "ChatStreamBuilder":
        self._choice(choice).append(("tool_call", (name, argument_deltas)))
        return self

    def chunk(self, choices: list[dict[str, Any]], **extra: Any) -> Event:
        """One chunk with this completion's identity."""
        chunk: Event = {"id": self.completion_id, "object": "chat.completion.chunk", "created": self.created,
                        "model": self.model}
        if self.system_fingerprint is not None:
            chunk["system_fingerprint"] = self.system_fingerprint
        chunk["choices"] = choices
        chunk.update(extra)
        return chunk

    def chunks(self, *, finish_reason: str | None = None, usage: bool = False, prompt_tokens: int = 12,
               interleave: bool = False) -> Iterator[Event]:
        """The stream's chunks. ``finish_reason`` overrides the natural one (stop, or tool_calls after calls).
        ``interleave``: the choices' chunks in turn (choice 0, 1, 0, 1, …), as OpenAI streams ``n > 1``, instead
        of one choice after the other."""
        extra: dict[str, Any] = {"usage": None} if usage else {}
        streams = [list(self._choice_chunks(index, parts, finish_reason, extra))
                   for index, parts in enumerate(self.choices)]
        if interleave:
            longest = max((len(chunks) for chunks in streams), default=0)
            yield from (chunks[n] for n in range(longest) for chunks in streams if n < len(chunks))
        else:
            yield from (chunk for chunks in streams for chunk in chunks)
        if usage:
            # A token per text or argument fragment: every chunk but each choice's role and finish chunks and
            # its calls' first fragments.
            tokens = sum(len(chunks) - 2 - sum(kind == "tool_call" for kind, _ in parts)
                         for chunks, parts in zip(streams, self.choices))
            yield self.chunk([], usage={"prompt_tokens": prompt_tokens, "completion_tokens": tokens,
                                        "total_tokens": prompt_tokens + tokens,
                                        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
                                        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                                                      "accepted_prediction_tokens": 0,
                                                                      "rejected_prediction_tokens": 0}})

    def _choice_chunks(self, index: int, parts: list[tuple[str, Any]], finish_reason: str | None,
                       extra: dict[str, Any]) -> Iterator[Event]:
        """One choice's chunks: its role, its fragments in order, its finish."""
        yield self.chunk([_chat_choice(index, {"role": "assistant", "content": "", "refusal": None})], **extra)
        call_index = 0
        for kind, spec in parts:
            if kind == "tool_call":
                name, deltas = spec
                call_id = numbered_id("call_", 1000 * index + call_index)[:29]
                yield self.chunk([_chat_choice(index, {"tool_calls": [
                    {"index": call_index, "id": call_id, "type": "function",
                     "function": {"name": name, "arguments": ""}}]})], **extra)
                for piece in deltas:
                    yield self.chunk([_chat_choice(index, {"tool_calls": [
                        {"index": call_index, "function": {"arguments": piece}}]})], **extra)
                call_index += 1
                continue
            for piece in spec:
                yield self.chunk([_chat_choice(index, {kind: piece})], **extra)
        reason = finish_reason or ("tool_calls" if call_index else "stop")
        yield self.chunk([_chat_choice(index, {}, reason)], **extra)


def _chat_choice(index: int, delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
    return {"index": index, "delta": delta, "logprobs": None, "finish_reason": finish_reason}


def encode_chat(chunks: Iterable[Event], *, done: bool = True, eol: str = "\n") -> bytes:
    """Chat chunks as SSE bytes the way OpenAI frames them: data-only events, then ``data: [DONE]``."""
    return encode(chunks, event_line=None, eol=eol) + (done_line(eol).encode() if done else b"")
