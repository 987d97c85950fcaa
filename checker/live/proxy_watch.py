"""The proxy's checking side: one :class:`Watch` per watched exchange, fed by the proxy's checker thread.

A :class:`Watch` tees the answer's bytes (decoded if the upstream compressed them) into a
:class:`checker.http_checks.ExchangeLinter`, the pipeline of ``sse-check probe`` and ``sse-check lint``, into
an :class:`checker.live.outcome.OutcomeCollector` for the history checks (:mod:`checker.live.history`) and into
a capture (:class:`checker.live.saving.BodySink`); its timings are kept by the probe's
:class:`checker.live.timing.ExchangeTimer` and its record is the probe's
:class:`checker.exchange_meta.ExchangeMeta`. Nothing here may raise into the forwarding: every entry point
catches, and the first failure stops the checking of that exchange with an SSE099 finding.
"""

from __future__ import annotations

import json
import os
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from checker.engine import EngineOptions, LintResult
from checker.exchange_meta import Ending, ExchangeMeta, header_of
from checker.findings import Finding, Position, Severity
from checker.http_checks import ExchangeLinter
from checker.live.checking import DEFAULT_CAPACITY
from checker.live.history import Exchange, Tracker
from checker.live.outcome import Api, Outcome, OutcomeCollector, outcome_from_json
from checker.live.probe import ProbeLimits, ProbeLintResult, recorded_meta, http_info
from checker.live.redact import Redactor, secrets_of_headers
from checker.live.retry import client_retry
from checker.live.saving import BodySink, save_sidecars
from checker.live.settle import settle
from checker.live.timing import ExchangeTimer
from checker.live.upstream import UpstreamHead
from checker.profiles import OPENAI, Profile
from checker.rules import framing

DEFAULT_CONNECT_TIMEOUT = 10.0
# A test hook, for the tests that run the real proxy process with a checker that is slow ("slow:SECONDS"
# per body chunk) or fails ("fail"): they show that neither reaches the traffic.
_TEST_CHECKER = os.environ.get("SSE_CHECK_TEST_CHECKER", "")

@dataclass(frozen=True, kw_only=True)
class ProxyConfig:
    upstream: str  # base URL: scheme, host, port and an optional path prefix
    engine: EngineOptions = EngineOptions()  # profile, select, ignore, limits (checker.commands.common)
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


class Owner(Protocol):
    """What a :class:`Watch` needs of its proxy (checker.live.proxy.Proxy)."""

    config: ProxyConfig
    tracker: Tracker
    profile: Profile

    def sampled(self, failing: bool) -> bool: ...


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

    def __init__(self, proxy: Owner, record: Record, request: dict[str, Any] | None,
                 headers: list[tuple[str, str]], url: str, *, begin: bool = True) -> None:
        self.proxy = proxy
        self.record = record
        self.request = request
        self.redact = Redactor(secrets_of_headers(headers))
        self.request_headers = headers
        self.url = url
        self.timer = ExchangeTimer(time.monotonic())
        self.meta = ExchangeMeta(
            scenario=f"{record.number:03d}", summary=f"{record.method} {record.path} through sse-check proxy",
            expect="stream" if record.streamed else "nonstream", url=self.redact.url(url),
            started_at=datetime.now(timezone.utc).isoformat(timespec="seconds"), limits=self._limits().as_dict())
        self.failure: str | None = None  # the lint side failed: checking of this exchange stopped
        self.skipped: str | None = None  # why the answer is not checked at all (an encoding it cannot read)
        self.history_failure: str | None = None  # the history side failed: no RPL findings
        self.history: list[Finding] = []
        self.live: list[Finding] = []
        self.linter: ExchangeLinter | None = None
        self.collector: OutcomeCollector | None = None
        self.sink: BodySink | None = None
        self.inflater = _Inflater(None)
        if begin:  # the proxy queues it instead, so that the tracker is only touched by the checker thread
            self.begin()

    @property
    def timings(self) -> dict[str, Any]:
        return self.timer.timings

    def _guard(self, step: Callable[..., Any], *args: Any) -> Any:
        if self.failure is not None or self.skipped is not None:
            return None
        try:
            return step(*args)
        except Exception as exc:  # noqa: BLE001 - the checker must never touch the traffic
            self.failure = f"{type(exc).__name__}: {exc}"
            return None

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

    def headers(self, response: UpstreamHead, now: float | None = None) -> None:
        self._guard(self._headers, response, time.monotonic() if now is None else now)

    def _headers(self, response: UpstreamHead, now: float) -> None:
        self.timer.headers(now)
        self.record.status = self.meta.status = response.status_code
        self.meta.reason = response.reason_phrase
        self.meta.http_version = response.http_version
        self.meta.headers = [[k.decode("latin-1"), v.decode("latin-1")] for k, v in response.raw]
        encoding = header_of(self.meta.headers, "content-encoding")
        self.inflater = _Inflater(encoding)
        if not self.inflater.supported:  # not a checker failure: a body it cannot read
            self.record.skipped = "encoding"
            self.skipped = (f"Content-Encoding {encoding!r}: passed on, "
                            "not checked (only gzip and deflate are decoded for checking)")
            return
        self.linter = self._linter()
        target = None
        if self.proxy.config.save_dir is not None:
            target = self.proxy.config.save_dir / f"{self.record.number:03d}.sse"
        self.sink = BodySink(target, self.redact)
        if self.record.streamed and 200 <= response.status_code < 300:
            self.collector = OutcomeCollector(self.record.api)

    def _linter(self) -> ExchangeLinter:
        # The URL tells ExchangeLinter which endpoint answered (a chat one's stream is not a Responses one).
        head = {"expect": self.meta.expect, "status": self.meta.status, "limits": self.meta.limits,
                "url": self.meta.url}
        return ExchangeLinter(head, self.proxy.config.engine, request=self.request)

    def _limits(self) -> ProbeLimits:
        engine_limits = self.proxy.config.engine.limits
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
        self.timer.first_byte(now)
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
        self.timer.body(data, now, offset=offset, events=self.linter.events, terminated=self.linter.terminated)

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
        if ending == "complete":
            self.timer.body_ended(now)
        self.timer.finish(now)
        if self.linter is None and self.failure is None:  # no answer headers: a connect error, a cut
            self.linter = self._linter()
        sink = self.sink or BodySink(None, self.redact)
        meta = self._record(ending, detail, sink)
        if self.failure is None and self.linter is not None:
            result = self.linter.close(meta.to_json())
        else:  # the checking stopped part-way: what it found until then, and why it stopped
            result = LintResult(findings=list(self.live), events=meta.events, bytes=sink.size, terminal=None,
                                response_id=None, profile=self.proxy.profile.name)
        outcome = self._outcome(sink, ending)
        findings = self._findings(result, outcome)
        info = http_info(meta)
        failing = any(f.severity >= self.proxy.config.fail_on for f in findings)
        if self.proxy.config.save_dir is not None and self.failure is None and self.proxy.sampled(failing):
            self.record.saved = sink.commit()
            save_sidecars(self.proxy.config.save_dir, f"{self.record.number:03d}", meta, None)
            info["saved"] = str(self.record.saved)
        else:
            sink.discard()
        recorded = ProxyLintResult.of(result, info)
        recorded.proxy = self._proxy_info(outcome)
        recorded.findings = findings
        self.record.result = recorded

    def _record(self, ending: str, detail: str, sink: BodySink) -> ExchangeMeta:
        """The meta as saved (redacted) and as lint reads it back."""
        meta, redact = self.meta, self.redact
        meta.request = redact.value(self.request or {})
        meta.request_headers = redact.headers(self.request_headers, request=True)
        meta.headers = redact.headers([(k, v) for k, v in meta.headers])
        meta.ending = Ending(ending, redact.text(detail), sink.size)
        meta.events = self.linter.events if self.linter is not None else 0
        meta.timings = self.timer.timings
        # A refusal that the client's SDK will send again by itself: HTP025, not HTP001 (the client never sees
        # it unless its retries run out, and the proxy judges each retry as it comes).
        meta.retry = client_retry(meta.status, meta.headers, self.request_headers, self.record.api,
                                  time.time()) or {}
        return recorded_meta(meta)

    def _findings(self, result: LintResult, outcome: Outcome | None) -> list[Finding]:
        """The history's findings (RPL, profile applied) and the lint's, with SSE099 if a side failed."""
        history = list(self.history)
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
        return sorted((self.redact.finding(f) for f in findings), key=lambda f: (f.position.byte, f.position.line))

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


def _test_checker() -> None:
    kind, _, value = _TEST_CHECKER.partition(":")
    if kind == "slow":
        time.sleep(float(value or 0.1))
    elif kind == "fail":
        raise RuntimeError("the checker failed (SSE_CHECK_TEST_CHECKER=fail)")
