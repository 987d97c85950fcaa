"""The probe's structured-output flows (docs/spec.md §8, checker/surface/structured.py) against a real replay
server (``sse-check serve``) on loopback: each dialect asks for a strict JSON answer in its own words, the answer
is judged against the schema the probe sent, the capability table says so per dialect, and the saved captures
lint the same."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from checker.live.scenarios import WEATHER_ANSWER
from checker.surface.structured import flows
from checker.structured_output import RequestedFormat
from checker import dialects
from checker.synth import ChatStreamBuilder, encode, encode_chat
from checker.synth.messages import MessagesStreamBuilder
from checker.synth.messages import encode as encode_messages
from checker.synth.responses import ResponsesStream, usage
from tests.generators import load_generator
from tests.live.conftest import ROOT, sse_check_json

GOOD = ['{"city": "Paris", ', '"temperature": 21, "unit": "celsius"}']
FENCED = ['```json\n{"city": "Paris", "temperature": 21, ', '"unit": "celsius"}\n```']
WRONG = ['{"city": "Paris", "temperature": "warm", ', '"unit": "celsius"}']


def responses_answer(deltas: list[str]) -> bytes:
    stream = ResponsesStream("probe-structured").start()
    stream.message(deltas)
    return encode(stream.completed(usage(20, len(deltas))).events)


def chat_answer(deltas: list[str]) -> bytes:
    builder = ChatStreamBuilder()
    builder.text(deltas)
    return encode_chat(builder.chunks(usage=True))


def messages_answer(deltas: list[str]) -> bytes:
    return encode_messages(MessagesStreamBuilder(name="probe-structured").text(deltas).events())


# The non-streamed answer a stream builds (captures/make_structured_nonstream.py: a Response, a chat completion,
# a Message), by dialect.
_WHOLE = load_generator(ROOT / "captures" / "make_structured_nonstream.py")


def replay_folder(root: Path, responses: list[str], chat: list[str], messages: list[str],
                  whole: tuple[list[str], list[str], list[str]] | None = None) -> Path:
    """A replay folder answering structured_output in each dialect with the given text, streamed, and with
    ``stream: false`` the answer of the same text (or of ``whole``'s, by dialect)."""
    whole = whole or (responses, chat, messages)
    for (dialect, folder, make), text, other in zip(
            (("responses", root, responses_answer), ("chat", root / "chat", chat_answer),
             ("messages", root / "messages", messages_answer)), (responses, chat, messages), whole):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "structured_output.sse").write_bytes(make(text))
        answer = _WHOLE.ANSWERS[dialect](_WHOLE.events_of(make(other)))
        (folder / "structured_output.nonstream.json").write_text(json.dumps(answer))
    return root


def findings(report: dict[str, Any]) -> dict[str, list[str]]:
    return {entry["path"]: [f["code"] for f in entry["findings"] if f["severity"] != "info"]
            for entry in report["files"]}


def rows(report: dict[str, Any]) -> dict[str, str]:
    return {row["feature"]: row["status"] for row in report["capabilities"]
            if row["feature"].startswith("structured_output")}


STEP = "structured_output.answer"
WHOLE = "structured_output.answer_nonstream"


def test_each_dialect_asks_for_the_same_strict_json_answer_in_its_own_words() -> None:
    expected = RequestedFormat("json_schema", "", WEATHER_ANSWER, True)
    for flow in flows(("responses", "chat", "messages")):
        assert flow.api is not None
        dialect = dialects.get(flow.api)
        assert dialect.requested_format is not None
        asked = dialect.requested_format(flow.steps[0].body)
        assert asked is not None and (asked.kind, asked.schema, asked.strict) == (
            expected.kind, expected.schema, expected.strict), (flow.api, asked)


def test_the_probe_judges_each_dialects_answer_against_the_schema_it_sent(serve: Any, tmp_path: Path) -> None:
    server = serve(str(replay_folder(tmp_path / "replay", GOOD, FENCED, WRONG)))
    saved = tmp_path / "saved"
    code, report = sse_check_json("probe", server.url, "--model", "m", "-s", "structured_output", "--clients",
                       "--save", str(saved))
    assert code == 1
    assert findings(report) == {STEP: [], f"chat/{STEP}": ["FMT001"], f"messages/{STEP}": ["FMT002"],
                                WHOLE: [], f"chat/{WHOLE}": ["FMT001"], f"messages/{WHOLE}": ["FMT002"]}
    # FMT002 is a warning (docs/severity.md: no client run stands behind a break on it): the row stays
    # supported and says why; FMT001 (not JSON) is an error and breaks its row.
    assert rows(report) == {"structured_output.responses": "supported", "structured_output.chat": "broken",
                            "structured_output.messages": "supported"}
    messages_row = next(r for r in report["capabilities"] if r["feature"] == "structured_output.messages")
    assert messages_row["why"].startswith("FMT002 ") and messages_row["finding"]["code"] == "FMT002"
    streaming = {row["feature"]: row["status"] for row in report["capabilities"] if row["feature"].startswith("stream.")}
    assert set(streaming.values()) == {"supported"}  # the FMT findings decide their own rows only
    readiness = {row["client"]: row["verdict"] for row in report["readiness"]}
    # openai-node relies on chat's structured output (FMT001 broke it); anthropic-python's Messages row is
    # supported with FMT002's warning, which no client run stands behind yet (docs/severity.md).
    assert readiness["openai-node"] == "degraded" and readiness["anthropic-python"] == "ready"
    chat = next(e for e in report["files"] if e["path"] == f"chat/{STEP}")
    verdicts = {c: cell["verdict"] for c, cell in chat["clients"].items()} if isinstance(chat["clients"], dict) \
        else {cell["client"]: cell["verdict"] for cell in chat["clients"]}
    assert verdicts["openai-node"] == "breaks"  # it parses a json_schema answer (docs/spec.md §8.3)
    # the saved captures carry the probe's request: lint judges them the same
    lint_code, linted = sse_check_json("lint", str(saved))
    assert lint_code == 1
    assert findings(linted) == {str(saved / sub / f"{step}.sse"): codes for step in (STEP, WHOLE)
                                for sub, codes in (("", []), ("chat", ["FMT001"]), ("messages", ["FMT002"]))}


def test_a_server_that_follows_the_format_passes(serve: Any, tmp_path: Path) -> None:
    server = serve(str(replay_folder(tmp_path / "replay", GOOD, GOOD, GOOD)))
    code, report = sse_check_json("probe", server.url, "--model", "m", "-s", "structured_output")
    assert code == 0, report["summary"]
    assert findings(report) == {STEP: [], f"chat/{STEP}": [], f"messages/{STEP}": [],
                                WHOLE: [], f"chat/{WHOLE}": [], f"messages/{WHOLE}": []}
    assert set(rows(report).values()) == {"supported"}


def test_the_answer_without_streaming_is_judged_too(serve: Any, tmp_path: Path) -> None:
    """A server whose streams follow the format but whose stream: false answers do not (the parse() helpers'
    path): the non-streamed step's FMT findings break the row, with the schema the request sent."""
    server = serve(str(replay_folder(tmp_path / "replay", GOOD, GOOD, GOOD, whole=(WRONG, FENCED, GOOD))))
    saved = tmp_path / "saved"
    code, report = sse_check_json("probe", server.url, "--model", "m", "-s", "structured_output", "--save", str(saved))
    assert code == 1
    assert findings(report) == {STEP: [], f"chat/{STEP}": [], f"messages/{STEP}": [],
                                WHOLE: ["FMT002"], f"chat/{WHOLE}": ["FMT001"], f"messages/{WHOLE}": []}
    assert rows(report) == {"structured_output.responses": "supported", "structured_output.chat": "broken",
                            "structured_output.messages": "supported"}  # FMT002 a warning, as above
    row = next(r for r in report["capabilities"] if r["feature"] == "structured_output.responses")
    assert row["finding"]["code"] == "FMT002" and row["finding"]["step"] == WHOLE
    _, linted = sse_check_json("lint", str(saved / f"{WHOLE}.sse"), str(saved / "chat" / f"{WHOLE}.sse"))
    assert list(findings(linted).values()) == [["FMT002"], ["FMT001"]]
