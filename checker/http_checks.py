"""The HTTP exchange around a stream, judged from a record of it (sans-I/O).

Theory of operation
-------------------
``sse-check probe`` talks to a server; ``sse-check lint`` reads what a probe saved. For their verdicts
to be identical, everything the probe knows about the HTTP exchange is first written down as a plain
JSON record, the *meta* (saved as ``X.meta.json`` next to the capture ``X.sse``), and the findings are
computed from that record and the body bytes only, by this module, in both commands:

* :class:`ExchangeLinter` is fed the body bytes (live by the probe, from the file by lint). A 2xx answer
  to a streaming request is a stream: it goes through :class:`checker.engine.StreamLinter`, the one
  pipeline. Anything else (an HTTP error's JSON, a ``stream: false`` Response object) is kept and judged
  here as JSON.
* :meth:`ExchangeLinter.close` takes the meta and adds the HTTP findings (``checker/rules/http.py``):
  status, content type, error bodies, redirects, how the exchange ended (timeouts, a cut connection, a
  body kept open after the terminal event, caps) and, for non-streaming answers, their output order and
  parity with the streamed output recorded in the meta's ``reference``.

No function here reads a file, opens a socket or looks at the clock: timings are facts in the meta.

The meta (``META_VERSION`` 1; unknown keys are ignored; its contract is :class:`checker.exchange_meta.ExchangeMeta`)::

    {"meta_version": 1, "sse_check": "0.1.0", "scenario": "plain_text",
     "expect": "stream" | "nonstream" | "error",
     "url": "http://127.0.0.1:8080/v1/responses", "request": {...}, "request_headers": [[name, value], ...],
     "status": 200 | null, "reason": "OK", "http_version": "HTTP/1.1", "headers": [[name, value], ...],
     "redirects": [{"status": 307, "url": "..."}], "replayed_as": "plain_text" | null,
     "ending": {"kind": "complete", "detail": "", "bytes": 5669},
     "partial": false, "bytes": 5669, "events": 30,
     "timings": {"headers": s, "first_byte": s, "first_event": s, "first_delta": s, "terminal": s,
                 "largest_gap": s, "largest_gap_at_byte": n, "closed_after_terminal": s, "total": s},
     "limits": {"connect_timeout": 10.0, "first_byte_timeout": 60.0, "idle_timeout": 30.0,
                "total_timeout": 300.0, "close_timeout": 2.0, "max_bytes": n, "max_events": n},
     "reference": {"scenario": "plain_text", "terminal": "response.completed", "output": [digest, ...]} | null}

``ending.kind`` is one of :data:`ENDINGS`.
"""

from __future__ import annotations

import builtins
import dataclasses
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

from checker import dialects, request_checks
from checker.dialects.base import Dialect
from checker.engine import EngineOptions, LintResult, StreamLinter
from checker.exchange_meta import ENDINGS, META_VERSION, is_exchange_meta
from checker.exchange_text import clip as _clip
from checker.exchange_text import host as _host
from checker.exchange_text import num as _num
from checker.exchange_text import one_line as _one_line
from checker.findings import Finding, Position
from checker.nonstream_checks import (
    MAX_KEPT_BODY,
    NO_ERROR_MEMBER,
    error_object,
    nonstream_findings,
    nonstream_id,
    nonstream_object_findings,
    not_error_json,
)
from checker.rules import http as rules
from checker.schemas import load_schema_set

# The ``ending.detail`` of an ``interrupted`` exchange that the proxy's client ended by disconnecting.
CLIENT_LEFT = "the client disconnected"
# For a stream, the first bytes are kept to recognise a JSON error body sent with a 2xx status.
STREAM_HEAD_KEPT = 64 * 1024
_START = Position(line=1, byte=0)


# --- what kind of body -------------------------------------------------------------------------------


def is_stream_body(meta: Mapping[str, Any]) -> bool:
    """Whether the body is judged as an event stream: a 2xx answer to a streaming request."""
    status = meta.get("status")
    return meta.get("expect") != "nonstream" and isinstance(status, int) and 200 <= status < 300


def _path(meta: Mapping[str, Any]) -> str:
    try:
        return urlsplit(str(meta.get("url") or "")).path
    except ValueError:
        return ""


def exchange_dialect(meta: Mapping[str, Any]) -> Dialect | None:
    """The dialect of the endpoint the recorded exchange was with; a meta without a URL is the probe's, of the
    default dialect. None for an endpoint of no dialect: then the stream shows what it is."""
    url = meta.get("url")
    if not isinstance(url, str) or not url:
        return dialects.default()
    return dialects.for_endpoint(_path(meta))


def is_probe_meta(meta: Any) -> bool:
    """Whether a parsed ``X.meta.json`` is an exchange record this module can judge."""
    return isinstance(meta, dict) and is_exchange_meta(meta)


def header(meta: Mapping[str, Any], name: str) -> str | None:
    """The first value of a response header in the meta (names compared case-insensitively)."""
    headers = meta.get("headers") or []
    pairs = headers.items() if isinstance(headers, dict) else headers
    for pair in pairs:
        if isinstance(pair, (list, tuple)) and len(pair) == 2 and str(pair[0]).lower() == name:
            return str(pair[1])
    return None


def media_type(value: str | None) -> str | None:
    return value.split(";", 1)[0].strip().lower() if value else None


# --- the linter of one exchange ------------------------------------------------------------------------


class ExchangeLinter:
    """Lint of one HTTP exchange: the body bytes (fed in chunks) plus the record of how they arrived.

    ``meta`` needs ``expect`` and ``status`` when the first byte is fed (they decide whether the body is a
    stream); the rest may be filled in before :meth:`close`. The options are :class:`StreamLinter`'s.
    """

    def __init__(self, meta: Mapping[str, Any], options: EngineOptions = EngineOptions(), *,
                 request: dict[str, Any] | None = None) -> None:
        self.meta = meta
        self.profile = options.profile
        # The exchange's own findings (HTTP, a non-streaming answer) are selected and judged by the profile as
        # the stream's are; each is reported (they are few, and two alike are two facts of the exchange).
        self.sink = options.sink(collapse=False)
        self.trace = options.trace
        self.streamed = is_stream_body(meta)
        options = with_recorded_limits(options, meta)
        # The dialect: the one given (lint --dialect), else the endpoint's the meta recorded (a probe's meta
        # without a URL is the default dialect's), else what the stream's first event shows.
        found = exchange_dialect(meta)
        self.dialect: Dialect | None = dialects.get(options.dialect) if options.dialect is not None else found
        if options.dialect is None and found is None and dialects.other_endpoint(_path(meta)) is not None:
            # The exchange was with an endpoint of an API without a dialect: that its stream is not a dialect's
            # (SCH010) is no news. The proxy records such answers; their lint must say what the proxy said.
            options = options.ignoring("SCH010")
        self.linter = (StreamLinter.from_options(options, request=request, dialect=self.dialect)
                       if self.streamed else None)
        self._kept = bytearray()
        self._bytes = 0
        self._tail = b""

    @property
    def terminated(self) -> bool:
        """Whether the stream's terminal event has arrived."""
        return self.linter is not None and self.linter.machine.terminated

    @property
    def events(self) -> int:
        return self.linter.decoder.events_dispatched if self.linter is not None else 0

    @property
    def bytes(self) -> int:
        return self._bytes

    def feed(self, chunk: builtins.bytes) -> list[Finding]:
        """Feed body bytes; the stream findings they completed (first occurrences), as StreamLinter.feed."""
        if not chunk:
            return []
        self._bytes += len(chunk)
        self._tail = (self._tail + chunk)[-4:]
        limit = STREAM_HEAD_KEPT if self.streamed else MAX_KEPT_BODY
        if len(self._kept) < limit:
            self._kept += chunk[: limit - len(self._kept)]
        if self.linter is None:
            return []
        return self.linter.feed(chunk)

    def close(self, meta: Mapping[str, Any] | None = None) -> LintResult:
        """End of the body: the stream's findings and the HTTP findings, in one :class:`LintResult`."""
        if meta is not None:
            self.meta = meta
        meta = self.meta
        body = bytes(self._kept)
        if self.linter is not None:
            result = self.linter.close(reader_stopped=client_left(meta))
            end = Position(line=self.linter.decoder.end_position().line, byte=result.bytes)
        else:
            result = LintResult(
                findings=[], events=0, bytes=self._bytes, terminal=None, response_id=nonstream_id(body, meta),
                profile=self.profile.name, trace=[] if self.trace else None,
                dialect=(self.dialect or dialects.default()).name,
            )
            end = Position(line=_lines(body), byte=self._bytes)
        endpoint = exchange_dialect(meta)
        schemas = self._schemas(meta, endpoint)
        head, tail = exchange_findings(meta, body=body, whole=self._bytes <= len(body), result=result,
                                       end=end, tail=self._tail, streamed=self.streamed, schemas=schemas)
        head.extend(self._answer_object(meta, body, endpoint, schemas))
        # Judged once the stream has ended: by what is known of the stream (nothing without one).
        self.sink.settle(self.linter.sink.facts if self.linter is not None else None)
        findings = sorted(
            [*self.sink.emit_all(head), *result.findings, *self.sink.emit_all(tail)],
            key=lambda f: (f.position.byte, f.position.line),
        )
        return dataclasses.replace(result, findings=findings)

    def _schemas(self, meta: Mapping[str, Any], endpoint: Dialect | None) -> Any:
        """The profile's schema set for the endpoint's dialect, loaded only when a recorded request or a
        non-streamed answer is to be judged by it."""
        if endpoint is None:
            return None
        judged = (endpoint.requests is not None and meta.get("request") is not None) or \
            (endpoint.nonstream is not None and meta.get("expect") == "nonstream")
        return load_schema_set(self.profile.schema_set_for(endpoint)) if judged else None

    def _answer_object(self, meta: Mapping[str, Any], body: builtins.bytes, endpoint: Dialect | None,
                       schemas: Any) -> list[Finding]:
        """A complete 2xx ``stream: false`` answer, checked as its endpoint's object (its dialect's schema)."""
        status = meta.get("status")
        if (self.streamed or meta.get("expect") != "nonstream" or not isinstance(status, int)
                or not 200 <= status < 300 or self._bytes > len(body)):
            return []
        return nonstream_object_findings(body, endpoint, schemas)


def client_left(meta: Mapping[str, Any]) -> bool:
    """Whether the client whose traffic the proxy watched, not the server, ended the exchange.

    Only that one: a probe or a proxy stopped by its operator ended the exchange too, but then sse-check itself
    was the reader and the exchange it was asked to check did not finish, so its verdict stays the stream's.
    """
    ending = meta.get("ending")
    return isinstance(ending, Mapping) and ending.get("kind") == "interrupted" and ending.get("detail") == CLIENT_LEFT


def with_recorded_limits(options: EngineOptions, meta: Mapping[str, Any]) -> EngineOptions:
    """The engine options with ``max_bytes``/``max_events`` lowered to the caps the probe read under.

    The probe stops reading a stream just past its caps; linting the saved capture under the same caps is
    what makes the two verdicts equal (a lint with larger limits would check bytes the probe never did).
    """
    recorded = meta.get("limits") or {}
    if not isinstance(recorded, Mapping):
        return options
    limits = options.limits
    changes = {}
    for name in ("max_bytes", "max_events"):
        value = recorded.get(name)
        if isinstance(value, int) and value > 0 and value < getattr(limits, name):
            changes[name] = value
    return dataclasses.replace(options, limits=dataclasses.replace(limits, **changes)) if changes else options


def lint_exchange(meta: Mapping[str, Any], chunks: Iterable[bytes], options: EngineOptions = EngineOptions(), *,
                  request: dict[str, Any] | None = None) -> LintResult:
    """Lint a recorded exchange: its meta and its body bytes."""
    linter = ExchangeLinter(meta, options, request=request)
    for chunk in chunks:
        linter.feed(chunk)
    return linter.close()


# --- the HTTP findings ---------------------------------------------------------------------------------


def exchange_findings(
    meta: Mapping[str, Any],
    *,
    body: bytes,
    whole: bool,
    result: LintResult,
    end: Position,
    tail: bytes,
    streamed: bool,
    schemas: request_checks.RequestSchemas | None = None,
) -> tuple[list[Finding], list[Finding]]:
    """(findings about the exchange as a whole, at its start; findings about how it ended, at its end).

    ``body`` is the kept body (all of it when ``whole``, else the head of a stream), ``result`` the body's
    lint (empty when it is not a stream), ``end`` where the body ended, ``tail`` its last bytes. ``schemas``
    validates the recorded request (the openai set's request schemas by default).
    """
    ending = meta.get("ending") or {}
    kind = str(ending.get("kind") or "complete")
    detail = _one_line(str(ending.get("detail") or ""))
    head = _connection_findings(meta, kind, detail)
    if kind in ("connect-error", "tls-error"):
        return head, []
    status = meta.get("status")
    if not isinstance(status, int):  # no response headers arrived
        return head, _headless_findings(meta, kind, detail, end)
    head.extend(_answer_findings(meta, status, kind, body=body, whole=whole, result=result, streamed=streamed,
                                 schemas=schemas))
    received = int(ending.get("bytes", result.bytes) or 0)
    return head, _ending_findings(meta, status, kind, detail, end=end, tail=tail, streamed=streamed,
                                  received=received, terminal=result.terminal)


def _connection_findings(meta: Mapping[str, Any], kind: str, detail: str) -> list[Finding]:
    """Redirects, a kept-alive connection dropped under the request, and a connection never made."""
    head: list[Finding] = []
    redirects = meta.get("redirects") or []
    if redirects:
        chain = ", then ".join(f"{r.get('status')} to {r.get('url')}" for r in redirects if isinstance(r, dict))
        head.append(rules.REDIRECT.finding(_START, chain=chain))
    connection = _connection(meta)
    if connection.get("retried"):
        head.append(rules.CLOSED_UNANNOUNCED.finding(
            _START, what="dropped the kept-alive connection under this request, which got no answer "
                         f"({_one_line(str(connection['retried']))}; sent again on a new connection)",
            announced=""))
    host = _host(str(meta.get("url") or ""))
    if kind == "connect-error":
        head.append(rules.CONNECT_FAILED.finding(_START, host=host, error=detail or "connection failed"))
    elif kind == "tls-error":
        head.append(rules.TLS_ERROR.finding(_START, host=host, error=detail or "handshake failed"))
    return head


def _connection(meta: Mapping[str, Any]) -> Mapping[str, Any]:
    recorded = meta.get("connection")
    return recorded if isinstance(recorded, Mapping) else {}


def _headless_findings(meta: Mapping[str, Any], kind: str, detail: str, end: Position) -> list[Finding]:
    """How an exchange ended that never got its response headers."""
    limits = meta.get("limits") or {}
    if client_left(meta):
        return [rules.READING_STOPPED.finding(end, bytes=0, where="before the response headers",
                                              detail=detail or "interrupted")]
    if kind == "first-byte-timeout":
        return [rules.FIRST_BYTE_TIMEOUT.finding(end, what="response headers",
                                                 timeout=_num(limits.get("first_byte_timeout")))]
    if kind == "total-timeout":
        return [rules.TOTAL_TIMEOUT.finding(end, timeout=_num(limits.get("total_timeout")), offset=0)]
    if kind == "disconnect":
        return [rules.CUT_OFF.finding(end, bytes=0, where="before the response headers",
                                      error=detail or "connection closed")]
    return []


def _answer_findings(meta: Mapping[str, Any], status: int, kind: str, *, body: bytes, whole: bool,
                     result: LintResult, streamed: bool,
                     schemas: request_checks.RequestSchemas | None) -> list[Finding]:
    """The status, the content type and the body against what the request asked for."""
    head: list[Finding] = []
    expect = meta.get("expect") or "stream"
    ok = 200 <= status < 300
    content_type = header(meta, "content-type")
    mtype = media_type(content_type)
    shown_type = repr(content_type) if content_type is not None else "missing"
    error_obj = error_object(body) if whole or not streamed else None
    endpoint = exchange_dialect(meta)
    shape = endpoint.requests if endpoint is not None else None
    request = meta.get("request")
    # The request as a server reads it, by its endpoint's request schema; a request not recorded (None), or to an
    # endpoint whose requests no schema describes, is not judged.
    invalid = request_checks.problems(schemas or load_schema_set(endpoint.schema_set), shape, request) \
        if endpoint is not None and shape is not None and request is not None else []
    if expect == "error":
        if status >= 500:
            head.append(rules.INVALID_SERVER_ERROR.finding(_START, what=meta.get("scenario") or "invalid request",
                                                           status=status))
        elif ok and error_obj is not None:
            head.append(rules.ERROR_WITH_OK_STATUS.finding(_START, status=status, detail=error_obj))
        elif ok and streamed and result.terminal != "response.failed":
            outcome = f"HTTP {status}, ended by {result.terminal or 'no terminal event'}"
            head.append(rules.INVALID_ACCEPTED.finding(_START, what=meta.get("scenario") or "invalid request",
                                                       outcome=outcome))
    elif status != 200:
        reason = str(meta.get("reason") or "").strip()
        head.append(_status_finding(meta, status, reason, expect, body, shape, request, invalid))
        if status == 429 and header(meta, "retry-after") is None and header(meta, "retry-after-ms") is None:
            head.append(rules.RATE_LIMITED_BLIND.finding(_START))
    malformed = request_checks.malformed(invalid)
    if ok and malformed and expect != "error":
        outcome = f"HTTP {status}" + (f", ended by {result.terminal or 'no terminal event'}" if streamed else "")
        head.append(rules.INVALID_ACCEPTED.finding(_START, what=request_checks.shown(malformed), outcome=outcome))
    if not ok:
        if error_obj is None:
            why = not_error_json(body, whole)
            # A JSON object of another shape still reads as an error, only without its message and code.
            rule = rules.ERROR_WITHOUT_ERROR_OBJECT if why == NO_ERROR_MEMBER else rules.ERROR_NOT_JSON
            head.append(rule.finding(_START, status=status, detail=why))
        elif mtype != "application/json":
            head.append(rules.WRONG_CONTENT_TYPE.finding(_START, value=shown_type, what=f"an HTTP {status} error",
                                                         expected="'application/json'"))
    elif expect == "nonstream":
        if mtype != "application/json":
            head.append(rules.WRONG_CONTENT_TYPE.finding(_START, value=shown_type, what="a non-streaming response",
                                                         expected="'application/json'"))
        if kind in ("complete", "kept-open"):
            head.extend(nonstream_findings(body, endpoint, meta.get("reference"), whole=whole, request=request))
    else:
        if mtype != "text/event-stream":
            head.append(rules.WRONG_CONTENT_TYPE.finding(_START, value=shown_type, what="a stream",
                                                         expected="'text/event-stream'"))
        if expect != "error" and error_obj is not None:
            head.append(rules.ERROR_WITH_OK_STATUS.finding(_START, status=status, detail=error_obj))
    return head


def _ending_findings(meta: Mapping[str, Any], status: int, kind: str, detail: str, *, end: Position, tail: bytes,
                     streamed: bool, received: int, terminal: str | None) -> list[Finding]:
    """How an answer that had its headers ended: a client that left, timeouts, a cut, a cap, a close."""
    found: list[Finding] = []
    limits = meta.get("limits") or {}
    if client_left(meta) and not (streamed and terminal):
        where = ("before the terminal event" if streamed else "mid-body") if received else "before the first body byte"
        found.append(rules.READING_STOPPED.finding(end, bytes=received, where=where, detail=detail or "interrupted"))
    if kind == "kept-open":
        found.append(rules.KEPT_OPEN.finding(end, timeout=_num(limits.get("close_timeout")), terminal=terminal or "?"))
    elif kind == "disconnect":
        if streamed:
            where = "between events" if _at_event_boundary(tail) else "mid-event"
            where += ", after the terminal event" if terminal else ", before the terminal event"
        else:
            where = "mid-body" if received else "before the first body byte"
        found.append(rules.CUT_OFF.finding(end, bytes=received, where=where, error=detail or "connection closed"))
    elif kind == "first-byte-timeout":
        found.append(rules.FIRST_BYTE_TIMEOUT.finding(end, what="body byte",
                                                      timeout=_num(limits.get("first_byte_timeout"))))
    elif kind == "idle-timeout":
        found.append(rules.STALLED.finding(end, timeout=_num(limits.get("idle_timeout")), offset=received))
    elif kind == "total-timeout":
        found.append(rules.TOTAL_TIMEOUT.finding(end, timeout=_num(limits.get("total_timeout")), offset=received))
    elif kind == "byte-cap" and not streamed:  # a stream over the cap is the engine's SSE027
        what = "non-streaming answer" if 200 <= status < 300 else f"HTTP {status} body"
        found.append(rules.BODY_CAP.finding(end, what=what, limit=limits.get("max_bytes"), bytes=received))
    connection = _connection(meta)
    if connection.get("closed_by_server") is True and kind == "complete":
        after = connection.get("closed_after")
        keep_alive = header(meta, "keep-alive")
        when = f"{after * 1000:.1f} ms after" if isinstance(after, (int, float)) and after >= 0.0001 \
            else "right after"
        found.append(rules.CLOSED_UNANNOUNCED.finding(
            end, what=f"closed the connection {when} this complete response",
            announced=f" (it even sent Keep-Alive: {keep_alive})" if keep_alive else ""))
    return found


def _status_finding(meta: Mapping[str, Any], status: int, reason: str, expect: str, body: bytes,
                    shape: request_checks.RequestShape | None, request: Any, invalid: list[Any]) -> Finding:
    """What a non-200 status to a request that should have succeeded is: a right refusal of an invalid request
    (HTP021), a server error on one (HTP024), a valid request's feature unsupported (HTP022), or the server
    failing it (HTP001)."""
    error = request_checks.error_fields(body)
    grounds = request_checks.refusal_grounds(invalid, error)
    if grounds and 400 <= status < 500 and status not in request_checks.NOT_ABOUT_THE_REQUEST:
        return rules.INVALID_REQUEST_REFUSED.finding(_START, detail=request_checks.shown(grounds), status=status)
    if status >= 500 and (broken := request_checks.malformed(invalid)):
        return rules.INVALID_SERVER_ERROR.finding(_START, what=request_checks.shown(broken), status=status)
    if shape is not None and isinstance(request, dict) and not grounds and status in request_checks.REFUSAL_STATUSES:
        feature = request_checks.refused_feature(shape, request, error)
        if feature is not None:
            message = _clip(_one_line(error.get("message") or error.get("code") or "no message"), 100)
            return rules.UNSUPPORTED_FEATURE.finding(_START, feature=feature, status=status, message=message)
    what = "a streaming request" if expect == "stream" else "a non-streaming request"
    retried = meta.get("retry")
    if isinstance(retried, Mapping) and retried.get("then") == "retried":
        # an attempt that the probe sent again, as the SDK would (checker.live.retry_run): not the caller's answer
        return rules.STATUS_RETRIED.finding(_START, status=status, reason=reason, what=what,
                                            client=str(retried.get("client") or "the SDK"),
                                            basis=str(retried.get("basis") or "its policy"))
    retry = header(meta, "retry-after")
    extra = f" (Retry-After: {retry})" if retry is not None else ""
    return rules.STATUS_NOT_OK.finding(_START, status=status, reason=reason, what=what, extra=extra)


# --- small helpers ---------------------------------------------------------------------------------------


def _at_event_boundary(tail: bytes) -> bool:
    """Whether a body ending in ``tail`` (its last bytes) ends with a blank line: no event left pending."""
    if not tail:
        return True
    rest = _strip_eol(tail)
    if rest is None:
        return False  # the last line is unfinished
    return rest == b"" or _strip_eol(rest) is not None


def _strip_eol(data: bytes) -> bytes | None:
    for eol in (b"\r\n", b"\n", b"\r"):
        if data.endswith(eol):
            return data[: -len(eol)]
    return None


_LINE_END = re.compile(rb"\r\n|\r|\n")


def _lines(body: bytes) -> int:
    """The line number at the end of ``body`` (1-based), counting CRLF, LF and CR line ends."""
    return 1 + len(_LINE_END.findall(body))


