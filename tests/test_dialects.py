"""The dialect registry and the seam's contracts (checker/dialects)."""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from pathlib import Path

import pytest

from checker import dialects
from checker.dialects.base import ClientEffects, Dialect, FindingDetails, ItemSummary, StreamSummary
from checker.dialects.responses import DIALECT as RESPONSES
from checker.dialects.responses.vocabulary import TERMINAL_TYPES
from checker.engine import StreamLinter, lint_bytes
from checker.engine_options import EngineOptions
from checker.findings import Finding, Position
from checker.rules import lifecycle


def test_responses_is_the_default_and_registered_dialect() -> None:
    assert dialects.names()[0] == "responses"
    assert dialects.default() is RESPONSES
    assert dialects.get("responses") is RESPONSES
    with pytest.raises(ValueError, match="unknown dialect 'nope' \\(choose from responses"):
        dialects.get("nope")


def test_a_dialect_name_is_registered_once() -> None:
    with pytest.raises(ValueError, match="already registered"):
        dialects.register(dataclasses.replace(RESPONSES))
    assert dialects.register(RESPONSES) is RESPONSES  # the same object again is no change


@pytest.mark.parametrize(("path", "expected"), [
    ("/v1/responses", "responses"), ("/v1/responses/", "responses"), ("/responses", "responses"),
    ("/v1/models", None), ("", None),
])
def test_for_endpoint(path: str, expected: str | None) -> None:
    found = dialects.for_endpoint(path)
    assert (found.name if found is not None else None) == expected


def test_other_endpoints_are_named_while_they_have_no_dialect() -> None:
    registered = set(dialects.names())
    for path, name in (("/v1/chat/completions", "chat"), ("/v1/completions", "completions"),
                       ("/v1/messages", "messages")):
        assert dialects.other_endpoint(path) == (None if name in registered else name)
    assert dialects.other_endpoint("/v1/responses") is None


def test_recognise_first_event_objects() -> None:
    dialect, evidence = dialects.recognise({"type": "response.created", "response": {}})
    assert dialect is RESPONSES and evidence == "type 'response.created'"
    assert dialects.recognise({"type": ["not", "hashable"]}) == (None, "")
    assert dialects.recognise({"hello": 1}) == (None, "")


@pytest.mark.parametrize(("obj", "api", "evidence"), [
    ({"object": "text_completion", "choices": [], "type": "x"}, "a legacy Completions stream",
     "object 'text_completion'"),
    ({"object": "text_completion", "choices": [{"text": "hi", "index": 0}]}, "a legacy Completions stream",
     "object 'text_completion'"),
])
def test_apis_without_a_dialect_are_named_as_sch010_names_them(obj: dict, api: str, evidence: str) -> None:
    assert "completions" not in dialects.names()
    assert dialects.other_api(obj, besides=RESPONSES) == (api, evidence)
    assert dialects.recognise(obj) == (None, evidence)


@pytest.mark.parametrize(("obj", "name"), [
    ({"object": "chat.completion.chunk", "choices": []}, "chat"),
    ({"choices": []}, "chat"),
    ({"type": "message_start", "message": {}}, "messages"),
])
def test_a_registered_dialects_stream_is_recognised_as_it(obj: dict, name: str) -> None:
    """Checked by its own dialect; forced to be read as Responses, it is SCH010 naming that dialect."""
    found, evidence = dialects.recognise(obj)
    assert found is dialects.get(name) and evidence
    named = dialects.other_api(obj, besides=RESPONSES)
    assert named is not None and dialects.get(name).title in named[0] and named[1] == evidence


def test_the_responses_dialect_describes_itself() -> None:
    assert RESPONSES.terminal_types == TERMINAL_TYPES
    assert RESPONSES.event_type({"type": "response.created"}) == "response.created"
    assert RESPONSES.event_type({"type": 3}) is None
    assert RESPONSES.lane({"item": {"id": "msg_1"}}) == "msg_1"
    assert RESPONSES.lane({"item_id": "rs_1", "output_index": 0}) == "rs_1"
    assert RESPONSES.lane({"output_index": 2}) == "#2"
    assert RESPONSES.lane({"type": "response.created"}) == "response"
    effects = RESPONSES.effects()
    assert isinstance(effects, ClientEffects) and effects.normal_end == "response.completed"
    assert {"openai-python", "openai-node", "codex"} <= set(effects.clients)
    for kind in RESPONSES.marks.values():
        assert kind in ("added", "done", "lifecycle", "terminal", "part")


def test_screen_stops_an_event_without_a_type() -> None:
    pos = Position(line=1, byte=0)
    assert RESPONSES.screen is not None
    findings, go_on = RESPONSES.screen({"error": {"message": "x"}}, pos)
    assert not go_on and [f.code for f in findings] == ["LIF014", "SCH007"]
    assert RESPONSES.screen({"type": "error", "error": {"message": "x"}}, pos) == ([], True)


def test_a_lint_says_its_dialect_and_summarises_items() -> None:
    data = (b'event: response.created\ndata: {"type":"response.created","sequence_number":0,'
            b'"response":{"id":"resp_1","object":"response","status":"in_progress","output":[]}}\n\n')
    result = lint_bytes(data)
    assert result.dialect == "responses" and result.response_id == "resp_1"
    assert result.terminal is None and result.items == []


def test_summaries_are_values() -> None:
    item = ItemSummary("msg_1", "message", 0, True, 3)
    summary = StreamSummary(terminal="response.completed", terminals=("response.completed",), items=(item,))
    assert summary.items[0].added_at == 3 and dataclasses.replace(item, done=False) != item
    assert isinstance(RESPONSES, Dialect)


def _conforms(value: object, hint: object) -> bool:
    """Whether a JSON value (as a report holds it) is of a FindingDetails type."""
    if hint is type(None):
        return value is None
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_conforms(value, arg) for arg in typing.get_args(hint))
    if origin is list:
        (item,) = typing.get_args(hint)
        return isinstance(value, list) and all(_conforms(v, item) for v in value)
    assert isinstance(hint, type), hint
    return isinstance(value, hint)


def test_every_finding_of_the_corpus_keeps_the_details_contract() -> None:
    """The snapshots hold every finding of every capture under every profile (tests/test_snapshots.py keeps
    them current): each details key the matrices and profiles read has the type FindingDetails declares."""
    hints = typing.get_type_hints(FindingDetails)
    checked = 0
    for path in sorted((Path(__file__).parent / "snapshots").rglob("*.json")):
        for profile, record in json.loads(path.read_text("utf-8")).items():
            for finding in record.get("findings", []):
                for key, value in finding.get("details", {}).items():
                    if key in hints:
                        checked += 1
                        assert _conforms(value, hints[key]), (path.name, profile, finding["code"], key, value)
    assert checked > 1000


@pytest.mark.parametrize(("obj", "api"), [
    ({"object": "chat.completion.chunk", "choices": []}, "an OpenAI Chat Completions stream"),
    ({"id": "x", "choices": [{"delta": {}}]}, "an OpenAI Chat Completions stream"),
    ({"object": "text_completion", "text": "hi"}, "a legacy Completions stream"),
    ({"type": "message_start", "message": {}}, "an Anthropic Messages stream"),
    ({"type": "content_block_delta", "index": 0}, "an Anthropic Messages stream"),
])
def test_another_apis_first_event_is_named_as_sch010_names_it(obj: dict[str, object], api: str) -> None:
    """Whether the API has a dialect or not (a registered dialect's title keeps the wording)."""
    found = dialects.other_api(obj, besides=RESPONSES)
    assert found is not None and found[0] == api


@pytest.mark.parametrize("obj", [
    {"type": "response.created", "response": {}}, {"type": ["message_start"]}, {"type": "error", "choices": 1},
    {},
])
def test_a_responses_event_or_anything_unrecognised_is_no_other_api(obj: dict[str, object]) -> None:
    assert dialects.other_api(obj, besides=RESPONSES) is None


# --- a dialect plugged in: the engine checks its streams through the seam alone --------------------------------


class _ToyMachine:
    """A minimal machine: 'toy.start' first, 'toy.end' last."""

    def __init__(self, **options: object) -> None:
        self.options = options
        self.seen: list[str] = []
        self.fast = 0

    @property
    def terminated(self) -> bool:
        return "toy.end" in self.seen

    def handle(self, event: dict[str, typing.Any], pos: Position) -> list[Finding]:
        self.seen.append(event["kind"])
        return []

    def try_fast(self, etype: str, event: dict[str, typing.Any]) -> bool:
        if etype != "toy.delta":
            return False
        self.fast += 1
        self.seen.append(etype)
        return True

    def finish(self, end: Position) -> list[Finding]:
        return [] if self.terminated else [lifecycle.MISSING_TERMINAL.finding(end)]

    def summary(self) -> StreamSummary:
        return StreamSummary(terminal="toy.end" if self.terminated else None,
                             terminals=("toy.end",) if self.terminated else (),
                             items=(ItemSummary("t1", "toy", 0, self.terminated, 0),))


class _ToySchemas:
    name = "toy"

    def known_event_types(self) -> frozenset[str]:
        return frozenset({"toy.start", "toy.delta", "toy.end"})

    def validate_event(self, event: dict[str, typing.Any]) -> list[typing.Any]:
        return []


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> typing.Iterator[Dialect]:
    machines: list[_ToyMachine] = []

    def make(**options: object) -> _ToyMachine:
        machines.append(_ToyMachine(**options))
        return machines[-1]

    dialect = dataclasses.replace(
        RESPONSES, name="toy", title="Toy", endpoints=("/toy",), api_name="",
        recognise=lambda obj: f"kind {obj['kind']!r}" if str(obj.get("kind", "")).startswith("toy.") else None,
        make_machine=make, event_type=lambda obj: obj.get("kind") if isinstance(obj.get("kind"), str) else None,
        type_key="kind", event_names=False, done_sentinel="required", schema_set="toy",
        schema_findings=lambda violations, etype, pos: [], screen=None, requests=None, nonstream=None,
    )
    import checker.schemas

    real = checker.schemas.load_schema_set
    monkeypatch.setattr(checker.schemas, "load_schema_set",
                        lambda name: _ToySchemas() if name == "toy" else real(name))
    dialects.register(dialect)
    try:
        yield dialect
    finally:
        dialects._REGISTRY.pop("toy", None)


_TOY = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in (
    {"kind": "toy.start"}, {"kind": "toy.delta"}, {"kind": "toy.delta"}, {"kind": "toy.end"})) + b"data: [DONE]\n\n"


def test_a_registered_dialect_is_recognised_and_checked_by_its_machine(toy: Dialect) -> None:
    assert "toy" in dialects.names() and dialects.for_endpoint("/v1/toy") is toy
    result = lint_bytes(_TOY)
    assert result.dialect == "toy" and result.terminal == "toy.end"
    assert result.findings == []  # no event line expected, [DONE] required and sent
    assert [i.type for i in result.items] == ["toy"]
    linter = StreamLinter()
    linter.feed(_TOY[:40])
    linter.feed(_TOY[40:])
    assert linter.close().findings == [] and linter.machine.fast == 2  # type: ignore[attr-defined]


def test_its_done_rule_and_a_missing_terminal_are_its_own(toy: Dialect) -> None:
    result = lint_bytes(_TOY.replace(b'data: {"kind": "toy.end"}\n\n', b"").replace(b"data: [DONE]\n\n", b""))
    assert result.codes() == ["LIF006", "SSE012"]


def test_a_given_dialect_names_the_other_api(toy: Dialect) -> None:
    forced = lint_bytes(_TOY, dialect="responses")
    assert [f.message for f in forced.findings] == [
        "this stream looks like a Toy stream, not the Responses API (kind 'toy.start')"]
    responses = b'event: response.created\ndata: {"type":"response.created","response":{}}\n\n'
    as_toy = lint_bytes(responses, dialect="toy")
    assert [f.message for f in as_toy.findings] == [
        "this stream looks like an OpenAI Responses stream, not the Toy API (type 'response.created')"]
    with pytest.raises(ValueError, match="unknown dialect"):
        lint_bytes(responses, dialect="nope")


def test_a_trace_names_the_events_as_their_dialect_does(toy: Dialect) -> None:
    result = lint_bytes(_TOY, trace=True)
    assert result.trace is not None
    assert [e.type for e in result.trace] == ["toy.start", "toy.delta", "toy.delta", "toy.end", "[DONE]"]


# --- lint --dialect and the recorded endpoint -----------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[1]


def test_lint_dialect_choices_come_from_the_registry(capsys: pytest.CaptureFixture[str]) -> None:
    from checker.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["lint", str(ROOT / "captures" / "conforming"), "--dialect", "nope"])
    assert exit_.value.code == 2
    assert "invalid choice: 'nope' (choose from 'responses'" in capsys.readouterr().err


def test_lint_dialect_forces_one_and_the_text_report_names_a_dialect_not_the_default(
        toy: Dialect, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from checker.cli import main

    capture = tmp_path / "toy.sse"
    capture.write_bytes(_TOY)
    assert main(["lint", str(capture), "--color", "never"]) == 0
    assert "Toy · 5 events" in capsys.readouterr().out
    assert main(["lint", str(capture), "--dialect", "responses", "--color", "never"]) == 1
    out = capsys.readouterr().out
    assert "SCH010" in out and "Toy ·" not in out


def _meta(url: str) -> dict[str, typing.Any]:
    return {"meta_version": 1, "expect": "stream", "status": 200, "url": url,
            "headers": [["content-type", "text/event-stream"]], "ending": {"kind": "complete"}}


def test_the_recorded_endpoint_decides_before_the_stream(toy: Dialect) -> None:
    from checker.http_checks import lint_exchange

    as_responses = lint_exchange(_meta("http://127.0.0.1:1/v1/responses"), [_TOY])
    assert as_responses.dialect == "responses" and "SCH010" in as_responses.codes()
    as_toy = lint_exchange(_meta("http://127.0.0.1:1/v1/toy"), [_TOY])
    assert as_toy.dialect == "toy" and as_toy.codes() == []
    by_stream = lint_exchange(_meta("http://127.0.0.1:1/v1/other"), [_TOY])
    assert by_stream.dialect == "toy"
    forced = lint_exchange(_meta("http://127.0.0.1:1/v1/toy"), [_TOY], EngineOptions(dialect="responses"))
    assert forced.dialect == "responses" and "SCH010" in forced.codes()
