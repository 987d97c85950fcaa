"""Build conforming Responses streams programmatically (benchmarks, property tests, examples).

The builder writes what OpenAI's API sends, per the OpenAPI description 2.3.0:
full response objects, ``sequence_number`` from 1, ``output_index`` and
``content_index`` on every scoped event, ``logprobs`` on text events, parts
with annotations. Events are yielded one at a time so a stream of any size can
be written without holding it in memory.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

Event = dict[str, Any]


def _id(prefix: str, n: int) -> str:
    # Random-looking but reproducible, like real ids (no long digit runs).
    return prefix + hashlib.blake2b(f"{prefix}{n}".encode(), digest_size=16).hexdigest()


def response_object(response_id: str, status: str, output: list[Any], *, usage: dict[str, Any] | None = None,
                    max_output_tokens: int | None = None, error: Any = None,
                    incomplete_details: Any = None) -> dict[str, Any]:
    response = {
        "id": response_id,
        "object": "response",
        "created_at": 1760000000,
        "status": status,
        "background": False,
        "error": error,
        "incomplete_details": incomplete_details,
        "instructions": None,
        "max_output_tokens": max_output_tokens,
        "max_tool_calls": None,
        "model": "gpt-test",
        "output": output,
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "reasoning": {"effort": "medium", "summary": None},
        "service_tier": "default",
        "store": True,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}, "verbosity": "medium"},
        "tool_choice": "auto",
        "tools": [],
        "top_logprobs": 0,
        "top_p": 1.0,
        "truncation": "disabled",
        "metadata": {},
    }
    if usage is not None:  # optional, but an object when present
        response["usage"] = usage
    return response


def usage_object(input_tokens: int, output_tokens: int, reasoning_tokens: int = 0) -> dict[str, Any]:
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
        "total_tokens": input_tokens + output_tokens,
    }


@dataclass
class StreamBuilder:
    """Describe the output items; ``events()`` yields the stream's event objects in order."""

    response_id: str = field(default_factory=lambda: _id("resp_", 1))
    items: list[tuple[str, Any]] = field(default_factory=list)
    _counter: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def message(self, deltas: list[str]) -> "StreamBuilder":
        self.items.append(("message", deltas))
        return self

    def refusal(self, deltas: list[str]) -> "StreamBuilder":
        self.items.append(("refusal", deltas))
        return self

    def reasoning(self, deltas: list[str], summary: list[str] | None = None) -> "StreamBuilder":
        self.items.append(("reasoning", (deltas, summary or [])))
        return self

    def function_call(self, name: str, argument_deltas: list[str]) -> "StreamBuilder":
        self.items.append(("function_call", (name, argument_deltas)))
        return self

    def events(self, *, terminal: str = "completed", max_output_tokens: int | None = None) -> Iterator[Event]:
        seq = itertools.count(1)
        rid = self.response_id
        yield {"type": "response.created", "sequence_number": next(seq),
               "response": response_object(rid, "in_progress", [], max_output_tokens=max_output_tokens)}
        yield {"type": "response.in_progress", "sequence_number": next(seq),
               "response": response_object(rid, "in_progress", [], max_output_tokens=max_output_tokens)}
        done_items: list[dict[str, Any]] = []
        tokens = 0
        for index, (kind, spec) in enumerate(self.items):
            n = next(self._counter)
            if kind in ("message", "refusal"):
                gen = _message_events(index, _id("msg_", n), kind, spec, seq)
            elif kind == "reasoning":
                gen = _reasoning_events(index, _id("rs_", n), spec[0], spec[1], seq)
            else:
                gen = _call_events(index, _id("fc_", n), _id("call_", n), spec[0], spec[1], seq)
            for event in gen:
                if event["type"] == "response.output_item.done":
                    done_items.append(event["item"])
                elif event["type"].endswith(".delta"):
                    tokens += 1
                yield event
        status = {"completed": "completed", "incomplete": "incomplete", "failed": "failed"}[terminal]
        usage = usage_object(12, tokens)
        error = {"code": "server_error", "message": "The model failed."} if terminal == "failed" else None
        details = {"reason": "max_output_tokens"} if terminal == "incomplete" else None
        yield {"type": f"response.{terminal}", "sequence_number": next(seq),
               "response": response_object(rid, status, done_items, usage=usage, error=error,
                                           incomplete_details=details, max_output_tokens=max_output_tokens)}


def _message_events(index: int, item_id: str, kind: str, deltas: list[str], seq: Iterator[int]) -> Iterator[Event]:
    base = {"item_id": item_id, "output_index": index}
    yield {"type": "response.output_item.added", "sequence_number": next(seq), "output_index": index,
           "item": {"id": item_id, "type": "message", "status": "in_progress", "role": "assistant", "content": []}}
    text = "".join(deltas)
    if kind == "message":
        part_start: dict[str, Any] = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
        part_end: dict[str, Any] = {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
    else:
        part_start = {"type": "refusal", "refusal": ""}
        part_end = {"type": "refusal", "refusal": text}
    yield {"type": "response.content_part.added", "sequence_number": next(seq), **base, "content_index": 0,
           "part": part_start}
    for delta in deltas:
        if kind == "message":
            yield {"type": "response.output_text.delta", "sequence_number": next(seq), **base, "content_index": 0,
                   "delta": delta, "logprobs": []}
        else:
            yield {"type": "response.refusal.delta", "sequence_number": next(seq), **base, "content_index": 0,
                   "delta": delta}
    if kind == "message":
        yield {"type": "response.output_text.done", "sequence_number": next(seq), **base, "content_index": 0,
               "text": text, "logprobs": []}
    else:
        yield {"type": "response.refusal.done", "sequence_number": next(seq), **base, "content_index": 0,
               "refusal": text}
    yield {"type": "response.content_part.done", "sequence_number": next(seq), **base, "content_index": 0,
           "part": part_end}
    yield {"type": "response.output_item.done", "sequence_number": next(seq), "output_index": index,
           "item": {"id": item_id, "type": "message", "status": "completed", "role": "assistant",
                    "content": [part_end]}}


def _reasoning_events(index: int, item_id: str, deltas: list[str], summary: list[str],
                      seq: Iterator[int]) -> Iterator[Event]:
    base = {"item_id": item_id, "output_index": index}
    yield {"type": "response.output_item.added", "sequence_number": next(seq), "output_index": index,
           "item": {"id": item_id, "type": "reasoning", "status": "in_progress", "summary": [], "content": []}}
    final_summary = []
    if summary:
        text = "".join(summary)
        yield {"type": "response.reasoning_summary_part.added", "sequence_number": next(seq), **base,
               "summary_index": 0, "part": {"type": "summary_text", "text": ""}}
        for delta in summary:
            yield {"type": "response.reasoning_summary_text.delta", "sequence_number": next(seq), **base,
                   "summary_index": 0, "delta": delta}
        yield {"type": "response.reasoning_summary_text.done", "sequence_number": next(seq), **base,
               "summary_index": 0, "text": text}
        yield {"type": "response.reasoning_summary_part.done", "sequence_number": next(seq), **base,
               "summary_index": 0, "part": {"type": "summary_text", "text": text}}
        final_summary = [{"type": "summary_text", "text": text}]
    content = []
    if deltas:
        text = "".join(deltas)
        yield {"type": "response.content_part.added", "sequence_number": next(seq), **base, "content_index": 0,
               "part": {"type": "reasoning_text", "text": ""}}
        for delta in deltas:
            yield {"type": "response.reasoning_text.delta", "sequence_number": next(seq), **base,
                   "content_index": 0, "delta": delta}
        yield {"type": "response.reasoning_text.done", "sequence_number": next(seq), **base, "content_index": 0,
               "text": text}
        yield {"type": "response.content_part.done", "sequence_number": next(seq), **base, "content_index": 0,
               "part": {"type": "reasoning_text", "text": text}}
        content = [{"type": "reasoning_text", "text": text}]
    yield {"type": "response.output_item.done", "sequence_number": next(seq), "output_index": index,
           "item": {"id": item_id, "type": "reasoning", "status": "completed", "summary": final_summary,
                    "content": content}}


def _call_events(index: int, item_id: str, call_id: str, name: str, deltas: list[str],
                 seq: Iterator[int]) -> Iterator[Event]:
    base = {"item_id": item_id, "output_index": index}
    arguments = "".join(deltas)
    yield {"type": "response.output_item.added", "sequence_number": next(seq), "output_index": index,
           "item": {"id": item_id, "type": "function_call", "status": "in_progress", "call_id": call_id,
                    "name": name, "arguments": ""}}
    for delta in deltas:
        yield {"type": "response.function_call_arguments.delta", "sequence_number": next(seq), **base,
               "delta": delta}
    yield {"type": "response.function_call_arguments.done", "sequence_number": next(seq), **base, "name": name,
           "arguments": arguments}
    yield {"type": "response.output_item.done", "sequence_number": next(seq), "output_index": index,
           "item": {"id": item_id, "type": "function_call", "status": "completed", "call_id": call_id,
                    "name": name, "arguments": arguments}}


def encode_event(event: Event, *, event_line: bool = True, eol: str = "\n") -> bytes:
    """One event as SSE bytes, the way OpenAI frames it."""
    data = json.dumps(event, separators=(",", ":"), ensure_ascii=False)
    head = f"event: {event['type']}{eol}" if event_line else ""
    return f"{head}data: {data}{eol}{eol}".encode()


def encode(events: Iterator[Event] | list[Event], **options: Any) -> bytes:
    return b"".join(encode_event(e, **options) for e in events)


# --- Chat Completions -------------------------------------------------------------------------------------


@dataclass
class ChatStreamBuilder:
    """Describe the choices' messages; ``chunks()`` yields a Chat Completions stream's chunks in order.

    What OpenAI's API sends (docs/spec.md §6): every chunk with the same id, created, model and
    system_fingerprint; a choice's first delta with ``role: "assistant"`` and empty content, then its text or
    tool-call fragments (the first fragment of a call with id, type and name, then argument pieces), then a
    chunk with an empty delta and the finish_reason; with ``usage`` a last chunk with ``choices: []`` (and
    ``usage: null`` on every other chunk). Choices are streamed one after the other.
    """

    completion_id: str = field(default_factory=lambda: "chatcmpl-" + _id("", 1)[:29])
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

    def chunks(self, *, finish_reason: str | None = None, usage: bool = False,
               prompt_tokens: int = 12) -> Iterator[Event]:
        """The stream's chunks. ``finish_reason`` overrides the natural one (stop, or tool_calls after calls)."""
        extra: dict[str, Any] = {"usage": None} if usage else {}
        tokens = 0
        calls = 0
        for index, parts in enumerate(self.choices):
            yield self.chunk([_chat_choice(index, {"role": "assistant", "content": "", "refusal": None})], **extra)
            call_index = 0
            for kind, spec in parts:
                if kind == "tool_call":
                    name, deltas = spec
                    calls += 1
                    call_id = _id("call_", 1000 * index + call_index)[:29]
                    yield self.chunk([_chat_choice(index, {"tool_calls": [
                        {"index": call_index, "id": call_id, "type": "function",
                         "function": {"name": name, "arguments": ""}}]})], **extra)
                    for piece in deltas:
                        tokens += 1
                        yield self.chunk([_chat_choice(index, {"tool_calls": [
                            {"index": call_index, "function": {"arguments": piece}}]})], **extra)
                    call_index += 1
                    continue
                for piece in spec:
                    tokens += 1
                    yield self.chunk([_chat_choice(index, {kind: piece})], **extra)
            reason = finish_reason or ("tool_calls" if call_index else "stop")
            yield self.chunk([_chat_choice(index, {}, reason)], **extra)
        if usage:
            yield self.chunk([], usage={"prompt_tokens": prompt_tokens, "completion_tokens": tokens,
                                        "total_tokens": prompt_tokens + tokens,
                                        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
                                        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                                                      "accepted_prediction_tokens": 0,
                                                                      "rejected_prediction_tokens": 0}})


def _chat_choice(index: int, delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
    return {"index": index, "delta": delta, "logprobs": None, "finish_reason": finish_reason}


def encode_chat(chunks: Iterator[Event] | list[Event], *, done: bool = True, eol: str = "\n") -> bytes:
    """Chat chunks as SSE bytes the way OpenAI frames them: data-only events, then ``data: [DONE]``."""
    body = b"".join(f"data: {json.dumps(c, separators=(',', ':'), ensure_ascii=False)}{eol}{eol}".encode()
                    for c in chunks)
    return body + (f"data: [DONE]{eol}{eol}".encode() if done else b"")
