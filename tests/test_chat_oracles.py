"""Prediction against reality for Chat Completions: the client matrix and the real SDKs on every chat capture.

For every capture under captures/chat, sse-check's matrix (the chat dialect's effects,
checker/dialects/chat/effects.py) predicts what openai-python and openai-node do; the real clients then run on
the same bytes through their own HTTP stack (a transport serving the capture as a 200 text/event-stream
answer) and the call their users make, with the request sidecar's n, tools, limits and stream_options:

* openai-python: ``chat.completions.stream(...)`` then ``get_final_completion()``; and
  ``chat.completions.create(stream=True)`` iteration, which accumulates nothing;
* openai-node: ``chat.completions.stream(...)`` then ``finalChatCompletion()``.

Verdicts mean:

* ``breaks``   ⇔ the client raises;
* ``ok``       ⇒ its final completion is what was streamed (the first chunk's id, model and fingerprint, the
  usage chunk's usage, and per choice the role, content, refusal, reasoning field, tool calls and the finish
  reason, as sse-check's machine followed them);
* ``degraded`` ⇒ it returns, and its completion differs from what was streamed (``DEGRADED_BEYOND_VIEW``
  names the differences the completion cannot show, and why they are real).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from test_corpus import CAPTURES, declaration, is_chat, rel

import node_oracle
from checker.compat import matrix
from checker.dialects.chat.machine import ChatMachine
from checker.engine import LintResult, StreamLinter
from checker.oracles.chat import ChatOutcome, differences, expected_view
from checker.profiles import get_profile

ROOT = Path(__file__).resolve().parents[1]
# Every Chat Completions capture (captures/chat, and the chat stream among captures/llama.cpp's recordings).
ALL = sorted(p for p in CAPTURES.rglob("*.sse") if is_chat(p) and not p.with_name(p.stem + ".meta.json").is_file())
DECLARED_MATRICES = [p for p in ALL if p.with_name(p.stem + ".clients.json").is_file()]
# The decoder-level failures: what also breaks a plain create(stream=True) iteration.
DECODER_CODES = frozenset({"SSE005", "SSE006", "SSE013", "SSE018", "CHT024"})
DEGRADED_BEYOND_VIEW: dict[str, str] = {
    "CHT006": "the done events (content.done, tool_calls.function.arguments.done) fired before the late delta, "
              "which the final message has: the listeners and the final completion disagree",
    "CHT018": "openai-python drops the object fragment; sse-check's view of the arguments (the string fragments) "
              "lacks it too, so both show the same arguments while the server's object is lost",
}


def _lint(path: Path) -> tuple[LintResult, ChatMachine]:
    decl = declaration(path)
    linter = StreamLinter(profile=get_profile("openai"), request=decl.request, keep_texts=True)
    linter.feed(path.read_bytes())
    result = linter.close()
    machine = linter.machine
    assert isinstance(machine, ChatMachine), rel(path)
    return result, machine


def _streamed(machine: ChatMachine) -> dict[str, Any]:
    return expected_view(machine.first or {}, machine.usage, tuple(machine.choice_texts()))


def _agree(client: str, path: Path, outcome: ChatOutcome) -> None:
    result, machine = _lint(path)
    cell = matrix(result)[client]
    decided = f"{cell.finding.code} ({cell.symptom})" if cell.finding else (cell.cause or "no finding")
    verdict = cell.verdict.name
    if verdict == "BREAKS":
        assert outcome.raised is not None, f"{rel(path)}: predicted breaks ({decided}), but {client} {outcome.summary}"
        return
    assert outcome.raised is None, f"{rel(path)}: predicted {verdict.lower()} ({decided}), but {client} {outcome.summary}"
    assert outcome.completion is not None
    found = differences(outcome.completion, _streamed(machine))
    if verdict == "OK":
        assert not found, f"{rel(path)}: predicted ok, but {client}'s completion differs: {found}"
    elif cell.finding is None or cell.finding.code not in DEGRADED_BEYOND_VIEW:
        assert found, f"{rel(path)}: predicted degraded ({decided}), but {client} returns what was streamed"


# --- openai-python ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ALL, ids=rel)
def test_openai_python_stream_does_what_the_matrix_predicts(path: Path) -> None:
    from checker.oracles.openai_python_chat import run

    _agree("openai-python", path, run(path.read_bytes(), request=declaration(path).request))


@pytest.mark.parametrize("path", ALL, ids=rel)
def test_openai_python_iteration_fails_only_where_its_decoder_does(path: Path) -> None:
    """create(stream=True) accumulates nothing: it raises exactly where the matrix's openai-python verdict is
    decided by a decoder-level finding (invalid JSON, an error object)."""
    from checker.oracles.openai_python_chat import run

    result, _ = _lint(path)
    cell = matrix(result)["openai-python"]
    decoder = cell.verdict.name == "BREAKS" and cell.finding is not None and cell.finding.code in DECODER_CODES
    outcome = run(path.read_bytes(), mode="iterate", request=declaration(path).request)
    assert (outcome.raised is not None) == decoder, f"{rel(path)}: {outcome.summary}"


def test_get_final_completion_raises_on_a_conforming_length_cut_by_design() -> None:
    from checker.oracles.openai_python_chat import run

    path = ROOT / "captures" / "chat" / "conforming" / "length.sse"
    outcome = run(path.read_bytes(), request=declaration(path).request)
    assert outcome.raised is not None and outcome.raised.startswith("LengthFinishReasonError: ")
    result, _ = _lint(path)
    cell = matrix(result)["openai-python"]
    assert result.findings == [] and cell.verdict.name == "BREAKS" and cell.cause is not None
    assert "as a conforming stream may" in (cell.symptom or "")


# --- openai-node ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def node_chat_outcomes() -> dict[Path, ChatOutcome]:
    try:
        target = node_oracle.ensure_installed()
    except node_oracle.NodeOracleUnavailable as exc:
        if os.environ.get(node_oracle.REQUIRE_ENV):
            pytest.fail(f"the openai-node oracle is required here: {exc}")
        pytest.skip(f"openai-node oracle not available: {exc}")
    outcomes = node_oracle.run_chat([(path, declaration(path).request) for path in ALL], target)
    assert len(outcomes) == len(ALL)
    return {path: ChatOutcome.from_dict(raw) for path, raw in zip(ALL, outcomes, strict=True)}


@pytest.mark.parametrize("path", ALL, ids=rel)
def test_openai_node_does_what_the_matrix_predicts(path: Path, node_chat_outcomes: dict[Path, ChatOutcome]) -> None:
    _agree("openai-node", path, node_chat_outcomes[path])


def test_openai_node_keeps_only_the_last_reasoning_fragment(node_chat_outcomes: dict[Path, ChatOutcome]) -> None:
    path = ROOT / "captures" / "chat" / "rules" / "CHT025-vendor-reasoning-field.sse"
    completion = node_chat_outcomes[path].completion
    assert completion is not None and completion["choices"][0]["reasoning_content"] == " the capital."


# --- the matrix -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", DECLARED_MATRICES, ids=rel)
def test_the_matrix_is_the_declared_one(path: Path) -> None:
    result, _ = _lint(path)
    assert matrix(result).verdicts() == json.loads(path.with_name(path.stem + ".clients.json").read_text())


def test_the_real_servers_chat_streams_declare_their_matrix() -> None:
    assert {rel(p) for p in DECLARED_MATRICES} >= {rel(p) for p in ALL if "llama.cpp" in p.parts}


@pytest.mark.parametrize("path", ALL, ids=rel)
def test_the_chat_matrix_has_the_chat_clients_and_says_why(path: Path) -> None:
    result, _ = _lint(path)
    cells = matrix(result).cells
    assert [cell.client for cell in cells] == ["openai-python", "openai-node", "openai-agents", "vercel-ai",
                                               "langchain"]
    for cell in cells:
        if cell.verdict.name != "OK":
            assert cell.symptom and "{" not in cell.symptom.replace("{…}", ""), (rel(path), cell.symptom)
