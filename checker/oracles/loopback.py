"""A one-body HTTP server on loopback: what an oracle points a real client at.

The client then runs its whole call path (its HTTP stack, its SSE decoder, its stream helper) on the capture's
bytes, exactly as against a server. Every request gets ``200 text/event-stream`` with the body, and the
connection is closed after it, as a server ends a stream. Under it, ``serve_bytes`` answers with any bytes (the
live tests' servers with broken framing) and ``serve_connections`` is the accept loop, for a server that
answers each connection its own way (the live tests' odd servers).
"""

from __future__ import annotations

import re
import socket
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from http import HTTPStatus

from checker.oracles.protocol import Exchange


@contextmanager
def serve_connections(handle: Callable[[socket.socket], None]) -> Iterator[str]:
    """Accept on 127.0.0.1 (a free port) while the block runs, each connection handed to ``handle`` in a thread of
    its own (``handle`` closes it); yields the base URL."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)  # so that the loop sees ``stop`` soon after the block ends
    port = listener.getsockname()[1]
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=handle, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop.set()
        thread.join(timeout=2)
        listener.close()


@contextmanager
def serve_body(body: bytes, *, content_type: str = "text/event-stream") -> Iterator[str]:
    """Serve ``body`` on 127.0.0.1 (a free port) while the block runs; yields the base URL."""
    head = (f"HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ncache-control: no-cache\r\n"
            f"connection: close\r\n\r\n").encode()
    with serve_bytes(head + body) as url:  # no content-length: the body ends when the connection closes
        yield url


@contextmanager
def serve_bytes(response: bytes) -> Iterator[str]:
    """Answer each request on 127.0.0.1 (a free port) with ``response`` as it stands (status line, headers,
    body: any framing, right or wrong), then close the connection; yields the base URL."""

    def answer(conn: socket.socket) -> None:
        with conn:
            conn.settimeout(10)
            request = b""
            try:
                while b"\r\n\r\n" not in request:  # the headers; then the body by its content-length
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    request += chunk
                headers, _, rest = request.partition(b"\r\n\r\n")
                length = 0
                for line in headers.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip() or 0)
                while len(rest) < length:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    rest += chunk
                conn.sendall(response)
            except OSError:
                return

    with serve_connections(answer) as url:
        yield url


def _read_request(conn: socket.socket) -> bytes | None:
    """The request's head and body (by its content-length); None when the client went away first."""
    request = b""
    while b"\r\n\r\n" not in request:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        request += chunk
    headers, _, rest = request.partition(b"\r\n\r\n")
    length = 0
    for line in headers.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length" and value.strip().isdigit():
            length = int(value.strip())
    while len(rest) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        rest += chunk
    return headers


_PREFIX = re.compile(rb"^[A-Z]+ /c/(\d+)(?:/|\s|\?)")
# Recorded headers the replay decides itself: framing, the connection, the date.
_NOT_REPLAYED = frozenset({"content-length", "transfer-encoding", "connection", "keep-alive", "date"})


def answer_bytes(exchange: Exchange) -> bytes:
    """The bytes the server writes for ``exchange`` (its status line, its headers, its body as recorded)."""
    reason = exchange.reason or (HTTPStatus(exchange.status).phrase if exchange.status in _STATUSES else "")
    lines = [f"HTTP/1.1 {exchange.status} {reason or 'Status'}"]
    lines += [f"{name}: {value}" for name, value in exchange.headers if name.lower() not in _NOT_REPLAYED]
    lines.append("connection: close")
    if exchange.cut:  # a chunked body whose last chunk never comes: the client sees the transport fail
        lines.append("transfer-encoding: chunked")
        body = (f"{len(exchange.body):x}\r\n".encode() + exchange.body + b"\r\n") if exchange.body else b""
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body
    # No content-length: the body ends when the connection closes, as a streaming server ends it.
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + exchange.body


_STATUSES = {s.value for s in HTTPStatus}


@dataclass(slots=True)
class Served:
    """The running batch server: a base URL per exchange (``.../c/k/v1``) and the requests each received."""

    base_urls: list[str]
    requests: list[int]


@contextmanager
def serve_exchanges(exchanges: Sequence[Exchange]) -> Iterator[Served]:
    """ONE loopback server for many exchanges while the block runs: exchange k answers every request under
    ``/c/k/`` (a request with no such prefix gets exchange 0). An exchange with no status holds the connection
    without answering, and a kept-open one holds it after the body, until the client closes it or the block
    ends."""
    requests = [0] * len(exchanges)
    closing = threading.Event()

    def hold(conn: socket.socket) -> None:
        conn.settimeout(0.2)
        while not closing.is_set():
            try:
                if not conn.recv(65536):
                    return  # the client gave up
            except TimeoutError:
                continue
            except OSError:
                return

    def answer(conn: socket.socket) -> None:
        with conn:
            conn.settimeout(10)
            try:
                head = _read_request(conn)
                if head is None:
                    return
                match = _PREFIX.match(head)
                index = int(match.group(1)) if match else 0
                if not 0 <= index < len(exchanges):
                    conn.sendall(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                    return
                requests[index] += 1
                exchange = exchanges[index]
                if exchange.refused:
                    return
                if exchange.status is None:
                    hold(conn)
                    return
                conn.sendall(answer_bytes(exchange))
                if exchange.kept_open:
                    hold(conn)
            except OSError:
                return

    with serve_connections(answer) as url:
        try:
            yield Served([f"{url}/c/{k}/v1" for k in range(len(exchanges))], requests)
        finally:
            closing.set()
