"""Transport faults `sse-check serve` cannot inject (it sits on uvicorn, which frames correctly):
TLS spoken to a plain-HTTP port, and broken Transfer-Encoding / Content-Length framing from a raw socket
server on loopback. Each must be a finding with what was received saved, never a traceback.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from checker.oracles.loopback import serve_bytes

if TYPE_CHECKING:  # the fixtures come from tests/live/conftest.py
    from conftest import ServerProcess

ROOT = Path(__file__).resolve().parents[2]
PLAIN = (ROOT / "captures" / "llama.cpp" / "plain_text.sse").read_bytes()


def probe(url: str, tmp_path: Path, *extra: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    proc = subprocess.run(
        [sys.executable, "-m", "checker", "probe", url, "--model", "m", "-s", "plain_text", "--api", "responses", "--format", "json",
         "--save", str(tmp_path / "saved"), "--idle-timeout", "2", "--total-timeout", "10", *extra],
        capture_output=True, text=True, cwd=ROOT, timeout=60, env={**os.environ, "NO_COLOR": "1"},
    )
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    return proc, json.loads(proc.stdout)


def test_tls_to_a_plain_http_port_is_a_tls_finding(llama_server: ServerProcess, tmp_path: Path) -> None:
    url = llama_server.url.replace("http://", "https://")
    proc, report = probe(url, tmp_path)
    (entry,) = report["files"]
    assert [f["code"] for f in entry["findings"]] == ["HTP008"]
    assert proc.returncode in (1, 2)


@pytest.fixture
def raw_server() -> Iterator[Callable[[bytes], str]]:
    """Starts servers that answer every request with the given bytes, then close; each call gives one's URL."""
    with contextlib.ExitStack() as in_use:
        yield lambda response: in_use.enter_context(serve_bytes(response))


HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"


def chunked(body: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(body), body)


@pytest.mark.parametrize(
    ("name", "response", "received"),
    [
        # A chunk size line that is not hex, after one good chunk.
        ("bad-chunk-size", HEAD + b"Transfer-Encoding: chunked\r\n\r\n" + chunked(PLAIN[:700]) + b"zz\r\n", 700),
        # Content-Length promises more than is sent before the connection closes.
        ("short-content-length", HEAD + b"Content-Length: %d\r\n\r\n" % len(PLAIN) + PLAIN[:900], 900),
        # Chunked encoding that ends without the terminating zero-size chunk.
        ("no-last-chunk", HEAD + b"Transfer-Encoding: chunked\r\n\r\n" + chunked(PLAIN[:1200]), 1200),
    ],
)
def test_broken_transfer_framing_is_a_cut_off_body_and_keeps_what_arrived(
    raw_server: Callable[[bytes], str], tmp_path: Path, name: str, response: bytes, received: int
) -> None:
    proc, report = probe(raw_server(response), tmp_path)
    (entry,) = report["files"]
    found = {f["code"] for f in entry["findings"]}
    assert "HTP012" in found, (name, found)
    saved = (tmp_path / "saved" / "plain_text.sse").read_bytes()
    assert saved == PLAIN[:received], name
    assert proc.returncode == 1


def test_a_one_byte_every_10_ms_drip_ends_within_the_total_timeout(llama_server: ServerProcess,
                                                                    tmp_path: Path) -> None:
    proc, report = probe(llama_server.url, tmp_path, "-H", "X-SSE-Check-Fault: chunk-size=1;delay=10",
                         "--total-timeout", "2")
    (entry,) = report["files"]
    assert "HTP011" in {f["code"] for f in entry["findings"]}
    saved = (tmp_path / "saved" / "plain_text.sse").read_bytes()
    # Everything that dripped in before the limit is kept, byte for byte.
    assert 20 < len(saved) < len(PLAIN) and saved == PLAIN[: len(saved)]
    assert entry["http"]["timings"]["total"] < 4
