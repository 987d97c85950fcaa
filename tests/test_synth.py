"""The one stream builder (checker/synth/): its generic SSE writer, and the planned builder against the eager one."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import pytest

from checker.engine import lint_bytes
from checker.synth import (
    EventStream,
    ResponsesStream,
    StreamBuilder,
    encode,
    encode_event,
    frame,
    make_call_id,
    make_id,
    usage,
)
from checker.synth.sse import Event


def test_an_event_is_named_by_its_type_unless_told_otherwise() -> None:
    event = {"type": "response.created", "n": "é"}
    assert frame(event) == 'event: response.created\ndata: {"type":"response.created","n":"é"}\n\n'
    assert frame(event, event_line=None) == 'data: {"type":"response.created","n":"é"}\n\n'
    named = frame(event, event_line="ping", eol="\r\n")
    assert named == 'event: ping\r\ndata: {"type":"response.created","n":"é"}\r\n\r\n'
    assert frame("[DONE]") == "data: [DONE]\n\n"  # a string is the data as is
    assert frame({"no": "type"}) == 'data: {"no":"type"}\n\n'
    assert encode_event(event) == frame(event).encode()
    assert encode([event, event], event_line=None) == frame(event, event_line=None).encode() * 2


@dataclass
class DataOnly(EventStream):
    """A dialect that sends data lines only and ends with [DONE] (as Chat Completions does)."""

    EVENT_LINE: ClassVar[str | None] = None
    DONE_SENTINEL: ClassVar[bool] = True
    events: list[Event] = field(default_factory=list)


def test_a_dialect_builder_frames_its_events_its_own_way() -> None:
    stream = DataOnly()
    stream.emit({"type": "chunk", "i": 1})
    assert stream.sse() == 'data: {"type":"chunk","i":1}\n\ndata: [DONE]\n\n'
    responses = ResponsesStream("x").start()
    assert responses.sse().startswith("event: response.created\ndata: ")
    assert not responses.sse().endswith("data: [DONE]\n\n")


def eager(terminal: str) -> list[Event]:
    """The stream StreamBuilder plans below, written by ResponsesStream directly."""
    s = ResponsesStream("synth", max_output_tokens=None).start()
    s.reasoning_item(text=["r1", "r2"], summary=[["s"]])
    s.message(["Hel", "lo"])
    s.refusal(["no"])
    s.function_call("f", ['{"a"', ":1}"])
    s.web_search_call("paris")
    tokens = 2 + 1 + 2 + 1 + 2  # one per delta
    if terminal == "completed":
        s.completed(usage(12, tokens))
    elif terminal == "incomplete":
        s.incomplete(usage(12, tokens))
    else:
        s.failed("server_error", "The model failed.", usage(12, tokens))
    return s.events


@pytest.mark.parametrize("terminal", ["completed", "incomplete", "failed"])
def test_the_planned_builder_writes_what_the_eager_one_writes(terminal: str) -> None:
    builder = (StreamBuilder().reasoning(["r1", "r2"], ["s"]).message(["Hel", "lo"]).refusal(["no"])
               .function_call("f", ['{"a"', ":1}"]).then(lambda s: s.web_search_call("paris")))
    planned = list(builder.events(terminal=terminal))
    assert planned == eager(terminal)
    assert list(builder.events(terminal=terminal)) == planned  # a plan runs again the same
    assert [e["sequence_number"] for e in planned] == list(range(1, len(planned) + 1))


def test_a_planned_stream_is_conforming() -> None:
    data = encode(StreamBuilder().reasoning([], ["plan"]).message(["a"] * 50).function_call("g", ["{}"]).events())
    assert lint_bytes(data).findings == []


def test_an_unknown_terminal_is_refused() -> None:
    with pytest.raises(ValueError, match="choose from completed, incomplete, failed"):
        list(StreamBuilder().events(terminal="done"))


def test_ids_are_deterministic_and_shaped_like_real_ones() -> None:
    assert make_id("msg_", "a") == make_id("msg_", "a") != make_id("msg_", "b")
    assert make_id("resp_", "a").startswith("resp_68ee") and len(make_id("resp_", "a")) == 5 + 48
    call = make_call_id("a")
    assert call.startswith("call_") and len(call) == 37 and call[5:].isalnum()
