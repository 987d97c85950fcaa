"""Prediction against reality: the client matrix and the real clients, on every bundled capture.

For every capture under captures/ (conforming, open-responses, rules,
llama.cpp, litellm, real-world, real-openai; not the probe exchanges of captures/http), sse-check's matrix predicts what openai-python and
openai-node do; the real clients then run on the same bytes
(checker.oracles.openai_python and tests/oracles/node) and the two must agree:

* ``breaks``   ⇔ the client raises (or, for openai-python, ``get_final_response()``
  has no response.completed to return);
* ``ok``       ⇒ it finishes, and a completed response's output is the items the
  stream finished, with the streamed text;
* ``degraded`` ⇒ it finishes (what it loses is not visible in its result).

Where the two cannot agree for a documented reason, ``KNOWN_DISAGREEMENTS``
says why and the test is a strict xfail, so the day the reason goes away the
test says so. Keep these tests: a client release that changes behaviour
shows up here first.

Captures with an ``X.clients.json`` sidecar (real-world/, llama.cpp/,
real-openai/, litellm/) also declare their whole expected matrix.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from test_corpus import CAPTURES, Declaration, declaration, is_chat, is_messages, is_probe_exchange, rel

import node_oracle
from checker.compat import matrix
from checker.engine import LintResult, StreamLinter
from checker.oracles import Outcome, disagreement
from checker.oracles import expected_output as _expected
from checker.profiles import get_profile


# Probe captures that are not whole streams (captures/http: X.meta.json records an HTTP exchange: a status, a
# stall, a cut, a non-streaming answer) are left out: the oracles replay a body as a 200 event stream that ends
# complete, which is not what those clients saw.
# Streams of other dialects are held to their own clients' oracles (captures/messages and Messages streams
# elsewhere: tests/test_messages_oracles.py; Chat Completions streams, wherever they are: tests/test_chat_oracles.py).
OTHER_DIALECTS = ("messages",)
ALL = sorted(p for p in CAPTURES.rglob("*.sse")
             if not is_probe_exchange(p) and p.relative_to(CAPTURES).parts[0] not in OTHER_DIALECTS and not is_chat(p)
             and not is_messages(p))
DECLARED_MATRICES = sorted(p for p in ALL if p.with_name(p.name[: -len(".sse")] + ".clients.json").is_file())

_LIMIT = ("sse-check's own {limit} limit (declared by the capture) skips {what}; the client has no such limit "
          "and reads it, so the findings after the skip describe a stream the client never saw")
# (client, capture) -> why prediction and reality cannot agree.
KNOWN_DISAGREEMENTS: dict[tuple[str, str], str] = {
    ("openai-python", "rules/SSE021-event-too-large.sse"):
        _LIMIT.format(limit="max-event-bytes", what="response.completed (LIF006 follows)"),
    ("openai-node", "rules/SSE026-json-too-deep.sse"):
        _LIMIT.format(limit="JSON depth", what="a vendor event that openai-node rejects as unhandled"),
    ("openai-node", "rules/SSE021-event-too-large.sse"):
        _LIMIT.format(limit="max-event-bytes", what="response.completed (LIF006 follows)"),
    **{(client, "rules/SSE027-stream-limit-exceeded.sse"):
       _LIMIT.format(limit="max-events", what="the rest of the stream, its items and terminal included")
       for client in ("openai-python", "openai-node")},
}
# Codes whose `degraded` is a difference the oracles' (type, id, text) view of the final output cannot show,
# and why it is real.
DEGRADED_BEYOND_TEXT: dict[str, str] = {
    "REC007": "the final response lists the item with another status than its output_item.done",
    "SSE005": "the text carries U+FFFD for the invalid bytes, as sse-check's own decoded text does",
    # The oracles read the text of messages, function calls and reasoning items only, not a hosted tool's
    # code, arguments or input: these two compare exactly those.
    "REC008": "a hosted tool's code/arguments/input in the final snapshot differ from its deltas",
    "REC009": "a hosted tool's done item differs from what was streamed for it",
    "REC010": "a text part's annotations differ from the streamed ones (the oracles do not read annotations)",
}


def _reasoning_item_differs(finding: Any, result: LintResult) -> bool:
    """REC004 on a reasoning item: the oracles view a reasoning item as its `content` text only, so a final
    item that lost the streamed `summary` (and carries the same text as `content`, as LiteLLM's bridge sends
    it: captures/litellm) looks the same to them, though `get_final_response().output[i].summary` is None."""
    if finding.code != "REC004":
        return False
    return any(kind == "reasoning" and item_id and f"'{item_id}'" in finding.message
               for kind, item_id in _expected(result))


def _lint(path: Path) -> tuple[LintResult, StreamLinter]:
    """The capture under the openai profile (every rule on) with its declared limits and request."""
    decl: Declaration = declaration(path)
    linter = StreamLinter(profile=get_profile("openai"), request=decl.request, limits=decl.limits, keep_texts=True)
    linter.feed(path.read_bytes())
    return linter.close(), linter


def _cases(client: str) -> list[Any]:
    cases = []
    for path in ALL:
        reason = KNOWN_DISAGREEMENTS.get((client, rel(path)))
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        cases.append(pytest.param(path, id=rel(path), marks=marks))
    return cases


def _texts(linter: StreamLinter, result: LintResult) -> list[str | None]:
    """What the stream carried per finished item, in output order: a message's text, a call's arguments.

    None where sse-check could not follow it: events that named the item by another item_id (ITM004/ITM005)
    are placed by output_index in the clients, by item_id in sse-check."""
    misaddressed = {f.details.get("index") for f in result.findings if f.code in ("ITM004", "ITM005")}
    done = [(n, item) for n, item in enumerate(linter.machine.item_texts()) if item["done"]]
    done.sort(key=lambda pair: (pair[1]["output_index"] if type(pair[1]["output_index"]) is int else 1 << 30,
                                pair[0]))
    texts: list[str | None] = []
    for _, item in done:
        if item["output_index"] in misaddressed:
            texts.append(None)
        elif item["type"] == "message":
            texts.append("".join(part["text"] for part in item["content"]))
        elif item["type"] == "function_call":
            texts.append(item["arguments"])
        else:
            texts.append(None)
    return texts


def _agree(client: str, path: Path, outcome: Outcome) -> None:
    result, linter = _lint(path)
    cell = matrix(result)[client]
    problem = disagreement(cell.verdict, outcome, result)
    decided = f"{cell.finding.code} ({cell.symptom})" if cell.finding else "no finding"
    assert problem is None, f"{rel(path)}: {problem}; the matrix's reason: {decided}"
    if cell.verdict.name == "OK" and outcome.status == "completed" and outcome.terminal == "response.completed":
        for item, streamed in zip(outcome.output, _texts(linter, result), strict=True):
            if streamed is not None:
                assert item.text == streamed, f"{rel(path)}: {item.type} {item.id}: the text differs from the stream"
    # degraded means the final result really differs: not the stream's finished items with the streamed text.
    if cell.verdict.name == "DEGRADED" and outcome.raised is None and cell.finding is not None \
            and cell.finding.code not in DEGRADED_BEYOND_TEXT and not _reasoning_item_differs(cell.finding, result):
        streamed = _texts(linter, result)
        same = (outcome.status == "completed" and outcome.terminal == "response.completed"
                and [(o.type, o.id) for o in outcome.output] == [(t, i) for t, i in _expected(result)]
                and all(s is None or o.text == s for o, s in zip(outcome.output, streamed, strict=False)))
        assert not same, (f"{rel(path)}: predicted degraded ({decided}), but {client}'s final response is the "
                          "stream's items with the streamed text")


# --- openai-python ---------------------------------------------------------------


@pytest.mark.parametrize("path", _cases("openai-python"))
def test_openai_python_does_what_the_matrix_predicts(path: Path) -> None:
    from checker.oracles.openai_python import run

    _agree("openai-python", path, run(path.read_bytes(), mode="client"))


STATE_MODE = sorted(p for p in ALL if p.parts[-2] in ("conforming", "real-world"))


@pytest.mark.parametrize("path", STATE_MODE, ids=rel)
def test_the_accumulator_alone_behaves_like_the_whole_client(path: Path) -> None:
    """The oracle's `state` mode (sse-check's decoder + the SDK's ResponseStreamState) on well-framed streams."""
    from checker.oracles.openai_python import run

    whole, state = run(path.read_bytes(), mode="client"), run(path.read_bytes(), mode="state")
    assert (state.raised, state.status, state.output) == (whole.raised, whole.status, whole.output)


def test_the_oracle_reports_the_sdk_errors_verbatim() -> None:
    from checker.oracles.openai_python import run

    cut = run((CAPTURES / "real-world" / "missing-terminal-event.sse").read_bytes())
    assert cut.raised == "RuntimeError: Didn't receive a `response.completed` event."
    error = run((CAPTURES / "rules" / "LIF014-top-level-error-field.sse").read_bytes())
    assert error.raised is not None and error.raised.startswith("APIError: ")
    # get_final_response() returns only a completed response: on a conforming incomplete or failed end it raises.
    for name in ("failed", "incomplete"):
        ended = run((CAPTURES / "conforming" / f"{name}.sse").read_bytes())
        assert (ended.raised, ended.terminal) == (cut.raised, f"response.{name}"), name


# --- openai-node -----------------------------------------------------------------


@pytest.fixture(scope="session")
def node_outcomes() -> dict[Path, Outcome]:
    try:
        target = node_oracle.ensure_installed()
    except node_oracle.NodeOracleUnavailable as exc:
        if os.environ.get(node_oracle.REQUIRE_ENV):
            pytest.fail(f"the openai-node oracle is required here: {exc}")
        pytest.skip(f"openai-node oracle not available: {exc}")
    outcomes = node_oracle.run(ALL, target)
    assert len(outcomes) == len(ALL)
    return {path: Outcome.from_dict(raw) for path, raw in zip(ALL, outcomes)}


@pytest.mark.parametrize("path", _cases("openai-node"))
def test_openai_node_does_what_the_matrix_predicts(path: Path, node_outcomes: dict[Path, Outcome]) -> None:
    _agree("openai-node", path, node_outcomes[path])


def test_the_node_oracle_runs_the_pinned_release(node_outcomes: dict[Path, Outcome]) -> None:
    lock = json.loads((node_oracle.SOURCE / "package-lock.json").read_text())
    pinned = lock["packages"]["node_modules/openai"]["version"]
    assert {o.version for o in node_outcomes.values()} == {pinned}


# --- declared matrices -------------------------------------------------------------


@pytest.mark.parametrize("path", DECLARED_MATRICES, ids=rel)
def test_the_matrix_is_the_declared_one(path: Path) -> None:
    declared = json.loads(path.with_name(path.name[: -len(".sse")] + ".clients.json").read_text())
    result, _ = _lint(path)
    assert matrix(result).verdicts() == declared


def test_the_real_world_corpus_covers_the_bugs_of_the_spec() -> None:
    names = {p.stem for p in ALL if p.parts[-2] == "real-world"}
    assert names >= {"vllm-content-index-not-reset", "litellm-no-content-part", "ollama-summary-without-part",
                     "llama.cpp-delayed-reasoning-done", "codex-backend-empty-output", "missing-terminal-event"}
    assert {p.stem for p in DECLARED_MATRICES if p.parts[-2] == "real-world"} == names


@pytest.mark.parametrize("path", ALL, ids=rel)
def test_every_verdict_but_ok_says_which_finding_and_what_the_user_sees(path: Path) -> None:
    result, _ = _lint(path)
    for cell in matrix(result).cells:
        if cell.verdict.name == "OK":
            assert cell.finding is None and cell.symptom is None and cell.cause is None
            continue
        # A finding decides, or how the stream ended (a conforming end the client's final call raises on).
        assert (cell.finding is None) != (cell.cause is None) and cell.symptom, (rel(path), cell.client)
        if cell.cause is not None:
            assert "as a conforming stream may" in cell.symptom, (rel(path), cell.client, cell.symptom)
        assert not re.search(r"\{[a-z_]+(![rs])?\}", cell.symptom), (rel(path), cell.client, cell.symptom)


# --- output indexes: both SDKs key their items by the exact wire output_index ---------------------------------
# Whatever value the index has (negative, past a gap, another item's, one past its item's added as the gpt-oss
# reference server sends every *.done: captures/gpt-oss), the matrix must follow the clients' own lookup
# (openai-python ResponseStreamState._output_items, openai-node ResponseStream.#outputPositions), not a case.


def _indexed(name: str, place: Any) -> bytes:
    """A reasoning item then a message, every scoped event's output_index rewritten by ``place(type, index)``."""
    from checker.synth.responses import ResponsesStream, usage
    from checker.synth.sse import encode

    stream = ResponsesStream(name).start().reasoning_item(text=["Think", "ing."]).message(["Hello", ", world"])
    stream.completed(usage(5, 4))
    for event in stream.events:
        if isinstance(event, dict) and type(event.get("output_index")) is int:
            event["output_index"] = place(event["type"], event["output_index"])
    return encode(stream.events)


_ADDED = "response.output_item.added"
_DONES = ("response.output_text.done", "response.reasoning_text.done", "response.content_part.done",
          "response.output_item.done")
INDEX_CASES: dict[str, Any] = {
    # The gpt-oss reference server's shape: items added one index early (the first at -1), done events where
    # they belong.
    "added-one-early": lambda t, i: i - 1 if t != "response.output_item.done" and t not in _DONES else i,
    # Every event of every item at a negative index, consistently.
    "all-negative": lambda t, i: i - 5,
    # Consistent indexes with a gap (0, then 2).
    "gap": lambda t, i: i * 2,
    # Consistent indexes, but the done events one past their item's.
    "dones-one-late": lambda t, i: i + 1 if t in _DONES else i,
    # The message's text events at the reasoning item's index (item_id still the message's).
    "text-at-reasoning-index": lambda t, i: 0 if t.startswith("response.output_text.") else i,
    # Only the message's done events at a negative index.
    "message-done-negative": lambda t, i: -1 if t in _DONES and i == 1 else i,
}


@pytest.fixture(scope="session")
def index_cases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("index-cases")
    paths = {}
    for name, place in INDEX_CASES.items():
        paths[name] = folder / f"{name}.sse"
        paths[name].write_bytes(_indexed(name, place))
    return paths


def _agree_on(client: str, data: bytes, outcome: Outcome) -> None:
    linter = StreamLinter(profile=get_profile("openai"))
    linter.feed(data)
    result = linter.close()
    cell = matrix(result)[client]
    problem = disagreement(cell.verdict, outcome, result)
    decided = f"{cell.finding.code} ({cell.symptom})" if cell.finding else "no finding"
    assert problem is None, f"{problem}; the matrix's reason: {decided}"


@pytest.mark.parametrize("name", INDEX_CASES)
def test_openai_python_finds_items_by_their_wire_index(name: str, index_cases: dict[str, Path]) -> None:
    from checker.oracles.openai_python import run

    data = index_cases[name].read_bytes()
    _agree_on("openai-python", data, run(data))


@pytest.mark.parametrize("name", INDEX_CASES)
def test_openai_node_finds_items_by_their_wire_index(name: str, index_cases: dict[str, Path]) -> None:
    try:
        target = node_oracle.ensure_installed()
    except node_oracle.NodeOracleUnavailable as exc:
        if os.environ.get(node_oracle.REQUIRE_ENV):
            pytest.fail(f"the openai-node oracle is required here: {exc}")
        pytest.skip(f"openai-node oracle not available: {exc}")
    (raw,) = node_oracle.run([index_cases[name]], target)
    _agree_on("openai-node", index_cases[name].read_bytes(), Outcome.from_dict(raw))


def test_the_index_cases_cover_each_way_the_clients_fail() -> None:
    """The cases are not all alike: each client both works and raises among them, with each of its messages."""
    from checker.oracles.openai_python import run

    raised = {name: run(_indexed(name, place)).raised for name, place in INDEX_CASES.items()}
    assert raised["gap"] is None and raised["all-negative"] is None
    assert raised["dones-one-late"] == ("RuntimeError: Received a content event for output index 2 before receiving "
                                        "its output item")
    assert raised["text-at-reasoning-index"] is not None and raised["text-at-reasoning-index"].startswith(
        "AssertionError")
