"""Responses streams as OpenAI sends them, built item by item: the corpus's captures, tests and benchmarks.

:class:`ResponsesStream` writes what OpenAI's OpenAPI description 2.3.0 and its recordings show: full response
objects, ``sequence_number`` from 1, ``output_index`` and ``content_index`` on every scoped event,
``logprobs`` on text events, ``event:`` equal to ``type``. Ids are realistic and deterministic (derived from
the stream's name), so a stream written twice is the same bytes. ``flavor="open-responses"`` writes the
stricter Open Responses ``ResponseResource`` instead. The hosted-tool items are in
:mod:`checker.synth.responses_tools`.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Self

from checker.synth.ids import make_call_id, make_id
from checker.synth.responses_tools import HostedTools
from checker.synth.sse import Event, EventStream

CREATED_AT = 1760451200  # 2025-10-14T14:13:20Z


def usage(input_tokens: int, output_tokens: int, reasoning_tokens: int = 0, cached: int = 0) -> dict[str, Any]:
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": cached, "cache_write_tokens": 0},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
        "total_tokens": input_tokens + output_tokens,
    }


@dataclass
class ResponsesStream(EventStream, HostedTools):
    """One response, described item by item; ``events`` holds the stream's event objects in order.

    ``flavor`` is "openai" (OpenAI's `Response` object) or "open-responses"
    (the stricter `ResponseResource`: adds completed_at, presence/frequency
    penalties, store, truncation, …).
    """

    name: str
    model: str = "gpt-4.1-2025-04-14"
    tools: list[dict[str, Any]] = field(default_factory=list)
    tool_choice: Any = "auto"
    reasoning: dict[str, Any] | None = None
    max_output_tokens: int | None = None
    instructions: str | None = None
    flavor: str = "openai"
    store: bool = True
    opening_nulls: bool = False  # "user": null everywhere and "usage": null before the end, as OpenAI sends
    events: list[Event] = field(default_factory=list)
    done_items: list[dict[str, Any]] = field(default_factory=list)
    _next: int = 0
    _items: int = 0

    @property
    def response_id(self) -> str:
        return make_id("resp_", self.name)

    def _seq(self) -> int:
        self._next += 1
        return self._next

    def response(self, status: str, output: list[Any], **extra: Any) -> dict[str, Any]:
        obj: dict[str, Any] = {
            "id": self.response_id,
            "object": "response",
            "created_at": CREATED_AT,
            "status": status,
            "background": False,
            "completed_at": None,
            "error": None,
            "incomplete_details": None,
            "instructions": self.instructions,
            "max_output_tokens": self.max_output_tokens,
            "max_tool_calls": None,
            "model": self.model,
            "output": output,
            "parallel_tool_calls": True,
            "previous_response_id": None,
            "prompt_cache_key": None,
            "reasoning": self.reasoning if self.reasoning is not None else {"effort": None, "summary": None},
            "safety_identifier": None,
            "service_tier": "default",
            "store": self.store,
            "temperature": 1.0,
            "text": {"format": {"type": "text"}, "verbosity": "medium"},
            "tool_choice": self.tool_choice,
            "tools": self.tools,
            "top_logprobs": 0,
            "top_p": 1.0,
            "truncation": "disabled",
            "metadata": {},
        }
        if self.flavor == "open-responses":
            # ResponseResource requires these on every snapshot (usage nullable); it has no `user`.
            obj["presence_penalty"] = 0.0
            obj["frequency_penalty"] = 0.0
            obj["usage"] = None
        if self.opening_nulls:  # usage is null until the terminal event sets it
            obj["user"] = None
            obj["usage"] = None
        obj.update(extra)
        return obj

    # -- lifecycle --------------------------------------------------------------

    def start(self) -> Self:
        for etype in ("response.created", "response.in_progress"):
            self.emit({"type": etype, "sequence_number": self._seq(), "response": self.response("in_progress", [])})
        return self

    def completed(self, use: dict[str, Any]) -> Self:
        self.emit({"type": "response.completed", "sequence_number": self._seq(),
                   "response": self.response("completed", copy.deepcopy(self.done_items),
                                             completed_at=CREATED_AT + 3, usage=use)})
        return self

    def incomplete(self, use: dict[str, Any], reason: str = "max_output_tokens") -> Self:
        self.emit({"type": "response.incomplete", "sequence_number": self._seq(),
                   "response": self.response("incomplete", copy.deepcopy(self.done_items),
                                             incomplete_details={"reason": reason}, usage=use)})
        return self

    def failed(self, code: str, message: str, use: dict[str, Any] | None = None) -> Self:
        extra: dict[str, Any] = {"error": {"code": code, "message": message}}
        if use is not None:
            extra["usage"] = use
        self.emit({"type": "response.failed", "sequence_number": self._seq(),
                   "response": self.response("failed", copy.deepcopy(self.done_items), **extra)})
        return self

    # -- items ------------------------------------------------------------------

    def _index(self) -> int:
        index = self._items
        self._items += 1
        return index

    def message(self, deltas: list[str], *, status: str = "completed",
                annotations: dict[int, dict[str, Any]] | None = None) -> Self:
        """A message; ``annotations`` maps a delta count to the citation OpenAI sends after that many deltas."""
        index, item_id = self._index(), make_id("msg_", f"{self.name}/{self._items}")
        base = {"item_id": item_id, "output_index": index}
        text = "".join(deltas)
        cited: list[dict[str, Any]] = []
        self.emit({"type": "response.output_item.added", "sequence_number": self._seq(), "output_index": index,
                   "item": {"id": item_id, "type": "message", "status": "in_progress", "content": [],
                            "role": "assistant"}})
        self.emit({"type": "response.content_part.added", "sequence_number": self._seq(), **base,
                   "content_index": 0, "part": {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}})
        for n, delta in enumerate(deltas, start=1):
            self.emit({"type": "response.output_text.delta", "sequence_number": self._seq(), **base,
                       "content_index": 0, "delta": delta, "logprobs": []})
            if annotations and n in annotations:
                self.emit({"type": "response.output_text.annotation.added", "sequence_number": self._seq(), **base,
                           "content_index": 0, "annotation_index": len(cited), "annotation": annotations[n]})
                cited.append(annotations[n])
        self.emit({"type": "response.output_text.done", "sequence_number": self._seq(), **base,
                   "content_index": 0, "text": text, "logprobs": []})
        part = {"type": "output_text", "annotations": cited, "logprobs": [], "text": text}
        self.emit({"type": "response.content_part.done", "sequence_number": self._seq(), **base,
                   "content_index": 0, "part": part})
        item = {"id": item_id, "type": "message", "status": status, "content": [copy.deepcopy(part)],
                "role": "assistant"}
        self.emit({"type": "response.output_item.done", "sequence_number": self._seq(), "output_index": index,
                   "item": item})
        self.done_items.append(copy.deepcopy(item))
        return self

    def refusal(self, deltas: list[str]) -> Self:
        index, item_id = self._index(), make_id("msg_", f"{self.name}/{self._items}")
        base = {"item_id": item_id, "output_index": index}
        text = "".join(deltas)
        self.emit({"type": "response.output_item.added", "sequence_number": self._seq(), "output_index": index,
                   "item": {"id": item_id, "type": "message", "status": "in_progress", "content": [],
                            "role": "assistant"}})
        self.emit({"type": "response.content_part.added", "sequence_number": self._seq(), **base,
                   "content_index": 0, "part": {"type": "refusal", "refusal": ""}})
        for delta in deltas:
            self.emit({"type": "response.refusal.delta", "sequence_number": self._seq(), **base,
                       "content_index": 0, "delta": delta})
        self.emit({"type": "response.refusal.done", "sequence_number": self._seq(), **base,
                   "content_index": 0, "refusal": text})
        part = {"type": "refusal", "refusal": text}
        self.emit({"type": "response.content_part.done", "sequence_number": self._seq(), **base,
                   "content_index": 0, "part": part})
        item = {"id": item_id, "type": "message", "status": "completed", "content": [copy.deepcopy(part)],
                "role": "assistant"}
        self.emit({"type": "response.output_item.done", "sequence_number": self._seq(), "output_index": index,
                   "item": item})
        self.done_items.append(copy.deepcopy(item))
        return self

    def tool_item(self, added: dict[str, Any], done: dict[str, Any],
                  progress: Iterable[str] = ()) -> Self:
        """A hosted-tool item (or a tool result the server creates) as OpenAI streams it: added, the item's
        progress events (``progress``: event types scoped by item_id and output_index), done. ``added`` and
        ``done`` get the item's id and type from ``done``."""
        index = self._index()
        self.emit({"type": "response.output_item.added", "sequence_number": self._seq(), "output_index": index,
                   "item": added})
        for etype in progress:
            self.emit({"type": etype, "sequence_number": self._seq(), "output_index": index,
                       "item_id": done["id"]})
        self.emit({"type": "response.output_item.done", "sequence_number": self._seq(), "output_index": index,
                   "item": done})
        self.done_items.append(copy.deepcopy(done))
        return self

    def reasoning_item(self, *, text: list[str] | None = None, summary: list[list[str]] | None = None,
                       encrypted: str | None = None) -> Self:
        """A reasoning item with summary parts (one list of deltas per part) and/or a reasoning_text part."""
        index, item_id = self._index(), make_id("rs_", f"{self.name}/{self._items}")
        base = {"item_id": item_id, "output_index": index}
        added: dict[str, Any] = {"id": item_id, "type": "reasoning", "status": "in_progress", "summary": []}
        if text is not None:
            added["content"] = []
        if encrypted is not None:
            added["encrypted_content"] = None
        self.emit({"type": "response.output_item.added", "sequence_number": self._seq(), "output_index": index,
                   "item": added})
        final_summary = []
        for n, deltas in enumerate(summary or []):
            joined = "".join(deltas)
            self.emit({"type": "response.reasoning_summary_part.added", "sequence_number": self._seq(), **base,
                       "summary_index": n, "part": {"type": "summary_text", "text": ""}})
            for delta in deltas:
                self.emit({"type": "response.reasoning_summary_text.delta", "sequence_number": self._seq(), **base,
                           "summary_index": n, "delta": delta})
            self.emit({"type": "response.reasoning_summary_text.done", "sequence_number": self._seq(), **base,
                       "summary_index": n, "text": joined})
            self.emit({"type": "response.reasoning_summary_part.done", "sequence_number": self._seq(), **base,
                       "summary_index": n, "part": {"type": "summary_text", "text": joined}})
            final_summary.append({"type": "summary_text", "text": joined})
        content = []
        if text is not None:
            joined = "".join(text)
            self.emit({"type": "response.content_part.added", "sequence_number": self._seq(), **base,
                       "content_index": 0, "part": {"type": "reasoning_text", "text": ""}})
            # Open Responses names these response.reasoning.delta/done (its ResponseReasoningDeltaStreamingEvent).
            family = "response.reasoning" if self.flavor == "open-responses" else "response.reasoning_text"
            for delta in text:
                self.emit({"type": f"{family}.delta", "sequence_number": self._seq(), **base,
                           "content_index": 0, "delta": delta})
            self.emit({"type": f"{family}.done", "sequence_number": self._seq(), **base,
                       "content_index": 0, "text": joined})
            self.emit({"type": "response.content_part.done", "sequence_number": self._seq(), **base,
                       "content_index": 0, "part": {"type": "reasoning_text", "text": joined}})
            content.append({"type": "reasoning_text", "text": joined})
        item: dict[str, Any] = {"id": item_id, "type": "reasoning", "status": "completed", "summary": final_summary}
        if text is not None:
            item["content"] = content
        if encrypted is not None:
            item["encrypted_content"] = encrypted
        self.emit({"type": "response.output_item.done", "sequence_number": self._seq(), "output_index": index,
                   "item": item})
        self.done_items.append(copy.deepcopy(item))
        return self

    def function_call(self, name: str, deltas: list[str], *, caller: dict[str, Any] | None = None,
                      done_status: str = "completed", done_names: bool = True) -> Self:
        """A function call; ``caller`` is set on calls a program made (programmatic tool calling), whose item
        OpenAI finishes with ``done_status`` "in_progress"; ``done_names=False`` leaves `name` out of
        arguments.done, as OpenAI does."""
        index, item_id = self._index(), make_id("fc_", f"{self.name}/{self._items}")
        call_id = make_call_id(f"{self.name}/{self._items}")
        base = {"item_id": item_id, "output_index": index}
        arguments = "".join(deltas)
        extra = {"caller": caller} if caller is not None else {}
        self.emit({"type": "response.output_item.added", "sequence_number": self._seq(), "output_index": index,
                   "item": {"id": item_id, "type": "function_call", "status": "in_progress", "arguments": "",
                            "call_id": call_id, **extra, "name": name}})
        for delta in deltas:
            self.emit({"type": "response.function_call_arguments.delta", "sequence_number": self._seq(), **base,
                       "delta": delta})
        named = {"name": name} if done_names else {}
        self.emit({"type": "response.function_call_arguments.done", "sequence_number": self._seq(), **base,
                   **named, "arguments": arguments})
        item = {"id": item_id, "type": "function_call", "status": done_status, "arguments": arguments,
                "call_id": call_id, **extra, "name": name}
        self.emit({"type": "response.output_item.done", "sequence_number": self._seq(), "output_index": index,
                   "item": item})
        self.done_items.append(copy.deepcopy(item))
        return self
