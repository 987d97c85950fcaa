"""The proxy's HTTP client towards its upstream: aiohttp, chosen for the forwarding path's cost.

The proxy forwards every chunk of every answer as it arrives, so the client's cost per chunk and per request is
the proxy's overhead. httpx (the probe's client) keeps its pool in pure Python and checks every idle connection
on each request (httpcore's ``_assign_requests_to_connections``): with 200 streams at once that scan was a
quarter of the proxy's time. aiohttp parses HTTP in C and hands out pooled connections in constant time.

:class:`Upstream` is everything the proxy needs of it: send a request as given (no header of its own beside
``Host`` and the body's ``Content-Length``; no redirects, cookies, proxies from the environment or
decompression) and read the answer's raw body. Transport failures come out as :class:`UpstreamError`, which
says which of the proxy's endings they are (``connect-error``, ``tls-error``, ``disconnect``) in the words the
probe's httpx-based records use, so that a saved proxied answer reads like a probed one.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

import aiohttp
from yarl import URL

from checker.live.connection import is_tls_error, transport_error_text

# aiohttp adds these when the request has none; a proxy must not (the client's own, if any, are forwarded).
_NO_AUTO_HEADERS = ("User-Agent", "Accept", "Accept-Encoding", "Content-Type")
# Kept-alive upstream connections: as many as a busy client keeps open, released after this many seconds idle.
_KEEPALIVE_S = 15.0


@dataclass(frozen=True, slots=True)
class UpstreamHead:
    """An answer's status line and headers, as received."""

    status_code: int
    reason_phrase: str
    http_version: str  # "HTTP/1.1"
    raw: list[tuple[bytes, bytes]]


class UpstreamError(Exception):
    """A transport failure: ``kind`` is the ending the meta records, ``detail`` its one-line text."""

    def __init__(self, kind: str, detail: str, *, unanswered: bool = False) -> None:
        super().__init__(detail)
        self.kind, self.detail, self.unanswered = kind, detail, unanswered


class UpstreamAnswer:
    """One answer being read: its head, then its raw body (de-chunked, never decompressed)."""

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response
        version = response.version
        self.head = UpstreamHead(
            status_code=response.status, reason_phrase=response.reason or "",
            http_version=f"HTTP/{version.major}.{version.minor}" if version is not None else "HTTP/1.1",
            raw=list(response.raw_headers))

    async def chunks(self) -> AsyncIterator[bytes]:
        """The body's bytes as they arrive; :class:`UpstreamError` ("disconnect") if the upstream cuts it, after
        every byte that arrived before the cut."""
        content = self._response.content
        passed = 0
        try:
            async for chunk in content.iter_any():
                passed += len(chunk)
                yield chunk
        except (aiohttp.ClientError, OSError) as exc:
            left = _left_over(content, content.total_bytes - passed)
            if left:
                yield left
            raise _error(exc, answered=True) from exc

    def close(self) -> None:
        """Release the connection: back to the pool if the body was read to its end, else closed, so that an
        answer the client left is not read on."""
        response = self._response
        if response.content.at_eof():
            response.release()
        else:
            response.close()


class Upstream:
    """The proxy's connection pool to one upstream; opened on first use, in the proxy's event loop."""

    def __init__(self, connect_timeout: float) -> None:
        self.connect_timeout = connect_timeout
        self._session: aiohttp.ClientSession | None = None

    def _http(self) -> aiohttp.ClientSession:
        if self._session is None:
            connector = aiohttp.TCPConnector(limit=0, keepalive_timeout=_KEEPALIVE_S, ttl_dns_cache=10)
            self._session = aiohttp.ClientSession(
                connector=connector, auto_decompress=False, skip_auto_headers=_NO_AUTO_HEADERS,
                cookie_jar=aiohttp.DummyCookieJar(), trust_env=False,
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=self.connect_timeout,
                                              connect=self.connect_timeout))
        return self._session

    async def send(self, method: str, url: str, headers: Sequence[tuple[bytes, bytes]],
                   body: bytes) -> UpstreamAnswer:
        """Send one request; its answer once the head has arrived. :class:`UpstreamError` if none came."""
        pairs = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in headers]
        try:
            response = await self._http().request(
                method, URL(url, encoded=True), headers=pairs, data=body or None, allow_redirects=False,
                auto_decompress=False)
        except (aiohttp.ClientError, OSError, asyncio.TimeoutError) as exc:
            raise _error(exc) from exc
        return UpstreamAnswer(response)

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


def _left_over(content: aiohttp.StreamReader, missing: int) -> bytes:
    """The last ``missing`` bytes received and not read. aiohttp raises a cut before handing out what arrived
    ahead of it (StreamReader.readany checks for the error first), so with a fast upstream the last chunks
    before a reset would be lost; the client connected directly would have had them. They are still in the
    reader's buffer (``_buffer``: no public reader returns them once the error is set); ``total_bytes`` (public)
    says how many."""
    buffer = getattr(content, "_buffer", None)
    if missing <= 0 or not buffer:
        return b""
    data = b"".join(bytes(part) for part in buffer)
    buffer.clear()
    return data[-missing:]


def _error(exc: BaseException, *, answered: bool = False) -> UpstreamError:
    """The proxy's ending for a transport failure, with the words of the probe's client where they differ;
    ``answered``: the failure came during the body (a cut), not before the answer's head."""
    if is_tls_error(exc):
        return UpstreamError("tls-error", transport_error_text(exc))
    if isinstance(exc, aiohttp.ClientConnectorDNSError):
        return UpstreamError("connect-error", f"cannot resolve the host name ({exc.os_error.strerror or exc})")
    if isinstance(exc, (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError)):
        return UpstreamError("connect-error", transport_error_text(exc))
    if isinstance(exc, asyncio.TimeoutError):
        return UpstreamError("connect-error", "timed out")
    if isinstance(exc, aiohttp.ServerDisconnectedError) and answered:
        return UpstreamError("disconnect", "peer closed connection without sending complete message body")
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        # The connection closed before any answer: a stale kept-alive one (HTP019), as h11 words it.
        return UpstreamError("disconnect", "Server disconnected without sending a response.", unanswered=True)
    if isinstance(exc, aiohttp.ClientPayloadError):
        return UpstreamError("disconnect", _cut_text(exc))
    if isinstance(exc, OSError) and exc.errno:
        return UpstreamError("disconnect", os.strerror(exc.errno))
    return UpstreamError("disconnect", transport_error_text(exc))


def _cut_text(exc: aiohttp.ClientPayloadError) -> str:
    """A body cut short, in h11's words (what httpx, and so the probe, reports for the same cut)."""
    text = str(exc)
    if "TransferEncodingError" in text:
        return "peer closed connection without sending complete message body (incomplete chunked read)"
    if "ContentLengthError" in text:
        return "peer closed connection without sending complete message body (fewer bytes than Content-Length)"
    seen: BaseException | None = exc.__cause__ or exc.__context__
    while seen is not None:
        if isinstance(seen, OSError) and seen.errno:
            return os.strerror(seen.errno)
        seen = seen.__cause__ or seen.__context__
    return "peer closed connection without sending complete message body"
