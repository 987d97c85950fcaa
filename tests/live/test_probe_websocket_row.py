"""The WebSocket row of a default probe (checker/surface/websocket.py; docs/websocket.md): the upgrade of
``/v1/responses`` tried once, against real servers on loopback: ``sse-check serve`` (which answers the WebSocket
mode, faithfully, with a refused upgrade and with a broken frame) and raw servers that answer the upgrade oddly
(close at once, say nothing, answer no HTTP): each is one row, never a failure of the probe."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from checker.oracles.loopback import serve_connections

if TYPE_CHECKING:  # the fixtures come from tests/live/conftest.py
    from conftest import ServerProcess

ROOT = Path(__file__).resolve().parents[2]
FAULT = "X-SSE-Check-WS-Fault"


def probe(url: str, *extra: str, scenarios: str = "plain_text,websocket") -> tuple[int, dict[str, Any]]:
    proc = subprocess.run(
        [sys.executable, "-m", "checker", "probe", url, "--model", "m", "--api", "responses", "-s", scenarios,
         "--format", "json", "--no-progress", "--first-byte-timeout", "5", "--idle-timeout", "5", *extra],
        capture_output=True, text=True, cwd=ROOT, timeout=120, env={**os.environ, "NO_COLOR": "1"})
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def row(report: dict[str, Any]) -> dict[str, Any]:
    (found,) = [r for r in report["capabilities"] if r["feature"] == "websocket.responses"]
    return found


def entry(report: dict[str, Any]) -> dict[str, Any] | None:
    return next((f for f in report["files"] if f["path"] == "websocket.ws.jsonl"), None)


def verdicts(report: dict[str, Any]) -> dict[str, str]:
    return {r["client"]: r["verdict"] for r in report["readiness"]}


def test_an_accepted_upgrade_runs_one_response_create_and_the_saved_transcript_lints_the_same(
        probe_server: ServerProcess, tmp_path: Path) -> None:
    code, report = probe(probe_server.url, "--save", str(tmp_path))
    assert code == 0, report["summary"]
    assert row(report)["status"] == "supported"
    found = entry(report)
    assert found is not None and found["findings"] == []
    assert [r["scenario"] for r in found["http"]["responses"]] == ["plain_text"]  # the short form: one response
    saved = tmp_path / "websocket.ws.jsonl"
    proc = subprocess.run([sys.executable, "-m", "checker", "lint", str(saved), "--format", "json"],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 0 and json.loads(proc.stdout)["files"][0]["findings"] == []


@pytest.mark.parametrize("status", ["404", "405", "426"])
def test_a_refused_upgrade_is_one_unsupported_row_and_no_finding(probe_server: ServerProcess, status: str,
                                                                 tmp_path: Path) -> None:
    code, report = probe(probe_server.url, "-H", f"{FAULT}: refuse={status}", "--save", str(tmp_path))
    assert code == 0
    assert row(report)["status"] == "unsupported" and row(report)["why"].startswith(f"HTTP {status} ")
    assert entry(report) is None and not list(tmp_path.glob("*.ws.jsonl"))
    assert verdicts(report)["codex"] == "ready"  # an optional capability: it works without it
    assert "WebSocket /v1/responses (response.create)" in next(
        r for r in report["readiness"] if r["client"] == "codex")["without"]


def test_a_broken_answer_over_the_connection_breaks_the_row_and_degrades_its_clients(
        probe_server: ServerProcess) -> None:
    code, report = probe(probe_server.url, "-H", f"{FAULT}: binary=2")
    assert code == 1
    assert row(report)["status"] == "broken" and row(report)["finding"]["code"] == "WSK001"
    found = entry(report)
    assert found is not None and {f["code"] for f in found["findings"]} == {"WSK001"}
    # the streams over SSE are right: the WebSocket mode's users (codex, openai-python's responses.connect())
    # are degraded through the row, the stream.responses row is not touched
    assert verdicts(report)["codex"] == "degraded" and verdicts(report)["openai-python"] == "degraded"
    assert next(r for r in report["capabilities"] if r["feature"] == "stream.responses")["status"] == "supported"


def test_the_full_check_stays_behind_transport_websocket(probe_server: ServerProcess) -> None:
    proc = subprocess.run([sys.executable, "-m", "checker", "probe", probe_server.url, "--model", "m",
                           "--list-scenarios", "--format", "json"], capture_output=True, text=True, cwd=ROOT,
                          timeout=60)
    listed = {item["name"]: item for item in json.loads(proc.stdout)}
    assert listed["websocket"]["feature"] == "websocket.responses"


# --- servers that answer the upgrade oddly -------------------------------------------------------------------


def _close_at_once(conn: socket.socket) -> None:
    conn.recv(65536)
    conn.close()


def _silent(conn: socket.socket) -> None:
    conn.recv(65536)
    threading.Event().wait(30)  # says nothing while the probe waits
    conn.close()


def _not_http(conn: socket.socket) -> None:
    conn.recv(65536)
    conn.sendall(b"SSH-2.0-OpenSSH_9.6\r\n")
    conn.close()


@pytest.mark.parametrize(("handle", "reason"), [
    (_close_at_once, "the WebSocket upgrade of ws://"),
    (_silent, "no answer to the WebSocket upgrade of ws://"),
    (_not_http, "the WebSocket upgrade of ws://"),
], ids=["closes-at-once", "silent", "not-http"])
def test_an_odd_answer_to_the_upgrade_is_unsupported_with_the_reason(handle: Callable[[socket.socket], None],
                                                                     reason: str) -> None:
    with serve_connections(handle) as url:
        code, report = probe(url, scenarios="websocket")
        assert code == 2  # no scenario was asked and the mode is not offered: nothing probed, said in the report
        assert row(report)["status"] == "unsupported" and row(report)["why"].startswith(reason), row(report)
        assert entry(report) is None
