"""The WebSocket mode live: ``sse-check serve`` answering ``ws://…/v1/responses`` (faithful and with each fault),
``sse-check probe --transport websocket`` against it (each rule right and wrong, and the lint of the saved
transcript equal to the live verdict), and openai-python's own ``client.responses.connect()`` against the same
server, confirming what the rules say it does."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

import openai
import pytest

if TYPE_CHECKING:  # the fixtures come from tests/live/conftest.py
    from conftest import ServerProcess

ROOT = Path(__file__).resolve().parents[2]
PROBE_CAPTURES = ROOT / "captures" / "probe"
SAVED = "websocket.ws.jsonl"


def probe(url: str, tmp_path: Path, *extra: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any] | None]:
    proc = subprocess.run(
        [sys.executable, "-m", "checker", "probe", url, "--model", "m", "--transport", "websocket", "--format", "json",
         "--save", str(tmp_path / "saved"), "--idle-timeout", "2", "--first-byte-timeout", "3",
         "--total-timeout", "30", "--no-progress", *extra],
        capture_output=True, text=True, cwd=ROOT, timeout=90, env={**os.environ, "NO_COLOR": "1"},
    )
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    report = json.loads(proc.stdout) if proc.stdout.startswith("{") else None
    return proc, report


def live_codes(report: dict[str, Any]) -> list[str]:
    (entry,) = report["files"]
    return sorted({f["code"] for f in entry["findings"]})


def lint_codes(path: Path) -> list[str]:
    proc = subprocess.run([sys.executable, "-m", "checker", "lint", str(path), "--format", "json"],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    (entry,) = json.loads(proc.stdout)["files"]
    return sorted({f["code"] for f in entry["findings"]})


@pytest.fixture
def ws_server(probe_server: ServerProcess) -> ServerProcess:
    """The session's ``sse-check serve captures/probe`` (tests/live/conftest.py): its WebSocket mode."""
    return probe_server


def test_a_faithful_server_passes_and_the_saved_transcript_lints_the_same(ws_server: ServerProcess,
                                                                          tmp_path: Path) -> None:
    proc, report = probe(ws_server.url, tmp_path)
    assert proc.returncode == 0 and report is not None, proc.stdout + proc.stderr
    assert live_codes(report) == []
    (entry,) = report["files"]
    http = entry["http"]
    assert http["transport"] == "websocket" and http["ending"]["kind"] == "complete"
    scenarios = [r["scenario"] for r in http["responses"]]
    assert scenarios[0] == "plain_text" and scenarios[-1] == "continuation" and len(scenarios) >= 8
    assert all(r["terminal"] for r in http["responses"] if r["scenario"] not in ("invalid_model", "malformed_input"))
    saved = tmp_path / "saved" / SAVED
    assert lint_codes(saved) == []
    # The continuation was sent with the first response's id and answered, on the same connection.
    records = [json.loads(line) for line in saved.read_text().splitlines()]
    sends = [json.loads(r["send"]) for r in records if "send" in r]
    assert sends[-1]["previous_response_id"] == http["responses"][0]["response_id"]
    assert all(s["type"] == "response.create" and "stream" not in s for s in sends)
    # The capability table's row of the WebSocket mode, and every client's readiness from the same findings.
    (row,) = report["capabilities"]
    assert row["feature"] == "websocket.responses" and row["status"] == "supported", row
    assert {r["client"] for r in report["readiness"]} >= {"openai-python", "codex"}


FAULTED = [
    ("binary=3", {"WSK001"}),
    ("join=3", {"WSK002"}),
    ("split=3", {"WSK003"}),
    ("close-after=5;close-code=1000", {"WSK004"}),
    ("close-after=5", {"WSK004", "WSK005"}),
    ("flat-error", {"WSK006"}),
    ("interleave", {"WSK007"}),
    ("refuse-continuation", {"WSK008"}),
    ("stall-after=3", {"WSK009"}),
    ("close-after-response", {"WSK004"}),
    ("swap=4", set()),  # wrong event order: the engine's own rules, below
]


@pytest.mark.parametrize(("fault", "codes"), FAULTED, ids=[f for f, _ in FAULTED])
def test_each_fault_gives_its_rule_live_and_in_the_lint_of_the_saved_transcript(
        ws_server: ServerProcess, tmp_path: Path, fault: str, codes: set[str]) -> None:
    proc, report = probe(ws_server.url, tmp_path, "--header", f"X-SSE-Check-WS-Fault: {fault}")
    assert report is not None, proc.stdout + proc.stderr
    found = live_codes(report)
    assert codes <= set(found), found
    assert proc.returncode == 1
    wsk = {c for c in found if c.startswith("WSK")}
    assert wsk <= codes | {"WSK004", "WSK005"}, found  # a fault that ends the connection may also cut it
    if fault.startswith("swap"):
        assert found and not wsk, found  # the same machine as SSE: events out of order are its findings
    assert lint_codes(tmp_path / "saved" / SAVED) == found
    (row,) = report["capabilities"]
    assert row["feature"] == "websocket.responses" and row["status"] == "broken" and row["finding"]["code"] in found


def test_a_request_refused_with_an_error_event_is_wsk010(serve: Any, tmp_path: Path) -> None:
    captures = tmp_path / "captures"
    captures.mkdir()
    for suffix in (".sse", ".headers.txt"):
        shutil.copy(PROBE_CAPTURES / f"invalid_model{suffix}", captures / f"plain_text{suffix}")
    server = serve(str(captures))
    proc, report = probe(server.url, tmp_path, "--scenario", "plain_text")
    assert report is not None
    assert live_codes(report) == ["WSK010"]
    assert lint_codes(tmp_path / "saved" / SAVED) == ["WSK010"]


class _NoWebSocket(BaseHTTPRequestHandler):
    """An HTTP/1.1 server that knows no WebSocket upgrade (as llama-server): 404 to GET /v1/responses."""

    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        body = b'{"error":{"message":"File Not Found","type":"not_found_error","code":404}}'
        self.send_response(404)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


def test_a_server_without_the_websocket_mode_is_one_unsupported_line(tmp_path: Path) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _NoWebSocket)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        proc, report = probe(f"http://127.0.0.1:{server.server_address[1]}", tmp_path, "--format", "text")
    finally:
        server.shutdown()
        server.server_close()
    assert report is None and proc.returncode == 0 and not list((tmp_path / "saved").glob("*.ws.jsonl"))
    assert proc.stdout.strip().splitlines() == [proc.stdout.strip()]
    assert proc.stdout.startswith("websocket: unsupported: HTTP 404")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _NoWebSocket)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:  # --format json: the same, as the capability table's one row
        proc, report = probe(f"http://127.0.0.1:{server.server_address[1]}", tmp_path)
    finally:
        server.shutdown()
        server.server_close()
    assert report is not None and [r["status"] for r in report["capabilities"]] == ["unsupported"]


def test_a_bad_fault_header_is_an_error_event_then_a_close(ws_server: ServerProcess) -> None:
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    url = ws_server.url.replace("http://", "ws://") + "/v1/responses"
    with connect(url, additional_headers={"X-SSE-Check-WS-Fault": "explode=1"}) as ws:
        event = json.loads(ws.recv())
        assert event["type"] == "error" and "unknown fault 'explode'" in event["error"]["message"]
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv()
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008


# --- the real client: openai-python's responses.connect() against the same server ------------------------


def _run_client(url: str, fault: str = "", scenario: str = "plain_text") -> tuple[list[str], BaseException | None]:
    """What openai-python's WebSocket connection yields for one response.create, and what it raised."""
    client = openai.OpenAI(base_url=url + "/v1", api_key="sk-test", max_retries=0)
    headers = {"X-SSE-Check-Scenario": scenario, **({"X-SSE-Check-WS-Fault": fault} if fault else {})}
    seen: list[str] = []
    try:
        with client.responses.connect(extra_headers=headers) as connection:
            connection.send({"type": "response.create", "model": "m", "input": "hi"})
            for event in connection:
                seen.append(event.type)
                if event.type in ("response.completed", "response.failed", "response.incomplete", "error"):
                    break
    except Exception as exc:  # noqa: BLE001 - what the client raised is the observation
        return seen, exc
    return seen, None


def test_openai_python_reads_a_faithful_answer_whole(ws_server: ServerProcess) -> None:
    seen, error = _run_client(ws_server.url)
    assert error is None and seen[0] == "response.created" and seen[-1] == "response.completed"


def test_openai_python_confirms_the_client_columns_of_the_rules(ws_server: ServerProcess) -> None:
    faithful, _ = _run_client(ws_server.url)
    # WSK002 breaks openai-python: json.loads of two events raises.
    seen, error = _run_client(ws_server.url, "join=3")
    assert isinstance(error, json.JSONDecodeError) and len(seen) == 2
    # WSK004 with a 1000 close: the iterator just ends, no error, no terminal event (a silent truncation).
    seen, error = _run_client(ws_server.url, "close-after=5;close-code=1000")
    assert error is None and seen == faithful[:5]
    # WSK005: an abnormal close code raises.
    seen, error = _run_client(ws_server.url, "close-after=5")
    assert error is not None and seen == faithful[:5]
    # WSK001 does not name openai-python: it parses a binary frame's bytes like text.
    seen, error = _run_client(ws_server.url, "binary=3")
    assert error is None and seen == faithful


def test_the_docs_name_every_websocket_fault() -> None:
    from checker.live.serve_ws import FAULTS

    docs = (ROOT / "docs" / "websocket.md").read_text()
    for name in FAULTS:
        assert f"| `{name}" in docs, name


def test_openai_python_meets_the_refused_upgrade_as_websockets_invalid_status() -> None:
    """What tests/real_server/test_real_llama_websocket.py expects of llama-server, on a server of its kind."""
    from websockets.exceptions import InvalidStatus

    server = ThreadingHTTPServer(("127.0.0.1", 0), _NoWebSocket)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    client = openai.OpenAI(base_url=f"http://127.0.0.1:{server.server_address[1]}/v1", api_key="sk-test",
                           max_retries=0)
    try:
        with pytest.raises(InvalidStatus) as refused:
            with client.responses.connect() as connection:
                connection.send({"type": "response.create", "model": "m", "input": "hi"})
                next(iter(connection))
    finally:
        server.shutdown()
        server.server_close()
    assert refused.value.response.status_code == 404


# --- the fault table, without sockets ----------------------------------------------------------------------


def test_faults_parse_by_name_and_a_bad_one_is_named() -> None:
    from checker.live.serve_ws import WsFaultError, WsFaults, parse_ws_faults

    assert parse_ws_faults("") == WsFaults()
    assert parse_ws_faults("binary; close-after=5 ;close-code=1000;flat-error") == WsFaults(
        binary=1, close_after=5, close_code=1000, flat_error=True)
    for bad, words in (("explode", "unknown fault"), ("join=x", "not a whole number"), ("close-code=7", "range")):
        with pytest.raises(WsFaultError, match=words):
            parse_ws_faults(bad)


def test_frames_apply_each_fault_to_the_events_of_a_response() -> None:
    from checker.live.serve_ws import WsFaults, frames

    events = [json.dumps({"type": f"e{i}", "response": {"id": "resp_1"}}) for i in range(1, 5)]
    assert frames(events, WsFaults()) == [("text", e) for e in events]
    assert frames(events, WsFaults(binary=2))[1] == ("binary", events[1].encode())
    joined = frames(events, WsFaults(join=2))
    assert len(joined) == 3 and joined[1] == ("text", events[1] + "\n" + events[2])
    split = frames(events, WsFaults(split=1))
    assert len(split) == 5 and str(split[0][1]) + str(split[1][1]) == events[0]
    assert [f[1] for f in frames(events, WsFaults(swap=1))][:2] == [events[1], events[0]]
    mixed = [json.loads(str(f[1]))["response"]["id"] for f in frames(events, WsFaults(interleave=True))]
    assert mixed == ["resp_1", "resp_1_interleaved"] * 4
