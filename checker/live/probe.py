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

Then the exchange is written down as a plain record, the *meta* (format: ``checker.http_checks``), and the
verdict is computed from the meta and the bytes by :meth:`ExchangeLinter.close`, exactly as ``sse-check
lint`` computes it from the saved ``X.sse`` and ``X.meta.json``. With ``save_dir`` both are written
atomically (a temporary file, then a rename).

Secrets (the API key, sensitive header values, URL credentials) are masked by a :class:`Redactor` in
everything recorded: the meta, the findings, and the saved body (where a secret is masked with as many
``*`` as it has characters, so byte offsets stay true).

Requests carry ``X-SSE-Check-Scenario: NAME``; a replay server (``sse-check serve``) that has no capture
of that name answers 404 ``scenario_not_found``, and the next of the scenario's replay names is tried; when
none is left the scenario is *skipped*, not failed.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import re
import signal
import sys
import tempfile
import time
from collections.abc import AsyncGenerator, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlsplit, urlunsplit

import httpx

from checker import __version__
from checker.engine import Limits, LintResult
from checker.errors import UsageError
from checker.findings import Finding
from checker.http_checks import ENDINGS, META_VERSION, ExchangeLinter, stream_reference
from checker.live.connection import (
    CloseWatch,
    announces_close,
    is_framed,
    is_tls_error,
    is_unanswered,
    transport_error_text,
)
from checker.live.scenarios import Scenario

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
# The body is kept in memory up to this size (for non-streaming parity and the result record); a saved
# capture is written to disk as it arrives, whatever its size.
KEEP_IN_MEMORY = 16 * 1024 * 1024

_DELTA = re.compile(rb"\.delta(?:\"|\r|\n)")
_ALWAYS_SENSITIVE = frozenset({"authorization", "proxy-authorization", "api-key", "x-api-key", "cookie",
                               "set-cookie"})
_SENSITIVE_NAME = re.compile(r"auth|api[-_]?key|token|secret|cookie|session|password", re.IGNORECASE)
REDACTED = "<redacted>"


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


# --- secrets ---------------------------------------------------------------------------------------------


class Redactor:
    """Masks secrets: known secret values anywhere, sensitive headers by name, URL credentials."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self.secrets = tuple(sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True))

    def with_secrets(self, more: Iterable[str]) -> Redactor:
        return Redactor((*self.secrets, *more))

    def text(self, value: str) -> str:
        for secret in self.secrets:
            if secret in value:
                value = value.replace(secret, "*" * len(secret))
        return value

    def bytes(self, value: bytes) -> bytes:
        for secret in self.secrets:
            raw = secret.encode("utf-8", "replace")
            if raw in value:
                value = value.replace(raw, b"*" * len(raw))
        return value

    def value(self, obj: Any) -> Any:
        """A JSON-like value with every string masked."""
        if isinstance(obj, str):
            return self.text(obj)
        if isinstance(obj, dict):
            return {self.text(str(k)): self.value(v) for k, v in obj.items()}
        if isinstance(obj, (list, tuple)):
            return [self.value(v) for v in obj]
        return obj

    def url(self, url: str) -> str:
        try:
            parts = urlsplit(url)
        except ValueError:
            return self.text(url)
        if parts.username is not None or parts.password is not None:
            host = parts.netloc.rpartition("@")[2]
            parts = parts._replace(netloc=f"{REDACTED}@{host}")
        return self.text(urlunsplit(parts))

    def headers(self, pairs: Iterable[tuple[str, str]], *, request: bool = False) -> list[list[str]]:
        out = []
        for name, value in pairs:
            lower = name.lower()
            sensitive = lower in _ALWAYS_SENSITIVE or (request and bool(_SENSITIVE_NAME.search(lower)))
            out.append([name, REDACTED if sensitive else self.text(value)])
        return out

    def finding(self, finding: Finding) -> Finding:
        message = self.text(finding.message)
        details = self.value(finding.details)
        if message == finding.message and details == finding.details:
            return finding
        return dataclasses.replace(finding, message=message, details=details)


def secrets_of_headers(pairs: Iterable[tuple[str, str]]) -> list[str]:
    """The secret values among request headers: whole values of sensitive headers and their last word."""
    found = []
    for name, value in pairs:
        lower = name.lower()
        if lower in _ALWAYS_SENSITIVE or _SENSITIVE_NAME.search(lower):
            found.append(value)
            words = value.split()
            if len(words) > 1:
                found.append(words[-1])
    return found


# --- the target ------------------------------------------------------------------------------------------


def endpoint(base_url: str) -> str:
    """``POST`` target for a base URL given with or without ``/v1`` (or as the full ``…/responses`` URL)."""
    text = base_url.strip()
    try:
        parts = urlsplit(text)
    except ValueError as exc:
        raise UsageError(f"not a URL: {base_url!r} ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"not an http(s) base URL: {base_url!r} "
                         "(e.g. http://127.0.0.1:8080 or https://api.openai.com/v1)")
    try:
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError as exc:
        raise UsageError(f"bad port in {base_url!r}: {exc}") from None
    path = parts.path.rstrip("/")
    if not path.endswith("/responses"):
        path += "/responses" if path.endswith("/v1") else "/v1/responses"
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


@dataclass(frozen=True, kw_only=True)
class ProbeConfig:
    url: str  # the endpoint POSTed to (see endpoint())
    model: str
    headers: tuple[tuple[str, str], ...] = ()  # added to every request (auth, user headers)
    redactor: Redactor = field(default_factory=Redactor)
    verify: bool = True
    limits: ProbeLimits = ProbeLimits()
    engine: Mapping[str, Any] = field(default_factory=dict)  # StreamLinter options: profile, select, ignore, …
    save_dir: Path | None = None


# --- results ---------------------------------------------------------------------------------------------


@dataclass(slots=True, kw_only=True)
class ProbeLintResult(LintResult):
    """A lint result with the HTTP facts of its exchange, for reporters that show them."""

    http: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True, kw_only=True)
class ScenarioResult:
    scenario: Scenario
    result: ProbeLintResult | None = None  # None when skipped
    meta: dict[str, Any] | None = None
    body: bytes = b""  # as saved (secrets masked), up to KEEP_IN_MEMORY bytes
    complete_body: bool = True  # whether ``body`` holds the whole body
    live: list[Finding] = field(default_factory=list)  # findings reported while the body arrived
    skipped: str | None = None
    saved: Path | None = None

    @property
    def ending(self) -> str | None:
        return self.meta["ending"]["kind"] if self.meta else None


# The skip reason of the scenarios not sent once the server proved unreachable (run(stop_if_unreachable=True)).
UNREACHABLE = "not sent: the server could not be reached"

# on_progress(scenario name, phase, bytes received, events) with phase "start", "headers", "body", "done"
Progress = Callable[[str, str, int, int], None]


def _no_progress(name: str, phase: str, received: int, events: int) -> None:
    pass


# --- the received body -----------------------------------------------------------------------------------


class BodySink:
    """Where the body goes as it arrives: memory (up to ``KEEP_IN_MEMORY``) and, when saving, a temporary
    file next to the capture, renamed into place at the end (so a capture is never half written).

    Secrets are masked on the way to the file; a few bytes are held back so that a secret split across two
    chunks is still masked (``*`` for each of its bytes, so offsets stay true).
    """

    def __init__(self, target: Path | None, redactor: Redactor) -> None:
        self.target = target
        self.redactor = redactor
        self.size = 0
        self.memory = bytearray()
        self._hold = max((len(s.encode("utf-8", "replace")) for s in redactor.secrets), default=1) - 1
        self._pending = b""
        self._file: Any = None
        self._tmp: str | None = None
        if target is not None:
            fd, self._tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
            os.fchmod(fd, _file_mode())
            self._file = os.fdopen(fd, "wb")

    @property
    def complete_in_memory(self) -> bool:
        return self.size == len(self.memory)

    def write(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if len(self.memory) < KEEP_IN_MEMORY:
            self.memory += chunk[: KEEP_IN_MEMORY - len(self.memory)]
        if self._file is not None:
            data = self.redactor.bytes(self._pending + chunk)
            cut = max(len(data) - self._hold, 0)
            self._file.write(data[:cut])
            self._pending = data[cut:]

    def masked_memory(self) -> bytes:
        return self.redactor.bytes(bytes(self.memory))

    def commit(self) -> Path | None:
        """Finish the file and move it into place; the capture's path (None when not saving)."""
        if self._file is None or self.target is None or self._tmp is None:
            return None
        try:
            self._file.write(self._pending)
            self._file.close()
            os.replace(self._tmp, self.target)
        except BaseException:
            self.discard()
            raise
        self._file = None
        return self.target

    def discard(self) -> None:
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()
            self._file = None
        if self._tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._tmp)


# --- one exchange ----------------------------------------------------------------------------------------


async def probe_scenario(
    client: httpx.AsyncClient,
    scenario: Scenario,
    config: ProbeConfig,
    *,
    reference: dict[str, Any] | None = None,
    progress: Progress = _no_progress,
    on_interrupt: Callable[[ScenarioResult], None] | None = None,
) -> ScenarioResult:
    """Run one scenario (trying its replay names in turn against a replay server). When the task is cancelled
    (Ctrl-C, SIGTERM) mid-exchange, what arrived is kept (and saved), handed to ``on_interrupt``, and the
    cancellation goes on."""
    names = scenario.replay_names
    for name in names:
        result = await _exchange(client, scenario, name, config, reference, progress, on_interrupt)
        if result is not None:
            return result
    tried = ", ".join(names)
    progress(scenario.name, "done", 0, 0)
    return ScenarioResult(scenario=scenario,
                          skipped=f"the replay server has no capture for this scenario (tried {tried})")


async def _exchange(
    client: httpx.AsyncClient,
    scenario: Scenario,
    replay_name: str,
    config: ProbeConfig,
    reference: dict[str, Any] | None,
    progress: Progress,
    on_interrupt: Callable[[ScenarioResult], None] | None = None,
) -> ScenarioResult | None:
    """One request; None when a replay server has no capture named ``replay_name``."""
    limits = config.limits
    redact = config.redactor.with_secrets(secrets_of_headers(scenario.headers))
    request = scenario.request(config.model)
    headers = [
        ("Content-Type", "application/json"),
        ("Accept", "text/event-stream" if scenario.stream else "application/json"),
        ("Accept-Encoding", "identity"),
        ("User-Agent", f"sse-check/{__version__}"),
        ("X-SSE-Check-Scenario", replay_name),
        *config.headers,
        *scenario.headers,
    ]
    started_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    clock = time.monotonic
    start = clock()
    timings: dict[str, Any] = {}
    live: list[Finding] = []
    ending, detail = "complete", ""
    response: httpx.Response | None = None
    status: int | None = None
    reason = http_version = ""
    response_headers: list[tuple[str, str]] = []
    redirects: list[dict[str, Any]] = []
    meta_head: dict[str, Any] = {"expect": scenario.expect, "status": None, "limits": limits.as_dict()}
    connection: dict[str, Any] = {"closed_by_server": None, "closed_after": None, "retried": None}
    target = config.save_dir / f"{scenario.name}.sse" if config.save_dir is not None else None
    sink = BodySink(target, redact)
    linter: ExchangeLinter | None = None
    interrupted = False
    progress(scenario.name, "start", 0, 0)
    try:
        http_request = client.build_request("POST", config.url, content=json.dumps(request).encode(),
                                            headers=headers)
        watch = CloseWatch()
        watch.attach(http_request)
        wait = min(limits.first_byte_timeout, limits.total_timeout)
        try:
            try:
                response = await asyncio.wait_for(client.send(http_request, stream=True), timeout=wait)
            except httpx.HTTPError as exc:
                if not is_unanswered(exc):
                    raise
                # The server closed a kept-alive connection under the request (HTP019): send it again once,
                # on a new connection, as openai-python does, so that the scenario is still measured.
                connection["retried"] = transport_error_text(exc)
                response = await asyncio.wait_for(client.send(http_request, stream=True),
                                                  timeout=max(wait - (clock() - start), 0.0))
        except asyncio.TimeoutError:
            ending = "first-byte-timeout" if limits.first_byte_timeout <= limits.total_timeout else "total-timeout"
        except httpx.ConnectTimeout:
            ending, detail = "connect-error", f"connect timeout after {limits.connect_timeout:g} s"
        except httpx.ConnectError as exc:
            ending, detail = ("tls-error" if is_tls_error(exc) else "connect-error"), transport_error_text(exc)
        except httpx.HTTPError as exc:
            ending, detail = "disconnect", transport_error_text(exc)
        if response is not None:
            watch.bind(response)
            timings["headers"] = clock() - start
            status, reason = response.status_code, response.reason_phrase
            http_version = response.http_version
            response_headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in response.headers.raw]
            redirects = [{"status": r.status_code, "url": redact.url(str(r.headers.get("location", r.url)))}
                         for r in response.history]
            meta_head["status"] = status
            progress(scenario.name, "headers", 0, 0)
        linter = ExchangeLinter(meta_head, request=request, **config.engine)
        if response is not None:
            ending, detail = await _read_body(response, linter, sink, live, timings, start, limits,
                                              lambda n, e: progress(scenario.name, "body", n, e))
            if ending == "complete" and is_framed(response_headers) \
                    and not announces_close(http_version, response_headers):
                closed = await watch.closed_after_body()
                if closed is not None:
                    connection["closed_by_server"] = closed is not False
                    connection["closed_after"] = None if closed is False else closed
    except asyncio.CancelledError:
        interrupted = True
        ending, detail = "interrupted", "the probe was interrupted"
    except BaseException:
        sink.discard()
        raise
    finally:
        if response is not None:
            with contextlib.suppress(Exception):
                await asyncio.shield(response.aclose())
    if linter is None:
        linter = ExchangeLinter(meta_head, request=request, **config.engine)
    timings["total"] = clock() - start

    if not interrupted and _not_replayed(status, response_headers, sink.memory):
        sink.discard()
        return None  # try the next replay name; after the last one the scenario is skipped

    meta = build_meta(
        scenario=scenario, url=redact.url(config.url), request=redact.value(request),
        request_headers=redact.headers(headers, request=True), status=status, reason=reason,
        http_version=http_version, headers=redact.headers(response_headers), redirects=redirects,
        ending=ending, detail=redact.text(detail), size=sink.size, events=linter.events, timings=timings,
        limits=limits, reference=reference, started_at=started_at, connection=connection,
    )
    meta = json.loads(json.dumps(meta))  # exactly what is saved, and what lint will read back
    result = linter.close(meta)
    probe_result = ProbeLintResult(**{f.name: getattr(result, f.name) for f in dataclasses.fields(LintResult)},
                                   http=http_info(meta))
    probe_result.findings = [redact.finding(f) for f in result.findings]
    outcome = ScenarioResult(scenario=scenario, result=probe_result, meta=meta, body=sink.masked_memory(),
                             complete_body=sink.complete_in_memory, live=[redact.finding(f) for f in live])
    if config.save_dir is not None:
        outcome.saved = sink.commit()
        save_sidecars(config.save_dir, scenario, meta, outcome.body if outcome.complete_body else None)
        probe_result.http["saved"] = str(outcome.saved)
    progress(scenario.name, "done", sink.size, linter.events)
    if interrupted:
        if on_interrupt is not None:
            on_interrupt(outcome)
        raise asyncio.CancelledError
    return outcome


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
    """The record of one exchange, as saved in ``NAME.meta.json`` (format: ``checker.http_checks``).
    Values must already be redacted."""
    if ending not in ENDINGS:
        raise ValueError(f"unknown ending {ending!r}")
    return {
        "meta_version": META_VERSION,
        "sse_check": __version__,
        "scenario": scenario.name,
        "summary": scenario.summary,
        "expect": scenario.expect,
        "started_at": started_at,
        "url": url,
        "request": dict(request),
        "request_headers": [list(pair) for pair in request_headers],
        "status": status,
        "reason": reason,
        "http_version": http_version,
        "headers": [list(pair) for pair in headers],
        "redirects": [dict(r) for r in redirects],
        "replayed_as": _header([(str(k), str(v)) for k, v in headers], SCENARIO_HEADER),
        "ending": {"kind": ending, "detail": detail, "bytes": size},
        "partial": not ENDINGS[ending],
        "bytes": size,
        "events": events,
        "timings": {k: (round(v, 6) if isinstance(v, float) else v) for k, v in timings.items()},
        "limits": limits.as_dict(),
        "reference": dict(reference) if reference is not None and scenario.expect == "nonstream" else None,
        "connection": {k: (round(v, 6) if isinstance(v, float) else v) for k, v in (connection or {}).items()},
    }


async def _read_body(
    response: httpx.Response,
    linter: ExchangeLinter,
    sink: BodySink,
    live: list[Finding],
    timings: dict[str, Any],
    start: float,
    limits: ProbeLimits,
    progress: Callable[[int, int], None],
) -> tuple[str, str]:
    """Read the body under the limits, teeing it into ``linter`` and ``sink``; (ending kind, detail)."""
    clock = time.monotonic
    chunks = cast(AsyncGenerator[bytes, None], response.aiter_raw())  # httpx's is an async generator
    got_first = False
    terminal_at: float | None = None
    last_event_at: float | None = None
    events_seen = 0
    largest_gap = 0.0
    tail = b""
    try:
        while True:
            now = clock()
            if got_first:
                kind, wait = "idle-timeout", limits.idle_timeout
            else:
                kind, wait = "first-byte-timeout", limits.first_byte_timeout - (now - start)
            if terminal_at is not None and terminal_at + limits.close_timeout - now < wait:
                kind, wait = "kept-open", terminal_at + limits.close_timeout - now
            if start + limits.total_timeout - now < wait:
                kind, wait = "total-timeout", start + limits.total_timeout - now
            try:
                chunk = await asyncio.wait_for(chunks.__anext__(), timeout=max(wait, 0.0))
            except StopAsyncIteration:
                if terminal_at is not None:
                    timings["closed_after_terminal"] = clock() - terminal_at
                return "complete", ""
            except asyncio.TimeoutError:
                return kind, ""
            except httpx.HTTPError as exc:
                return "disconnect", transport_error_text(exc)
            now = clock()
            if not chunk:
                continue
            offset = sink.size
            if not got_first:
                got_first = True
                timings["first_byte"] = now - start
            sink.write(chunk)
            live.extend(linter.feed(chunk))
            if "first_delta" not in timings and _DELTA.search(tail + chunk):
                timings["first_delta"] = now - start
            tail = (tail + chunk)[-16:]
            events = linter.events
            if events > events_seen:
                if last_event_at is None:
                    timings["first_event"] = now - start
                elif now - last_event_at > largest_gap:
                    largest_gap = now - last_event_at
                    timings["largest_gap"] = largest_gap
                    timings["largest_gap_at_byte"] = offset
                last_event_at, events_seen = now, events
            if terminal_at is None and linter.terminated:
                terminal_at = now
                timings["terminal"] = now - start
            progress(sink.size, events)
            # Past a cap nothing more is checked (the engine says so: SSE027), so reading stops.
            if sink.size > limits.max_bytes:
                return "byte-cap", f"more than {limits.max_bytes} bytes"
            if events > limits.max_events:
                return "event-cap", f"more than {limits.max_events} events"
    finally:
        with contextlib.suppress(Exception):
            await chunks.aclose()


def _not_replayed(status: int | None, headers: Sequence[tuple[str, str]], body: bytes | bytearray) -> bool:
    """A replay server's 404 for a scenario it has no capture of (not a replayed capture's own 404)."""
    if status != 404 or _header(headers, SCENARIO_HEADER) is not None:
        return False
    try:
        error = json.loads(bytes(body)).get("error")
    except (ValueError, AttributeError, UnicodeDecodeError):
        return False
    return isinstance(error, dict) and error.get("code") == "scenario_not_found"


def _header(pairs: Sequence[tuple[str, str]], name: str) -> str | None:
    return next((v for k, v in pairs if k.lower() == name), None)


def http_info(meta: Mapping[str, Any]) -> dict[str, Any]:
    """The per-scenario HTTP facts shown by the probe's reporters (a subset of the meta)."""
    reference = meta.get("reference")
    info = {
        "scenario": meta.get("scenario"),
        "expect": meta.get("expect"),
        "url": meta.get("url"),
        "status": meta.get("status"),
        "content_type": next((v for k, v in meta.get("headers") or [] if k.lower() == "content-type"), None),
        "replayed_as": meta.get("replayed_as"),
        "ending": meta.get("ending"),
        "partial": meta.get("partial"),
        "bytes": meta.get("bytes"),
        "events": meta.get("events"),
        "timings": meta.get("timings"),
    }
    if meta.get("expect") == "nonstream":
        info["parity"] = (f"compared with {reference['scenario']}" if isinstance(reference, dict)
                          else "not checked (its streaming pair did not run or had no final output)")
    return info


# --- saving ----------------------------------------------------------------------------------------------


def save_sidecars(directory: Path, scenario: Scenario, meta: Mapping[str, Any], body: bytes | None) -> None:
    """Write ``NAME.meta.json`` atomically (the body, ``NAME.sse``, is written by the :class:`BodySink`); a
    complete non-streaming answer also as ``PAIR.nonstream.json``, so that ``sse-check serve DIR`` can replay
    the saved set."""
    write_atomic(directory / f"{scenario.name}.meta.json", meta_json(meta).encode("utf-8"))
    if (scenario.expect == "nonstream" and scenario.pair and body is not None and meta.get("status") == 200
            and not meta.get("partial")):
        write_atomic(directory / f"{scenario.pair}.nonstream.json", body)


_PAIR = re.compile(r'\[\s*("(?:[^"\\]|\\.)*"),\s*("(?:[^"\\]|\\.)*")\s*\]')


def meta_json(meta: Mapping[str, Any]) -> str:
    """The meta as saved: indented JSON, with each [name, value] header pair on one line."""
    return _PAIR.sub(r"[\1, \2]", json.dumps(meta, indent=2, ensure_ascii=False)) + "\n"


def _file_mode() -> int:
    """The mode a plain ``open()`` would give a new file (mkstemp's 0600 would hide captures from others)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def write_atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, _file_mode())
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


# --- a run -----------------------------------------------------------------------------------------------


async def run_scenarios(
    scenarios: Sequence[Scenario],
    config: ProbeConfig,
    *,
    concurrency: int = 1,
    progress: Progress = _no_progress,
    stop_if_unreachable: bool = False,
    on_result: Callable[[ScenarioResult], None] | None = None,
    results: dict[str, ScenarioResult] | None = None,
) -> list[ScenarioResult]:
    """Probe the scenarios, ``concurrency`` at a time; a non-streaming scenario waits for its pair.
    ``on_result`` gets each result as its scenario ends; ``results`` (by name) holds those finished so far,
    also when the run is cancelled. Results in the order of ``scenarios``.

    With ``stop_if_unreachable``, once a connection fails before any has succeeded, the scenarios not yet
    sent are skipped (:data:`UNREACHABLE`): nothing listening is one fact, not one finding per scenario.
    A server that answered once and then stops answering still gets its findings."""
    limits = config.limits
    timeout = httpx.Timeout(connect=limits.connect_timeout, read=None, write=limits.idle_timeout, pool=None)
    pool = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    results = {} if results is None else results
    finished = {s.name: asyncio.Event() for s in scenarios}
    streaming = {s.name for s in scenarios if s.expect != "nonstream"}
    gate = asyncio.Semaphore(concurrency)
    reach = {"answered": False, "unreachable": False}

    def keep(outcome: ScenarioResult) -> None:
        results[outcome.scenario.name] = outcome
        if on_result is not None:
            on_result(outcome)

    async with httpx.AsyncClient(timeout=timeout, verify=config.verify, follow_redirects=True, limits=pool,
                                 max_redirects=5) as client:

        async def one(scenario: Scenario) -> None:
            try:
                reference = None
                if scenario.expect == "nonstream" and scenario.pair in streaming:
                    await finished[scenario.pair].wait()
                    paired = results.get(scenario.pair)  # type: ignore[arg-type]
                    if (paired is not None and paired.result is not None and paired.result.terminal
                            and paired.complete_body):
                        reference = stream_reference(paired.body, paired.scenario.name)
                async with gate:
                    if stop_if_unreachable and reach["unreachable"] and not reach["answered"]:
                        keep(ScenarioResult(scenario=scenario, skipped=UNREACHABLE))
                        return
                    outcome = await probe_scenario(client, scenario, config, reference=reference,
                                                   progress=progress, on_interrupt=keep)
                    if outcome.ending == "connect-error":  # a TLS error is a server answering: a finding
                        reach["unreachable"] = True
                    elif outcome.meta is not None:
                        reach["answered"] = True
                    keep(outcome)
            finally:
                finished[scenario.name].set()

        await asyncio.gather(*(one(s) for s in scenarios))
    return [results[s.name] for s in scenarios]


class Interrupted(Exception):
    """The run was stopped by a signal (SIGINT, SIGTERM); ``results`` are the scenarios that ended, the one
    cut short among them (its ending ``interrupted``, its partial capture saved)."""

    def __init__(self, signum: int, results: list[ScenarioResult]) -> None:
        super().__init__(f"interrupted by signal {signum}")
        self.signum = signum
        self.results = results


def run(
    scenarios: Sequence[Scenario],
    config: ProbeConfig,
    *,
    concurrency: int = 1,
    progress: Progress = _no_progress,
    stop_if_unreachable: bool = False,
    on_result: Callable[[ScenarioResult], None] | None = None,
) -> list[ScenarioResult]:
    """The synchronous entry point: :func:`run_scenarios` in a fresh event loop. SIGINT and SIGTERM cancel
    the run cleanly and raise :class:`Interrupted` with what finished."""
    results: dict[str, ScenarioResult] = {}
    caught: list[int] = []

    async def main() -> list[ScenarioResult]:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        installed = []
        for signum in (signal.SIGINT, signal.SIGTERM):
            def stop(signum: int = signum) -> None:
                if not caught:
                    caught.append(signum)
                    if task is not None:
                        task.cancel()
            try:
                loop.add_signal_handler(signum, stop)
                installed.append(signum)
            except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signals here
                pass
        try:
            return await run_scenarios(scenarios, config, concurrency=concurrency, progress=progress,
                                       stop_if_unreachable=stop_if_unreachable, on_result=on_result,
                                       results=results)
        finally:
            for signum in installed:
                loop.remove_signal_handler(signum)

    try:
        return asyncio.run(main())
    except (asyncio.CancelledError, KeyboardInterrupt):
        if not caught and not isinstance(sys.exc_info()[1], KeyboardInterrupt):
            raise
        done = [results[s.name] for s in scenarios if s.name in results]
        raise Interrupted(caught[0] if caught else signal.SIGINT, done) from None
