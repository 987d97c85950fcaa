"""Conforming streams built programmatically: one builder for the corpus, the tests and the benchmarks.

* :mod:`checker.synth.sse`: the generic writer any dialect frames its events with (``event:`` lines or not,
  ``data: [DONE]`` or not) and :class:`~checker.synth.sse.EventStream`, the base of a dialect's builder.
* :class:`ResponsesStream` (:mod:`checker.synth.responses`): a Responses stream described item by item, as
  OpenAI sends it; ``captures/make_captures.py`` writes the corpus with it.
* :class:`ChatStreamBuilder` (:mod:`checker.synth.chat`): Chat Completions chunks, framed by
  :func:`encode_chat` (``data:`` lines, then ``data: [DONE]``).
* :class:`~checker.synth.messages.MessagesStreamBuilder` (:mod:`checker.synth.messages`): Anthropic Messages
  events, framed with an ``event:`` line each.
* :class:`StreamBuilder`: the Responses streams planned first and yielded one item's events at a time, so a stream
  of any size is written without holding it whole (benchmarks, property tests); usage counts the deltas.

A new dialect's builder subclasses ``EventStream`` in a module of its own here, beside ``responses.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from checker.synth.chat import ChatStreamBuilder, encode_chat
from checker.synth.ids import make_call_id, make_id
from checker.synth.responses import ResponsesStream, usage
from checker.synth.sse import DONE, Event, EventStream, done, dumps, encode, encode_event, frame, frames

__all__ = ["DONE", "ChatStreamBuilder", "Event", "EventStream", "ResponsesStream", "StreamBuilder", "done", "dumps",
           "encode", "encode_chat", "encode_event", "frame", "frames", "make_call_id", "make_id", "usage"]

TERMINALS = ("completed", "incomplete", "failed")


@dataclass
class StreamBuilder:
    """Describe the output items; ``events()`` yields the stream's event objects in order, one item at a time.

    Each item method records a step of a :class:`ResponsesStream`; ``events()`` runs the steps on a fresh one,
    so calling it twice gives the same stream. ``name`` seeds the ids; ``options`` are ResponsesStream's
    (model, tools, reasoning, flavor, ...)."""

    name: str = "synth"
    options: dict[str, Any] = field(default_factory=dict)
    steps: list[Callable[[ResponsesStream], object]] = field(default_factory=list)

    def then(self, step: Callable[[ResponsesStream], object]) -> StreamBuilder:
        """Any item ResponsesStream can write: ``builder.then(lambda s: s.web_search_call("paris"))``."""
        self.steps.append(step)
        return self

    def message(self, deltas: list[str]) -> StreamBuilder:
        return self.then(lambda s: s.message(deltas))

    def refusal(self, deltas: list[str]) -> StreamBuilder:
        return self.then(lambda s: s.refusal(deltas))

    def reasoning(self, deltas: list[str], summary: list[str] | None = None) -> StreamBuilder:
        """A reasoning item: ``deltas`` its reasoning_text (none: no content), ``summary`` one summary part."""
        return self.then(lambda s: s.reasoning_item(text=deltas or None, summary=[summary] if summary else None))

    def function_call(self, name: str, argument_deltas: list[str]) -> StreamBuilder:
        return self.then(lambda s: s.function_call(name, argument_deltas))

    def events(self, *, terminal: str = "completed", max_output_tokens: int | None = None) -> Iterator[Event]:
        """The events, ending with ``response.<terminal>`` (completed, incomplete or failed) whose usage counts
        one output token per delta."""
        if terminal not in TERMINALS:
            raise ValueError(f"terminal {terminal!r}: choose from {', '.join(TERMINALS)}")
        stream = ResponsesStream(self.name, **{"max_output_tokens": max_output_tokens, **self.options})
        tokens = 0

        def drain() -> Iterator[Event]:
            nonlocal tokens
            batch, stream.events = stream.events, []
            tokens += sum(1 for event in batch if event["type"].endswith(".delta"))
            yield from batch

        stream.start()
        yield from drain()
        for step in self.steps:
            step(stream)
            yield from drain()
        if terminal == "completed":
            stream.completed(usage(12, tokens))
        elif terminal == "incomplete":
            stream.incomplete(usage(12, tokens))
        else:
            stream.failed("server_error", "The model failed.", usage(12, tokens))
        yield from drain()
