"""The connection under an answer: does the server keep the persistence that HTTP/1.1 promises?

HTTP/1.1 connections persist unless a side says ``Connection: close`` (RFC 9112 §9.3). A server that closes
one anyway right after a complete response (llama-server does, after every stream) sets up a race: the
client's pool hands the connection to the next request, which meets the close and gets no answer. These
helpers let the probe see both halves: the close itself (by peeking at the socket after the body ended) and
the unanswered request (which it sends again once, as openai-python would, so that nothing is lost).
"""

from __future__ import annotations

import asyncio
import os
import socket
import ssl
import time
from collections.abc import Sequence
from typing import Any

import httpx

# How long to watch for the close after the body's last byte. A server that closes does so at once (the FIN
# follows the last chunk); a longer wait would only slow down every probe of a server that keeps it open.
CLOSE_WATCH_S = 0.025
_POLL_S = 0.005
# What h11 (through httpx) says when a request got no response at all because the connection was closed.
_UNANSWERED = "without sending a response"


def announces_close(http_version: str, headers: Sequence[tuple[str, str]]) -> bool:
    """Whether the response says that the connection ends with it (HTTP/1.0 without keep-alive, or close)."""
    tokens = {t.strip().lower() for k, v in headers if k.lower() == "connection" for t in v.split(",")}
    if "close" in tokens:
        return True
    return http_version.upper() in ("HTTP/1.0", "HTTP/0.9") and "keep-alive" not in tokens


def is_framed(headers: Sequence[tuple[str, str]]) -> bool:
    """Whether the body had its own end (chunked or Content-Length): if not, only the close could end it."""
    names = {k.lower(): v for k, v in headers}
    return "content-length" in names or "chunked" in names.get("transfer-encoding", "").lower()


def is_unanswered(exc: BaseException) -> bool:
    """A request that got no response at all: the connection was closed under it (a stale kept-alive one)."""
    return isinstance(exc, httpx.RemoteProtocolError) and _UNANSWERED in str(exc)


def _peer_closed(stream: Any) -> bool | None:
    """True when the server has closed the connection under ``stream`` (end of file is waiting), False while
    it is open (nothing, or data, waiting), None when the socket cannot be seen or is already closed here."""
    try:
        raw = stream.get_extra_info("socket")
        fd = raw.fileno() if raw is not None else -1
    except Exception:  # noqa: BLE001 - a transport without a socket: nothing to watch
        return None
    if fd < 0:
        return None
    try:
        # asyncio hands out a TransportSocket without recv(): peek through a duplicate of the descriptor.
        with socket.fromfd(fd, raw.family, raw.type) as peek:
            return peek.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except (BlockingIOError, InterruptedError):
        return False
    except OSError:
        return None


class CloseWatch:
    """Whether the server closed the connection right after a complete response.

    Peeking once the body has been read is too late when the close came with the last chunk: the client's
    pool sees the readable socket first and closes its side. So the watch also hooks httpcore's trace of the
    response's close (``request.extensions["trace"]``), which runs before the pool looks.
    """

    def __init__(self) -> None:
        self._stream: Any = None
        self.closed_at_end: bool | None = None

    def attach(self, request: httpx.Request) -> None:
        request.extensions = {**request.extensions, "trace": self._trace}

    def bind(self, response: httpx.Response) -> None:
        """Called once the response headers are in: the connection to watch."""
        stream = response.extensions.get("network_stream")
        # Over TLS the socket holds records (a close_notify first), not the end of file: not told, not guessed.
        if response.http_version == "HTTP/1.1" and stream is not None and stream.get_extra_info("ssl_object") is None:
            self._stream = stream

    async def _trace(self, name: str, info: dict[str, Any]) -> None:
        if name == "http11.response_closed.started" and self._stream is not None:
            self.closed_at_end = _peer_closed(self._stream)

    async def closed_after_body(self, wait: float = CLOSE_WATCH_S) -> float | bool | None:
        """After the body was read to its end: 0.0 when the close had come with it, else the seconds until
        it came within ``wait``; False when the connection stayed open; None when it cannot be told."""
        if self.closed_at_end:
            return 0.0
        if self._stream is None or self.closed_at_end is None:
            return None
        start = time.monotonic()
        while True:
            state = _peer_closed(self._stream)
            if state is None:
                return None
            if state:
                return time.monotonic() - start
            if time.monotonic() - start >= wait:
                return False
            await asyncio.sleep(_POLL_S)


def is_tls_error(exc: BaseException) -> bool:
    """Whether a transport failure was TLS's (a handshake or a certificate), anywhere in its chain."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ssl.SSLError) or "SSL" in str(seen) or "CERTIFICATE" in str(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def transport_error_text(exc: BaseException) -> str:
    """The most telling message in an exception chain: an OS error's text if there is one."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, socket.gaierror):  # os.strerror() knows no resolver codes ("Unknown error -2")
            return f"cannot resolve the host name ({seen.strerror or 'resolver error'})"
        if isinstance(seen, OSError) and (seen.errno or seen.strerror):
            return os.strerror(seen.errno) if seen.errno else str(seen.strerror)
        if isinstance(seen, ssl.SSLError):
            return " ".join(str(seen).split())
        seen = seen.__cause__ or seen.__context__
    return " ".join(str(exc).split()) or type(exc).__name__
