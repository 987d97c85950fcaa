"""Structured output (docs/spec.md §8): what each dialect's request asks for, what its answer's texts are, and
the judgement of a text against the request's format. The corpus (captures/structured/, captures/chat/structured/,
captures/messages/structured/, written by captures/make_structured_captures.py) is checked by test_corpus and
by the three dialects' oracle tests; here the edges."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from checker import dialects
from checker.engine import StreamLinter
from checker.findings import Position
from checker.structured_output import Answer, RequestedFormat, check, json_schema_format, parse_json
from checker.synth import ChatStreamBuilder, encode, encode_chat
from checker.synth.responses import ResponsesStream, usage

ROOT = Path(__file__).resolve().parents[1]
END = Position(line=9, byte=99, event_index=None)
SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"], "additionalProperties": False}


def codes(findings: list[Any]) -> list[str]:
    return [f.code for f in findings]


@pytest.mark.parametrize("text, ok", [
    ('{"n": 1}', True), ("  [1, 2]\n", True), ('"a string"', True), ("", False), ("   ", False),
    ('{"n": NaN}', False), ('{"n": Infinity}', False), ("```json\n{}\n```", False), ('{"n": 1} trailing', False),
    ("[" * 100_000, False),
])
def test_parse_json_is_strict_rfc_8259(text: str, ok: bool) -> None:
    value, error = parse_json(text)
    assert (error is None) is ok, (text[:20], error)


@pytest.mark.parametrize("name, request_body, expected", [
    ("responses", {"text": {"format": {"type": "json_schema", "name": "n", "schema": SCHEMA, "strict": True}}},
     RequestedFormat("json_schema", "text.format", SCHEMA, True, "n")),
    ("responses", {"text": {"format": {"type": "json_object"}}}, RequestedFormat("json_object", "text.format")),
    ("responses", {"text": {"format": {"type": "text"}}}, None),
    ("responses", {"text": "json"}, None),
    ("responses", None, None),
    ("chat", {"response_format": {"type": "json_schema", "json_schema": {"name": "n", "schema": SCHEMA}}},
     RequestedFormat("json_schema", "response_format", SCHEMA, False, "n")),
    ("chat", {"response_format": {"type": "json_schema"}}, None),
    ("chat", {"response_format": {"type": "json_object"}}, RequestedFormat("json_object", "response_format")),
    ("messages", {"output_config": {"format": {"type": "json_schema", "schema": SCHEMA}}},
     RequestedFormat("json_schema", "output_config.format", SCHEMA, True)),
    ("messages", {"output_format": {"type": "json_schema", "schema": SCHEMA}},
     RequestedFormat("json_schema", "output_format", SCHEMA, True)),
    ("messages", {"output_config": {"effort": "low"}}, None),
])
def test_each_dialect_reads_its_request(name: str, request_body: Any, expected: RequestedFormat | None) -> None:
    dialect = dialects.get(name)
    assert dialect.requested_format is not None
    assert dialect.requested_format(request_body) == expected


def test_json_schema_format_ignores_malformed_values() -> None:
    assert json_schema_format([], "x") is None
    assert json_schema_format({"type": "json_schema", "schema": "no"}, "x") == RequestedFormat("json_schema", "x")


@pytest.mark.parametrize("requested, text, expected", [
    (RequestedFormat("json_schema", "f", SCHEMA, True), '{"n": 2}', []),
    (RequestedFormat("json_schema", "f", SCHEMA, True), '{"n": "2"}', ["FMT002"]),
    (RequestedFormat("json_schema", "f", SCHEMA, False), '{"n": "2"}', ["FMT003"]),
    (RequestedFormat("json_schema", "f", SCHEMA, True), 'Sure! {"n": 2}', ["FMT001"]),
    (RequestedFormat("json_schema", "f", None, True), '{"anything": 2}', []),  # no schema sent: JSON is enough
    (RequestedFormat("json_schema", "f", {"type": 12}, True), '{"n": 2}', ["FMT005"]),
    (RequestedFormat("json_object", "f"), '{"n": 2}', []),
    (RequestedFormat("json_object", "f"), "2", ["FMT004"]),
    (RequestedFormat("json_object", "f"), "null", ["FMT004"]),
])
def test_check_judges_one_text(requested: RequestedFormat, text: str, expected: list[str]) -> None:
    assert codes(check(requested, [Answer("choice 0", text)], END)) == expected


def test_a_cut_text_is_said_not_judged() -> None:
    found = check(RequestedFormat("json_schema", "f", SCHEMA, True), [Answer("choice 0", '{"n": ', cut="length")], END)
    assert codes(found) == ["FMT006"]
    assert found[0].details["kind"] == "json_schema"


@pytest.mark.parametrize("requested, text, expected", [
    (RequestedFormat("json_schema", "f", SCHEMA, True), " Sure, here", ["FMT001"]),
    (RequestedFormat("json_schema", "f", SCHEMA, True), '\n {"n": ', ["FMT006"]),
    (RequestedFormat("json_schema", "f", SCHEMA, True), "[1, ", ["FMT001"]),  # the schema asks for an object
    (RequestedFormat("json_schema", "f", {"type": "array"}, True), "[1, ", ["FMT006"]),
    (RequestedFormat("json_schema", "f", {}, True), "nul", ["FMT006"]),
    (RequestedFormat("json_schema", "f", {}, True), "Sure", ["FMT001"]),
    (RequestedFormat("json_object", "f"), '"a', ["FMT001"]),
    (RequestedFormat("json_schema", "f", SCHEMA, True), "", ["FMT006"]),
])
def test_a_cut_text_is_judged_by_its_first_character(requested: RequestedFormat, text: str,
                                                    expected: list[str]) -> None:
    found = check(requested, [Answer("choice 0", text, cut="finish_reason length")], END)
    assert codes(found) == expected
    assert found[0].details["cut"] == "finish_reason length"


def test_many_violations_are_named_up_to_three() -> None:
    schema = {"type": "object", "properties": {k: {"type": "integer"} for k in "abcde"}}
    text = json.dumps({k: "x" for k in "abcde"})
    (finding,) = check(RequestedFormat("json_schema", "f", schema, True, "five"), [Answer("block 0", text)], END)
    assert finding.message.count("is not of type") == 3 and finding.message.endswith("; …")
    assert "'five'" in finding.message


def _responses(deltas: list[str]) -> bytes:
    stream = ResponsesStream("structured-test").start()
    stream.message(deltas)
    return encode(stream.completed(usage(5, len(deltas))).events)


def _lint(data: bytes, request: dict[str, Any] | None, **options: Any) -> Any:
    linter = StreamLinter(request=request, **options)
    linter.feed(data)
    return linter.close()


def test_no_format_asked_no_judgement_and_texts_stay_private() -> None:
    data = _responses(["not ", "json"])
    assert codes(_lint(data, None).findings) == []
    result = _lint(data, {"text": {"format": {"type": "json_object"}}})
    assert codes(result.findings) == ["FMT001"]
    assert result.texts is None  # kept for the check, not put in the result unless asked for
    assert _lint(data, {"text": {"format": {"type": "json_object"}}}, keep_texts=True).texts is not None


def test_every_chat_choice_is_judged_and_a_refusal_is_not() -> None:
    builder = ChatStreamBuilder()
    builder.text(['{"n": 1}'], choice=0)
    builder.text(["oops"], choice=1)
    builder.refusal(["I can't."], choice=2)
    request = {"n": 3, "response_format": {"type": "json_schema", "json_schema": {"name": "n", "schema": SCHEMA,
                                                                                 "strict": True}}}
    found = _lint(encode_chat(builder.chunks()), request).findings
    assert [(f.code, f.message.split(":")[0]) for f in found] == [("FMT001", "choice 1")]


def test_the_generator_writes_the_committed_corpus(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("make_structured", ROOT / "captures" / "make_structured_captures.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    written = list(module.captures())
    assert len(written) == 30
    for path, request, data in written:
        assert path.read_bytes() == data, path
        assert json.loads(path.with_name(f"{path.stem}.request.json").read_text()) == request, path


def test_a_completed_event_that_says_status_incomplete_cuts_the_answer() -> None:
    """vLLM ends a max_output_tokens cut with response.completed whose response says status incomplete
    (captures/vllm/structured_output.answer): openai-node's parseResponse parses the texts of a completed
    response only, so the cut text is not judged as a whole answer (FMT006), as under response.incomplete."""
    request = {"text": {"format": {"type": "json_schema", "name": "n", "schema": SCHEMA, "strict": True}}}
    stream = ResponsesStream("structured-test").start()
    stream.message(['{"n": ', '1, "m'])
    events = stream.completed(usage(5, 2)).events
    assert codes(_lint(encode(events), request).findings) == ["FMT001"]
    events[-1]["response"]["status"] = "incomplete"
    events[-1]["response"]["incomplete_details"] = {"reason": "max_output_tokens"}
    found = _lint(encode(events), request).findings
    assert "FMT001" not in codes(found) and "FMT006" in codes(found)
    assert next(f for f in found if f.code == "FMT006").details["cut"] == "status incomplete"
