"""What the real-server suite does with the server processes it starts (llama-server, LiteLLM's proxy):
pick a free loopback port, ask whether they answer, read the log they wrote, and stop them by their pid, also
when a test failed."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
from collections.abc import Callable
from typing import IO, Protocol, TypeVar

# A server that has not exited this long after SIGTERM is killed.
STOP_TIMEOUT_S = 10.0


def free_port() -> int:
    """A loopback port nothing listens on now (another process may still take it before the server binds)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def answers(url: str) -> bool:
    """Whether a GET of ``url`` (a health endpoint) answers 200 within two seconds."""
    import httpx

    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def http_status(url: str) -> int | None:
    """The status a GET of ``url`` answers within two seconds (any status: a server without a health endpoint
    is up once it answers at all), None when nothing answers."""
    import httpx

    try:
        return httpx.get(url, timeout=2).status_code
    except httpx.HTTPError:
        return None


def read_log(log: IO[bytes]) -> str:
    """Everything the process wrote so far to ``log`` (a file it shares with us)."""
    log.flush()
    log.seek(0)
    return log.read().decode("utf-8", "replace")


def stop_by_pid(proc: subprocess.Popen[bytes]) -> int:
    """SIGTERM, then SIGKILL if it outlives STOP_TIMEOUT_S; its exit status."""
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(STOP_TIMEOUT_S)
    return proc.returncode


class _Running(Protocol):
    proc: subprocess.Popen[bytes]

    def close(self) -> None: ...


R = TypeVar("R", bound=_Running)


def run_by_hand(start: Callable[[], R], banner: Callable[[R], str]) -> int:
    """A server module's ``main``: start the server, say where it is (``banner``), serve until Ctrl-C or SIGTERM,
    then stop it by its pid."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    server = start()
    print(banner(server), flush=True)
    try:
        server.proc.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    return 0
