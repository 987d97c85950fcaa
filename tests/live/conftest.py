"""Run ``sse-check serve`` as a real subprocess for the live tests (serve now, the prober later).

``start_serve(*args)`` starts ``python -m checker serve ARGS --port 0``, waits for its announce line
and returns a :class:`ServerProcess` with the URL. The fixtures stop every server they started by its
pid, even when the test fails:

* ``serve`` - a factory: ``server = serve("captures/llama.cpp", "--default", "plain_text")``;
* ``llama_server`` - one server over ``captures/llama.cpp`` shared by the whole session; select
  scenarios and faults per request with the ``X-SSE-Check-Scenario`` / ``X-SSE-Check-Fault`` headers;
* ``probe_server`` - one server over ``captures/probe`` (a conforming answer to every probe scenario).
* ``proxy`` - a factory starting ``sse-check proxy`` processes in front of an upstream:
  ``px = proxy(llama_server.url, "--save", str(tmp_path))``; ``px.url`` is the proxy's address.

And the client side, for the tests that import them (``from tests.live.conftest import sse_check``):
``sse_check(*args)`` runs ``python -m checker ARGS`` as a user's terminal would, ``sse_check_json(*args)``
the same with ``--format json``, for its exit code and report.
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
LLAMA_CAPTURES = ROOT / "captures" / "llama.cpp"
PROBE_CAPTURES = ROOT / "captures" / "probe"
ANNOUNCE = re.compile(r"serving (\d+) captures on (http://\S+)")
PROXY_ANNOUNCE = re.compile(r"proxying (\S+) on (http://\S+)")
START_TIMEOUT_S = 20.0
STOP_TIMEOUT_S = 10.0
CLI_TIMEOUT_S = 180.0  # a bound on one sse-check command, so that a hung one fails its test: not a speed target


@dataclass
class ServerProcess:
    proc: subprocess.Popen[bytes]
    url: str  # http://127.0.0.1:PORT, no trailing slash
    count: int  # captures served, as announced
    _stderr: IO[bytes]

    @property
    def pid(self) -> int:
        return self.proc.pid

    def stop(self, sig: int = signal.SIGTERM, timeout: float = STOP_TIMEOUT_S) -> int:
        """Signal the server and wait for it (killed if it does not stop in time); its exit code."""
        if self.proc.poll() is None:
            os.kill(self.proc.pid, sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout)
        return self.proc.returncode

    def stderr(self) -> str:
        """What the server wrote to stderr so far."""
        self._stderr.flush()
        self._stderr.seek(0)
        return self._stderr.read().decode("utf-8", "replace")


def start_serve(*args: str, cwd: Path = ROOT) -> ServerProcess:
    """Start ``sse-check serve ARGS --port 0`` and wait until it announces its URL."""
    proc, match, stderr = _start_announcing(["serve", *args, "--port", "0"], ANNOUNCE, "sse-check serve", cwd)
    return ServerProcess(proc=proc, url=match.group(2), count=int(match.group(1)), _stderr=stderr)


def start_proxy(upstream: str, *args: str, cwd: Path = ROOT) -> ServerProcess:
    """Start ``sse-check proxy --upstream UPSTREAM --listen 127.0.0.1:0 ARGS`` and wait for its announce line
    ("proxying UPSTREAM on URL"); ``count`` is 0. Give ``-o FILE`` for the report: stdout is not read."""
    command = ["proxy", "--upstream", upstream, "--listen", "127.0.0.1:0", *args]
    proc, match, stderr = _start_announcing(command, PROXY_ANNOUNCE, "sse-check proxy", cwd)
    return ServerProcess(proc=proc, url=match.group(2), count=0, _stderr=stderr)


def _start_announcing(command: list[str], pattern: re.Pattern[str], what: str,
                      cwd: Path) -> tuple[subprocess.Popen[bytes], re.Match[str], IO[bytes]]:
    """Start ``python -m checker COMMAND`` and wait for its first stdout line to match ``pattern``."""
    stderr = tempfile.TemporaryFile()  # a file, not a pipe: a chatty server must never block on it
    proc = subprocess.Popen(
        [sys.executable, "-m", "checker", *command],
        stdout=subprocess.PIPE, stderr=stderr, stdin=subprocess.DEVNULL, cwd=cwd,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert proc.stdout is not None
    line = b""
    deadline = time.monotonic() + START_TIMEOUT_S
    try:
        while not line.endswith(b"\n"):
            left = deadline - time.monotonic()
            ready, _, _ = select.select([proc.stdout], [], [], max(left, 0))
            if not ready:
                raise RuntimeError(f"{what} did not announce itself within {START_TIMEOUT_S} s")
            data = os.read(proc.stdout.fileno(), 4096)
            if not data:
                raise RuntimeError(f"{what} exited before announcing itself")
            line += data
        match = pattern.fullmatch(line.decode().strip())
        if match is None:
            raise RuntimeError(f"unexpected announce line: {line!r}")
    except BaseException as exc:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        stderr.seek(0)
        raise RuntimeError(f"{exc}; exit {proc.returncode}; stderr: {stderr.read().decode(errors='replace')}") from None
    return proc, match, stderr


@pytest.fixture
def serve() -> Iterator[Callable[..., ServerProcess]]:
    """A factory starting ``sse-check serve`` processes; all are stopped when the test ends."""
    started: list[ServerProcess] = []

    def start(*args: str) -> ServerProcess:
        server = start_serve(*args)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()
        server._stderr.close()


def _serving(*args: str) -> Iterator[ServerProcess]:
    """A session fixture's body: one ``sse-check serve ARGS`` while the session lasts, then stopped."""
    server = start_serve(*args)
    try:
        yield server
    finally:
        server.stop()
        server._stderr.close()


@pytest.fixture(scope="session")
def llama_server() -> Iterator[ServerProcess]:
    """One ``sse-check serve captures/llama.cpp`` for the session (no command-line faults)."""
    yield from _serving(str(LLAMA_CAPTURES))


@pytest.fixture(scope="session")
def probe_server() -> Iterator[ServerProcess]:
    """One ``sse-check serve captures/probe`` for the session (no command-line faults)."""
    yield from _serving(str(PROBE_CAPTURES))


@pytest.fixture(scope="session")
def replay_server() -> Iterator[ServerProcess]:
    """One ``sse-check serve captures/replay/llama.cpp`` for the session: the live replay's recorded turns,
    answered by request body."""
    yield from _serving(str(ROOT / "captures" / "replay" / "llama.cpp"))


@pytest.fixture
def proxy() -> Iterator[Callable[..., ServerProcess]]:
    """A factory starting ``sse-check proxy --upstream URL`` processes; all are stopped when the test ends."""
    started: list[ServerProcess] = []

    def start(upstream: str, *args: str) -> ServerProcess:
        process = start_proxy(upstream, *args)
        started.append(process)
        return process

    yield start
    for process in started:
        process.stop()
        process._stderr.close()


def sse_check(*args: str, timeout: float = CLI_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
    """``sse-check ARGS`` from the project root: 80 columns, no colour, no API key from the environment (the
    servers are local); a traceback in its output fails the test."""
    env = {**os.environ, "NO_COLOR": "1", "OPENAI_API_KEY": "", "COLUMNS": "80"}
    proc = subprocess.run([sys.executable, "-m", "checker", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=timeout, env=env)
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    return proc


def sse_check_json(*args: str, timeout: float = CLI_TIMEOUT_S) -> tuple[int, dict[str, Any]]:
    """``sse-check ARGS --format json``: its exit code and its report."""
    proc = sse_check(*args, "--format", "json", timeout=timeout)
    return proc.returncode, json.loads(proc.stdout)
