"""What a server answered, as the history checks need it: output items, reasoning and token usage.

Sans-I/O, like the engine: :class:`OutcomeCollector` is fed the (decoded) body bytes of one answer in any
chunking and returns an :class:`~checker.live.answer.Outcome` at the end; :func:`outcome_from_json` reads a
non-streamed answer. What each dialect's answer looks like is its request adapter's
(:mod:`checker.live.adapters`): here only the bytes become event objects.

This is not a checker: a malformed answer just yields less (the engine reports what is wrong with it).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import orjson

from checker.live import adapters
from checker.live.answer import Api, Outcome, Usage, usage_from
from checker.sse import SSEDecoder, SSEEvent

__all__ = ["MAX_JSON_BODY", "Api", "Outcome", "OutcomeCollector", "Usage", "outcome_from_json", "usage_of"]

# An answer's JSON body is parsed for the history only up to this size; larger ones are not answers a
# model gives (and the proxy keeps no more than this in memory for the purpose).
MAX_JSON_BODY = 16 * 1024 * 1024


def usage_of(api: Api, usage: Any, timings: Any) -> Usage | None:
    """Usage from the ``usage`` object of dialect ``api``, completed from llama.cpp's ``timings``."""
    return usage_from(adapters.get(api).usage_fields, usage, timings)


class OutcomeCollector:
    """Feed the body of one streamed answer of dialect ``api``; :meth:`close` gives its :class:`Outcome`."""

    def __init__(self, api: Api) -> None:
        self.api = api
        self._decoder = SSEDecoder()
        self._answer = adapters.get(api).accumulator()

    def feed(self, chunk: bytes) -> None:
        for item in self._decoder.feed(chunk):
            if isinstance(item, SSEEvent):
                self._event(item.data)

    def close(self) -> Outcome:
        for item in self._decoder.close():
            if isinstance(item, SSEEvent):
                self._event(item.data)
        return self._answer.close()

    def _event(self, data: bytes) -> None:
        if data == b"[DONE]":
            return
        try:
            obj = orjson.loads(data)
        except orjson.JSONDecodeError:
            return
        if isinstance(obj, dict):
            self._answer.event(obj)


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
    return adapters.get(api).answer(obj)
