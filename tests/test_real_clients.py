"""Prediction against reality for the clients run as drivers: codex, Claude Code, the Agents SDKs (Python and
JavaScript), the Vercel AI SDK and LangChain, each on every bundled capture of the dialects it speaks.

Each client runs from its pinned environment (``checker/oracles/pins``, installed by ``python3 tools/envs.py
install NAME``: ``.ci/run`` does) through its driver (``checker/oracles/drivers``), over real HTTP to one
loopback server per batch (``checker.oracles.runner.run_batch``); the captures of a client are split into a few
batches run side by side, one driver process each, so the whole run stays within minutes. What is compared,
per capture and client, is the matrix's verdict (``checker.compat.matrix``, the capture linted under the
``openai`` profile with its declared request and limits) and what the client did:

* ``breaks`` ⇔ the user's call raised, or the client surfaced an error instead of raising (the Vercel AI SDK's
  error and tool-error parts, LangChain's invalid tool calls, an Agents SDK tool whose arguments did not
  parse): the user gets no usable answer;
* ``ok`` / ``degraded`` ⇒ the call returned without an error (what a degraded stream loses is the comparison of
  results, which these tests do not judge).

Where prediction and reality differ for a reason the stream cannot show (the agent's own tools, a client that
asks the model again), ``KNOWN`` says why and the case is a strict xfail: the day the two agree, it says so.
Run them as a group: ``pytest -m real_clients``. With ``CI`` set, a client that is not installed fails.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path

import pytest
from test_corpus import CAPTURES, declaration, is_probe_exchange, rel

from checker.compat import Verdict, matrix
from checker.engine import LintResult, StreamLinter
from checker.engine_options import EngineOptions
from checker.lint_job import linter_for
from checker.oracles import registry
from checker.oracles.protocol import Outcome
from checker.oracles.runner import ClientUnavailable, job_for, run_batch
from checker.profiles import get_profile

pytestmark = pytest.mark.real_clients

CLIENTS = ("codex", "claude-code", "openai-agents", "langchain", "vercel-ai")
# Batches run side by side per client: the CLIs (a process per capture) wait on their own start-up more than
# they compute, so a few at once keep two cores busy; a library's batch is quick once its driver has started.
PARALLEL = {"codex": 4, "claude-code": 4}
# The client's own request timeout (a stalled capture waits this long); the runner allows a driver more for its
# process to start and report. A CLI gets more: its whole run (start-up, one or two model requests) must fit,
# on a machine whose two cores other work shares.
TIMEOUT_S = {"codex": 45.0, "claude-code": 45.0}


@cache
def linted(path: Path) -> LintResult:
    """The capture as ``sse-check lint`` checks it: a probe's saved exchange (X.meta.json) with the HTTP checks,
    which is what the runner replays to the client (its status, headers, stalls and cuts)."""
    decl = declaration(path)
    options = EngineOptions(profile=get_profile("openai"), limits=decl.limits)
    linter = linter_for(path, decl.request, options)
    linter.feed(path.read_bytes())
    result: LintResult = linter.close()
    return result


@cache
def captures(client: str) -> tuple[Path, ...]:
    """The streams of the client's dialects. A probe's record of an HTTP exchange that is not a whole event stream
    (a status, a stall, a cut, a non-streaming answer) is left out, as by the other oracle tests
    (tests/test_client_oracles.py): the matrix judges a stream, and the lint here does not judge the exchange."""
    speaks = registry.get(client).dialects
    return tuple(p for p in sorted(CAPTURES.rglob("*.sse"))
                 if not is_probe_exchange(p) and (linted(p).dialect or "responses") in speaks)


@cache
def outcomes(client: str) -> dict[Path, Outcome]:
    paths = captures(client)
    jobs = [job_for(p, linted(p).dialect or "responses", timeout_s=TIMEOUT_S.get(client, 20.0)) for p in paths]
    n = PARALLEL.get(client, 2)
    chunks = [list(range(k, len(jobs), n)) for k in range(n)]
    try:
        with ThreadPoolExecutor(n) as pool:
            results = list(pool.map(lambda chunk: run_batch(client, [jobs[i] for i in chunk]), chunks))
    except ClientUnavailable as exc:
        if os.environ.get("CI"):
            pytest.fail(f"{exc} (CI installs it: python3 tools/envs.py install …)")
        pytest.skip(str(exc))
    got: dict[Path, Outcome] = {}
    for chunk, result in zip(chunks, results, strict=True):
        for i, outcome in zip(chunk, result, strict=True):
            got[paths[i]] = outcome
    return got


def real_breaks(outcome: Outcome) -> bool:
    return outcome.raised is not None or bool(outcome.errors)


_AGENT_TOOLS = ("the run turns on the agent's own tools, which the stream cannot show: the oracle's agent declares "
                "a function tool per function the stream calls and no hosted tool, so a {what} fails it "
                "({error}); an agent configured with that tool runs it")
_LIMIT = ("sse-check's own max-event-bytes limit (declared by the capture) skips response.completed (LIF006 "
          "follows); the client has no such limit and reads it, so the findings after the skip describe a stream the "
          "client never saw")
_OUTPUT_TYPE = ("the prediction is for an agent with an output_type, as the request's json_schema format says; the "
                "SDK validates the answer against that Python type, which neither the stream nor its request can give "
                "the oracle (it has only the JSON schema), so the oracle's agent has none and returns the text")
_NOT_OFFERED = ("the server calls get_weather, which the request did not offer ({offered}): {client}, given the "
                "request's tools, {error}. Comparing "
                "a call's name with the request's tools is a judgement of the surface flow (TCH002, which the probe "
                "reports), not of the stream, so the matrix of the stream alone cannot predict it")
# (client, capture) -> why the prediction cannot equal what the client did on it.
KNOWN: dict[tuple[str, str], str] = {
    **{(client, f"transformers/{capture}"): _NOT_OFFERED.format(offered=offered, client=name, error=error)
       for client, name, error in (
           ("openai-agents", "the Agents SDK", "raises ModelBehaviorError: Tool get_weather not found in agent"),
           ("vercel-ai", "the Vercel AI SDK", "streams a tool-error part: AI_NoSuchToolError: Model tried to call "
                                                "unavailable tool 'get_weather'"))
       for capture, offered in (("custom_tool.forced.sse", "a custom tool run_python"),
                                ("hosted_web_search.answer.sse", "the hosted web_search tool"))},
    ("openai-agents", "transformers/structured_output.answer.sse"): _OUTPUT_TYPE,
    ("codex", "rules/SSE021-event-too-large.sse"): _LIMIT,
    ("openai-agents", "rules/SSE021-event-too-large.sse"): _LIMIT,
    **{("openai-agents", capture): _OUTPUT_TYPE for capture in (
        "structured/FMT001-structured-output-not-json.sse", "structured/FMT002-structured-output-schema-mismatch.sse",
        "structured/cases/not-json-nan.sse")},
    **{("openai-agents", capture): _AGENT_TOOLS.format(what=what, error=error) for capture, what, error in (
        ("real-openai/pydantic-openai-client-tool-search-streaming-1.sse", "client-executed tool_search call",
         "Client-executed tool_search calls are not supported by the standard agent runner"),
        ("real-openai/vercel-openai-client-tool-search-1.sse", "client-executed tool_search call",
         "Client-executed tool_search calls are not supported by the standard agent runner"),
        ("real-openai/vercel-openai-tool-search-1.sse", "function a tool search loaded into a namespace",
         "Tool get_weather.get_weather not found"),
        ("real-openai/pydantic-openai-client-tool-search-streaming-2.sse",
         "function a tool search loaded into a namespace", "Tool get_exchange_rate.get_exchange_rate not found"),
        ("real-openai/pydantic-openai-native-tool-search-streaming-1.sse",
         "function a tool search loaded into a namespace", "Tool get_exchange_rate.get_exchange_rate not found"),
        ("conforming/programmatic-call.sse", "function call made by a program (programmatic tool calling)",
         "Model produced function_call item without a programmatic_tool_calling tool"),
        ("real-openai/vercel-programmatic-tool-calling-2.sse",
         "function call made by a program (programmatic tool calling)",
         "Model produced function_call item without a programmatic_tool_calling tool"),
    )},
}


def _cases() -> list[object]:
    cases: list[object] = []
    for client in CLIENTS:
        for path in captures(client):
            reason = KNOWN.get((client, rel(path)))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            cases.append(pytest.param(client, path, id=f"{client}:{rel(path)}", marks=marks))
    return cases


@pytest.mark.parametrize(("client", "path"), _cases())
def test_the_prediction_is_what_the_real_client_did(client: str, path: Path) -> None:
    outcome = outcomes(client)[path]
    assert outcome.failure is None, f"{client} could not be run on {rel(path)}: {outcome.failure}"
    cell = matrix(linted(path))[client]
    if cell.verdict is Verdict.BREAKS:
        assert real_breaks(outcome), f"predicted breaks ({cell.symptom}), but {client} {outcome.summary}"
    else:
        assert not real_breaks(outcome), (f"predicted {cell.verdict} ({cell.symptom or 'no finding touches it'}), "
                                          f"but {client} {outcome.summary}")


@pytest.mark.parametrize("client", CLIENTS)
def test_every_client_returns_the_text_of_a_conforming_stream(client: str) -> None:
    """The driver reaches its client's answer: on the conforming text capture of each dialect it speaks, the
    call returns that text, without an error (a driver that could not read its client's result would make every
    other case here say "ok" for nothing)."""
    texts = {"responses": CAPTURES / "conforming" / "text.sse", "chat": CAPTURES / "chat" / "conforming" / "text.sse",
             "messages": CAPTURES / "messages" / "conforming" / "text.sse"}
    for dialect in registry.get(client).dialects:
        outcome = outcomes(client)[texts[dialect]]
        assert outcome.raised is None and not outcome.errors and outcome.text, outcome.summary
        assert outcome.text == _streamed_text(texts[dialect]), outcome.summary


def _streamed_text(path: Path) -> str:
    linter = StreamLinter(profile=get_profile("openai"), keep_texts=True)
    linter.feed(path.read_bytes())
    texts = linter.close().texts or []
    # A Responses message's or a chat choice's text parts; an Anthropic text block's text.
    return "".join(str(part.get("text") or "") for item in texts for part in item.get("content") or [item]
                   if item.get("type") in ("message", "choice", "text") and part.get("type") != "refusal")
