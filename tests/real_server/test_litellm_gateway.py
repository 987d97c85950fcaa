"""End to end against a real gateway: LiteLLM's proxy (the ``gateway`` extra) in front of the real llama-server.

Runs only in the real-server suite (``make test-all``). The proxy is the session fixture ``litellm_proxy``
(conftest.py and litellm_gateway.py here): a real ``litellm`` process on a loopback port, bridging its
``POST /v1/responses`` to the llama-server's Chat Completions (``use_chat_completions_api: true``).

* ``sse-check probe`` of the proxy, every scenario: the codes per scenario are the recorded gateway's
  (captures/litellm, whose every code tests/test_litellm_captures.py explains) plus the HTTP findings that only
  a live exchange shows (``HTTP_FINDINGS`` below); the saved answers lint finding for finding as probed, and
  the client matrix is the recorded one;
* the real clients on every stream the proxy sent: the real openai-python (``client.responses.stream()`` and
  ``get_final_response()``, checker/oracles/openai_python.py) and the real openai-node (tests/oracles/node) do
  what the matrix says, and openai-python driven straight at the proxy fails (or not) as it does on the
  saved bytes;
* the fixture: the proxy is one process, and stopping its pid leaves nothing running.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from litellm_gateway import MASTER_KEY, MODEL

import node_oracle  # tests/node_oracle.py (tests/ is on sys.path: see tests/test_client_oracles.py)
from report_entries import by_name, codes, lint_json
from checker.compat import matrix
from checker.engine import StreamLinter
from checker.oracles import TERMINALS, Outcome, disagreement
from checker.oracles.openai_python import run as run_openai_python
from checker.profiles import get_profile

ROOT = Path(__file__).resolve().parents[2]
RECORDED = ROOT / "captures" / "litellm"

# What only the live exchange shows (the corpus keeps the stream bodies, whose findings need no HTTP): per
# scenario, each code with why it is a real defect of the gateway.
# The proxy answers the invalid input as it answers a text question: the body's findings are that capture's.
SAME_BODY_AS = {"malformed_input": "reasoning_text"}
_NONSTREAM_SCH002 = ("the non-streamed Response echoes its function tools with `defer_loading: null` where the schema "
                     "allows only a boolean; the SDKs read it, a strictly typed client does not")
_NONSTREAM_LIF018 = ("`usage.output_tokens_details: null` where the schema requires the object: a client reading "
                     "`usage.output_tokens_details.reasoning_tokens` fails on it")
HTTP_FINDINGS: dict[str, dict[str, str]] = {
    "malformed_input": {
        "HTP005": "`input: {\"role\": \"user\", \"content\": 42}` is no valid input (neither a string nor a list "
                  "of items): llama-server refuses it with a 400, the proxy streams an answer to it as if it were "
                  "fine, so a client's malformed request goes unnoticed; the body of that answer is a reasoning + "
                  "text stream with the defects of reasoning_text's (SAME_BODY_AS)",
    },
    "plain_text_nonstream": {
        "LIF018": _NONSTREAM_LIF018,
    },
    "reasoning_one_call_nonstream": {
        "HTP016": "the non-streamed answer has an empty message item between the reasoning and the function call "
                  "(reasoning, message, function_call) that the streamed answer to the same request does not "
                  "have (reasoning, function_call): the same request gives another output when not streamed, "
                  "and the empty assistant message goes back into the history of a client that replays it",
        "SCH002": _NONSTREAM_SCH002,
        "SCH003": "the reasoning item has no `summary` and carries `output_text` content where only "
                  "`reasoning_text` is allowed (sent back as history, OpenAI rejects it); the function call has "
                  "`namespace: null`",
        "LIF018": _NONSTREAM_LIF018,
        "IDS001": "info: the call id is llama-server's random one, not `call_…` (as on the streams)",
    },
}


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "checker", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=600, env={**os.environ, "NO_COLOR": "1", "OPENAI_API_KEY": MASTER_KEY})
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    return proc


def scenarios() -> dict[str, dict[str, Any]]:
    proc = run_cli("probe", "--list-scenarios", "--format", "json", "--api", "responses")
    return {row["name"]: row for row in json.loads(proc.stdout) if row["expect"] != "flow"}


SCENARIOS = scenarios()


def recorded(name: str, kind: str) -> Any:
    path = RECORDED / f"{name}.{kind}.json"
    return json.loads(path.read_text()) if path.is_file() else None


def verdicts_of(entry: dict[str, Any]) -> dict[str, str]:
    cells = entry["clients"]
    if isinstance(cells, dict):
        return {client: cell["verdict"] for client, cell in cells.items()}
    return {cell["client"]: cell["verdict"] for cell in cells}


def is_stream(meta: dict[str, Any]) -> bool:
    content_type = next((v for k, v in meta["headers"] if k.lower() == "content-type"), "")
    return meta["status"] == 200 and content_type.split(";")[0].strip() == "text/event-stream"


@pytest.fixture(scope="module")
def probed(litellm_proxy: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, Any], Path]]:
    """One ``sse-check probe --save`` of the proxy, every scenario, under the openai profile with the matrix."""
    saved = tmp_path_factory.mktemp("litellm-probe")
    proc = run_cli("probe", litellm_proxy.url, "--model", MODEL, "--profile", "openai", "--clients", "--api", "responses",
                   "--save",
                   str(saved), "--format", "json", "--no-progress", "-s", ",".join(SCENARIOS))
    assert proc.stdout.startswith("{"), proc.stdout[:2000] + proc.stderr + litellm_proxy.log()[-3000:]
    assert proc.returncode == 1  # the gateway's defects fail the probe
    yield json.loads(proc.stdout), saved


def _streams(saved: Path) -> list[Path]:
    return [saved / f"{meta.name.removesuffix('.meta.json')}.sse" for meta in sorted(saved.glob("*.meta.json"))
            if is_stream(json.loads(meta.read_text()))]


# --- sse-check probe, every scenario ---------------------------------------------------------------------------


def test_the_probe_finds_the_recorded_defects_and_only_those(probed: tuple[dict[str, Any], Path]) -> None:
    report, saved = probed
    entries = by_name(report)
    assert list(entries) == list(SCENARIOS) and report["skipped"] == []
    streamed = {path.name.removesuffix(".sse") for path in _streams(saved)}
    # every stream the proxy sends to a valid request is recorded in captures/litellm, and nothing else is
    assert streamed - set(SAME_BODY_AS) == {path.name.removesuffix(".sse") for path in RECORDED.glob("*.sse")}
    found = {name: codes(entry) for name, entry in entries.items()}
    expected = {name: set((recorded(SAME_BODY_AS.get(name, name), "expect") or {"openai": []})["openai"])
                | set(HTTP_FINDINGS.get(name, {})) for name in entries}
    assert found == expected
    for name in streamed:  # the matrix of each live stream is the recorded one
        assert verdicts_of(entries[name]) == recorded(SAME_BODY_AS.get(name, name), "clients"), name


def test_the_saved_answers_lint_as_probed(probed: tuple[dict[str, Any], Path]) -> None:
    report, saved = probed
    probe_entries, linted = by_name(report), by_name(lint_json(str(saved), "--profile", "openai"))
    assert set(linted) == set(probe_entries)
    for name, entry in probe_entries.items():
        assert linted[name]["findings"] == entry["findings"], name
        assert linted[name]["bytes"] == entry["bytes"], name


# --- the real clients on the gateway's streams ----------------------------------------------------------------


def _linted(path: Path) -> Any:
    meta = json.loads(path.with_name(path.name.removesuffix(".sse") + ".meta.json").read_text())
    linter = StreamLinter(profile=get_profile("openai"), request=meta["request"], keep_texts=True)
    linter.feed(path.read_bytes())
    return linter.close()


def test_the_real_clients_do_what_the_matrix_says_on_every_live_stream(probed: tuple[dict[str, Any], Path]) -> None:
    _, saved = probed
    streams = _streams(saved)
    assert streams
    try:
        target = node_oracle.ensure_installed()
    except node_oracle.NodeOracleUnavailable as exc:
        if os.environ.get(node_oracle.REQUIRE_ENV) or os.environ.get("CI"):
            pytest.fail(f"the openai-node oracle is required here: {exc}")
        pytest.skip(f"openai-node oracle not available: {exc}")
    node = [Outcome.from_dict(raw) for raw in node_oracle.run(streams, target)]
    problems = []
    for path, node_outcome in zip(streams, node, strict=True):
        result = _linted(path)
        cells = matrix(result)
        for client, outcome in (("openai-python", run_openai_python(path.read_bytes(), mode="client")),
                                ("openai-node", node_outcome)):
            problem = disagreement(cells[client].verdict, outcome, result)
            if problem:
                problems.append(f"{path.name} {client}: {problem}")
    assert problems == []


def _outcome(client: openai.OpenAI, body: dict[str, Any]) -> Outcome:
    """What the real ``client.responses.stream()`` then ``get_final_response()`` does, straight at the proxy."""
    events, terminal = 0, None
    try:
        with client.responses.stream(**body) as stream:
            for event in stream:
                events += 1
                if getattr(event, "type", None) in TERMINALS:
                    terminal = event
            final = stream.get_final_response()
    except Exception as exc:  # noqa: BLE001 - what the client raises is the outcome
        return Outcome(client="openai-python", version=openai.__version__, mode="client",
                       raised=f"{type(exc).__name__}: {exc}", events=events, terminal=getattr(terminal, "type", None))
    return Outcome(client="openai-python", version=openai.__version__, mode="client", status=final.status,
                   terminal="response.completed", events=events)


def test_openai_python_straight_at_the_proxy_fails_as_on_the_saved_streams(
        litellm_proxy: Any, probed: tuple[dict[str, Any], Path]) -> None:
    _, saved = probed
    client = openai.OpenAI(base_url=f"{litellm_proxy.url}/v1", api_key=MASTER_KEY, max_retries=0, timeout=120)
    problems = []
    for path in _streams(saved):
        name = path.name.removesuffix(".sse")
        body = {k: v for k, v in SCENARIOS[name]["request"].items() if k != "stream"} | {"model": MODEL}
        live = _outcome(client, body)
        on_bytes = run_openai_python(path.read_bytes(), mode="client")
        live_error = live.raised.split(":")[0] if live.raised else None  # the type: ids in the message differ
        if live_error != (on_bytes.raised.split(":")[0] if on_bytes.raised else None):
            problems.append((name, live.raised, on_bytes.raised))
    assert problems == []


# --- the fixture itself -------------------------------------------------------------------------------------------


def test_the_proxy_is_one_process_and_stopping_its_pid_leaves_nothing(real_llama: Any, litellm_launcher: Any) -> None:
    gateway = litellm_launcher(real_llama.url)
    try:
        children = Path(f"/proc/{gateway.pid}/task/{gateway.pid}/children")
        if children.is_file():
            assert children.read_text().split() == []
        # it answers a client with its master key, with the one model of its config
        models = httpx.get(f"{gateway.url}/v1/models", timeout=30,
                           headers={"Authorization": f"Bearer {MASTER_KEY}"}).json()
        assert [m["id"] for m in models["data"]] == [MODEL]
        assert "use_chat_completions_api: true" in gateway.config
    finally:
        gateway.close()
    assert gateway.proc.returncode is not None and not Path(f"/proc/{gateway.pid}").exists()
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{gateway.url}/health/liveliness", timeout=2)
