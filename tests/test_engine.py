"""The pipeline and the profiles on synthetic streams (the corpus covers each rule)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from checker.engine import StreamLinter, lint_bytes, lint_chunks
from checker.findings import Severity
from checker.profiles import get_profile
from checker.synth import StreamBuilder, encode, encode_event

ROOT = Path(__file__).resolve().parents[1]
LLAMA = ROOT / "captures" / "llama.cpp"


def codes(data: bytes, **options: object) -> list[str]:
    return [f.code for f in lint_bytes(data, **options).findings]  # type: ignore[arg-type]


def test_conforming_builder_streams_are_clean() -> None:
    builder = (
        StreamBuilder()
        .reasoning(["Let", " me", " think"], summary=["Thinking", " briefly"])
        .message(["Hel", "lo"])
        .function_call("get_weather", ['{"city":', '"Paris"}'])
        .function_call("get_time", ["{}"])
    )
    result = lint_bytes(encode(builder.events()))
    assert result.findings == []
    assert result.terminal == "response.completed" and result.response_id is not None
    assert [i.type for i in result.items] == ["reasoning", "message", "function_call", "function_call"]


@pytest.mark.parametrize("terminal", ["incomplete", "failed"])
def test_other_terminals_are_clean(terminal: str) -> None:
    events = StreamBuilder().message(["a"]).events(terminal=terminal, max_output_tokens=1 if terminal == "incomplete" else None)
    assert codes(encode(events)) == []


def test_repeated_findings_are_collapsed_with_a_count() -> None:
    events = list(StreamBuilder().message(["a"] * 10).events())
    for e in events:
        e.pop("sequence_number")
    result = lint_bytes(encode(events))
    (finding,) = [f for f in result.findings if f.message == "response.output_text.delta has no sequence_number"]
    assert finding.code == "LIF015" and finding.occurrences == 10
    every = lint_bytes(encode(events), collapse=False)
    assert sum(f.code == "LIF015" for f in every.findings) == len(events)


def test_chunked_and_whole_give_the_same_findings() -> None:
    events = list(StreamBuilder().message(["a", "b"]).function_call("f", ['{"x"', ":1"]).events())
    data = encode(events)
    whole = lint_bytes(data).findings
    assert whole  # arguments '{"x":1' are not JSON
    assert lint_chunks([data[i : i + 1] for i in range(len(data))]).findings == whole
    assert lint_chunks([data[i : i + 7] for i in range(0, len(data), 7)]).findings == whole


def test_select_and_ignore_filter_by_prefix() -> None:
    events = list(StreamBuilder().message(["a"]).events())
    data = encode(events[:-1])
    assert codes(data) == ["LIF006"]
    assert codes(data, ignore=["LIF"]) == []
    assert codes(data, select=["SSE"]) == []


def test_feed_returns_findings_as_they_happen() -> None:
    linter = StreamLinter()
    events = list(StreamBuilder().message(["a"]).events())
    events[2]["output_index"] = 5  # content_part.added for an index no item has
    live = []
    for event in events:
        live += linter.feed(encode_event(event))
    result = linter.close()
    assert live and [f.code for f in live] == [f.code for f in result.findings]


# --- profiles ---------------------------------------------------------------

def _llama(name: str) -> bytes:
    return (LLAMA / f"{name}.sse").read_bytes()


def _request(name: str) -> dict:
    return json.loads((LLAMA / f"{name}.request.json").read_text())


@pytest.mark.parametrize("name", ["reasoning_one_call", "reasoning_text", "plain_text", "replay-turn1"])
def test_llama_profile_reports_documented_deviations_as_info(name: str) -> None:
    strict = lint_bytes(_llama(name), request=_request(name))
    lenient = lint_bytes(_llama(name), request=_request(name), profile=get_profile("llama.cpp"))
    assert strict.worst() == Severity.ERROR
    assert [f.code for f in strict.findings] == [f.code for f in lenient.findings]
    assert all(f.severity == Severity.INFO and f.known_deviation for f in lenient.findings)


def test_llama_profile_keeps_new_deviations_at_full_severity() -> None:
    data = _llama("reasoning_one_call").replace(b'"name":"get_time"}}\n', b'"name":"get_times"}}\n', 1)
    assert data != _llama("reasoning_one_call")
    result = lint_bytes(data, profile=get_profile("llama.cpp"))
    new = [f for f in result.findings if f.known_deviation is None]
    assert new and all(f.severity > Severity.INFO for f in new)


def test_llama_profile_accepts_a_fix() -> None:
    # The day llama-server adds sequence_number, nothing about it is reported.
    lines = []
    for n, line in enumerate(_llama("plain_text").split(b"\n")):
        if line.startswith(b"data: {"):
            obj = json.loads(line[6:])
            obj["sequence_number"] = n
            line = b"data: " + json.dumps(obj, separators=(",", ":")).encode()
        lines.append(line)
    fixed = lint_bytes(b"\n".join(lines), profile=get_profile("llama.cpp"))
    assert "LIF015" not in {f.code for f in fixed.findings}
    assert all(f.severity == Severity.INFO for f in fixed.findings)


def test_cut_off_arguments_are_a_known_deviation_only_when_truncated() -> None:
    events = list(StreamBuilder().function_call("f", ['{"city":', '"Par']).events())
    data = encode(events)
    llama = get_profile("llama.cpp")
    cut = lint_bytes(data, profile=llama, request={"max_output_tokens": 2})
    whole = lint_bytes(data, profile=llama)
    (cut_f,) = [f for f in cut.findings if f.code == "FNC001"]
    (whole_f,) = [f for f in whole.findings if f.code == "FNC001"]
    assert cut_f.severity == Severity.INFO and cut_f.known_deviation
    assert whole_f.severity == Severity.WARNING and whole_f.known_deviation is None


def test_codex_profile_ignores_what_codex_ignores() -> None:
    events = list(StreamBuilder().message(["a"]).events())
    for e in events:
        e.pop("sequence_number")
        e.pop("output_index", None)
    data = encode(events, event_line=None)
    assert {"LIF015", "ITM001", "SSE009"} <= set(codes(data))
    assert codes(data, profile=get_profile("codex")) == []


def test_open_responses_wants_done_sentinel() -> None:
    data = encode(StreamBuilder().message(["a"]).events())
    profile = get_profile("open-responses")
    assert "SSE012" in codes(data, profile=profile)
    assert "SSE011" in codes(data + b"data: [DONE]\n\n")
    assert "SSE012" not in codes(data + b"data: [DONE]\n\n", profile=profile)


def test_unknown_profile() -> None:
    with pytest.raises(ValueError, match="unknown profile"):
        get_profile("nope")


# -- large events: parsed by the standard library -------------------------------------------------------------

CORPUS = sorted(p for folder in ("conforming", "rules", "llama.cpp", "real-world", "open-responses")
                for p in (ROOT / "captures" / folder).rglob("*.sse"))


def _findings(data: bytes) -> list[tuple[str, str, int, str]]:
    from checker.captures import request_for  # noqa: F401 - the same engine options as the corpus test

    result = lint_bytes(data)
    return [(f.code, f.message, f.position.byte, f.severity.name) for f in result.findings]


def test_the_standard_parser_for_large_events_finds_exactly_what_orjson_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every event of the corpus (hostile JSON included: repeated keys, huge numbers, NaN, deep nesting,
    invalid UTF-8, surrogates) parsed the large-event way gives the same findings as the ordinary way."""
    import checker.json_scan as json_scan

    ordinary = {path: _findings(path.read_bytes()) for path in CORPUS}
    monkeypatch.setattr(json_scan, "BIG_JSON_BYTES", 0)
    for path in CORPUS:
        assert _findings(path.read_bytes()) == ordinary[path], path.name


@pytest.mark.parametrize("raw", [b"caf\xc3\xa9", b"\\ud83d\\ude00", b"lone \\ud800", b"\\u00e9", b"\xed\xa0\x80",
                                 b"\xff\xfe", b'", "x_big": 1e400, "y": "', b'", "x_big": 123456789012345678901, "y": "'])
def test_a_large_completed_event_is_judged_like_a_small_one(monkeypatch: pytest.MonkeyPatch, raw: bytes) -> None:
    import checker.json_scan as json_scan

    builder = StreamBuilder()
    builder.message([" MARK"] * 3)
    data = encode(builder.events()).replace(b"MARK", raw)
    small = _findings(data)
    monkeypatch.setattr(json_scan, "BIG_JSON_BYTES", 0)
    assert _findings(data) == small


@pytest.mark.parametrize("sep", [b":", b" :", b"\t:", b"  :  "])
def test_a_repeated_key_is_found_whatever_the_white_space_before_its_colon(sep: bytes) -> None:
    """JSON allows white space between a key and its colon; the hot path's cheap precondition must too."""
    builder = StreamBuilder()
    builder.message([" a", " b", " c"])
    data = encode(builder.events())
    plain = b'"delta":" b"'
    repeated = b'"delta"' + sep + b'" x","delta"' + sep + b'" b"'
    findings = lint_bytes(data.replace(plain, repeated, 1)).findings
    assert [(f.code, f.message) for f in findings] == [("SSE024", "a JSON object in this event repeats the key 'delta'")]


@pytest.mark.parametrize("terminal, listed, severity", [
    ("completed", False, Severity.ERROR),  # openai-python/-node raise "Cannot complete … unfinished output items"
    ("completed", True, Severity.WARNING),  # the final output repeats it: the SDKs take it from there
    ("failed", False, Severity.WARNING),  # the SDKs keep the partial item
    ("incomplete", False, Severity.WARNING),
])
def test_unfinished_items_are_an_error_only_where_the_sdks_raise(terminal: str, listed: bool,
                                                                  severity: Severity) -> None:
    builder = StreamBuilder()
    builder.message([" a", " b"])
    events = []
    for event in builder.events(terminal=terminal):
        if event["type"] in ("response.output_text.done", "response.content_part.done", "response.output_item.done"):
            item = event.get("item")
            continue
        if event["type"] == f"response.{terminal}":
            event["response"]["output"] = [item] if listed else []
        events.append(event)
    findings = [f for f in lint_bytes(encode(events)).findings if f.code == "LIF008"]
    assert [f.severity for f in findings] == [severity]
