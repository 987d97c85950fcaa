"""End to end against a real ``llama-server`` (b11434, the tiny model, the captures' flags), through the CLI.

Runs only in the real-server suite (``make test-all``; ``SSE_CHECK_REAL_SERVER=1``). The server is the
session fixture ``real_llama`` (conftest.py here). Every sse-check command is a real process; the clients
are the real openai-python 3.57 (and httpx).

* ``sse-check probe``, every scenario: nothing above info under ``--profile llama.cpp``; under ``--profile
  openai`` only the deviations documented in captures/llama.cpp (their ``X.expect.json``), each stream
  breaking the clients its capture's ``X.clients.json`` says; the saved captures lint identically.
* the live replay (``probe --replay``): an exact replay in a continuing agent turn reuses more cached
  tokens than a dropped or an altered one; the chat dialect's ``reasoning_content`` round trip is accepted.
* ``sse-check proxy`` in front of it with openai-python as the client: the bytes the client gets are the
  bytes the proxy saved, its findings are lint's on them, and the matrix's openai-python verdict on each
  stream agrees with what the real openai-python did with that very stream.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from report_entries import codes, lint_json
from checker.compat import matrix
from checker.engine import StreamLinter
from checker.oracles import TERMINALS, Outcome, disagreement
from checker.profiles import get_profile

ROOT = Path(__file__).resolve().parents[2]
LLAMA = ROOT / "captures" / "llama.cpp"
RECORDED_PROBE = ROOT / "captures" / "llama.cpp-probe"  # sse-check probe --save of this very server
MODEL = "tiny-qwen3-random"
# The probe scenario -> the capture of captures/llama.cpp that recorded the same kind of request.
CAPTURE_OF = {"plain_text": "plain_text", "reasoning_text": "reasoning_text", "reasoning_one_call": "reasoning_one_call",
              "parallel_calls": "replay-turn1", "reasoning_text_truncated": "reasoning_text_truncated",
              "function_call_truncated": "function_call_truncated"}
# Every code the captures README documents for llama.cpp's Responses streams (their expect.json, openai).
DOCUMENTED = set().union(*(set(json.loads((LLAMA / f"{capture}.expect.json").read_text())["openai"])
                           for capture in (*CAPTURE_OF.values(), "replay-continue-exact", "replay-continue-dropped",
                                           "replay-new_user-exact")))
STRICT_CLIENTS = ("openai-python", "openai-node", "open-responses")


def _live_conftest() -> Any:
    """tests/live/conftest.py (start_proxy), loaded under its own name: both folders have a conftest.py."""
    spec = importlib.util.spec_from_file_location("sse_check_live_conftest", ROOT / "tests" / "live" / "conftest.py")
    assert spec is not None and spec.loader is not None
    module = sys.modules.get(spec.name)
    if module is None:
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # its dataclasses look their module up there
        spec.loader.exec_module(module)
    return module


def run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "checker", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=timeout, env={**os.environ, "NO_COLOR": "1", "OPENAI_API_KEY": ""})
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    return proc


def run_json(*args: str) -> tuple[int, dict[str, Any]]:
    proc = run(*args, "--format", "json")
    assert proc.stdout.startswith("{"), proc.stdout[:2000] + proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def by_name(report: dict[str, Any], root: Path | None = None) -> dict[str, dict[str, Any]]:
    """Entries by scenario name: a probe's path is the name (chat/plain_text), a lint's the file under
    ``root`` (ROOT/chat/plain_text.sse)."""
    def name(path: str) -> str:
        inside = path[len(str(root)) + 1:] if root is not None and path.startswith(f"{root}/") else path
        return inside.removesuffix(".sse")

    return {name(entry["path"]): entry for entry in report["files"]}


def scenarios() -> dict[str, dict[str, Any]]:
    proc = run("probe", "--list-scenarios", "--format", "json", "--api", "responses")
    return {row["name"]: row for row in json.loads(proc.stdout) if row["expect"] != "flow"}  # flows: their own test


SCENARIOS = scenarios()
ONLY_SCENARIOS = ("-s", ",".join(SCENARIOS))  # the flows after them are test_real_llama_surface.py's
assert [name for name, row in SCENARIOS.items() if row["expect"] == "stream"] == list(CAPTURE_OF)


def assert_lint_agrees(probe_report: dict[str, Any], saved: Path, *args: str) -> None:
    probed = {entry["path"]: entry for entry in probe_report["files"]}
    linted = by_name(lint_json(str(saved), *args), saved)
    assert set(linted) == set(probed)
    for name, entry in probed.items():
        assert linted[name]["findings"] == entry["findings"], name
        assert linted[name]["bytes"] == entry["bytes"], name


def assert_as_recorded(entries: dict[str, dict[str, Any]], profile: str) -> None:
    """The server still behaves as the saved probe of it (captures/llama.cpp-probe) says: the same codes per
    scenario (ids and timings differ from run to run; the findings' kinds must not)."""
    recorded = {name: set(json.loads((RECORDED_PROBE / f"{name}.expect.json").read_text())[profile])
                for name in entries}
    assert {name: codes(entry) for name, entry in entries.items()} == recorded


# --- sse-check probe, every scenario ---------------------------------------------------------------------------


def test_probe_under_the_llama_profile_shows_nothing_above_info(real_llama: Any, tmp_path: Path) -> None:
    saved = tmp_path / "saved"
    code, report = run_json("probe", real_llama.url, "--model", MODEL, "--profile", "llama.cpp", "--save", str(saved),
                            "--api", "responses", *ONLY_SCENARIOS)
    entries = by_name(report)
    assert list(entries) == list(SCENARIOS) and report["skipped"] == []
    loud = {name: [f["code"] for f in e["findings"] if f["severity"] != "info"] for name, e in entries.items()}
    assert {name: found for name, found in loud.items() if found} == {}, loud
    assert code == 0, report["summary"]
    assert report["summary"]["info"] > 0
    # Found by this suite: llama-server serves its one model whatever `model` says, so invalid_model gets a
    # normal stream; the llama.cpp profile documents that (HTP005 as info), and only for that scenario.
    (accepted,) = [f for f in entries["invalid_model"]["findings"] if f["code"] == "HTP005"]
    assert accepted["known_deviation"], accepted
    assert_lint_agrees(report, saved, "--profile", "llama.cpp")
    assert_as_recorded(entries, "llama.cpp")


def test_probe_under_the_openai_profile_shows_the_documented_deviations(real_llama: Any, tmp_path: Path) -> None:
    saved = tmp_path / "saved"
    code, report = run_json("probe", real_llama.url, "--model", MODEL, "--profile", "openai", "--clients",
                            "--save", str(saved), "--api", "responses", *ONLY_SCENARIOS)
    assert code == 1
    entries = by_name(report)
    assert list(entries) == list(SCENARIOS)
    for name, entry in entries.items():
        if entry["http"]["status"] != 200:  # JSON errors
            assert entry["findings"] == [], (name, entry["findings"])
            continue
        if not entry["events"]:  # non-streaming answers: llama-server's reduced Response object, as in its streams
            assert codes(entry) == {"SCH002", "LIF018"}, (name, entry["findings"])
            continue
        found = codes(entry)
        # invalid_model: answered with a normal stream (see the llama.cpp profile test above); every stream:
        # the connection closed after it without Connection: close (HTP019, found by this suite)
        allowed = DOCUMENTED | {"HTP019"} | ({"HTP005"} if name == "invalid_model" else set())
        assert found <= allowed, (name, sorted(found - allowed))
        assert {"LIF015", "ITM001", "SCH002", "HTP019"} <= found, name  # no sequence_number, no output_index;
        # reduced created; the close
        declared = json.loads((LLAMA / f"{CAPTURE_OF.get(name, 'plain_text')}.clients.json").read_text())
        verdicts = {client: cell["verdict"] for client, cell in entry["clients"].items()} \
            if isinstance(entry["clients"], dict) else {c["client"]: c["verdict"] for c in entry["clients"]}
        for client in STRICT_CLIENTS:  # the documented deviations break the strict clients, as recorded
            assert verdicts[client] == declared[client] == "breaks", (name, client, verdicts)
        if name in CAPTURE_OF:
            assert verdicts == declared, (name, verdicts, declared)
    assert_lint_agrees(report, saved, "--profile", "openai")
    assert_as_recorded(entries, "openai")


def test_probe_of_all_three_endpoints(real_llama: Any, tmp_path: Path) -> None:
    """llama-server serves /v1/responses, /v1/chat/completions and /v1/messages: probe's default checks all
    three, each dialect's suite in its own requests, each stream by its own dialect (its endpoint's), and the
    saved folder lints the same."""
    saved = tmp_path / "saved"
    code, report = run_json("probe", real_llama.url, "--model", MODEL, "--profile", "llama.cpp", "--save", str(saved),
                            *ONLY_SCENARIOS)
    assert report["not_served"] == [] and report["skipped"] == []
    rows = {row["api"]: row for row in report["dialects"]}
    assert list(rows) == ["responses", "chat", "messages"]
    assert all(row["scenarios"] == row["passed"] + row["failed"] == len(SCENARIOS) for row in rows.values()), rows
    entries = by_name(report)
    assert {e["dialect"] for n, e in entries.items() if n.startswith("messages/") and e["events"]} == {"messages"}
    assert {e["dialect"] for n, e in entries.items() if "/" not in n and e["events"]} == {"responses"}
    # what a real client of each endpoint meets: nothing above info under the llama.cpp profile, where the
    # profile documents the server's departures for every dialect it covers
    loud = {name: sorted({f["code"] for f in e["findings"] if f["severity"] != "info"})
            for name, e in entries.items()}
    # Found by this test: its /v1/messages answers a request whose messages are an object, not a list, with
    # a normal stream (HTP005) where Anthropic answers 400 invalid_request_error; its other endpoints refuse it.
    assert {name: found for name, found in loud.items() if found} == {"messages/malformed_input": ["HTP005"]}, loud
    assert code == 1
    assert_lint_agrees(report, saved, "--profile", "llama.cpp")


# --- the live replay ----------------------------------------------------------------------------------------------


def _variants(report: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(f["family"], v["variant"]): v for f in report["families"] for v in f["variants"]}


def test_the_live_replay_keeps_the_cache_only_for_the_exact_reasoning(real_llama: Any, tmp_path: Path) -> None:
    saved = tmp_path / "saved"
    code, report = run_json("probe", real_llama.url, "--model", MODEL, "--replay", "--profile", "llama.cpp",
                            "--save", str(saved))
    rows = _variants(report)
    assert report["aborted"] is None and report["unmeasured"] is None, report
    exact, dropped, altered = (rows[("continue", v)] for v in ("exact", "dropped", "altered"))
    assert all(r["status"] == 200 for r in rows.values()), {k: r["status"] for k, r in rows.items()}
    assert exact["cached_tokens"] > dropped["cached_tokens"], (exact, dropped)
    assert exact["cached_tokens"] > altered["cached_tokens"], (exact, altered)
    assert exact["stopped"]["at"] in ("reasoning", "output")
    # With the fixed seed the real server gives the recorded table (captures/llama.cpp/README.md) to the token.
    recorded = {("continue", "exact"): (384, 284), ("continue", "dropped"): (370, 273),
                ("continue", "altered"): (384, 279), ("new_user", "exact"): (382, 273)}
    assert {pair: (rows[pair]["input_tokens"], rows[pair]["cached_tokens"]) for pair in recorded} == recorded
    assert "RPL101" not in {f["code"] for f in report["findings"]}
    assert code == 0, report["findings"]
    assert len(list(saved.glob("*.sse"))) == 12


def test_the_chat_dialect_round_trip_of_reasoning_content_is_accepted(real_llama: Any) -> None:
    code, report = run_json("replay", "--live", real_llama.url, "--model", MODEL, "--dialect", "openai-chat",
                            "--profile", "llama.cpp")
    assert report["target"]["url"] == real_llama.url + "/v1/chat/completions"
    assert report["aborted"] is None and report["unmeasured"] is None, report
    rows = _variants(report)
    assert all(r["status"] == 200 for r in rows.values()), {k: (r["status"], r.get("error")) for k, r in rows.items()}
    assert "RPL104" not in {f["code"] for f in report["findings"]}
    assert rows[("continue", "exact")]["cached_tokens"] >= rows[("continue", "dropped")]["cached_tokens"]
    assert code == 0, report["findings"]


# --- sse-check proxy with openai-python as the client -------------------------------------------------------------


def _body(name: str) -> dict[str, Any]:
    body = {k: v for k, v in SCENARIOS[name]["request"].items() if k != "stream"}
    return {**body, "model": MODEL}


def _outcome(client: openai.OpenAI, body: dict[str, Any]) -> Outcome:
    """What the real ``client.responses.stream()`` does, exactly as checker.oracles.openai_python records it."""
    events, terminal = 0, None
    try:
        with client.responses.stream(**body) as stream:
            for event in stream:
                events += 1
                if getattr(event, "type", None) in TERMINALS:
                    terminal = event
            if terminal is None or terminal.type == "response.completed":
                final = stream.get_final_response()
                return _finished(events, "response.completed", final)
    except Exception as exc:  # noqa: BLE001 - what the client raises is the outcome
        text = getattr(exc, "message", None) if type(exc).__name__ == "APIError" else str(exc)
        return Outcome(client="openai-python", version=openai.__version__, mode="client",
                       raised=f"{type(exc).__name__}: {text}" if text else type(exc).__name__, events=events,
                       terminal=getattr(terminal, "type", None))
    return _finished(events, terminal.type, terminal.response)


def _finished(events: int, terminal: str, response: Any) -> Outcome:
    from checker.oracles.openai_python import _item

    output = tuple(_item(item) for item in (getattr(response, "output", None) or ()))
    return Outcome(client="openai-python", version=openai.__version__, mode="client",
                   status=getattr(response, "status", None), terminal=terminal, events=events, output=output)


def _comparable(findings: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(f["code"], f["severity"], f["message"], json.dumps(f["position"]), f["occurrences"])
            for f in findings if not f["code"].startswith("RPL")]


def test_the_proxy_with_openai_python_passes_the_bytes_and_the_matrix_predicts_the_client(
        real_llama: Any, tmp_path: Path) -> None:
    live = _live_conftest()
    saved, report_path = tmp_path / "saved", tmp_path / "report.json"
    px = live.start_proxy(real_llama.url, "--save", str(saved), "--format", "json", "-o", str(report_path))
    try:
        client = openai.OpenAI(base_url=f"{px.url}/v1", api_key="sk-real-server-test", max_retries=0, timeout=120)
        raw: list[bytes] = []
        outcomes: list[tuple[str, Outcome]] = []
        for name in CAPTURE_OF:
            with client.responses.with_streaming_response.create(**_body(name), stream=True) as response:
                raw.append(b"".join(response.iter_bytes()))
            outcomes.append((name, _outcome(client, _body(name))))
        # the same client straight at the server fails (or not) the same way
        direct = openai.OpenAI(base_url=f"{real_llama.url}/v1", api_key="x", max_retries=0, timeout=120)
        direct_outcomes = [(name, _outcome(direct, _body(name))) for name in CAPTURE_OF]
    finally:
        status = px.stop(signal.SIGINT)
        px._stderr.close()
    assert status in (0, 1)
    files = sorted(saved.glob("*.sse"))
    assert len(files) == 2 * len(CAPTURE_OF)
    # bytes untouched: what the client got is what the proxy received and saved
    for n, data in enumerate(raw):
        assert files[2 * n].read_bytes() == data, files[2 * n].name
    # findings equal lint's on the saved answers
    document = json.loads(report_path.read_text())
    linted = {Path(f["path"]).name: f for f in lint_json(str(saved))["files"]}
    assert len(document["files"]) == len(files)
    for number, entry in enumerate(document["files"], start=1):
        assert _comparable(entry["findings"]) == _comparable(linted[f"{number:03d}.sse"]["findings"]), number
    # the matrix on each stream openai-python consumed agrees with what openai-python did with it
    for n, (name, outcome) in enumerate(outcomes):
        stream = files[2 * n + 1]
        linter = StreamLinter(profile=get_profile("openai"), request={**_body(name), "stream": True}, keep_texts=True)
        linter.feed(stream.read_bytes())
        result = linter.close()
        cell = matrix(result)["openai-python"]
        problem = disagreement(cell.verdict, outcome, result)
        assert problem is None, f"{name}: {problem}; matrix: {cell.finding and cell.finding.code} ({cell.symptom})"
        assert (outcome.raised is None) == (dict(direct_outcomes)[name].raised is None), name


# --- the fixture itself -------------------------------------------------------------------------------------------


def test_the_server_is_the_binary_itself_and_stopping_its_pid_leaves_nothing(real_llama: Any,
                                                                            llama_launcher: Any) -> None:
    """A second server from the same fixture code: one process (no wrapper, no child), gone after stop()."""
    server = llama_launcher(real_llama.binary, real_llama.model)
    try:
        assert Path(f"/proc/{server.pid}/exe").resolve() == real_llama.binary.resolve()
        children = Path(f"/proc/{server.pid}/task/{server.pid}/children")
        if children.is_file():
            assert children.read_text().split() == []
        props = httpx.get(f"{server.url}/props", timeout=10).json()
        assert props.get("model_path", str(real_llama.model)).endswith(real_llama.model.name)
    finally:
        server.stop()
        server._log.close()
    assert server.proc.returncode is not None and not Path(f"/proc/{server.pid}").exists()
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{server.url}/health", timeout=2)
