"""The WebSocket checks (checker/ws_checks.py) on transcripts: the corpus of captures/ws, the seam into the engine,
and the pure helpers. The live side (probe and serve over a real connection) is tests/live/test_ws_live.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from checker.engine import StreamLinter
from checker.engine_options import EngineOptions
from checker.errors import UsageError
from checker.lint_job import Job, run_job
from checker.rules import RULES
from checker.sse import SSEDecoder, SSEEvent
from checker.ws_checks import MessageLinter, WebSocketLinter, error_shape_problem, split_values

ROOT = Path(__file__).resolve().parents[1]
WS = ROOT / "captures" / "ws"
TRANSCRIPTS = sorted(WS.glob("*.ws.jsonl"))
WSK = sorted(code for code in RULES if code.startswith("WSK"))


def lint(data: bytes, options: EngineOptions = EngineOptions()) -> list[str]:
    linter = WebSocketLinter(options)
    linter.feed(data)
    return linter.close().codes()


def expected(path: Path) -> list[str]:
    return json.loads(path.with_name(path.name.removesuffix(".ws.jsonl") + ".expect.json").read_text())["openai"]


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda p: p.name)
def test_each_transcript_gives_exactly_the_codes_it_declares(path: Path) -> None:
    assert lint(path.read_bytes()) == expected(path)


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda p: p.name)
def test_the_verdict_does_not_depend_on_how_the_transcript_is_chunked(path: Path) -> None:
    data = path.read_bytes()
    linter = WebSocketLinter()
    for i in range(0, len(data), 7):
        linter.feed(data[i:i + 7])
    assert linter.close().codes() == expected(path)


@pytest.mark.parametrize("code", WSK)
def test_every_websocket_rule_has_a_bad_transcript_that_produces_it_and_a_good_one_that_does_not(code: str) -> None:
    rule = RULES[code]
    assert rule.bad.startswith("ws/") and rule.bad.endswith(".ws.jsonl")
    assert code in lint((ROOT / "captures" / rule.bad).read_bytes())
    assert code not in lint((ROOT / "captures" / rule.good).read_bytes())


def test_the_generator_writes_the_transcripts_byte_for_byte() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_ws_captures", ROOT / "captures" / "make_ws_captures.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    files = module.outputs()
    assert sorted(files) == sorted(p.name for p in WS.iterdir() if p.is_file() and p.name != "README.md")
    for name, data in files.items():
        assert (WS / name).read_bytes() == data, name


def test_lint_of_a_transcript_is_the_websocket_checks_with_the_command_s_options() -> None:
    path = WS / "WSK005-abnormal-close.ws.jsonl"
    done = run_job(Job(path))
    assert done.error is None and done.result is not None and done.result.codes() == ["WSK005"]
    quiet = run_job(Job(path, EngineOptions(ignore=("WSK005",))))
    assert quiet.result is not None and quiet.result.codes() == []


def test_a_damaged_transcript_is_one_line_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "cut.ws.jsonl"
    path.write_bytes(b"".join((WS / "conforming.ws.jsonl").read_bytes().splitlines(keepends=True)[:3]) + b"{not json\n")
    done = run_job(Job(path))
    assert done.result is None and done.error is not None
    assert "\n" not in done.error and "line 4" in done.error
    with pytest.raises(UsageError, match="not an sse-check websocket transcript"):
        WebSocketLinter().feed(b'{"hello": 1}\n')


# --- the seam: a message is checked as the same event of an SSE stream -----------------------------------

# The SSE rules about framing text (BOM, line ends, event: and data: lines, [DONE], fields, sizes of lines): a
# WebSocket message has none. The others (JSON hazards, events after the terminal one, limits) apply as they are.
FRAMING = {f"SSE{n:03}" for n in (1, 2, 3, 4, 5, 8, 9, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 28)}
CORPUS = sorted((ROOT / "captures" / "rules").glob("[A-Z][A-Z][A-Z]0*.sse"))


@pytest.mark.parametrize("path", [p for p in CORPUS if p.name[:6] not in FRAMING], ids=lambda p: p.name)
def test_a_stream_sent_as_messages_gets_the_findings_of_the_stream_but_framing(path: Path) -> None:
    data = path.read_bytes()
    decoder = SSEDecoder()
    events = [e for e in decoder.feed(data) + decoder.close() if isinstance(e, SSEEvent) and e.data != b"[DONE]"]
    sse = StreamLinter(dialect="responses")
    sse.feed(data)
    want = {f.code for f in sse.close().findings if f.code not in FRAMING}
    messages = MessageLinter(dialect="responses")
    for event in events:
        try:
            etype = json.loads(event.data).get("type")
        except (ValueError, AttributeError):
            etype = None
        messages.message(event.data, etype if isinstance(etype, str) else None, event.line, event.byte)
    got = {f.code for f in messages.close().findings}
    assert got == want


# --- helpers ---------------------------------------------------------------------------------------------


def test_split_values_tells_one_event_from_several_and_from_a_partial_one() -> None:
    assert [v for v, _ in split_values('{"type":"a"}')[0]] == [{"type": "a"}]
    values, problem = split_values('{"type":"a"}\n{"type":"b"} ')
    assert [raw for _, raw in values] == [b'{"type":"a"}', b'{"type":"b"}'] and problem is None
    values, problem = split_values('{"type":"a"}{"type":')
    assert len(values) == 1 and problem is not None and "partial" in problem
    assert split_values('{"type":')[0] == [] and "not JSON" in (split_values('{"type":')[1] or "")
    assert split_values("")[1] == "an empty message"


@pytest.mark.parametrize(("event", "problem"), [
    ({"type": "error", "status": 400, "error": {"type": "invalid_request_error", "message": "m"}}, None),
    ({"type": "error", "error": {"type": "server_error", "code": None, "message": "m", "param": None}}, None),
    ({"type": "error", "code": "x", "message": "m"}, "top level"),
    ({"type": "error"}, "no \"error\" object"),
    ({"type": "error", "error": {"message": "m"}}, "string type"),
    ({"type": "error", "status": 200, "error": {"type": "t", "message": "m"}}, "not an HTTP error status"),
])
def test_the_error_event_shape_is_openai_python_s_response_ws_error(event: dict[str, object],
                                                                      problem: str | None) -> None:
    found = error_shape_problem(event)
    assert (found is None) if problem is None else (found is not None and problem in found)
