"""What a server answered, as the history checks need it: output items, reasoning and token usage.

Sans-I/O, like the engine: :class:`OutcomeCollector` is fed the (decoded) body bytes of one answer in any
chunking and returns an :class:`Outcome` at the end; :func:`outcome_from_json` reads a non-streamed
answer. Both APIs are understood:

* Responses: the items of ``response.completed.response.output`` (or of the terminal event of another
  kind), and when that list is empty (codex's backend with ``store: false``) the items of the
  ``response.output_item.done`` events in order; ``usage`` from the terminal response.
* Chat Completions: the assistant message accumulated from the chunks' deltas (``content``,
  ``reasoning_content`` or ``reasoning``, ``tool_calls`` by index); ``usage`` from the chunk that has it.

Token usage falls back to llama.cpp's ``timings`` extension (``cache_n`` cached, ``prompt_n`` evaluated):
older llama-server builds report no ``cached_tokens``.

This is not a checker: a malformed answer just yields less (the engine reports what is wrong with it).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson

from checker.dialects.responses.vocabulary import TERMINAL_TYPES
from checker.sse import SSEDecoder, SSEEvent

Api = Literal["responses", "chat"]
# An answer's JSON body is parsed for the history only up to this size; larger ones are not answers a
# model gives (and the proxy keeps no more than this in memory for the purpose).
MAX_JSON_BODY = 16 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Usage:
    """Prompt tokens, the part of them served from the prefix cache, and output tokens (None: not reported)."""

    prompt: int | None
    cached: int | None
    output: int | None
    source: str  # "usage" or "timings": where ``cached`` came from

    def as_dict(self) -> dict[str, Any]:
        return {"prompt": self.prompt, "cached": self.cached, "output": self.output, "source": self.source}


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


def usage_of(api: Api, usage: Any, timings: Any) -> Usage | None:
    """Usage from the API's ``usage`` object, completed from llama.cpp's ``timings`` where it is silent."""
    usage = usage if isinstance(usage, Mapping) else {}
    timings = timings if isinstance(timings, Mapping) else {}
    if api == "responses":
        prompt, output = _int(usage.get("input_tokens")), _int(usage.get("output_tokens"))
        details = usage.get("input_tokens_details")
    else:
        prompt, output = _int(usage.get("prompt_tokens")), _int(usage.get("completion_tokens"))
        details = usage.get("prompt_tokens_details")
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


class OutcomeCollector:
    """Feed the body of one streamed answer; :meth:`close` gives its :class:`Outcome`."""

    def __init__(self, api: Api) -> None:
        self.api = api
        self._decoder = SSEDecoder()
        self._id: str | None = None
        self._final: list[dict[str, Any]] | None = None
        self._done: list[dict[str, Any]] = []
        self._usage: Any = None
        self._timings: Any = None
        # chat accumulation
        self._content: list[str] = []
        self._reasoning: list[str] = []
        self._reasoning_field = "reasoning_content"
        self._calls: dict[int, dict[str, Any]] = {}

    def feed(self, chunk: bytes) -> None:
        for item in self._decoder.feed(chunk):
            if isinstance(item, SSEEvent):
                self._event(item.data)

    def close(self) -> Outcome:
        for item in self._decoder.close():
            if isinstance(item, SSEEvent):
                self._event(item.data)
        usage = usage_of(self.api, self._usage, self._timings)
        if self.api == "responses":
            output = self._final if self._final else self._done
            return Outcome(api="responses", response_id=self._id, output=output, usage=usage)
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self._content)}
        if self._reasoning:
            message[self._reasoning_field] = "".join(self._reasoning)
        if self._calls:
            message["tool_calls"] = [self._calls[i] for i in sorted(self._calls)]
        return Outcome(api="chat", response_id=self._id, output=[message], usage=usage,
                       reasoning_field=self._reasoning_field)

    def _event(self, data: bytes) -> None:
        if data == b"[DONE]":
            return
        try:
            obj = orjson.loads(data)
        except orjson.JSONDecodeError:
            return
        if not isinstance(obj, dict):
            return
        if self.api == "responses":
            self._responses_event(obj)
        else:
            self._chat_chunk(obj)

    def _responses_event(self, obj: dict[str, Any]) -> None:
        kind = obj.get("type")
        response = obj.get("response")
        if isinstance(response, dict) and isinstance(response.get("id"), str):
            self._id = response["id"]
        if kind == "response.output_item.done" and isinstance(obj.get("item"), dict):
            self._done.append(obj["item"])
        elif isinstance(kind, str) and kind in TERMINAL_TYPES and isinstance(response, dict):  # any JSON: [] too
            output = response.get("output")
            if isinstance(output, list):
                self._final = [item for item in output if isinstance(item, dict)]
            self._usage = response.get("usage")
            self._timings = obj.get("timings")  # llama.cpp puts it beside the response

    def _chat_chunk(self, obj: dict[str, Any]) -> None:
        if isinstance(obj.get("id"), str):
            self._id = obj["id"]
        if obj.get("usage") is not None:
            self._usage = obj["usage"]
        if obj.get("timings") is not None:
            self._timings = obj["timings"]
        choices = obj.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return
        delta = choices[0].get("delta")
        if not isinstance(delta, dict):
            return
        if isinstance(delta.get("content"), str):
            self._content.append(delta["content"])
        for name in ("reasoning_content", "reasoning"):
            if isinstance(delta.get(name), str):
                self._reasoning.append(delta[name])
                self._reasoning_field = name
        calls = delta.get("tool_calls")
        for call in calls if isinstance(calls, list) else ():
            if isinstance(call, dict):
                self._call_delta(call)

    def _call_delta(self, call: dict[str, Any]) -> None:
        given = call.get("index")
        index = given if type(given) is int else len(self._calls)
        entry = self._calls.setdefault(index, {"id": None, "type": "function",
                                               "function": {"name": "", "arguments": ""}})
        if isinstance(call.get("id"), str):
            entry["id"] = call["id"]
        function = call.get("function")
        if isinstance(function, dict):
            if isinstance(function.get("name"), str):
                entry["function"]["name"] += function["name"]
            if isinstance(function.get("arguments"), str):
                entry["function"]["arguments"] += function["arguments"]


def outcome_from_json(api: Api, body: bytes | Mapping[str, Any]) -> Outcome | None:
    """The outcome of a non-streamed answer (a Response object, a chat completion); None if it is neither."""
    if isinstance(body, (bytes, bytearray)):
        if len(body) > MAX_JSON_BODY:
            return None
        try:
            obj = json.loads(body)
        except (UnicodeDecodeError, ValueError):
            return None
    else:
        obj = body
    if not isinstance(obj, Mapping) or obj.get("error"):
        return None
    rid = obj.get("id") if isinstance(obj.get("id"), str) else None
    if api == "responses":
        output = obj.get("output")
        if not isinstance(output, list):
            return None
        return Outcome(api="responses", response_id=rid, output=[i for i in output if isinstance(i, dict)],
                       usage=usage_of(api, obj.get("usage"), obj.get("timings")))
    choices = obj.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        return None
    message = choices[0].get("message")
    if not isinstance(message, Mapping):
        return None
    field_name = "reasoning" if message.get("reasoning_content") is None and message.get("reasoning") else \
        "reasoning_content"
    return Outcome(api="chat", response_id=rid, output=[dict(message)],
                   usage=usage_of(api, obj.get("usage"), obj.get("timings")), reasoning_field=field_name)
