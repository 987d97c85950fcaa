"""A one-body HTTP server on loopback: what an oracle points a real client at.

The client then runs its whole call path (its HTTP stack, its SSE decoder, its stream helper) on the capture's
bytes, exactly as against a server. Every request gets ``200 text/event-stream`` with the body, and the
connection is closed after it, as a server ends a stream. Under it, ``serve_bytes`` answers with any bytes (the
live tests' servers with broken framing) and ``serve_connections`` is the accept loop, for a server that
answers each connection its own way (the live tests' odd servers).
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager


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
