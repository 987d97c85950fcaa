"""The live prober: each scenario is one HTTP exchange, teed into the engine and a capture as it arrives.

Theory of operation
-------------------
:func:`probe_scenario` POSTs one scenario's request with httpx and reads the raw body (after HTTP
de-chunking, without content decoding: ``Accept-Encoding: identity``) chunk by chunk. Every chunk goes,
as it arrives, to an :class:`checker.http_checks.ExchangeLinter` (a :class:`checker.engine.StreamLinter`
for a stream: the same decoder and state machine as ``sse-check lint``) and to the capture buffer. The
clock is read here and only here: time to the headers, to the first body byte, to the first event and the
first ``*.delta``, the largest gap between events, the time from the terminal event to the end of the body.

Every wait is bounded (:class:`ProbeLimits`): the connection (``connect_timeout``), the headers and the
first body byte (``first_byte_timeout``, from the start), each later byte (``idle_timeout``), the whole
exchange (``total_timeout``), and the end of the body once the terminal event has arrived
(``close_timeout``, codex PR #9170). So are the bytes and events read (``max_bytes``, ``max_events``).
Whatever ends the exchange, every byte received is kept; how it ended becomes the meta's ``ending``.

Then the exchange is written down as a plain record, the *meta* (:class:`checker.exchange_meta.ExchangeMeta`),
and the verdict is computed from the meta and the bytes by :meth:`ExchangeLinter.close`, exactly as
``sse-check lint`` computes it from the saved ``X.sse`` and ``X.meta.json``. With ``save_dir`` both are
written atomically (:mod:`checker.live.saving`). The timings are kept by :class:`checker.live.timing.ExchangeTimer`,
as the proxy keeps them.

Secrets (the API key, sensitive header values, URL credentials) are masked by a
:class:`checker.live.redact.Redactor` in
everything recorded: the meta, the findings, and the saved body (where a secret is masked with as many
``*`` as it has characters, so byte offsets stay true).

Requests carry ``X-SSE-Check-Scenario: NAME``; a replay server (``sse-check serve``) that has no capture
of that name answers 404 ``scenario_not_found``, and the next of the scenario's replay names is tried; when
none is left the scenario is *skipped*, not failed. A run of many scenarios is :mod:`checker.live.probe_run`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import time
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Self, cast

import httpx

from checker.engine import EngineOptions, Limits, LintResult
from checker.exchange_meta import ENDINGS, Ending, ExchangeMeta, header_of
from checker.findings import Finding
from checker.http_checks import ExchangeLinter
from checker.live import adapters
from checker.live.connection import (
    CloseWatch,
    announces_close,
    is_framed,
    is_tls_error,
    is_unanswered,
    transport_error_text,
)
from checker.live.endpoints import endpoint, endpoint_for
from checker.live.redact import Redactor, secrets_of_headers
from checker.live.retry import DEFAULT_RETRIES
from checker.live.saving import BodySink, save_sidecars
from checker.live.scenarios import Scenario
from checker.live.timing import ExchangeTimer
from checker.version import __version__

SCENARIO_HEADER = "x-sse-check-scenario"

# Defaults: generous enough for a slow CPU server's first token, short enough to end a hung probe.
DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_FIRST_BYTE_TIMEOUT = 60.0
DEFAULT_IDLE_TIMEOUT = 30.0
DEFAULT_TOTAL_TIMEOUT = 300.0
DEFAULT_CLOSE_TIMEOUT = 2.0
# The caps are the engine's limits (--max-bytes, --max-events): the probe stops reading once a stream is
# past them, since nothing after that point would be checked.
DEFAULT_MAX_BYTES = Limits().max_bytes
DEFAULT_MAX_EVENTS = Limits().max_events


@dataclass(frozen=True, slots=True, kw_only=True)
class ProbeLimits:
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    first_byte_timeout: float = DEFAULT_FIRST_BYTE_TIMEOUT
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT
    total_timeout: float = DEFAULT_TOTAL_TIMEOUT
    close_timeout: float = DEFAULT_CLOSE_TIMEOUT
    max_bytes: int = DEFAULT_MAX_BYTES
    max_events: int = DEFAULT_MAX_EVENTS

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


# --- the target ------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ProbeConfig:
    url: str  # the endpoint POSTed to (see endpoint())
    model: str
    headers: tuple[tuple[str, str], ...] = ()  # added to every request (auth, user headers)
    redactor: Redactor = field(default_factory=Redactor)
    verify: bool = True
    limits: ProbeLimits = ProbeLimits()
    engine: EngineOptions = EngineOptions()  # profile, select, ignore, limits (checker.commands.common)
    save_dir: Path | None = None
    retries: int = DEFAULT_RETRIES  # after a 429, 503, …: checker.live.retry_run

    def url_for(self, api: str) -> str:
        """The endpoint of dialect ``api`` beside :attr:`url` (``…/v1/chat/completions`` beside
        ``…/v1/responses``); :attr:`url` itself when it already is that dialect's."""
        return endpoint_for(self.url, adapters.get(api).endpoint)


# --- results ---------------------------------------------------------------------------------------------


@dataclass(slots=True, kw_only=True)
class ProbeLintResult(LintResult):
    """A lint result with the HTTP facts of its exchange, for reporters that show them."""

    http: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, result: LintResult, http: dict[str, Any]) -> Self:
        """``result`` with the HTTP facts ``http``."""
        return cls(**{f.name: getattr(result, f.name) for f in dataclasses.fields(LintResult)}, http=http)


@dataclass(slots=True, kw_only=True)
class ScenarioResult:
    scenario: Scenario
    result: ProbeLintResult | None = None  # None when skipped
    meta: ExchangeMeta | None = None
    body: bytes = b""  # as saved (secrets masked), up to checker.live.saving.KEEP_IN_MEMORY bytes
    complete_body: bool = True  # whether ``body`` holds the whole body
    live: list[Finding] = field(default_factory=list)  # findings reported while the body arrived
    gaps: list[float] = field(default_factory=list)  # every inter-event gap, s (checker.live.timing)
    attempts: list[ScenarioResult] = field(default_factory=list)  # answers retried before this one (retry_run)
    skipped: str | None = None
    saved: Path | None = None

    @property
    def ending(self) -> str | None:
        return self.meta.ending.kind if self.meta else None


# on_progress(scenario name, phase, bytes received, events) with phase "start", "headers", "body", "done"
Progress = Callable[[str, str, int, int], None]


def no_progress(name: str, phase: str, received: int, events: int) -> None:
    """A :data:`Progress` that shows nothing."""


@dataclass(frozen=True, slots=True)
class ScenarioContext:
    """What one scenario's probe takes besides the scenario and the run's config, as one value that the layers
    between the run and :func:`probe_scenario` (the retries of checker.live.retry_run) pass on untouched."""

    reference: dict[str, Any] | None = None  # the parity reference of a stream: false scenario (its pair's output)
    progress: Progress = no_progress
    on_interrupt: Callable[[ScenarioResult], None] | None = None  # what arrived before a cancellation
    on_status: Callable[[int], None] | None = None  # the status, as soon as the headers are in
    # the meta as recorded, before the verdict: the retries (checker.live.retry_run) note there that this answer
    # is retried, which the verdict depends on (HTP025 instead of HTP001)
    on_meta: Callable[[ExchangeMeta], None] | None = None


# --- one exchange ----------------------------------------------------------------------------------------


async def probe_scenario(
    client: httpx.AsyncClient,
    scenario: Scenario,
    config: ProbeConfig,
    context: ScenarioContext = ScenarioContext(),
) -> ScenarioResult:
    """Run one scenario (trying its replay names in turn against a replay server). When the task is cancelled
    (Ctrl-C, SIGTERM) mid-exchange, what arrived is kept (and saved), handed to ``context.on_interrupt``, and
    the cancellation goes on."""
    names = scenario.replay_names
    for name in names:
        exchange = _Exchange(client, scenario, name, config, context.reference, context.progress)
        exchange.on_status = context.on_status
        exchange.on_meta = context.on_meta
        result = await exchange.run()
        if result is not None:
            if exchange.interrupted:
                if context.on_interrupt is not None:
                    context.on_interrupt(result)
                raise asyncio.CancelledError
            return result
    tried = ", ".join(names)
    context.progress(scenario.name, "done", 0, 0)
    return ScenarioResult(scenario=scenario,
                          skipped=f"the replay server has no capture for this scenario (tried {tried})")


class _Exchange:
    """One request of a scenario under one replay name, from sending it to its :class:`ScenarioResult`."""

    def __init__(self, client: httpx.AsyncClient, scenario: Scenario, replay_name: str, config: ProbeConfig,
                 reference: dict[str, Any] | None, progress: Progress) -> None:
        self.client, self.scenario, self.config = client, scenario, config
        self.reference, self.progress = reference, progress
        self.limits = config.limits
        self.redact = config.redactor.with_secrets(secrets_of_headers(scenario.headers))
        self.request = scenario.sent(config.model)
        self.url = scenario.url or (config.url if scenario.api is None else config.url_for(scenario.api))
        self.headers = [
            *([("Content-Type", "application/json")] if self.request is not None else []),
            ("Accept", "text/event-stream" if scenario.stream else "application/json"),
            ("Accept-Encoding", "identity"),
            ("User-Agent", f"sse-check/{__version__}"),
            ("X-SSE-Check-Scenario", replay_name),
            *config.headers,
            *scenario.headers,
        ]
        self.started_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
        self.timer = ExchangeTimer(time.monotonic())
        self.live: list[Finding] = []
        self.ending, self.detail = "complete", ""
        self.response: httpx.Response | None = None
        self.meta = ExchangeMeta(expect=scenario.expect, limits=self.limits.as_dict(), started_at=self.started_at,
                                 http_version="")  # no answer: no version
        self.connection: dict[str, Any] = {"closed_by_server": None, "closed_after": None, "retried": None}
        target = config.save_dir / f"{scenario.name}.sse" if config.save_dir is not None else None
        if target is not None:
            target.parent.mkdir(parents=True, exist_ok=True)  # chat/plain_text.sse: a folder per dialect
        self.sink = BodySink(target, self.redact)
        self.linter: ExchangeLinter | None = None
        self.interrupted = False
        self.on_status: Callable[[int], None] | None = None  # told the status as soon as the headers are in
        self.on_meta: Callable[[ExchangeMeta], None] | None = None  # shown the meta before the verdict

    async def run(self) -> ScenarioResult | None:
        """The exchange and its verdict; None when a replay server has no capture of this name."""
        self.progress(self.scenario.name, "start", 0, 0)
        try:
            watch = await self._send()
            self.linter = self._linter()
            if self.response is not None:
                await self._read(watch)
        except asyncio.CancelledError:
            self.interrupted = True
            self.ending, self.detail = "interrupted", "the probe was interrupted"
        except BaseException:
            self.sink.discard()
            raise
        finally:
            if self.response is not None:
                with contextlib.suppress(Exception):
                    await asyncio.shield(self.response.aclose())
        if self.linter is None:
            self.linter = self._linter()
        self.timer.finish(time.monotonic())
        if not self.interrupted and _not_replayed(self.meta.status, self.meta.headers, self.sink.memory):
            self.sink.discard()
            return None  # try the next replay name; after the last one the scenario is skipped
        return self._result(self.linter)

    def _linter(self) -> ExchangeLinter:
        # Status and expect decide, at the first byte, whether the body is a stream; the URL, its dialect.
        head = {"expect": self.meta.expect, "status": self.meta.status, "limits": self.meta.limits,
                "url": self.redact.url(self.url)}
        return ExchangeLinter(head, self.config.engine, request=self.request)

    async def _send(self) -> CloseWatch:
        """Send the request and wait for the headers (under the first-byte and total timeouts)."""
        limits, clock, start = self.limits, time.monotonic, self.timer.start
        content = json.dumps(self.request).encode() if self.request is not None else None
        request = self.client.build_request(self.scenario.method, self.url, content=content, headers=self.headers)
        watch = CloseWatch()
        watch.attach(request)
        wait = min(limits.first_byte_timeout, limits.total_timeout)
        try:
            try:
                self.response = await asyncio.wait_for(self.client.send(request, stream=True), timeout=wait)
            except httpx.HTTPError as exc:
                if not is_unanswered(exc):
                    raise
                # The server closed a kept-alive connection under the request (HTP019): send it again once,
                # on a new connection, as openai-python does, so that the scenario is still measured.
                self.connection["retried"] = transport_error_text(exc)
                try:
                    self.response = await asyncio.wait_for(self.client.send(request, stream=True),
                                                           timeout=max(wait - (clock() - start), 0.0))
                except httpx.HTTPError as again:
                    if is_unanswered(again):
                        # Unanswered on a new connection too: nothing here answers HTTP at all (a listener of
                        # another protocol), which is no kept-alive connection dropped (HTP019 said it was).
                        self.connection["retried"] = None
                    raise
        except asyncio.TimeoutError:
            self.ending = "first-byte-timeout" if limits.first_byte_timeout <= limits.total_timeout \
                else "total-timeout"
        except httpx.ConnectTimeout:
            self.ending, self.detail = "connect-error", f"connect timeout after {limits.connect_timeout:g} s"
        except httpx.ConnectError as exc:
            self.ending, self.detail = ("tls-error" if is_tls_error(exc) else "connect-error"), \
                transport_error_text(exc)
        except httpx.HTTPError as exc:
            self.ending, self.detail = "disconnect", transport_error_text(exc)
        if self.response is not None:
            self._headers(self.response, watch)
        return watch

    def _headers(self, response: httpx.Response, watch: CloseWatch) -> None:
        watch.bind(response)
        self.timer.headers(time.monotonic())
        self.meta.status, self.meta.reason = response.status_code, response.reason_phrase
        self.meta.http_version = response.http_version
        self.meta.headers = [[k.decode("latin-1"), v.decode("latin-1")] for k, v in response.headers.raw]
        self.meta.redirects = [{"status": r.status_code, "url": self.redact.url(str(r.headers.get("location", r.url)))}
                               for r in response.history]
        self.progress(self.scenario.name, "headers", 0, 0)
        if self.on_status is not None:
            self.on_status(response.status_code)

    async def _read(self, watch: CloseWatch) -> None:
        """Read the body, then see whether the server closes the connection after it (HTP019)."""
        assert self.response is not None and self.linter is not None
        name = self.scenario.name
        self.ending, self.detail = await read_body(
            self.response, self.linter, self.sink, self.live, self.timer, self.limits,
            lambda n, e: self.progress(name, "body", n, e))
        headers = [(k, v) for k, v in self.meta.headers]
        if self.ending == "complete" and is_framed(headers) and not announces_close(self.meta.http_version, headers):
            closed = await watch.closed_after_body()
            if closed is not None:
                self.connection["closed_by_server"] = closed is not False
                self.connection["closed_after"] = None if closed is False else closed

    def _result(self, linter: ExchangeLinter) -> ScenarioResult:
        """The meta as recorded (redacted), the verdict computed from it, and the saved files."""
        redact, scenario = self.redact, self.scenario
        if self.ending not in ENDINGS:
            raise ValueError(f"unknown ending {self.ending!r}")
        meta = self.meta
        meta.scenario, meta.summary = scenario.name, scenario.summary
        meta.url, meta.request = redact.url(self.url), redact.value(self.request) if self.request is not None else {}
        meta.request_headers = redact.headers(self.headers, request=True)
        meta.headers = redact.headers([(k, v) for k, v in meta.headers])
        meta.replayed_as = header_of(meta.headers, SCENARIO_HEADER)
        meta.ending = Ending(self.ending, redact.text(self.detail), self.sink.size)
        meta.events, meta.timings, meta.reference = linter.events, self.timer.timings, self.reference
        meta.connection = self.connection
        if self.on_meta is not None:
            self.on_meta(meta)
        recorded = recorded_meta(meta)
        result = linter.close(recorded.to_json())
        probe_result = ProbeLintResult.of(result, http_info(recorded))
        probe_result.findings = [redact.finding(f) for f in result.findings]
        outcome = ScenarioResult(scenario=scenario, result=probe_result, meta=recorded, body=self.sink.masked_memory(),
                                 complete_body=self.sink.complete_in_memory,
                                 live=[redact.finding(f) for f in self.live], gaps=self.timer.gaps)
        if self.config.save_dir is not None:
            outcome.saved = self.sink.commit()
            save_sidecars(self.config.save_dir, scenario.name, recorded,
                          outcome.body if outcome.complete_body else None, pair=scenario.pair)
            probe_result.http["saved"] = str(outcome.saved)
        self.progress(scenario.name, "done", self.sink.size, linter.events)
        return outcome


def recorded_meta(meta: ExchangeMeta) -> ExchangeMeta:
    """The meta exactly as saved and as lint will read it back (through JSON: rounded timings, lists)."""
    recorded = ExchangeMeta.from_json(json.loads(json.dumps(meta.to_json())))
    assert recorded is not None
    return recorded


def build_meta(
    *,
    scenario: Scenario,
    url: str,
    request: Mapping[str, Any],
    request_headers: Sequence[Sequence[str]] = (),
    status: int | None,
    reason: str = "",
    http_version: str = "HTTP/1.1",
    headers: Sequence[Sequence[str]] = (),
    redirects: Sequence[Mapping[str, Any]] = (),
    ending: str = "complete",
    detail: str = "",
    size: int,
    events: int,
    timings: Mapping[str, Any],
    limits: ProbeLimits,
    reference: Mapping[str, Any] | None = None,
    started_at: str | None = None,
    connection: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The record of one exchange as saved in ``NAME.meta.json`` (checker.exchange_meta), from its parts; for
    the tools that write captures by hand. Values must already be redacted."""
    if ending not in ENDINGS:
        raise ValueError(f"unknown ending {ending!r}")
    pairs = [[str(k), str(v)] for k, v in headers]
    return ExchangeMeta(
        scenario=scenario.name, summary=scenario.summary, expect=scenario.expect, started_at=started_at, url=url,
        request=dict(request), request_headers=[list(p) for p in request_headers], status=status, reason=reason,
        http_version=http_version, headers=pairs, redirects=[dict(r) for r in redirects],
        replayed_as=header_of(pairs, SCENARIO_HEADER), ending=Ending(ending, detail, size), events=events,
        timings=dict(timings), limits=limits.as_dict(), reference=dict(reference) if reference is not None else None,
        connection=dict(connection or {}),
    ).to_json()


async def read_body(
    response: httpx.Response,
    linter: ExchangeLinter,
    sink: BodySink,
    live: list[Finding],
    timer: ExchangeTimer,
    limits: ProbeLimits,
    progress: Callable[[int, int], None],
) -> tuple[str, str]:
    """Read the body under the limits, teeing it into ``linter`` and ``sink``; (ending kind, detail)."""
    clock = time.monotonic
    chunks = cast(AsyncGenerator[bytes, None], response.aiter_raw())  # httpx's is an async generator
    try:
        while True:
            kind, wait = _next_wait(timer, limits, clock())
            try:
                chunk = await asyncio.wait_for(chunks.__anext__(), timeout=max(wait, 0.0))
            except StopAsyncIteration:
                timer.body_ended(clock())
                return "complete", ""
            except asyncio.TimeoutError:
                return kind, ""
            except httpx.HTTPError as exc:
                return "disconnect", transport_error_text(exc)
            now = clock()
            if not chunk:
                continue
            offset = sink.size
            timer.first_byte(now)
            sink.write(chunk)
            live.extend(linter.feed(chunk))
            timer.body(chunk, now, offset=offset, events=linter.events, terminated=linter.terminated)
            progress(sink.size, linter.events)
            # Past a cap nothing more is checked (the engine says so: SSE027), so reading stops.
            if sink.size > limits.max_bytes:
                return "byte-cap", f"more than {limits.max_bytes} bytes"
            if linter.events > limits.max_events:
                return "event-cap", f"more than {limits.max_events} events"
    finally:
        with contextlib.suppress(Exception):
            await chunks.aclose()


def _next_wait(timer: ExchangeTimer, limits: ProbeLimits, now: float) -> tuple[str, float]:
    """The ending if the next read times out, and how long it may wait: the first byte's timeout (from the
    start), then the idle one, whichever of the close timeout (after the terminal event) and the total
    timeout comes first."""
    if "first_byte" in timer.timings:
        kind, wait = "idle-timeout", limits.idle_timeout
    else:
        kind, wait = "first-byte-timeout", limits.first_byte_timeout - (now - timer.start)
    terminal_at = timer.terminal_at
    if terminal_at is not None and terminal_at + limits.close_timeout - now < wait:
        kind, wait = "kept-open", terminal_at + limits.close_timeout - now
    if timer.start + limits.total_timeout - now < wait:
        kind, wait = "total-timeout", timer.start + limits.total_timeout - now
    return kind, wait


def _not_replayed(status: int | None, headers: Sequence[Sequence[str]], body: bytes | bytearray) -> bool:
    """A replay server's 404 for a scenario it has no capture of (not a replayed capture's own 404)."""
    if status != 404 or header_of(list(headers), SCENARIO_HEADER) is not None:
        return False
    try:
        error = json.loads(bytes(body)).get("error")
    except (ValueError, AttributeError, UnicodeDecodeError):
        return False
    return isinstance(error, dict) and error.get("code") == "scenario_not_found"


def http_info(meta: ExchangeMeta) -> dict[str, Any]:
    """The per-scenario HTTP facts shown by the probe's reporters (a subset of the meta)."""
    recorded = meta.to_json()
    info = {key: recorded[key] for key in ("scenario", "expect", "url", "status")}
    info["content_type"] = meta.header("content-type")
    info.update({key: recorded[key] for key in ("replayed_as", "ending", "partial", "bytes", "events", "timings")})
    if meta.expect == "nonstream":
        reference = meta.reference
        info["parity"] = (f"compared with {reference['scenario']}" if isinstance(reference, dict)
                          else "not checked (its streaming pair did not run or had no final output)")
    return info
