"""--oracle's comparison of a prediction with a real run (checker.oracles.agreement) and the choice of clients
(checker.oracles.session): "agrees" only when the verdict and the final result both hold."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from checker.compat import Verdict
from checker.engine import lint_bytes
from checker.oracles import registry
from checker.oracles.agreement import Agreement, Carried, carried, compare
from checker.oracles.protocol import Outcome, ToolCall
from checker.oracles.session import chosen, missing

ROOT = Path(__file__).resolve().parents[1]
CAPTURES = ROOT / "captures"
STREAM = Carried(text="Hello, world!", tool_calls=(("get_weather", '{"city": "Paris"}'),))


def _outcome(**fields: object) -> Outcome:
    return Outcome(client="openai-python", version="3.57.0", dialect="chat", **fields)  # type: ignore[arg-type]


def _same(**extra: object) -> Outcome:
    return _outcome(text="Hello, world!", tool_calls=(ToolCall(id="c1", name="get_weather",
                                                              arguments='{"city":"Paris"}'),), **extra)


def test_breaks_agrees_only_with_a_run_that_raised_or_returned_an_error() -> None:
    assert compare("x", Verdict.BREAKS, _outcome(raised="TypeError: x"), STREAM).agreement is Agreement.AGREES
    assert compare("x", Verdict.BREAKS, _outcome(errors=("tool-error",)), STREAM).agreement is Agreement.AGREES
    differs = compare("x", Verdict.BREAKS, _same(), STREAM)
    assert differs.agreement is Agreement.DIFFERS and differs.why.startswith("predicted breaks, but it returns")


def test_ok_agrees_only_when_the_final_result_is_what_the_stream_carried() -> None:
    # Arguments compare as JSON values: a client that re-serialises them returns the same call.
    assert compare("x", Verdict.OK, _same(), STREAM).agreement is Agreement.AGREES
    other_text = compare("x", Verdict.OK, _outcome(text="Hello", tool_calls=_same().tool_calls), STREAM)
    assert other_text.agreement is Agreement.DIFFERS and "final text is 'Hello'" in other_text.why
    other_args = compare("x", Verdict.OK, _outcome(text="Hello, world!", tool_calls=(
        ToolCall(id="c1", name="get_weather", arguments='{"city": "Rome"}'),)), STREAM)
    assert other_args.agreement is Agreement.DIFFERS and "get_weather gets" in other_args.why
    raised = compare("x", Verdict.OK, _outcome(raised="RuntimeError: boom"), STREAM)
    assert raised.agreement is Agreement.DIFFERS


def test_degraded_agrees_when_the_result_differs_and_is_unconfirmed_when_it_does_not() -> None:
    lost = compare("x", Verdict.DEGRADED, _outcome(text="Hello", tool_calls=_same().tool_calls), STREAM)
    assert lost.agreement is Agreement.AGREES
    # The case: snapshot and final text both 'Hello, world!' must never read "agrees: degraded".
    same = compare("x", Verdict.DEGRADED, _same(), STREAM)
    assert same.agreement is Agreement.UNCONFIRMED


def test_a_run_the_oracle_could_not_make_is_not_run() -> None:
    assert compare("x", Verdict.OK, _outcome(failure="driver crashed"), STREAM).agreement is Agreement.NOT_RUN


def test_what_a_stream_carried_in_each_dialect() -> None:
    def of(path: str) -> Carried:
        return carried(lint_bytes((CAPTURES / path).read_bytes(), keep_texts=True).texts or [])

    assert of("chat/conforming/text.sse") == Carried("The capital of France is Paris.", ())
    assert of("chat/conforming/parallel-tool-calls.sse").tool_calls == (
        ("get_weather", '{"city": "Paris"}'), ("get_time", '{"city": "Paris"}'))
    assert of("messages/conforming/two-tools.sse") == Carried(
        "I'll check both cities.", (("get_weather", '{"city": "Paris"}'), ("get_weather", '{"city": "Tokyo"}')))
    assert of("messages/conforming/tool-no-arguments.sse").tool_calls == (("get_time", "{}"),)
    responses = of("conforming/reasoning-function-call.sse")
    assert responses.tool_calls == (("get_weather", '{"city":"Paris","unit":"celsius"}'),) and responses.text == ""


def test_the_clients_asked_for() -> None:
    runnable, left_out = chosen("all")
    assert set(runnable) | set(left_out) == set(registry.names()) and not set(runnable) & set(left_out)
    assert "openai-python" in runnable  # installed with the test extra
    assert chosen("openai-python, openai-python") == (("openai-python",), ())
    with pytest.raises(ValueError, match="unknown client 'nope'"):
        chosen("openai-python,nope")
    assert missing(()) is None
    assert missing(("codex",)) == ("--oracle all: not installed here, so not run: codex "
                                   f"({registry.get('codex').install})")


def test_lint_oracle_with_a_list_runs_each_client_and_counts_the_agreements() -> None:
    proc = subprocess.run([sys.executable, "-m", "checker", "lint", "--format", "json", "--oracle",
                           "openai-python,anthropic-python", str(CAPTURES / "conforming" / "text.sse"),
                           str(CAPTURES / "messages" / "conforming" / "text.sse")],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    responses, messages = report["files"]
    assert set(responses["oracles"]) == {"openai-python"} and set(messages["oracles"]) == {"anthropic-python"}
    assert responses["oracles"]["openai-python"]["prediction"] == {
        "client": "openai-python", "predicted": "ok", "agreement": "agrees", "why": "returns what the stream carried"}
    assert report["summary"]["oracles"] == {"agrees": 2}


def test_lint_oracle_with_an_unknown_client_is_one_line() -> None:
    proc = subprocess.run([sys.executable, "-m", "checker", "lint", "--oracle", "nope",
                           str(CAPTURES / "conforming" / "text.sse")], capture_output=True, text=True, timeout=60,
                          cwd=ROOT)
    assert proc.returncode == 2
    assert proc.stderr.startswith("sse-check: --oracle: unknown client 'nope' (choose from all, openai-python")
    assert proc.stderr.count("\n") == 1
