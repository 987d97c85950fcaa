"""Property tests: generated conforming streams are clean in any chunking; each mutation fires its rule."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checker.engine import StreamLinter, lint_bytes
from checker.synth import StreamBuilder, encode, encode_event

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
DELTAS = st.lists(TEXT, max_size=6)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=6,
)


@st.composite
def split(draw: Any, text: str) -> list[str]:
    cuts = sorted(draw(st.sets(st.integers(1, max(1, len(text) - 1)), max_size=5))) if len(text) > 1 else []
    pieces, last = [], 0
    for cut in cuts:
        pieces.append(text[last:cut])
        last = cut
    pieces.append(text[last:])
    return [p for p in pieces if p] or [text]


@st.composite
def builders(draw: Any) -> StreamBuilder:
    builder = StreamBuilder()
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["message", "reasoning", "function_call", "refusal"]))
        if kind == "message":
            builder.message(draw(DELTAS))
        elif kind == "refusal":
            builder.refusal(draw(DELTAS))
        elif kind == "reasoning":
            builder.reasoning(draw(DELTAS), draw(DELTAS))
        else:
            arguments = json.dumps(draw(st.dictionaries(TEXT, JSON_VALUES, max_size=3)), ensure_ascii=False)
            builder.function_call(draw(st.sampled_from(["get_weather", "f", "lookup"])), draw(split(arguments)))
    return builder


@st.composite
def streams(draw: Any) -> list[dict[str, Any]]:
    terminal = draw(st.sampled_from(["completed", "completed", "incomplete", "failed"]))
    return list(draw(builders()).events(terminal=terminal, max_output_tokens=None))


def chunked(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in zip(points, points[1:])]


def lint_in(chunks: list[bytes]) -> list[Any]:
    linter = StreamLinter()
    for chunk in chunks:
        linter.feed(chunk)
    return linter.close().findings


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(streams(), st.lists(st.integers(0, 10**6), max_size=20), st.sampled_from(["\n", "\r\n"]))
def test_conforming_streams_are_clean_in_any_chunking(events: list[dict[str, Any]], cuts: list[int], eol: str) -> None:
    data = b"".join(encode_event(e, eol=eol) for e in events)
    incomplete = events[-1]["type"] == "response.incomplete"
    findings = lint_in(chunked(data, cuts))
    # An incomplete stream without a request limit is clean too (its reason is in the response).
    assert findings == [], (incomplete, [f.message for f in findings])


@SETTINGS
@given(streams(), st.lists(st.integers(0, 10**6), min_size=1, max_size=30))
def test_any_rechunking_gives_the_same_findings(events: list[dict[str, Any]], cuts: list[int]) -> None:
    # A damaged stream: every third event loses its blank line separator.
    data = b"".join(
        encode_event(e).rstrip(b"\n") + (b"\n" if i % 3 == 2 else b"\n\n") for i, e in enumerate(events)
    )
    assert lint_in(chunked(data, cuts)) == lint_bytes(data).findings


def codes(events: list[dict[str, Any]]) -> set[str]:
    return {f.code for f in lint_bytes(encode(events)).findings}


@SETTINGS
@given(streams(), st.data())
def test_dropping_an_event_fires_the_right_rule(events: list[dict[str, Any]], data: Any) -> None:
    index = data.draw(st.integers(0, len(events) - 1))
    dropped = events[index]
    mutated = events[:index] + events[index + 1 :]
    found = codes(mutated)
    kind = dropped["type"]
    expected = {
        "response.created": {"LIF001"},
        "response.in_progress": {"LIF003"},
        "response.output_item.added": {"ITM004", "ITM008", "ITM002", "LIF003"},
        "response.output_item.done": {"LIF008", "REC004"},
        "response.content_part.added": {"CNT004", "RSN001"},
        "response.content_part.done": {"CNT005"},
        "response.reasoning_summary_part.added": {"RSN001"},
        "response.reasoning_summary_part.done": {"RSN004"},
        "response.output_text.delta": {"REC001"},
        "response.refusal.delta": {"REC001"},
        "response.reasoning_text.delta": {"REC001"},
        "response.reasoning_summary_text.delta": {"REC001"},
        "response.function_call_arguments.delta": {"REC006"},
        "response.output_text.done": {"CNT007"},
        "response.refusal.done": {"CNT007"},
        "response.reasoning_text.done": {"CNT007"},
        "response.reasoning_summary_text.done": {"CNT007"},
        "response.function_call_arguments.done": {"FNC002"},
        "response.completed": {"LIF006"},
        "response.incomplete": {"LIF006"},
        "response.failed": {"LIF006"},
    }[kind]
    if kind.endswith(".delta") and dropped.get("delta") == "":
        return  # an empty delta carries nothing: dropping it changes no text
    assert found & expected, (kind, found)


@SETTINGS
@given(streams(), st.data())
def test_duplicating_or_swapping_an_event_breaks_the_sequence(events: list[dict[str, Any]], data: Any) -> None:
    index = data.draw(st.integers(0, len(events) - 2))
    duplicated = events[: index + 1] + [events[index]] + events[index + 1 :]
    assert "LIF016" in codes(duplicated)
    swapped = events[:index] + [events[index + 1], events[index]] + events[index + 2 :]
    assert "LIF016" in codes(swapped)


@SETTINGS
@given(streams())
def test_truncating_at_every_event_boundary_reports_the_missing_end(events: list[dict[str, Any]]) -> None:
    data = [encode_event(e) for e in events]
    for cut in range(1, len(events)):
        found = {f.code for f in lint_bytes(b"".join(data[:cut])).findings}
        assert "LIF006" in found, (cut, found)
    partial = b"".join(data[:-1]) + data[-1][: len(data[-1]) // 2]
    found = {f.code for f in lint_bytes(partial).findings}
    assert {"SSE004", "LIF006"} <= found


@SETTINGS
@given(streams(), st.data())
def test_corrupting_a_field_fires_its_rule(events: list[dict[str, Any]], data: Any) -> None:
    scoped = [i for i, e in enumerate(events) if "output_index" in e]
    index = data.draw(st.sampled_from(scoped))
    mutated = json.loads(json.dumps(events))
    corruption = data.draw(st.sampled_from(["output_index", "sequence_number", "type", "item_id"]))
    event = mutated[index]
    if corruption == "output_index":
        event["output_index"] = "zero"
        expected = {"SCH001"}
    elif corruption == "sequence_number":
        del event["sequence_number"]
        expected = {"LIF015"}
    elif corruption == "type":
        event["type"] = "response.mystery"
        expected = {"SCH005"}
    else:
        if "item_id" not in event:
            return
        event["item_id"] = "msg_unknown"
        expected = {"ITM004"}
    assert expected <= codes(mutated)
