"""Prediction against reality for Anthropic Messages: the matrix's verdicts and the real Anthropic SDKs.

For every capture under captures/messages, sse-check's matrix predicts what anthropic-python's
``messages.stream()`` / ``get_final_message()`` and @anthropic-ai/sdk's ``messages.stream()`` /
``finalMessage()`` do; the real SDKs then read the same bytes from a loopback HTTP server
(checker.oracles.anthropic_python, tests/oracles/node-anthropic) and the two must agree:

* ``breaks``   ⇔ the call raises;
* ``ok``       ⇒ it returns the stream's blocks (type, tool id, text / thinking / tool input) in index order
  and the stream's stop_reason;
* ``degraded`` ⇒ it returns, and what it returns is not that (a block lost, moved or cut, no stop_reason),
  except where ``DEGRADED_BEYOND_VIEW`` says why the difference is outside the oracles' view.

anthropic-python's lower-level ``messages.create(stream=True)`` iteration is checked too: it raises exactly
when a finding breaks the SDK's SSE layer (``effects.DECODER_LEVEL``), and never needs ``message_stop``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from test_corpus import CAPTURES, declaration, is_messages, rel

import node_oracle
from checker.compat import Verdict, matrix
from checker.dialects.messages.effects import DECODER_LEVEL
from checker.engine import LintResult, StreamLinter
from checker.oracles import Outcome
from checker.oracles.anthropic_python import canonical
from checker.profiles import get_profile

MESSAGES = CAPTURES / "messages"
# captures/messages, and the Messages streams elsewhere (the Messages live replay's set in captures/replay)
ALL = sorted(MESSAGES.rglob("*.sse")) + sorted(p for p in CAPTURES.rglob("*.sse")
                                               if MESSAGES not in p.parents and is_messages(p))
PY, TS = "anthropic-python", "anthropic-ts"

# Codes whose `degraded` the oracles' view of the final message (block types, tool ids, texts, stop_reason)
# cannot show, and why it is real.
DEGRADED_BEYOND_VIEW: dict[str, str] = {
    # A delta of the wrong type belongs to no block sse-check can name: both SDKs and sse-check drop its piece.
    "ANT009": "the mismatched delta's piece is dropped, as sse-check drops it",
    # The delta addressed a block that was never started: sse-check has no block to put it in either, so the
    # expected message lacks it as the client's does; the server's text is lost all the same.
    "ANT010": "the delta for a block never started is dropped, as sse-check drops it",
    # The last message_delta's stop_reason is in both the stream's message and the client's.
    "ANT019": "several message_delta events: the client keeps the last, as the stream's message does",
}


def lint(path: Path) -> tuple[LintResult, StreamLinter]:
    """The capture under the openai profile (every rule on), with its declared request and limits."""
    decl = declaration(path)
    linter = StreamLinter(profile=get_profile("openai"), request=decl.request, limits=decl.limits, keep_texts=True)
    linter.feed(path.read_bytes())
    return linter.close(), linter


def _input_text(joined: str, cut_by_limit: bool) -> str | None:
    """A tool input as canonical JSON; a JSON value followed by more text as that value (what partial parsers
    read); text that is not JSON stays as it came (no SDK can return that), or None when the message was cut
    by max_tokens (then a partial input is what the stop_reason announces, whatever each parser makes of it)."""
    try:
        return canonical(json.loads(joined))
    except ValueError:
        pass
    try:
        value, _ = json.JSONDecoder().raw_decode(joined.strip())
    except ValueError:
        return None if cut_by_limit else joined
    return canonical(value)


def expected_blocks(result: LintResult, stop_reason: str | None = None
                    ) -> list[tuple[str | None, str | None, str | None]]:
    """(type, tool id, text) of each block the stream built, in index order. A tool input is compared as
    canonical JSON; one that is not JSON stays the text the stream carried (no SDK can return that)."""
    out = []
    for block in result.texts or ():
        kind = block["type"]
        if kind in ("tool_use", "server_tool_use"):
            joined = block.get("input")
            text = _input_text(joined, stop_reason == "max_tokens") if joined else canonical(block.get("initial_input"))
            out.append((kind, block.get("id"), text))
        elif kind == "redacted_thinking":
            out.append((kind, None, block.get("data")))
        else:
            out.append((kind, None, block.get("text")))
    return out


def _same(outcome: Outcome, result: LintResult, linter: StreamLinter) -> bool:
    stop_reason = getattr(linter.machine, "stop_reason", None)
    want = expected_blocks(result, stop_reason)
    got = [(o.type, o.id, o.text) for o in outcome.output]
    if len(got) != len(want) or outcome.status != stop_reason:
        return False
    return all(g == w or (w[2] is None and g[:2] == w[:2]) for g, w in zip(got, want, strict=True))


def agree(client: str, path: Path, outcome: Outcome) -> None:
    result, linter = lint(path)
    cell = matrix(result)[client]
    decided = f"{cell.finding.code} ({cell.symptom})" if cell.finding else "no finding"
    where = f"{rel(path)}: predicted {cell.verdict} ({decided}), but {client}"
    if cell.verdict is Verdict.BREAKS:
        assert outcome.raised is not None, f"{where} {outcome.summary}"
        return
    assert outcome.raised is None, f"{where} {outcome.summary}"
    if cell.verdict is Verdict.OK:
        want = expected_blocks(result, getattr(linter.machine, "stop_reason", None))
        assert _same(outcome, result, linter), (
            f"{where} returns {[(o.type, o.id, o.text) for o in outcome.output]} ({outcome.status}), "
            f"the stream built {want} ({getattr(linter.machine, 'stop_reason', None)})")
    elif cell.finding is not None and cell.finding.code not in DEGRADED_BEYOND_VIEW:
        assert not _same(outcome, result, linter) or outcome.status is None, (
            f"{where}'s final message is the stream's blocks with the stream's texts")


# --- anthropic-python ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ALL, ids=rel)
def test_anthropic_python_does_what_the_matrix_predicts(path: Path) -> None:
    from checker.oracles.anthropic_python import run

    agree(PY, path, run(path.read_bytes(), mode="stream"))


@pytest.mark.parametrize("path", ALL, ids=rel)
def test_create_stream_raises_only_where_the_sse_layer_does(path: Path) -> None:
    from checker.oracles.anthropic_python import run

    result, _ = lint(path)
    outcome = run(path.read_bytes(), mode="create")
    layer = [f for f in result.findings if f.code in DECODER_LEVEL
             or (f.code == "SSE008" and f.details.get("event") == "error")]
    assert (outcome.raised is not None) == bool(layer), (rel(path), outcome.summary, [f.code for f in layer])


def test_the_python_oracle_reports_the_sdk_errors_verbatim() -> None:
    from checker.oracles.anthropic_python import run

    rules = MESSAGES / "rules"
    no_start = run((rules / "ANT002-message-start-missing.sse").read_bytes())
    assert no_start.raised == "AssertionError"
    error = run((rules / "ANT023-message-error-event.sse").read_bytes())
    assert error.raised is not None and error.raised.startswith("APIStatusError: ")
    assert "overloaded_error" in error.raised
    # No message_stop: get_final_message() returns the snapshot all the same.
    cut = run((rules / "ANT022-message-stop-missing.sse").read_bytes())
    assert cut.raised is None and cut.terminal is None and cut.status == "end_turn"


# --- @anthropic-ai/sdk ----------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def ts_outcomes() -> dict[Path, Outcome]:
    try:
        target = node_oracle.ensure_installed(node_oracle.ANTHROPIC)
    except node_oracle.NodeOracleUnavailable as exc:
        if os.environ.get(node_oracle.REQUIRE_ENV):
            pytest.fail(f"the @anthropic-ai/sdk oracle is required here: {exc}")
        pytest.skip(f"@anthropic-ai/sdk oracle not available: {exc}")
    outcomes = node_oracle.run(ALL, target)
    assert len(outcomes) == len(ALL)
    return {path: Outcome.from_dict(raw) for path, raw in zip(ALL, outcomes)}


@pytest.mark.parametrize("path", ALL, ids=rel)
def test_anthropic_ts_does_what_the_matrix_predicts(path: Path, ts_outcomes: dict[Path, Outcome]) -> None:
    agree(TS, path, ts_outcomes[path])


def test_the_ts_oracle_runs_the_pinned_release(ts_outcomes: dict[Path, Outcome]) -> None:
    lock = json.loads((node_oracle.ANTHROPIC / "package-lock.json").read_text())
    pinned = lock["packages"]["node_modules/@anthropic-ai/sdk"]["version"]
    assert {o.version for o in ts_outcomes.values()} == {pinned}


def test_the_two_sdks_differ_where_the_docs_say(ts_outcomes: dict[Path, Outcome]) -> None:
    """No message_stop: anthropic-python returns the message, @anthropic-ai/sdk rejects."""
    from checker.oracles.anthropic_python import run

    path = MESSAGES / "rules" / "ANT022-message-stop-missing.sse"
    assert run(path.read_bytes()).raised is None
    assert ts_outcomes[path].raised == ("AnthropicError: stream ended without producing a Message with "
                                        "role=assistant")


def _summary(result: LintResult) -> dict[str, Any]:
    return {cell.client: str(cell.verdict) for cell in matrix(result).cells}


def test_the_real_llama_server_captures_are_predicted_for_both_sdks() -> None:
    """llama-server's Anthropic streams (captures/messages/llama.cpp): chatcmpl- ids, empty signatures,
    overlapping blocks: both SDKs read them (their matrices say ok, or degraded for a cut tool input)."""
    for path in sorted((MESSAGES / "llama.cpp").glob("*.sse")):
        result, _ = lint(path)
        assert {"ANT004", "ANT013", "ANT026"} <= set(result.codes()), rel(path)
        sdks = {c: v for c, v in _summary(result).items() if c in ("anthropic-python", "anthropic-ts")}
        assert "breaks" not in sdks.values(), (rel(path), _summary(result))
