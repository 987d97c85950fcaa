"""The one pipeline: bytes → SSE decoder → JSON → schemas → Responses machine → findings.

``lint``, ``probe``, ``serve`` tests, ``proxy`` and the pytest plugin all call
:class:`StreamLinter`, so a live verdict and the lint of its saved capture are
the same computation on the same bytes. The engine is sans-I/O: it is fed
bytes and returns findings; reading files or sockets is the caller's job.

Repeated findings (the same rule with the same message, e.g. "output_text.delta
has no sequence_number" on every delta) are reported once, at their first
position, with ``occurrences`` counting them all.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import orjson

from checker.findings import Finding, Position, Severity
from checker import dialects
from checker.dialects.base import ItemSummary
from checker.profiles import OPENAI, Profile, StreamFacts
from checker.rules import framing, lifecycle, schema
from checker.rules.registry import Rule
from checker.sse import DEFAULT_MAX_EVENT_BYTES, DEFAULT_MAX_LINE_BYTES, SSEDecoder, SSEEvent

# Schema violations that have a rule of their own, by (keyword, pointer).
_FIELD_RULES: dict[str, Rule] = {
    "/sequence_number": lifecycle.SEQUENCE_MISSING,
    "/logprobs": schema.LOGPROBS_MISSING,
}
_KEEPALIVE_WORDS = {b"ping", b"keepalive", b"keep-alive", b"heartbeat", b""}


def _field_rules() -> dict[str, Rule]:
    from checker.rules import content, items

    rules = dict(_FIELD_RULES)
    rules["/output_index"] = items.OUTPUT_INDEX_MISSING
    rules["/content_index"] = content.CONTENT_INDEX_MISSING
    return rules


FIELD_RULES = _field_rules()
_UNPARSED: Any = object()
_SNIPPET_BYTES = 512


class TraceEntry(NamedTuple):
    index: int  # type: ignore[assignment]  # shadows tuple.index(), as SSEEvent's does
    line: int
    type: str
    lane: str  # the item id an event belongs to, or "response"
    # For the HTML report's details (recorded only with trace=True):
    byte: int = 0
    data: bytes = b""  # the event's data, clipped to TRACE_DATA_CLIP; b"" past TRACE_DATA_BUDGET
    at: float | None = None  # arrival time in seconds, when the caller marks times (a live probe)


# A trace is for pictures, not for reconciliation: a few KB show an event's
# shape, and past the budget only non-delta events keep their data, so a
# traced 400 MB capture costs megabytes, not the capture.
TRACE_DATA_CLIP = 4096
TRACE_DATA_BUDGET = 8 << 20


@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    """Resource limits; hitting one is a finding, never a crash (docs/robustness.md)."""

    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES
    # Real events nest about ten levels; 64 leaves room for deep tool schemas.
    max_json_depth: int = 64
    # A stream of this size is a runaway generation, not a response.
    max_bytes: int = 2 * 1024**3
    max_events: int = 10_000_000


@dataclass(slots=True, kw_only=True)
class LintResult:
    """What a finished lint knows: findings (collapsed, in stream order) and counts."""

    findings: list[Finding]
    events: int
    bytes: int
    terminal: str | None
    response_id: str | None
    profile: str
    # Every terminal event's type in stream order (``terminal`` is the first): what the clients' final calls see.
    terminals: tuple[str, ...] = ()
    # The dialect the stream was checked as (checker/dialects); "" only for a result built without a stream.
    dialect: str = ""
    items: list[ItemSummary] = field(default_factory=list)
    trace: list["TraceEntry"] | None = None
    # What each item accumulated (the machine's StreamSummary.texts), only with trace or keep_texts.
    texts: list[dict[str, Any]] | None = None

    def worst(self) -> Severity | None:
        return max((f.severity for f in self.findings), default=None)

    def count(self, severity: Severity) -> int:
        return sum(1 for f in self.findings if f.severity == severity)

    def codes(self) -> list[str]:
        return sorted({f.code for f in self.findings})


class StreamLinter:
    """Incremental lint of one Responses stream.

    ``feed(chunk)`` returns the findings that chunk completed (first
    occurrences only, profile applied); ``close()`` ends the stream and
    returns the :class:`LintResult`. ``trace`` records every event for
    timelines; ``keep_texts`` keeps what each done item accumulated
    (``LintResult.texts``), which otherwise is released to bound memory.
    """

    def __init__(
        self,
        *,
        profile: Profile = OPENAI,
        request: dict[str, Any] | None = None,
        select: Iterable[str] | None = None,
        ignore: Iterable[str] | None = None,
        limits: Limits = Limits(),
        collapse: bool = True,
        trace: bool = False,
        keep_texts: bool = False,
        schema_set: Any = None,
    ) -> None:
        self.profile = profile
        if schema_set is None:
            from checker.schemas import load_schema_set

            schema_set = load_schema_set(profile.schema_set)
        self.schemas = schema_set
        self.limits = limits
        self.decoder = SSEDecoder(max_line_bytes=limits.max_line_bytes, max_event_bytes=limits.max_event_bytes)
        self._fed = 0
        self._ignored = 0
        self._depth_budget = limits.max_json_depth
        self._maybe_long_digits = True
        # The schema set's compiled validators by event type, when it exposes them.
        self._validators: dict[str, Any] | None = getattr(self.schemas, "_event_validators", None)
        self._stopped = False
        self.dialect = dialects.default()
        self.machine = self.dialect.make_machine(request=request, known_types=self.schemas.known_event_types(),
                                                 keep_texts=trace or keep_texts)
        self._select = tuple(s.upper() for s in select) if select else ()
        self._ignore = tuple(s.upper() for s in ignore) if ignore else ()
        self._collapse = collapse
        self._firsts: list[Finding] = []
        self._counts: dict[tuple[str, str], int] = {}
        self._deferred: list[Finding] = []
        self._deferred_codes = profile.deferred_codes
        self._done_seen = False
        self._closed_result: LintResult | None = None
        # Set when the body turns out not to be a Responses event stream at
        # all (a JSON error body, HTML, gzip; or another API's stream): one
        # finding says so instead of a cascade of protocol findings.
        self._head = b""
        self._opaque = False
        self._sniffed = False
        self._foreign = False
        self._first_object = True
        # True once the first event showed a Responses stream and no trace is
        # kept: the hot path in _event may be taken.
        self._plain = False
        # (event index, line, type, lane) per event, for timelines; off by default.
        self._trace: list[TraceEntry] | None = [] if trace else None
        self._trace_bytes = 0
        self._now: float | None = None

    # -- feeding --------------------------------------------------------------

    def mark_time(self, seconds: float) -> None:
        """Stamp the events of the next ``feed()`` with an arrival time (trace only).

        The engine never reads the clock; a live caller passes the time its
        chunk arrived (seconds since the request), and the trace keeps it.
        """
        self._now = seconds

    def feed(self, chunk: bytes) -> list[Finding]:
        out: list[Finding] = []
        if self._stopped:
            self._ignored += len(chunk)
            return out
        room = self.limits.max_bytes - self._fed
        self._fed += len(chunk)
        if len(chunk) > room:
            self._ignored += len(chunk) - room
            chunk = chunk[:room]
            self._stop("byte", self.limits.max_bytes, None)
        if not self._sniffed:
            chunk = self._sniff(chunk, out, final=False)
        if self._opaque:
            self._opaque_bytes += len(chunk)
            if len(self._head) < _SNIPPET_BYTES:
                self._head += chunk[: _SNIPPET_BYTES - len(self._head)]
            return out
        # Integers beyond 2^53 need 16 digits in a row. Look for such a run once per
        # chunk, over every byte an event dispatched by this feed can hold: the
        # decoder's unfinished line plus the chunk, or, if an event was already
        # pending (its lines came earlier), assume there may be one.
        decoder = self.decoder
        self._maybe_long_digits = (
            bool(decoder._data) or decoder.pending_line or _has_long_digits(decoder._buf + chunk)
        )
        event_type = SSEEvent
        max_events = self.limits.max_events
        # The hot path, inlined with its names in locals (it runs once per event):
        # once the stream has shown what it is, a well-framed event that the
        # schema and the machine's fast path both accept has nothing to report.
        # Anything else, and every event while tracing, takes _event.
        loads, decode_error = orjson.loads, orjson.JSONDecodeError
        validators = self._validators or {}
        validate, try_fast = self.schemas.validate_event, self.machine.try_fast
        budget, digits = self._depth_budget, self._maybe_long_digits
        big = BIG_JSON_BYTES
        plain = self._plain  # re-read after every slow path: the first event object decides it
        for item in decoder.feed(chunk):
            if type(item) is not event_type:
                self._emit(item, out)  # type: ignore[arg-type]
                continue
            index, data, name, _, _, _, _, _, data_lines = item  # one unpack, not five attribute reads
            if index >= max_events:
                self._stop("event", max_events, item.position)  # type: ignore[union-attr]
                break
            if not plain or data_lines != 1 or len(data) > big:
                self._event(item, out)  # type: ignore[arg-type]
                plain = self._plain
                continue
            try:
                obj = loads(data)
            except decode_error:
                self._event_full(item, out)  # type: ignore[arg-type]
                plain = self._plain
                continue
            if type(obj) is not dict:
                self._event_full(item, out, obj)  # type: ignore[arg-type]
                plain = self._plain
                continue
            etype = obj.get("type")
            # Cheap necessary conditions of the JSON hazards (a repeated key, deep
            # nesting, a long number): when one holds, the full path checks. Every key
            # is followed by a colon, after optional white space, so more colons than
            # keys is necessary for a repeated one (a colon inside a string costs only
            # the slower path).
            if (
                name != etype
                or "error" in obj
                or data.count(b":") > len(obj)
                or len(data) - len(data.translate(None, b"[{")) > budget  # one pass for both brackets
                or (digits and _has_long_digits(data))
            ):
                self._event_full(item, out, obj)  # type: ignore[arg-type]
                plain = self._plain
                continue
            validator = validators.get(etype)  # type: ignore[arg-type]
            if validator is not None and validator.is_valid(obj):
                if try_fast(etype, obj):  # type: ignore[arg-type]
                    continue
                violations: list[Any] = []
            else:
                violations = validate(obj)
                if not violations and try_fast(etype, obj):  # type: ignore[arg-type]
                    continue
            self._event_full(item, out, obj, violations)  # type: ignore[arg-type]
            plain = self._plain
        return out

    def close(self, *, reader_stopped: bool = False) -> LintResult:
        """End of the stream. ``reader_stopped``: the reader, not the server, ended it (a client that left the
        proxy): what arrived is checked, the end of the stream is not (no terminal event, no ``[DONE]`` and an
        unfinished last event are then nobody's fault)."""
        if self._closed_result is not None:
            return self._closed_result
        out: list[Finding] = []
        if not self._sniffed:
            held = self._sniff(b"", out, final=True)
            if held and not self._opaque:
                for item in self.decoder.feed(held):
                    self._take(item, out)
        if self._stopped:
            self._report_stop(out)
        if self._opaque:
            self._report_opaque(out)
        else:
            for item in () if reader_stopped else self.decoder.close():
                if self._stopped:
                    break
                if isinstance(item, SSEEvent) and item.index >= self.limits.max_events:
                    self._stop("event", self.limits.max_events, item.position)
                    self._report_stop(out)
                    break
                self._take(item, out)
            end = self.decoder.end_position()
            if self._stopped or reader_stopped:
                pass  # the end of the stream was never checked: say nothing about it
            elif self.decoder.events_dispatched == 0 and not any(
                f.code in ("SSE004", "SSE020", "SSE021") for f in self._firsts
            ):
                what = "" if self.decoder.bytes_seen == 0 else " (no events: only blank lines or comments)"
                self._emit(framing.EMPTY_STREAM.finding(end, what=what), out)
            elif not self._foreign:
                for finding in self.machine.finish(end):
                    self._emit(finding, out)
                if self.profile.done_sentinel == "required" and not self._done_seen:
                    self._emit(framing.DONE_MISSING.finding(end), out)
        summary = self.machine.summary()
        facts = StreamFacts(truncated=summary.truncated)
        for finding in self._deferred:
            self._record(self.profile.apply(finding, facts), out)
        findings = self._firsts
        if self._collapse:
            findings = [
                dataclasses.replace(f, occurrences=self._counts[(f.code, f.message)])
                if self._counts[(f.code, f.message)] > 1
                else f
                for f in findings
            ]
        findings.sort(key=lambda f: (f.position.byte, f.position.line))
        self._closed_result = LintResult(
            findings=findings,
            events=min(self.decoder.events_dispatched, self.limits.max_events),
            bytes=self.decoder.bytes_seen + self._opaque_bytes,
            terminal=summary.terminal,
            terminals=summary.terminals,
            response_id=summary.response_id,
            profile=self.profile.name,
            dialect=self.dialect.name,
            trace=self._trace,
            texts=summary.texts,
            items=list(summary.items),
        )
        return self._closed_result

    def _stop(self, what: str, limit: int, pos: Position | None) -> None:
        """A stream limit was hit: reported once at close; later input is counted, not checked.

        ``pos`` is the first event beyond an event limit; for the byte limit it is
        taken at close, when the decoder has seen exactly ``max_bytes`` bytes
        however they were chunked.
        """
        if self._stopped:
            return
        self._stopped = True
        self._stop_pending = (what, limit, pos)

    def _report_stop(self, out: list[Finding]) -> None:
        what, limit, pos = self._stop_pending
        rest = f"{self._ignored} more bytes" if what == "byte" else "the events after it"
        at = pos if pos is not None else self.decoder.end_position()
        self._emit(framing.STREAM_LIMIT.finding(at, what=what, limit=limit, rest=rest), out)

    _stop_pending: tuple[str, int, Position | None] = ("", 0, None)

    # -- what kind of body is this? --------------------------------------------

    _opaque_bytes = 0

    def _sniff(self, chunk: bytes, out: list[Finding], *, final: bool) -> bytes:
        """Look at the first significant bytes once; return what the decoder should get.

        JSON, markup and gzip show in their first byte, and other binary formats in their magic number.
        Otherwise the first lines decide (up to ``_SNIFF_LINES`` of them within ``_SNIFF_BYTES``): if none
        is an event-stream line (``data``, ``event``, ``id``, ``retry`` or a ``:`` comment) the input is
        text or binary of another kind (a Markdown page, a PNG), reported once rather than line by line."""
        self._head += chunk
        head = self._head
        significant = head.removeprefix(b"\xef\xbb\xbf").lstrip(b" \t\r\n")
        if not final and (not significant or (len(head) < 3 and b"\xef\xbb\xbf".startswith(head))):
            return b""  # nothing to judge by yet (or half a BOM): hold the bytes back
        if len(significant) < 2 and significant[:1] == b"\x1f" and not final:
            return b""
        kind = _body_kind(significant)
        if kind is None:
            verdict = _first_lines_kind(significant, final=final or len(head) >= _SNIFF_BYTES)
            if verdict is _UNDECIDED:
                return b""  # the first lines are not complete yet
            kind = verdict
        self._sniffed = True
        if kind is None:
            self._head = b""
            return head
        # Not an event stream: keep the first bytes for the message, which is
        # given at close so that it does not depend on how the body was chunked.
        self._opaque = True
        self._opaque_kind = kind
        self._opaque_bytes = len(head)
        self._head = head[:_SNIPPET_BYTES]
        return b""

    def _report_opaque(self, out: list[Finding]) -> None:
        significant = self._head.removeprefix(b"\xef\xbb\xbf").lstrip(b" \t\r\n")
        kind = _body_kind(significant) or self._opaque_kind
        if kind == "gzip-compressed data":
            snippet = "1f 8b …"
        elif kind.startswith(("binary", "a PNG", "a JPEG", "a GIF", "a PDF", "a ZIP", "an ELF", "a WebP")):
            snippet = " ".join(f"{b:02x}" for b in significant[:8]) + " …"
        elif kind.startswith("plain text"):
            snippet = repr(_clip(significant.split(b"\n", 1)[0].rstrip(b"\r"), 60))
        else:  # JSON, markup: the start, its line breaks and indentation folded into single spaces
            snippet = _clip(re.sub(rb"\s+", b" ", significant[:_SNIPPET_BYTES]), 120)
        self._emit(framing.NOT_AN_EVENT_STREAM.finding(Position(line=1, byte=0), kind=kind, snippet=snippet), out)

    _opaque_kind = ""

    # -- one decoded unit -----------------------------------------------------

    def _take(self, item: SSEEvent | Finding, out: list[Finding]) -> None:
        if isinstance(item, Finding):
            self._emit(item, out)
            return
        self._event(item, out)

    def _event(self, ev: SSEEvent, out: list[Finding]) -> None:
        """One event by the full path (the hot path is inlined in ``feed``)."""
        if self._trace is not None:
            self._event_full(ev, out, self._trace_event(ev))
            return
        self._event_full(ev, out)

    def _trace_event(self, ev: SSEEvent) -> Any:
        """Record one event for timelines and the HTML report; return its parsed JSON
        (or ``_UNPARSED``) so the full path does not parse it twice. Trace mode only."""
        data = ev.data
        obj: Any = _UNPARSED
        if data == b"[DONE]":
            etype, lane = "[DONE]", "response"
        else:
            try:
                obj = orjson.loads(data)
            except orjson.JSONDecodeError:
                obj = _UNPARSED
            if isinstance(obj, dict):
                named = obj.get("type")
                etype = named if isinstance(named, str) else "?"
                lane = _lane(obj)
            else:
                etype = "(not JSON)" if obj is _UNPARSED else "(not an object)"
                lane = "response"
        kept = data[:TRACE_DATA_CLIP]
        if self._trace_bytes > TRACE_DATA_BUDGET and etype.endswith(".delta"):
            kept = b""
        self._trace_bytes += len(kept)
        if self._trace is not None:
            self._trace.append(TraceEntry(ev.index, ev.line, etype, lane, ev.byte, kept, self._now))
        return obj

    def _event_full(self, ev: SSEEvent, out: list[Finding], obj: Any = _UNPARSED,
                    violations: list[Any] | None = None) -> None:
        data = ev.data
        if data == b"[DONE]":
            pos = ev.position
            self._plain = False
            if self._foreign:
                return
            if self._done_seen:
                self._emit(framing.AFTER_TERMINAL.finding(pos, what="a second [DONE]", terminal="[DONE]"), out)
            self._done_seen = True
            if self.profile.done_sentinel == "forbidden":
                self._emit(framing.DONE_SENT.finding(pos), out)
            return
        if self._done_seen:
            self._emit(
                framing.AFTER_TERMINAL.finding(ev.position, what=f"event {ev.event or 'data'}", terminal="[DONE]"),
                out,
            )
            return
        unusual_numbers = False
        try:
            if obj is _UNPARSED:
                obj, unusual_numbers = _loads(data)
        except orjson.JSONDecodeError as exc:
            pos = ev.position
            stripped = data.strip()
            if stripped.startswith(b":") or stripped.lower() in _KEEPALIVE_WORDS:
                self._emit(framing.KEEPALIVE_AS_DATA.finding(pos, data=_clip(data)), out)
            elif "depth limit" in str(exc):
                self._emit(framing.JSON_TOO_DEEP.finding(pos, limit=self.limits.max_json_depth), out)
            else:
                self._emit(framing.DATA_NOT_JSON.finding(pos, error=_json_error(exc, data)), out)
            return
        if not isinstance(obj, dict):
            self._emit(framing.DATA_NOT_OBJECT.finding(ev.position, kind=_json_kind(obj)), out)
            return
        hazards = _json_hazards(data, obj, self.limits.max_json_depth, unusual_numbers)
        if hazards:
            for rule, fields in hazards:
                self._emit(rule.finding(ev.position, **fields), out)
            if any(rule is framing.JSON_TOO_DEEP for rule, _ in hazards):
                return
        if self._first_object:
            self._first_object = False
            foreign = _foreign_api(obj)
            if foreign is not None:
                self._foreign = True
                self._emit(schema.WRONG_API.finding(ev.position, api=foreign[0], evidence=foreign[1]), out)
            self._plain = not self._foreign and self._trace is None
        if self._foreign:
            return
        etype = obj.get("type")
        pos = Position(line=ev.line, byte=ev.byte, event_index=ev.index,
                       event_type=etype if isinstance(etype, str) else ev.event)
        if ev.data_lines > 1:
            self._emit(framing.MULTILINE_DATA.finding(pos, count=ev.data_lines), out)
        error = obj.get("error")
        if error and etype != "error":
            # An error event's own `error` object is OpenAI's wire form of it (LIF013's), not a stray field.
            self._emit(
                lifecycle.TOP_LEVEL_ERROR.finding(pos, type=etype, detail=_clip(orjson.dumps(error), 120)), out
            )
        if not isinstance(etype, str):
            self._emit(schema.MISSING_TYPE.finding(pos), out)
            return
        if ev.event is None:
            self._emit(framing.MISSING_EVENT_LINE.finding(pos), out)
        elif ev.event != etype:
            self._emit(framing.EVENT_MISMATCH.finding(pos, event=ev.event, type=etype), out)
        if not self.machine.terminated:
            if violations is None:
                violations = self.schemas.validate_event(obj)
            if violations:
                for finding in _schema_findings(violations, etype, pos):
                    self._emit(finding, out)
        try:
            findings = self.machine.handle(obj, pos)
        except Exception as exc:  # noqa: BLE001 - one event's verdict, never the run (docs/robustness.md)
            findings = [framing.CHECKER_ERROR.finding(pos, error=f"{type(exc).__name__}: {exc}")]
        for finding in findings:
            self._emit(finding, out)

    # -- recording ------------------------------------------------------------

    def _wanted(self, code: str) -> bool:
        if not self.profile.is_enabled(code):
            return False
        if self._select and not code.startswith(self._select):
            return False
        if self._ignore and code.startswith(self._ignore):
            return False
        return True

    def _emit(self, finding: Finding, out: list[Finding]) -> None:
        if not self._wanted(finding.code):
            return
        if finding.code in self._deferred_codes:
            self._deferred.append(finding)
            return
        self._record(self.profile.apply(finding), out)

    def _record(self, finding: Finding, out: list[Finding]) -> None:
        key = (finding.code, finding.message)
        seen = self._counts.get(key, 0)
        self._counts[key] = seen + 1
        if seen and self._collapse:
            return
        self._firsts.append(finding)
        out.append(finding)


def lint_bytes(data: bytes, **options: Any) -> LintResult:
    """Lint a whole capture held in memory."""
    linter = StreamLinter(**options)
    linter.feed(data)
    return linter.close()


def lint_chunks(chunks: Iterable[bytes], **options: Any) -> LintResult:
    """Lint a capture arriving as an iterable of chunks (a file read in blocks, a socket)."""
    linter = StreamLinter(**options)
    for chunk in chunks:
        linter.feed(chunk)
    return linter.close()


def _schema_findings(violations: list[Any], etype: str, pos: Position) -> list[Finding]:
    """Schema violations as findings: a field with a rule of its own gets that rule;
    the others are grouped by rule, and missing properties of one object are one
    finding ("missing 'a', 'b', 'c'"), so a reduced response object is one line."""
    out: list[Finding] = []
    missing: dict[tuple[Rule, str], list[str]] = {}
    for violation in violations:
        pointer: str = violation.pointer
        if violation.keyword == "required" and pointer in FIELD_RULES:
            details = {"keyword": "required", "missing": [violation.missing], "pointer": pointer, "type": etype}
            out.append(FIELD_RULES[pointer].finding(pos, pointer=pointer, details=details, type=etype))
            continue
        rule = _schema_rule(pointer)
        if violation.keyword == "required" and violation.missing is not None:
            parent = pointer.rsplit("/", 1)[0]
            missing.setdefault((rule, parent), []).append(violation.missing)
            continue
        details = {"keyword": violation.keyword, "missing": [], "pointer": pointer, "type": etype}
        out.append(_schema_finding(rule, pos, pointer, details, etype, violation.message))
    for (rule, parent), names in missing.items():
        details = {"keyword": "required", "missing": names, "pointer": parent, "type": etype}
        listed = ", ".join(repr(n) for n in names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        text = f"missing required propert{'y' if len(names) == 1 else 'ies'} {listed}"
        out.append(_schema_finding(rule, pos, parent, details, etype, text))
    return out


def _schema_rule(pointer: str) -> Rule:
    if pointer.startswith("/response/usage"):
        return lifecycle.USAGE_MALFORMED
    if pointer.startswith("/response/output/") or _under(pointer, "/item"):
        return schema.ITEM_SCHEMA
    if _under(pointer, "/response"):
        return schema.RESPONSE_SCHEMA
    if _under(pointer, "/part"):
        return schema.PART_SCHEMA
    return schema.EVENT_SCHEMA


def _under(pointer: str, prefix: str) -> bool:
    """``pointer`` is ``prefix`` or inside it (``/item_id`` is not inside ``/item``)."""
    return pointer == prefix or pointer.startswith(prefix + "/")


def _schema_finding(rule: Rule, pos: Position, pointer: str, details: dict[str, Any], etype: str,
                    text: str) -> Finding:
    if rule is lifecycle.USAGE_MALFORMED:
        return rule.finding(pos, pointer=pointer, details=details, detail=f"{pointer}: {text}")
    return rule.finding(pos, pointer=pointer, details=details, type=etype, where=pointer or "/", detail=text)


# 16 digits in a row: a necessary condition of an integer beyond 2^53 (orjson
# turns those beyond 64 bits into floats silently). Overflowing exponents need
# no prefilter: orjson refuses them, which takes the full path.
_DIGITS_AS_ZERO = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
_SIXTEEN_DIGITS = b"0" * 16


# A number token with 16 digits: after ':', '[' or ',' (JSON numbers appear nowhere else). Sixteen digits
# inside a string (a hex id has such runs by chance) need no second parse.
_LONG_NUMBER_TOKEN = re.compile(rb"[:\[,][ \t\r\n]*-?[0-9]{16}")


def _has_long_digits(data: bytes) -> bool:
    # A translate and a substring search: several times cheaper than a regex scan.
    return _SIXTEEN_DIGITS in data.translate(_DIGITS_AS_ZERO)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


# An event larger than this is parsed by the standard library: orjson (yyjson) first reserves a DOM of about
# eight times the input, plus a copy of it, which for the multi-megabyte response.completed of a long stream
# was the lint's peak memory. The standard parser builds the objects directly. It is used only where the two
# agree: a document that starts as an object, with no BOM, no surrogate (escaped or encoded, which only the
# standard parser accepts) and no NaN/Infinity; anything it refuses goes to orjson, for orjson's error.
BIG_JSON_BYTES = 1 << 20
_INF = float("inf")
_STDLIB_ONLY = re.compile(rb"\\u[dD][89a-fA-F]|\xed[\xa0-\xbf]")


def _loads(data: bytes) -> tuple[Any, bool]:
    """orjson, and for the legal JSON it refuses (a number beyond a double), the standard
    parser; the flag says the fallback was needed (so the numbers deserve a look)."""
    if len(data) > BIG_JSON_BYTES and data[:1] == b"{" and _STDLIB_ONLY.search(data) is None:
        overflowed: list[str] = []

        def as_float(text: str) -> float:
            value = float(text)
            if value in (_INF, -_INF):
                overflowed.append(text)  # orjson refuses these: the flag, as on its fallback below
            return value

        try:
            # Integers beyond a double need 16 digits, which _json_hazards looks for anyway.
            return json.loads(data, parse_constant=_reject_constant, parse_float=as_float), bool(overflowed)
        except (ValueError, RecursionError):
            pass
    try:
        return orjson.loads(data), False
    except orjson.JSONDecodeError as exc:
        if "number" not in str(exc):
            raise
        try:
            return json.loads(data, parse_constant=_reject_constant), True
        except (ValueError, RecursionError):
            raise exc from None


def _json_hazards(data: bytes, obj: dict[str, Any], max_depth: int,
                  unusual_numbers: bool = False) -> list[tuple[Rule, dict[str, Any]]]:
    """Legal JSON that clients read differently: repeated keys, unsafe numbers, deep nesting.

    Each check has a cheap necessary condition first; the exact (slow) check runs
    only when it holds, so ordinary events pay a few byte counts.
    """
    found: list[tuple[Rule, dict[str, Any]]] = []
    if data.count(b"{") + data.count(b"[") > max_depth and _depth(obj) > max_depth:
        return [(framing.JSON_TOO_DEEP, {"limit": max_depth})]
    if data.count(b":") > _key_count(obj):
        for key in _duplicate_keys(data):
            found.append((framing.DUPLICATE_KEY, {"key": key}))
    # Beyond 2^53 needs 16 digits in a row; an overflowing exponent makes orjson
    # fail, and the fallback parse reports it (see _loads).
    if unusual_numbers or (_has_long_digits(data) and _LONG_NUMBER_TOKEN.search(data) is not None):
        for number in _unsafe_numbers(data):
            found.append((framing.NUMBER_RANGE, {"number": number}))
    return found


def _depth(value: Any) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict):
            node = node.values()
        elif not isinstance(node, list):
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in node if isinstance(child, (dict, list)))
    return deepest


def _key_count(value: Any) -> int:
    """Keys in all objects of a parsed document (each key is one `":` in compact JSON)."""
    count, stack = 0, [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            count += len(node)
            stack.extend(v for v in node.values() if isinstance(v, (dict, list)))
        elif isinstance(node, list):
            stack.extend(v for v in node if isinstance(v, (dict, list)))
    return count


def _duplicate_keys(data: bytes) -> list[str]:
    found: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: set[str] = set()
        for key, _ in items:
            if key in seen:
                found.append(key)
            seen.add(key)
        return dict(items)

    try:
        json.loads(data, object_pairs_hook=pairs)
    except (ValueError, RecursionError):
        return []
    return found


def _unsafe_numbers(data: bytes) -> list[str]:
    found: list[str] = []

    def as_int(text: str) -> int:
        value = int(text)
        if abs(value) > 2**53:
            found.append(text if len(text) <= 40 else text[:37] + "…")
        return value

    def as_float(text: str) -> float:
        value = float(text)
        if value in (float("inf"), float("-inf")):
            found.append(text)
        return value

    try:
        json.loads(data, parse_int=as_int, parse_float=as_float)
    except (ValueError, RecursionError):
        return []
    return found


def _lane(obj: dict[str, Any]) -> str:
    item = obj.get("item")
    if isinstance(item, dict) and isinstance(item.get("id"), str):
        return item["id"]
    item_id = obj.get("item_id")
    if isinstance(item_id, str):
        return item_id
    index = obj.get("output_index")
    if type(index) is int:
        return f"#{index}"
    return "response"


# Magic numbers of files that get linted by mistake (a screenshot next to the captures).
_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "a PNG image"), (b"\xff\xd8\xff", "a JPEG image"), (b"GIF8", "a GIF image"),
    (b"%PDF-", "a PDF document"), (b"PK\x03\x04", "a ZIP archive"), (b"\x7fELF", "an ELF executable"),
    (b"RIFF", "a RIFF file (WebP, WAV)"), (b"\x28\xb5\x2f\xfd", "zstd-compressed data"),
    (b"BZh", "bzip2-compressed data"), (b"\xfd7zXZ\x00", "xz-compressed data"),
)
# How much of the start is read to tell an event stream from other text.
_SNIFF_BYTES = 4096
_SNIFF_LINES = 32
_UNDECIDED: Any = object()
_STREAM_LINE = re.compile(rb"(?:data|event|id|retry)(?::|$)|:")


def _body_kind(head: bytes) -> str | None:
    if head.startswith(b"\x1f\x8b"):
        return "gzip-compressed data"
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    first = head[:1]
    if first in (b"{", b"["):
        return "a JSON document"
    if first == b"<":
        return "an HTML page" if b"html" in head[:512].lower() else "markup (HTML/XML)"
    return None


def _first_lines_kind(head: bytes, *, final: bool) -> Any:
    """None when one of the first lines is an event-stream line; else what the input is ("text …", "binary
    data"); ``_UNDECIDED`` while no line is complete and more may come."""
    lines = head.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
    complete = lines if final else lines[:-1]
    if not final and len(lines) > 1 and not any(lines[:-1]) and not lines[-1]:
        return _UNDECIDED
    seen = 0
    for line in complete:
        if not line:
            continue
        if _STREAM_LINE.match(line.lstrip(b"\xef\xbb\xbf")):
            return None
        seen += 1
        if seen >= _SNIFF_LINES:
            break
    if seen == 0 or (not final and seen < _SNIFF_LINES):
        return _UNDECIDED if not final else None
    if b"\x00" in head or not _is_utf8(head):
        return "binary data"
    return "plain text (no line starts with data:, event:, id:, retry: or :)"


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start >= len(data) - 3  # a character cut at the end of the sample
    return True


_ANTHROPIC_TYPES = frozenset({"message_start", "content_block_start", "content_block_delta", "message_delta",
                              "message_stop", "content_block_stop"})


def _foreign_api(obj: dict[str, Any]) -> tuple[str, str] | None:
    """(API name, evidence) when an event object belongs to another API."""
    kind = obj.get("object")
    if kind == "chat.completion.chunk" or ("choices" in obj and "type" not in obj):
        return "an OpenAI Chat Completions stream", f"object {kind!r}, choices[]"
    if kind == "text_completion":
        return "a legacy Completions stream", "object 'text_completion'"
    etype = obj.get("type")
    if isinstance(etype, str) and etype in _ANTHROPIC_TYPES:  # any JSON may be there: a list is unhashable
        return "an Anthropic Messages stream", f"type {etype!r}"
    return None


def _json_kind(value: Any) -> str:
    return {list: "array", str: "string", int: "number", float: "number", bool: "boolean",
            type(None): "null"}.get(type(value), type(value).__name__)


def _json_error(exc: Exception, data: bytes) -> str:
    text = str(exc)
    if not data.strip():
        return "empty data"
    return text


def _clip(value: bytes, n: int = 60) -> str:
    text = value.decode("utf-8", "replace")
    return text if len(text) <= n else text[:n] + "…"
