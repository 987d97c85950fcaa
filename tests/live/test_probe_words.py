"""The probe's words, through the real CLI: a client whose API the server does not serve is "not served" (not
"broken"), an exchange the probe itself cut short is never "ok", and a listener that does not speak HTTP gets
no HTP019 ("dropped the kept-alive connection") on its first request."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from tests.live.conftest import ServerProcess, sse_check
from tests.live.test_probe_output import start_probe


def listener(handle: Callable[[socket.socket], None]) -> Iterator[str]:
    """A TCP listener on loopback whose every connection ``handle`` serves (in a thread); its base URL."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    server.settimeout(0.2)
    stop = threading.Event()
    held: list[socket.socket] = []

    def loop() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            held.append(conn)
            handle(conn)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(5)
        for conn in held:
            conn.close()
        server.close()


@pytest.fixture
def not_http() -> Iterator[str]:
    """Reads the request, answers a line that is not HTTP and closes: every request, first one included."""
    def handle(conn: socket.socket) -> None:
        conn.settimeout(2)
        try:
            conn.recv(65536)
            conn.sendall(b"hello, this is not http\n")
        except OSError:
            pass
        conn.close()
    yield from listener(handle)


ACCEPTED = threading.Event()


@pytest.fixture
def silent() -> Iterator[str]:
    """Accepts and never answers (``ACCEPTED`` is set once a request's connection is in)."""
    ACCEPTED.clear()
    yield from listener(lambda conn: ACCEPTED.set())


def test_a_client_whose_endpoint_is_not_served_is_not_served_not_broken(llama_server: ServerProcess) -> None:
    # captures/llama.cpp has no Messages capture: POST /v1/messages answers 404
    proc = sse_check("probe", llama_server.url, "--model", "tiny-qwen3", "--profile", "llama.cpp")
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^(anthropic-\w+) +(\S+(?: served)?) +(.*)$",
                                                        proc.stdout, re.M)}
    assert rows == {"anthropic-python": "not served", "anthropic-ts": "not served"}, proc.stdout
    assert re.search(r"^anthropic-python +not served +POST /v1/messages: 404$", proc.stdout, re.M)
    assert not re.search(r"^anthropic-\w+ +broken", proc.stdout, re.M)


def test_a_listener_that_is_not_http_gets_no_kept_alive_finding(not_http: str) -> None:
    proc = sse_check("probe", not_http, "--model", "m", "--api", "responses", "-s", "plain_text,reasoning_text")
    assert proc.returncode == 1
    assert "HTP012" in proc.stdout and "HTP019" not in proc.stdout and "kept-alive" not in proc.stdout


def test_a_scenario_the_probe_was_interrupted_in_is_not_ok(silent: str) -> None:
    proc = start_probe(silent, "--model", "m", "--api", "responses", "-s", "plain_text")
    try:
        assert ACCEPTED.wait(60)  # the request is sent and waits for headers that never come
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    stdout = out.decode()
    assert proc.returncode == 128 + signal.SIGINT, (stdout, err)
    assert "cut plain_text  no response: interrupted" in stdout
    assert not re.search(r"^ok plain_text", stdout, re.M)


def test_a_passing_probe_says_which_clients_break_and_clients_required_fails_it(llama_server: ServerProcess) -> None:
    args = ("probe", llama_server.url, "--model", "tiny-qwen3", "--profile", "llama.cpp", "--api", "responses")
    passing = sse_check(*args)
    assert passing.returncode == 0
    said = " ".join(passing.stdout.split())
    assert ("exit 0: no finding at or above --fail-on warning, but openai-python, openai-node, openai-agents break "
            "on what the profile accepts; --clients-required") in said, passing.stdout
    required = sse_check(*args, "--clients-required", "openai-python")
    assert required.returncode == 1
    assert "required client(s) broken (--clients-required): openai-python: exit 1" in required.stdout.splitlines()
    degraded_only = sse_check(*args, "--clients-required", "codex")  # codex is degraded, not broken, here
    assert degraded_only.returncode == 0 and "not required" in degraded_only.stdout
