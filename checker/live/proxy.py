"""The checking reverse proxy: forward every request unchanged, lint the answers of every dialect on the side.

Theory of operation
-------------------
:class:`Proxy` is an ASGI application (run by uvicorn, as ``sse-check serve`` is). For each request it
reads the body, forwards method, path, query, headers and body to the upstream with
:class:`checker.live.upstream.Upstream` (aiohttp: no default headers of its own; hop-by-hop headers dropped
per RFC 9110 §7.6.1; ``Host`` rewritten; ``Content-Length`` left to the stack), and passes the answer back:
the status, the end-to-end headers, and the body as the raw bytes arrive (no decompression, no re-chunking
beyond what the stack does), each chunk sent to the client *before* the checker sees it.

Requests to a dialect's endpoint (``…/responses``, ``…/chat/completions``, ``…/messages``: the request
adapters' endpoints, checker.live.adapters) with a JSON body are *watched*, each answer checked as that
endpoint's dialect: a
:class:`checker.live.proxy_watch.Watch` tees the answer's bytes (decoded if the upstream compressed them) into a
:class:`checker.http_checks.ExchangeLinter`, the pipeline of ``sse-check probe`` and ``sse-check lint``,
and into an :class:`checker.live.outcome.OutcomeCollector` for the history checks
(:mod:`checker.live.history`). Everything on the checker side runs inside ``try``: an exception there
becomes an SSE099 finding on that response and the forwarding carries on untouched.

How the exchange ends decides what the client sees, as it would without the proxy:

* the upstream ends the body: the body is ended;
* the upstream cuts it (an incomplete chunked read, a reset): every byte received has been sent, then
  the client's connection is closed without ending the body, so its HTTP library reports the same cut;
* the client leaves (or the proxy is stopped): the upstream request is closed at once
  (:meth:`UpstreamAnswer.close` drops its connection), and the exchange is recorded as ``interrupted``.
* the upstream cannot be reached: the client gets HTTP 502 with an OpenAI-style JSON error.

Each watched exchange becomes a :class:`Record` (its lint result, with the RPL findings of its request
and the cache finding of its answer) and, with ``save_dir``, ``NNN.sse`` plus ``NNN.meta.json`` written
by the probe's writers (:mod:`checker.live.saving`), so that ``sse-check lint DIR`` reports the same
stream and HTTP findings.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import time
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlsplit

from starlette.types import Receive, Scope, Send

from checker.http_checks import CLIENT_LEFT
from checker.live import adapters
from checker.live.checking import CheckQueue
from checker.live.history import Tracker
from checker.live.proxy_watch import (
    OnForward,
    OnPassthrough,
    OnRecord,
    ProxyConfig,
    ProxyLintResult,
    Record,
    Watch,
)
from checker.live.upstream import Upstream, UpstreamAnswer, UpstreamError, UpstreamHead
from checker.profiles import Profile

__all__ = ["Proxy", "ProxyConfig", "ProxyLintResult", "Record", "Watch"]

# RFC 9110 §7.6.1: headers that describe one connection, not the message; never forwarded. Host is
# rewritten, Content-Length recomputed by the stack, Expect answered by the proxy's own server.
HOP_BY_HOP = frozenset({"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade",
                        "proxy-connection", "proxy-authenticate", "proxy-authorization"})
_NOT_FORWARDED = HOP_BY_HOP | {"host", "content-length", "expect"}
_NOT_RETURNED = HOP_BY_HOP | {"content-length"}
# A request body larger than this is forwarded but not parsed for the history (no real prompt is).
MAX_PARSED_REQUEST = 64 * 1024 * 1024


def _nothing(*args: Any) -> None:
    pass


class Proxy:
    """The ASGI application; ``records`` holds every watched exchange once it has ended."""

    def __init__(self, config: ProxyConfig, *, on_record: OnRecord = _nothing,
                 on_passthrough: OnPassthrough = _nothing, on_forward: OnForward | None = None) -> None:
        self.config = config
        self.upstream = config.upstream
        parts = urlsplit(config.upstream)
        # scheme://host[:port] and the path prefix put in front of every request's path (no trailing slash)
        self._origin = f"{parts.scheme}://{parts.netloc}"
        self._prefix = parts.path.rstrip("/")
        self.profile: Profile = config.engine.profile
        self.tracker = Tracker()
        # Ended exchanges, oldest first (the last ``config.keep`` of them); appended by the checker thread.
        self.records: collections.deque[Record] = collections.deque(maxlen=config.keep)
        self.checked = 0  # exchanges ended, checked or not (records may have dropped the oldest)
        self.passed_through = 0
        self.on_record = on_record
        self.on_passthrough = on_passthrough
        self.on_forward = on_forward
        self.checking = CheckQueue(config.check_queue)
        self._numbers = 0
        self._passing = 0  # passing answers seen by sampled()
        self._client = Upstream(config.connect_timeout)
        self._closing: asyncio.Event | None = None

    # -- lifecycle -------------------------------------------------------------------------------

    def sampled(self, failing: bool) -> bool:
        """Whether to save this answer: every failing one, and ``sample`` of the others, evenly spread
        (the n-th passing answer is saved when ``floor(n * sample)`` goes up: exact and reproducible)."""
        if failing or self.config.sample >= 1:
            return True
        before = int(self._passing * self.config.sample)
        self._passing += 1
        return int(self._passing * self.config.sample) > before

    def _closing_event(self) -> asyncio.Event:
        if self._closing is None:
            self._closing = asyncio.Event()
        return self._closing

    def close(self) -> None:
        """Stop: open exchanges end now (recorded as interrupted). Called from the server's shutdown."""
        self._closing_event().set()

    async def aclose(self) -> None:
        """Close the upstream connections and wait for the checker to finish what is queued."""
        await asyncio.get_running_loop().run_in_executor(None, self.checking.drain)
        await self._client.aclose()

    # -- one request -----------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return  # lifespan is off and websockets are refused by the server config
        body = await _read_body(receive)
        if body is None:
            return  # the client left before sending its whole request
        method: str = scope["method"]
        path: str = scope["path"]
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]]
        url = self._url(scope)
        request = _json_body(body) if method == "POST" else None
        adapter = adapters.for_path(path)
        watch = None
        if adapter is not None and request is not None:
            self._numbers += 1
            record = Record(number=self._numbers, method=method, path=path, api=adapter.name,
                            streamed=request.get("stream") is True)
            watch = Watch(self, record, request, headers, url, begin=False)
            self.checking.control(watch.begin)
        forwarded = _end_to_end(scope["headers"], _NOT_FORWARDED)
        status, ending, detail = await self._exchange(method, url, forwarded, body, receive, send,
                                                      _Tee(watch, self.checking) if watch else None)
        if watch is None:
            note = "not a request to a dialect's endpoint: passed through unchecked" if adapter is None else \
                "the request body is not a JSON object: passed through unchecked"
            self.passed_through += 1
            self._safely(self.on_passthrough, method, path, status, note if ending != "connect-error" else detail)
            return
        self.checking.control(self._ended, watch, ending, detail, time.monotonic())

    def _ended(self, watch: Watch, ending: str, detail: str, now: float) -> None:
        """The checker thread's last step of an exchange: close its checking, record and announce it."""
        record = watch.finish(ending, detail, now)
        self.records.append(record)
        self.checked += 1
        self._safely(self.on_record, record)

    def _url(self, scope: Scope) -> str:
        """The upstream URL of a request: its path as received (still percent-encoded) after the prefix."""
        raw_path = (scope.get("raw_path") or scope["path"].encode("utf-8")).decode("latin-1")
        query = (scope.get("query_string") or b"").decode("latin-1")
        return f"{self._origin}{self._prefix}{raw_path}" + (f"?{query}" if query else "")

    async def _exchange(self, method: str, url: str, headers: list[tuple[bytes, bytes]], body: bytes,
                        receive: Receive, send: Send, watch: _Tee | None) -> tuple[int | None, str, str]:
        """Forward one request and its answer; (status, ending, detail) as the meta records them."""
        try:
            answer = await self._send(method, url, headers, body, receive)
            if isinstance(answer, str):
                return None, "interrupted", answer
            if isinstance(answer, UpstreamError) and answer.unanswered:
                # The upstream closed a kept-alive connection of this proxy's pool under the request (HTP019):
                # nothing was answered, so send it once more on a new connection rather than fail a request
                # that the client, connected directly, would have got an answer to.
                answer = await self._send(method, url, headers, body, receive)
                if isinstance(answer, str):
                    return None, "interrupted", answer
            if isinstance(answer, UpstreamError):
                raise answer
        except UpstreamError as exc:
            await _send_error(send, f"sse-check proxy: the upstream {self.upstream} failed: {exc.detail}")
            return None, exc.kind, exc.detail
        try:
            if watch is not None:
                watch.headers(answer.head)
            await send({"type": "http.response.start", "status": answer.head.status_code,
                        "headers": _end_to_end(answer.head.raw, _NOT_RETURNED)})
            pump = asyncio.ensure_future(_pump(answer, send, watch, self.on_forward))
            reason = await self._first(pump, receive)
            if reason is not None:
                await _cancel(pump)
                return answer.head.status_code, "interrupted", reason
            ending, detail = pump.result()
            return answer.head.status_code, ending, detail
        finally:
            with contextlib.suppress(Exception):
                answer.close()  # closes the upstream connection if unread

    async def _send(self, method: str, url: str, headers: list[tuple[bytes, bytes]], body: bytes,
                    receive: Receive) -> UpstreamAnswer | UpstreamError | str:
        """The upstream's answer (its head), its failure, or why it was not waited for (the client left or
        the proxy stopped first: the request is then cancelled and its connection dropped)."""
        sending = asyncio.ensure_future(self._client.send(method, url, headers, body))
        reason = await self._first(sending, receive)
        if reason is not None:
            await _cancel(sending)
            return reason
        try:
            return sending.result()
        except UpstreamError as exc:
            return exc

    async def _first(self, task: asyncio.Future[Any], receive: Receive) -> str | None:
        """Wait for ``task``; a reason string if the client left or the proxy stopped first."""
        gone = asyncio.ensure_future(_client_gone(receive))
        stop = asyncio.ensure_future(self._closing_event().wait())
        try:
            await asyncio.wait({task, gone, stop}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in (gone, stop):
                waiter.cancel()
        if task.done():
            return None
        return CLIENT_LEFT if gone.done() and not gone.cancelled() else "the proxy was stopped"

    def _safely(self, callback: Callable[..., None], *args: Any) -> None:
        try:
            callback(*args)
        except Exception:  # noqa: BLE001 - a reporting hiccup must not end the request
            pass


class _Tee:
    """The forwarding side's handle on a watched exchange: it queues the checker's steps, never runs them."""

    __slots__ = ("watch", "queue", "overflowed")

    def __init__(self, watch: Watch, queue: CheckQueue) -> None:
        self.watch, self.queue, self.overflowed = watch, queue, False

    def headers(self, head: UpstreamHead) -> None:
        self.queue.control(self.watch.headers, head, time.monotonic())

    def feed(self, chunk: bytes, now: float) -> None:
        if self.overflowed:
            return
        try:
            if not self.queue.submit(self.watch.feed, chunk, now, size=len(chunk)):
                self.overflowed = True  # the rest of this answer is forwarded unchecked
                self.queue.control(self.watch.overflow)
        except Exception:  # noqa: BLE001 - the forwarding goes on whatever the checker side does
            self.overflowed = True


async def _pump(answer: UpstreamAnswer, send: Send, watch: _Tee | None,
                on_forward: OnForward | None) -> tuple[str, str]:
    """Copy the answer's raw bytes to the client; each chunk is then queued for the checker."""
    clock = time.monotonic
    try:
        async for chunk in answer.chunks():
            if not chunk:
                continue
            read = clock()
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
            if on_forward is not None:
                on_forward(clock() - read)
            if watch is not None:
                watch.feed(chunk, read)
    except UpstreamError as exc:
        # The upstream cut the body: return without ending ours, so the server closes the client's
        # connection mid-body and the client sees the cut too.
        return exc.kind, exc.detail
    await send({"type": "http.response.body", "body": b"", "more_body": False})
    return "complete", ""


async def _read_body(receive: Receive) -> bytes | None:
    chunks = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


async def _client_gone(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def _cancel(task: asyncio.Future[Any]) -> None:
    task.cancel()
    with contextlib.suppress(BaseException):
        await task
    if task.done() and not task.cancelled() and task.exception() is None:
        result = task.result()
        if isinstance(result, UpstreamAnswer):
            with contextlib.suppress(Exception):
                result.close()


async def _send_error(send: Send, message: str) -> None:
    body = json.dumps({"error": {"message": message, "type": "proxy_error", "param": None,
                                 "code": "upstream_unreachable"}}).encode()
    await send({"type": "http.response.start", "status": 502,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body, "more_body": False})


def _end_to_end(raw: Sequence[tuple[bytes, bytes]], fixed: frozenset[str]) -> list[tuple[bytes, bytes]]:
    """The headers to pass on: all but the fixed hop-by-hop names and those a Connection header lists
    (RFC 9110 §7.6.1). Names and values stay bytes, as received."""
    named = {token.strip().lower() for name, value in raw if name.lower() == b"connection"
             for token in value.decode("latin-1").split(",") if token.strip()}
    drop = fixed | named
    return [(name, value) for name, value in raw if name.decode("latin-1").lower() not in drop]


def _json_body(body: bytes) -> dict[str, Any] | None:
    if not body or len(body) > MAX_PARSED_REQUEST:
        return None
    try:
        value = json.loads(body)
    except (UnicodeDecodeError, ValueError):
        return None
    return value if isinstance(value, dict) else None

