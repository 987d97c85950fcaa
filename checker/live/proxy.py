"""The checking reverse proxy: forward every request unchanged, lint the Responses and chat answers on the side.

Theory of operation
-------------------
:class:`Proxy` is an ASGI application (run by uvicorn, as ``sse-check serve`` is). For each request it
reads the body, forwards method, path, query, headers and body to the upstream with an
``httpx.AsyncClient`` (no default headers of its own; hop-by-hop headers dropped per RFC 9110 §7.6.1;
``Host`` rewritten; ``Content-Length`` left to the stack), and passes the answer back: the status, the
end-to-end headers, and the body as the raw bytes arrive (``aiter_raw``: no decompression, no
re-chunking beyond what the stack does), each chunk sent to the client *before* the checker sees it.

Requests to ``…/responses`` and ``…/chat/completions`` with a JSON body are *watched*: a :class:`Watch`
tees the answer's bytes (decoded if the upstream compressed them) into a
:class:`checker.http_checks.ExchangeLinter`, the pipeline of ``sse-check probe`` and ``sse-check lint``,
and into an :class:`checker.live.outcome.OutcomeCollector` for the history checks
(:mod:`checker.live.history`). Everything on the checker side runs inside ``try``: an exception there
becomes an SSE099 finding on that response and the forwarding carries on untouched.

How the exchange ends decides what the client sees, as it would without the proxy:

* the upstream ends the body: the body is ended;
* the upstream cuts it (an incomplete chunked read, a reset): every byte received has been sent, then
  the client's connection is closed without ending the body, so its HTTP library reports the same cut;
* the client leaves (or the proxy is stopped): the upstream request is closed at once
  (``response.aclose()`` drops its connection), and the exchange is recorded as ``interrupted``.
* the upstream cannot be reached: the client gets HTTP 502 with an OpenAI-style JSON error.

Each watched exchange becomes a :class:`Record` (its lint result, with the RPL findings of its request
and the cache finding of its answer) and, with ``save_dir``, ``NNN.sse`` plus ``NNN.meta.json`` written
by the probe's writers, so that ``sse-check lint DIR`` reports the same stream and HTTP findings.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import json
import os
import re
import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import httpx
from starlette.types import Receive, Scope, Send

from checker.engine import Limits, LintResult
from checker.findings import Finding, Position, Severity
from checker.http_checks import CLIENT_LEFT, ExchangeLinter, api_of
from checker.live.checking import DEFAULT_CAPACITY, CheckQueue
from checker.live.connection import is_tls_error, is_unanswered, transport_error_text
from checker.live.history import Exchange, Tracker
from checker.live.outcome import Api, Outcome, OutcomeCollector, outcome_from_json
from checker.live.probe import (  # the probe's redaction, capture writing and error texts
    BodySink,
    ProbeLimits,
    ProbeLintResult,
    Redactor,
    build_meta,
    http_info,
    save_sidecars,
    secrets_of_headers,
)
from checker.live.scenarios import Scenario
from checker.profiles import OPENAI, Profile
from checker.rules import framing

# RFC 9110 §7.6.1: headers that describe one connection, not the message; never forwarded. Host is
# rewritten, Content-Length recomputed by the stack, Expect answered by the proxy's own server.
HOP_BY_HOP = frozenset({"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade",
                        "proxy-connection", "proxy-authenticate", "proxy-authorization"})
_NOT_FORWARDED = HOP_BY_HOP | {"host", "content-length", "expect"}
_NOT_RETURNED = HOP_BY_HOP | {"content-length"}
_DELTA = re.compile(rb"\.delta(?:\"|\r|\n)")
DEFAULT_CONNECT_TIMEOUT = 10.0
# A test hook, for the tests that run the real proxy process with a checker that is slow ("slow:SECONDS"
# per body chunk) or fails ("fail"): they show that neither reaches the traffic.
_TEST_CHECKER = os.environ.get("SSE_CHECK_TEST_CHECKER", "")
# A request body larger than this is forwarded but not parsed for the history (no real prompt is).
MAX_PARSED_REQUEST = 64 * 1024 * 1024


@dataclass(frozen=True, kw_only=True)
class ProxyConfig:
    upstream: str  # base URL: scheme, host, port and an optional path prefix
    engine: Mapping[str, Any] = field(default_factory=dict)  # StreamLinter options (profile, select, …)
    save_dir: Path | None = None
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    check_queue: int = DEFAULT_CAPACITY  # bytes of body that may wait for the checker (see checking.py)
    keep: int | None = None  # how many ended exchanges ``Proxy.records`` keeps (None: all)
    sample: float = 1.0  # the fraction of passing answers saved under save_dir (failing ones always are)
    fail_on: Severity = Severity.ERROR  # what makes an answer failing, for sample


@dataclass(slots=True, kw_only=True)
class ProxyLintResult(ProbeLintResult):
    """A watched exchange's lint result, with where it stands in its conversation."""

    proxy: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True, kw_only=True)
class Record:
    """One watched exchange, as reported live and in the summary."""

    number: int
    method: str
    path: str
    api: Api
    streamed: bool
    status: int | None = None
    result: ProxyLintResult | None = None
    exchange: Exchange | None = None
    saved: Path | None = None
    note: str | None = None
    skipped: str | None = None  # not checked: "queue-full" (the checker fell behind) or "encoding"

    @property
    def name(self) -> str:
        """The report's name for it: ``NNN-<path>`` (``001-v1-responses``)."""
        return f"{self.number:03d}-{self.path.strip('/').replace('/', '-') or 'root'}"


OnRecord = Callable[[Record], None]
OnPassthrough = Callable[[str, str, "int | None", str], None]  # method, path, status, note
OnForward = Callable[[float], None]  # seconds one chunk took from the upstream's read to the client's send

QUEUE_FULL_NOTE = ("not checked: the checker fell behind and its queue was full (--check-queue); "
                   "the answer was forwarded untouched")


def _nothing(*args: Any) -> None:
    pass


def settle(findings: Sequence[Finding], engine: Mapping[str, Any]) -> list[Finding]:
    """Profile, --select and --ignore applied to findings made outside the engine (the RPL ones)."""
    profile: Profile = engine.get("profile") or OPENAI
    select = tuple(s.upper() for s in engine.get("select") or ())
    ignore = tuple(s.upper() for s in engine.get("ignore") or ())
    out = []
    for finding in findings:
        code = finding.code
        if not profile.is_enabled(code) or (select and not code.startswith(select)) or \
                (ignore and code.startswith(ignore)):
            continue
        out.append(profile.apply(finding))
    return out


class _Inflater:
    """Decodes a gzip/deflate body for the checker side (the client gets the raw bytes)."""

    def __init__(self, encoding: str | None) -> None:
        name = (encoding or "").strip().lower()
        self.supported = name in ("", "identity", "gzip", "x-gzip", "deflate")
        # 32 + MAX_WBITS: zlib or gzip header, detected
        self._z = zlib.decompressobj(32 + zlib.MAX_WBITS) if name in ("gzip", "x-gzip", "deflate") else None

    def decode(self, chunk: bytes) -> bytes:
        return self._z.decompress(chunk) if self._z is not None else chunk

    def flush(self) -> bytes:
        return self._z.flush() if self._z is not None else b""


class Watch:
    """The checker side of one watched exchange. Nothing here may raise into the forwarding: every
    entry point catches, and the first failure stops the checking of this exchange with an SSE099."""

    def __init__(self, proxy: Proxy, record: Record, request: dict[str, Any] | None,
                 headers: list[tuple[str, str]], url: str, *, begin: bool = True) -> None:
        self.proxy = proxy
        self.record = record
        self.request = request
        self.redact = Redactor(secrets_of_headers(headers))
        self.request_headers = headers
        self.url = url
        self.started_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
        self.start = time.monotonic()
        self.timings: dict[str, Any] = {}
        self.failure: str | None = None  # the lint side failed: checking of this exchange stopped
        self.skipped: str | None = None  # why the answer is not checked at all (an encoding it cannot read)
        self.history_failure: str | None = None  # the history side failed: no RPL findings
        self.history: list[Finding] = []
        self.live: list[Finding] = []
        self.linter: ExchangeLinter | None = None
        self.collector: OutcomeCollector | None = None
        self.sink: BodySink | None = None
        self.inflater = _Inflater(None)
        self.response_headers: list[tuple[str, str]] = []
        self.reason = ""
        self.http_version = "HTTP/1.1"
        self._events = 0
        self._last_event: float | None = None
        self._terminal_at: float | None = None
        self._tail = b""
        if begin:  # the proxy queues it instead, so that the tracker is only touched by the checker thread
            self.begin()

    def _guard(self, step: Callable[..., Any], *args: Any) -> Any:
        if self.failure is not None or self.skipped is not None:
            return None
        try:
            return step(*args)
        except Exception as exc:  # noqa: BLE001 - the checker must never touch the traffic
            self.failure = f"{type(exc).__name__}: {exc}"
            return None

    @property
    def engine(self) -> dict[str, Any]:
        return dict(self.proxy.config.engine)

    def begin(self) -> None:
        # The history checks fail on their own: a bug there costs the RPL findings, not the lint.
        try:
            if self.request is not None:
                self.record.exchange, found = self.proxy.tracker.begin(
                    self.record.number, self.record.api, self.request, self.request_headers)
                self.history.extend(found)
        except Exception as exc:  # noqa: BLE001
            self.history_failure = f"{type(exc).__name__}: {exc}"

    # -- the answer ------------------------------------------------------------------------------

    def headers(self, response: httpx.Response, now: float | None = None) -> None:
        self._guard(self._headers, response, time.monotonic() if now is None else now)

    def _headers(self, response: httpx.Response, now: float) -> None:
        self.timings["headers"] = now - self.start
        self.record.status = response.status_code
        self.reason = response.reason_phrase
        self.http_version = response.http_version
        self.response_headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in response.headers.raw]
        self.inflater = _Inflater(response.headers.get("content-encoding"))
        if not self.inflater.supported:  # not a checker failure: a body it cannot read
            self.record.skipped = "encoding"
            self.skipped = (f"Content-Encoding {response.headers.get('content-encoding')!r}: passed on, "
                            "not checked (only gzip and deflate are decoded for checking)")
            return
        self.linter = ExchangeLinter(self._meta_head(), request=self.request, **self.engine)
        target = None
        if self.proxy.config.save_dir is not None:
            target = self.proxy.config.save_dir / f"{self.record.number:03d}.sse"
        self.sink = BodySink(target, self.redact)
        if self.record.streamed and 200 <= response.status_code < 300:
            self.collector = OutcomeCollector(self.record.api)

    def _meta_head(self) -> dict[str, Any]:
        # The URL tells ExchangeLinter which endpoint answered (a chat one's stream is not a Responses one).
        return {"expect": self._expect(), "status": self.record.status, "limits": self._limits().as_dict(),
                "url": self.redact.url(self.url)}

    def _expect(self) -> str:
        return "stream" if self.record.streamed else "nonstream"

    def _limits(self) -> ProbeLimits:
        engine_limits = self.proxy.config.engine.get("limits") or Limits()
        return ProbeLimits(connect_timeout=self.proxy.config.connect_timeout,
                           max_bytes=engine_limits.max_bytes, max_events=engine_limits.max_events)

    def feed(self, raw: bytes, now: float | None = None) -> None:
        self._guard(self._feed, raw, time.monotonic() if now is None else now)

    def overflow(self) -> None:
        """The checker fell behind: this exchange is not checked (its bytes were forwarded all the same)."""
        if self.skipped is None:
            self.skipped = QUEUE_FULL_NOTE
            self.record.skipped = "queue-full"
            if self.sink is not None:
                self.sink.discard()
                self.sink = None

    def _feed(self, raw: bytes, now: float) -> None:
        if _TEST_CHECKER:
            _test_checker()
        if "first_byte" not in self.timings:
            self.timings["first_byte"] = now - self.start
        self._take(self.inflater.decode(raw), now)

    def _take(self, data: bytes, now: float) -> None:
        """Decoded body bytes to the capture, the linter and the outcome collector."""
        if not data or self.linter is None or self.sink is None:
            return
        offset = self.sink.size
        self.sink.write(data)
        self.live.extend(self.linter.feed(data))
        if self.collector is not None:
            self.collector.feed(data)
        if "first_delta" not in self.timings and _DELTA.search(self._tail + data):
            self.timings["first_delta"] = now - self.start
        self._tail = (self._tail + data)[-16:]
        events = self.linter.events
        if events > self._events:
            if self._last_event is None:
                self.timings["first_event"] = now - self.start
            elif now - self._last_event > self.timings.get("largest_gap", 0.0):
                self.timings["largest_gap"] = now - self._last_event
                self.timings["largest_gap_at_byte"] = offset
            self._last_event, self._events = now, events
        if self._terminal_at is None and self.linter.terminated:
            self._terminal_at = now
            self.timings["terminal"] = now - self.start

    # -- the end ---------------------------------------------------------------------------------

    def finish(self, ending: str, detail: str = "", now: float | None = None) -> Record:
        """Close the checking (whatever happened) and return the record."""
        try:
            self._finish(ending, detail, time.monotonic() if now is None else now)
        except Exception as exc:  # noqa: BLE001 - as above: report, never raise
            self.failure = self.failure or f"{type(exc).__name__}: {exc}"
            if self.sink is not None:
                self.sink.discard()
            self.record.note = f"sse-check could not check this exchange ({self.failure})"
        return self.record

    def _finish(self, ending: str, detail: str, now: float) -> None:
        if self.skipped is not None:
            if self.record.exchange is not None and self.history_failure is None:
                self.proxy.tracker.finish(self.record.exchange, None)
            self.record.note = self.skipped
            return
        if self.linter is not None and self.failure is None:
            tail = self._guard(self.inflater.flush)
            if tail:
                self._guard(self._take, tail, now)
        if self._terminal_at is not None and ending == "complete":
            self.timings["closed_after_terminal"] = now - self._terminal_at
        self.timings["total"] = now - self.start
        if self.linter is None and self.failure is None:  # no answer headers: a connect error, a cut
            self.linter = ExchangeLinter(self._meta_head(), request=self.request, **self.engine)
        sink = self.sink or BodySink(None, self.redact)
        scenario = Scenario(name=f"{self.record.number:03d}", body=self.request or {},
                            expect=self._expect(),  # type: ignore[arg-type]
                            summary=f"{self.record.method} {self.record.path} through sse-check proxy",
                            source="proxy")
        meta = build_meta(
            scenario=scenario, url=self.redact.url(self.url), request=self.redact.value(self.request or {}),
            request_headers=self.redact.headers(self.request_headers, request=True), status=self.record.status,
            reason=self.reason, http_version=self.http_version, headers=self.redact.headers(self.response_headers),
            ending=ending, detail=self.redact.text(detail), size=sink.size,
            events=self.linter.events if self.linter is not None else 0,
            timings=self.timings, limits=self._limits(), started_at=self.started_at,
        )
        meta = json.loads(json.dumps(meta))  # exactly what is saved, and what lint reads back
        if self.failure is None and self.linter is not None:
            result = self.linter.close(meta)
        else:  # the checking stopped part-way: what it found until then, and why it stopped
            result = LintResult(findings=list(self.live), events=meta["events"], bytes=sink.size, terminal=None,
                                response_id=None, profile=self.proxy.profile.name)
        history = list(self.history)
        outcome = self._outcome(sink, ending)
        if self.record.exchange is not None and self.history_failure is None:
            try:
                history += self.proxy.tracker.finish(self.record.exchange, outcome)
            except Exception as exc:  # noqa: BLE001
                self.history_failure = f"{type(exc).__name__}: {exc}"
        findings = [*settle(history, self.proxy.config.engine), *result.findings]
        failure = self.failure or self.history_failure
        if failure is not None:
            stopped = "checking" if self.failure else "the history checks"
            findings.append(framing.CHECKER_ERROR.finding(
                Position(line=1, byte=0), error=f"{failure}; the proxy stopped {stopped} for this exchange"))
        findings = sorted((self.redact.finding(f) for f in findings), key=lambda f: (f.position.byte, f.position.line))
        info = http_info(meta)
        failing = any(f.severity >= self.proxy.config.fail_on for f in findings)
        if self.proxy.config.save_dir is not None and self.failure is None and self.proxy.sampled(failing):
            self.record.saved = sink.commit()
            save_sidecars(self.proxy.config.save_dir, scenario, meta, None)
            info["saved"] = str(self.record.saved)
        else:
            sink.discard()
        self.record.result = ProxyLintResult(
            **{f.name: getattr(result, f.name) for f in dataclasses.fields(LintResult)}, http=info,
            proxy=self._proxy_info(outcome))
        self.record.result.findings = findings

    def _outcome(self, sink: BodySink, ending: str) -> Outcome | None:
        status = self.record.status
        if status is None or not 200 <= status < 300 or self.failure is not None:
            return None
        if self.collector is not None:
            return self.collector.close()
        if not self.record.streamed and ending == "complete" and sink.complete_in_memory:
            return outcome_from_json(self.record.api, bytes(sink.memory))
        return None

    def _proxy_info(self, outcome: Outcome | None) -> dict[str, Any]:
        exchange = self.record.exchange
        info: dict[str, Any] = {"number": self.record.number, "method": self.record.method,
                                "path": self.record.path, "api": self.record.api, "streamed": self.record.streamed}
        if exchange is not None:
            info["conversation"] = exchange.conversation.id
            info["conversation_label"] = exchange.conversation.label
            info["step"] = exchange.step
            info["predecessor"] = exchange.predecessor.number if exchange.predecessor else None
        if outcome is not None and outcome.usage is not None:
            info["usage"] = outcome.usage.as_dict()
        return info


class Proxy:
    """The ASGI application; ``records`` holds every watched exchange once it has ended."""

    def __init__(self, config: ProxyConfig, *, on_record: OnRecord = _nothing,
                 on_passthrough: OnPassthrough = _nothing, on_forward: OnForward | None = None) -> None:
        self.config = config
        self.upstream = httpx.URL(config.upstream)
        self.profile: Profile = config.engine.get("profile") or OPENAI
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
        self._client: httpx.AsyncClient | None = None
        self._closing: asyncio.Event | None = None

    # -- lifecycle -------------------------------------------------------------------------------

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            timeout = httpx.Timeout(connect=self.config.connect_timeout, read=None, write=None, pool=None)
            self._client = httpx.AsyncClient(timeout=timeout, follow_redirects=False, trust_env=False,
                                             limits=httpx.Limits(max_connections=None, max_keepalive_connections=32))
            for name in list(self._client.headers.keys()):  # no Accept, User-Agent, … of our own
                del self._client.headers[name]
        return self._client

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
        if self._client is not None:
            await self._client.aclose()
            self._client = None

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
        api = api_of(path)
        watch = None
        if api is not None and request is not None:
            self._numbers += 1
            record = Record(number=self._numbers, method=method, path=path, api=api,
                            streamed=request.get("stream") is True)
            watch = Watch(self, record, request, headers, str(url), begin=False)
            self.checking.control(watch.begin)
        forwarded = _end_to_end(scope["headers"], _NOT_FORWARDED)
        status, ending, detail = await self._exchange(method, url, forwarded, body, receive, send,
                                                      _Tee(watch, self.checking) if watch else None)
        if watch is None:
            note = "not a Responses or chat request: passed through unchecked" if api is None else \
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

    def _url(self, scope: Scope) -> httpx.URL:
        prefix = self.upstream.raw_path.split(b"?", 1)[0].rstrip(b"/")
        raw_path = scope.get("raw_path") or scope["path"].encode("utf-8")
        query = scope.get("query_string") or b""
        return self.upstream.copy_with(raw_path=prefix + raw_path + (b"?" + query if query else b""))

    async def _exchange(self, method: str, url: httpx.URL, headers: list[tuple[bytes, bytes]], body: bytes,
                        receive: Receive, send: Send, watch: _Tee | None) -> tuple[int | None, str, str]:
        """Forward one request and its answer; (status, ending, detail) as the meta records them."""
        client = self._http()
        request = client.build_request(method, url, headers=headers, content=body)
        sending = asyncio.ensure_future(client.send(request, stream=True))
        reason = await self._first(sending, receive)
        if reason is not None:
            await _cancel(sending)
            return None, "interrupted", reason
        try:
            try:
                response = sending.result()
            except httpx.HTTPError as exc:
                if not is_unanswered(exc):
                    raise
                # The upstream closed a kept-alive connection of this proxy's pool under the request (HTP019):
                # nothing was answered, so send it once more on a new connection rather than fail a request
                # that the client, connected directly, would have got an answer to.
                sending = asyncio.ensure_future(client.send(client.build_request(method, url, headers=headers,
                                                                                 content=body), stream=True))
                reason = await self._first(sending, receive)
                if reason is not None:
                    await _cancel(sending)
                    return None, "interrupted", reason
                response = sending.result()
        except httpx.HTTPError as exc:
            kind = "tls-error" if is_tls_error(exc) else "connect-error" if isinstance(
                exc, (httpx.ConnectError, httpx.ConnectTimeout)) else "disconnect"
            detail = transport_error_text(exc)
            await _send_error(send, f"sse-check proxy: the upstream {self.upstream} failed: {detail}")
            return None, kind, detail
        try:
            if watch is not None:
                watch.headers(response)
            await send({"type": "http.response.start", "status": response.status_code,
                        "headers": _end_to_end(response.headers.raw, _NOT_RETURNED)})
            pump = asyncio.ensure_future(_pump(response, send, watch, self.on_forward))
            reason = await self._first(pump, receive)
            if reason is not None:
                await _cancel(pump)
                return response.status_code, "interrupted", reason
            ending, detail = pump.result()
            return response.status_code, ending, detail
        finally:
            with contextlib.suppress(Exception):
                await asyncio.shield(response.aclose())  # closes the upstream connection if unread

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


def _test_checker() -> None:
    kind, _, value = _TEST_CHECKER.partition(":")
    if kind == "slow":
        time.sleep(float(value or 0.1))
    elif kind == "fail":
        raise RuntimeError("the checker failed (SSE_CHECK_TEST_CHECKER=fail)")


class _Tee:
    """The forwarding side's handle on a watched exchange: it queues the checker's steps, never runs them."""

    __slots__ = ("watch", "queue", "overflowed")

    def __init__(self, watch: Watch, queue: CheckQueue) -> None:
        self.watch, self.queue, self.overflowed = watch, queue, False

    def headers(self, response: httpx.Response) -> None:
        self.queue.control(self.watch.headers, response, time.monotonic())

    def feed(self, chunk: bytes, now: float) -> None:
        if self.overflowed:
            return
        try:
            if not self.queue.submit(self.watch.feed, chunk, now, size=len(chunk)):
                self.overflowed = True  # the rest of this answer is forwarded unchecked
                self.queue.control(self.watch.overflow)
        except Exception:  # noqa: BLE001 - the forwarding goes on whatever the checker side does
            self.overflowed = True


async def _pump(response: httpx.Response, send: Send, watch: _Tee | None,
                on_forward: OnForward | None) -> tuple[str, str]:
    """Copy the answer's raw bytes to the client; each chunk is then queued for the checker."""
    clock = time.monotonic
    try:
        async for chunk in response.aiter_raw():
            if not chunk:
                continue
            read = clock()
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
            if on_forward is not None:
                on_forward(clock() - read)
            if watch is not None:
                watch.feed(chunk, read)
    except httpx.HTTPError as exc:
        # The upstream cut the body: return without ending ours, so the server closes the client's
        # connection mid-body and the client sees the cut too.
        return "disconnect", transport_error_text(exc)
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
        if isinstance(result, httpx.Response):
            with contextlib.suppress(Exception):
                await result.aclose()


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

