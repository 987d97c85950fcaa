"""The swimlane model (checker/report/lanes.py), the trace it is built from, and the terminal timeline."""

from __future__ import annotations

import io
from pathlib import Path

from checker.console import make_console
from checker.engine import TRACE_DATA_CLIP, StreamLinter, lint_bytes
from checker.report.lanes import RESPONSE_LANE, arrival_times, build_timeline, event_kind
from checker.report.timeline import render_timeline
from checker.synth import StreamBuilder, encode

ROOT = Path(__file__).resolve().parents[2]
LLAMA = ROOT / "captures" / "llama.cpp" / "reasoning_one_call.sse"


def test_trace_keeps_position_raw_data_and_texts_only_when_asked() -> None:
    data = LLAMA.read_bytes()
    traced = lint_bytes(data, trace=True)
    assert traced.trace is not None and len(traced.trace) == traced.events == 30
    entry = traced.trace[12]
    assert (entry.index, entry.line, entry.byte, entry.type) == (12, 37, 1894, "response.output_item.added")
    assert data[entry.byte:].split(b"\n", 2)[1] == b"data: " + entry.data
    assert entry.at is None
    assert traced.texts is not None
    assert [(t["type"], t["arguments"]) for t in traced.texts] == [("reasoning", ""), ("function_call", '{"city":"Tokyo"}')]
    assert traced.texts[0]["content"][0]["text"] == " weather by London info table for table time can"
    plain = lint_bytes(data)
    assert plain.trace is None and plain.texts is None
    assert plain.findings == traced.findings


def test_trace_records_every_event_and_clips_data() -> None:
    big = "x" * (3 * TRACE_DATA_CLIP)
    stream = encode(StreamBuilder().message([big]).events()) + b"data: [DONE]\n\ndata: not json\n\n"
    result = lint_bytes(stream, trace=True)
    assert result.trace is not None and len(result.trace) == result.events
    assert [e.type for e in result.trace[-2:]] == ["[DONE]", "(not JSON)"]
    assert max(len(e.data) for e in result.trace) == TRACE_DATA_CLIP


def test_mark_time_stamps_the_events_of_the_next_feed() -> None:
    linter = StreamLinter(trace=True)
    blocks = LLAMA.read_bytes().split(b"\n\n")
    for n, block in enumerate(blocks):
        linter.mark_time(n / 10)
        linter.feed(block + b"\n\n")
    result = linter.close()
    times = arrival_times(result)
    assert times[0] == 0.0 and times[12] == 1.2 and len(times) == 30


def test_llama_lanes_and_the_late_reasoning_done() -> None:
    timeline = build_timeline(lint_bytes(LLAMA.read_bytes(), trace=True), max_columns=100)
    assert [(lane.key[:3], lane.item_type) for lane in timeline.lanes] == [
        ("res", None), ("rs_", "reasoning"), ("fc_", "function_call")]
    response, reasoning, call = timeline.lanes
    assert (reasoning.added_index, reasoning.done_index) == (2, 27)
    assert (call.added_index, call.done_index) == (12, 28)
    assert reasoning.late_after == call.key and reasoning.late_after_index == 12
    assert call.late_after is None
    assert [m.kind for m in response.marks] == ["lifecycle", "lifecycle", "terminal"]
    assert timeline.lane_of[12] == call.key and timeline.lane_of[0] == RESPONSE_LANE


def test_long_streams_fold_but_keep_item_boundaries() -> None:
    result = lint_bytes(encode(StreamBuilder().message(["a"] * 500).function_call("f", ["{}"]).events()),
                        trace=True)
    timeline = build_timeline(result, max_columns=40)
    assert timeline.columns <= 40 and timeline.per_column > 1
    message = timeline.lanes[1]
    assert message.marks[0].kind == "added" and message.marks[0].folded > 1
    assert any(m.kind == "done" for m in message.marks)
    assert sum(m.folded for lane in timeline.lanes for m in lane.marks) == result.events


def test_event_kinds() -> None:
    assert [event_kind(t) for t in ("response.output_item.added", "response.output_text.delta",
                                    "response.output_text.done", "response.content_part.added",
                                    "response.output_item.done", "response.created", "response.failed",
                                    "[DONE]", "error", "vendor:thing")] == [
        "added", "delta", "textdone", "part", "done", "lifecycle", "terminal", "sentinel", "error", "other"]


def test_terminal_timeline_draws_the_same_lanes() -> None:
    stream = io.StringIO()
    console = make_console(stream, "never", width=120)
    render_timeline(console, lint_bytes(LLAMA.read_bytes(), trace=True))
    lines = stream.getvalue().splitlines()
    rows = {line.split()[0]: line for line in lines[1:4]}
    assert set(rows) == {"response", "reasoning", "function_call"}
    start = len("  ") + 31
    reasoning, call = rows["reasoning"][start:], rows["function_call"][start:]
    assert reasoning.index("[") == 2 and reasoning.rindex("]") == 27  # one column per event here
    assert call.index("[") == 12 and call.rindex("]") == 28
    assert "─" in reasoning and "·" in call
    assert lines[4].startswith("  findings") and "▲" in lines[4]
    assert "done #27, after fc_" in lines[5] and "(#12)" in lines[5]
