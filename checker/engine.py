"""The one pipeline: bytes → SSE decoder → JSON → the dialect's schemas → its machine → findings.

``lint``, ``probe``, ``serve`` tests, ``proxy`` and the pytest plugin all call :class:`StreamLinter`, so a
live verdict and the lint of its saved capture are the same computation on the same bytes. The engine is
sans-I/O: it is fed bytes and returns findings; reading files or sockets is the caller's job.

This module is the pipeline only: feeding and closing, the inlined hot path, the full path of one event, the
stream limits. It names no dialect: which API a stream speaks, and everything that API brings (its machine,
schema set, schema findings, event types), come from its :class:`~checker.dialects.base.Dialect` (given, or
recognised from the first event object). Each concern around it has a module: whether the body is an event
stream at all (checker/body_sniff.py), JSON parsing and its hazards (checker/json_scan.py), what is reported
and how (checker/finding_sink.py: select/ignore, the profile, deferral, collapsing: repeated findings are
reported once, with ``occurrences`` counting them all), and what a lint returns (checker/lint_result.py).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from typing import Any, Self

import orjson

from checker import dialects, json_scan, structured_output
from checker.body_sniff import BodySniffer
from checker.dialects.base import Dialect, Machine, StreamSummary
from checker.dialects.grading import touched
from checker.engine_options import EngineOptions
from checker.finding_sink import FindingSink
from checker.findings import Finding, Position
from checker.json_scan import has_long_digits, key_count
from checker.lint_result import TRACE_DATA_BUDGET, TRACE_DATA_CLIP, Limits, LintResult, Trace, TraceEntry
from checker.profiles import OPENAI, Profile, StreamFacts
from checker.rules import framing, schema
from checker.run_template import RunTemplates, Template
from checker.sse import SSEDecoder, SSEEvent

# Re-exported: the engine's results and limits are imported from here by most callers.
__all__ = ["TRACE_DATA_BUDGET", "TRACE_DATA_CLIP", "EngineOptions", "Limits", "LintResult", "StreamLinter", "TraceEntry",
           "lint_bytes", "lint_chunks"]

_UNPARSED = json_scan.UNPARSED
# Set by a first finding of these: an empty stream is no news then.
_EMPTY_EXPLAINED = ("SSE004", "SSE020", "SSE021")


class StreamLinter:
    """Incremental lint of one stream, as ``dialect`` (a name or a Dialect) or, by default, as the dialect its
    first event object shows (checker/dialects.recognise; the default dialect when none does).

    ``feed(chunk)`` returns the findings that chunk completed (first occurrences only, profile applied);
    ``close()`` ends the stream and returns the :class:`LintResult`. ``trace`` records every event for timelines;
    ``keep_texts`` keeps what each done item accumulated (``LintResult.texts``), else released to bound memory.
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
        dialect: Dialect | str | None = None,
    ) -> None:
        self.profile = profile
        # A dialect given is the stream's whatever it shows; otherwise its first event object decides.
        self._forced = dialect is not None
        self.dialect = dialects.get(dialect) if isinstance(dialect, str) else dialect or dialects.default()
        self._request = request
        self._keep_texts = trace or keep_texts
        self._use(self.dialect, schema_set)
        self.limits = limits
        self.decoder = SSEDecoder(max_line_bytes=limits.max_line_bytes, max_event_bytes=limits.max_event_bytes)
        self.sniffer = BodySniffer()
        self.sink = FindingSink(profile, select=select, ignore=ignore, collapse=collapse)
        self._emit = self.sink.emit  # bound once: every finding of the pipeline goes through it
        self._fed = 0
        self._ignored = 0
        self._stopped = False
        self._stop_pending: tuple[str, int, Position | None] = ("", 0, None)
        self._done_seen = False
        self._closed_result: LintResult | None = None
        # Set when the first event object is another API's: one finding (SCH010)
        # says so instead of a cascade of protocol findings.
        self._foreign = False
        self._first_object = True
        # True once the first event showed a stream of the dialect and no trace is
        # kept: the hot path in feed may be taken.
        self._plain = False
        # Every event recorded for timelines and the HTML report; off by default.
        self._trace: Trace | None = Trace() if trace else None

    @classmethod
    def from_options(cls, options: EngineOptions, *, request: dict[str, Any] | None = None,
                     dialect: Dialect | str | None = None, keep_texts: bool = False) -> Self:
        """The engine under typed options; ``dialect`` wins over theirs (an exchange's recorded endpoint's)."""
        return cls(profile=options.profile, request=request, select=options.select, ignore=options.ignore,
                   limits=options.limits, collapse=options.collapse, trace=options.trace, keep_texts=keep_texts,
                   dialect=dialect if dialect is not None else options.dialect)

    def _use(self, dialect: Dialect, schemas: Any = None) -> None:
        """Check the stream as ``dialect``: its schema set (``schemas``, else the one the profile names for it)
        and a fresh machine."""
        self.dialect = dialect
        if schemas is None:
            from checker.schemas import load_schema_set

            schemas = load_schema_set(self.profile.schema_set_for(dialect))
        self.schemas = schemas
        # The schema set's compiled validators by event type, when it exposes them.
        self._validators: dict[str, Any] | None = getattr(schemas, "_event_validators", None)
        # A request that asks for a JSON answer keeps the texts: judged at the end (checker.structured_output).
        self._format = dialect.requested_format(self._request) if dialect.requested_format is not None else None
        self.machine: Machine = dialect.make_machine(request=self._request, known_types=schemas.known_event_types(),
                                                     keep_texts=self._keep_texts or self._format is not None)
        self._done_rule = self.profile.done_sentinel_for(dialect)
        # Runs of near-identical events, taken by their bytes (checker/run_template.py).
        self._runs = RunTemplates(schemas, getattr(self.machine, "run_spec", None))
        self._template: Template | None = None

    def _adopt(self, obj: dict[str, Any]) -> None:
        """The first event object: unless a dialect was given, the dialect it shows is the stream's."""
        if self._forced or not self._first_object:
            return
        found, _ = dialects.recognise(obj)
        if found is not None and found is not self.dialect:
            self._use(found)

    def _hot(self) -> tuple[dict[str, Any], Any, Any, str, bool, RunTemplates]:
        """What the hot path reads: validators by type, validate, try_fast, type key, event names, templates."""
        dialect = self.dialect
        return (self._validators or {}, self.schemas.validate_event, self.machine.try_fast, dialect.type_key,
                dialect.event_names, self._runs)

    # -- feeding --------------------------------------------------------------

    def mark_time(self, seconds: float) -> None:
        """Stamp the next ``feed()``'s events with their arrival time (trace only: the engine reads no clock)."""
        if self._trace is not None:
            self._trace.now = seconds

    def feed(self, chunk: bytes) -> list[Finding]:
        """The next bytes of the stream; the findings they completed (first occurrences, profile applied)."""
        out: list[Finding] = []
        admitted = self._admit(chunk)
        if admitted is None:
            return out
        # During a run, the event the chunk began inside is decoded first: the decoder starts the rest between two
        # events, where it takes the run's whole (SSEDecoder.run); its output does not depend on the cut.
        if self._template is not None and 1 < (cut := admitted.find(b"\n\n") + 2) < len(admitted):
            self._feed_admitted(admitted[:cut], out)
            admitted = admitted[cut:]
            if self._stopped:  # the decoder still counts the rest, unchecked, as when it came in one piece
                self.decoder.feed(admitted)
                return out
        return self._feed_admitted(admitted, out)

    def _feed_admitted(self, admitted: bytes, out: list[Finding]) -> list[Finding]:
        """``feed`` of bytes the stream admitted: the hot path."""
        decoder = self.decoder
        digits = self._long_digits_possible(admitted)
        event_type = SSEEvent
        max_events = self.limits.max_events
        # The hot path, inlined with its names in locals (it runs once per event):
        # once the stream has shown what it is, a well-framed event that the
        # schema and the machine's fast path both accept has nothing to report.
        # Anything else, and every event while tracing, takes _event.
        loads, dumps, decode_error = orjson.loads, orjson.dumps, orjson.JSONDecodeError
        validators, validate, try_fast, type_key, named, runs = self._hot()
        budget, big = self.limits.max_json_depth, json_scan.BIG_JSON_BYTES
        plain = self._plain  # re-read after every slow path: the first event object decides it
        template = self._template  # the next event of a run, taken by its bytes
        items = decoder.feed(admitted)
        if template is not None:
            template.flush()  # the events the decoder took (SSEDecoder.run) came before all these items
        for item in items:
            if type(item) is not event_type:
                self._emit(item, out)  # type: ignore[arg-type]
                continue
            index, data, name, _, _, _, _, _, data_lines = item  # one unpack, not five attribute reads
            if index >= max_events:
                self._stop("event", max_events, item.position)  # type: ignore[union-attr]
                break
            if template is not None:
                if name == template.name and data_lines == 1 and template.match(data):
                    continue
                template.flush()
                runs.dropped(template, index)
                template = self._template = None
            if not plain or data_lines != 1 or len(data) > big:
                if plain and len(data) > big and data != b"[DONE]":
                    # A huge event (a long answer repeated in a terminal event): its bytes leave the decoder's
                    # list, this frame and the event, so that the parse can free them once they are decoded.
                    raw, ev = [data], item._replace(data=b"")  # type: ignore[union-attr]
                    items[items.index(item)] = ev
                    del item, data
                    self._event_full(ev, out, raw=raw)
                else:
                    self._event(item, out)  # type: ignore[arg-type]
                    if self._plain and not plain:  # the first event object chose the dialect
                        validators, validate, try_fast, type_key, named, runs = self._hot()
                plain = self._plain
                continue
            try:
                obj = loads(data)
            except decode_error:
                obj = _UNPARSED
            # Cheap necessary conditions of the JSON hazards (a repeated key, deep
            # nesting, a long number): when one holds, the full path checks. Every key
            # is followed by a colon, after optional white space, so more colons than
            # keys is necessary for a repeated one (a colon inside a string costs only
            # the slower path). The keys of the objects one level down count too (an Anthropic
            # delta's `delta`), summed only when the top level's alone do not account for the colons;
            # deeper (a chat chunk's choices[].delta), data that is its own object re-serialised
            # compactly (what servers send) cannot have repeated a key; else every key is counted.
            # A dialect without `event:` names takes an event that has one, or no type, by the full path.
            if (
                type(obj) is not dict
                or ((name != (etype := obj.get(type_key))) if named
                    else ((etype := obj.get(type_key)) is None or name is not None))
                or "error" in obj
                or ((colons := data.count(b":")) > len(obj)
                    and colons > len(obj) + sum([len(v) for v in obj.values() if type(v) is dict])
                    and dumps(obj) != data and colons > key_count(obj))
                or len(data) - len(data.translate(None, b"[{")) > budget  # one pass for both brackets
                or (digits and has_long_digits(data))
            ):
                self._event_full(item, out, obj)  # type: ignore[arg-type]
                plain = self._plain
                continue
            validator = validators.get(etype)  # type: ignore[arg-type]
            if validator is not None and validator.is_valid(obj):
                if try_fast(etype, obj):  # type: ignore[arg-type]
                    if runs.enabled:
                        template = self._template = runs.start(index, data, obj, name, etype)  # type: ignore
                    continue
                violations: list[Any] = []
            else:
                violations = validate(obj)
                if not violations and try_fast(etype, obj):  # type: ignore[arg-type]
                    continue
            self._event_full(item, out, obj, violations)  # type: ignore[arg-type]
            plain = self._plain
        if template is not None:
            template.flush()
            decoder.run, decoder.run_lines, decoder.run_limit = template.wire, template.lines, max_events
        else:
            decoder.run = None
        return out

    def _admit(self, chunk: bytes) -> bytes | None:
        """What of ``chunk`` the decoder gets: None once the stream is stopped or is no event stream at all.

        Bytes beyond the byte limit are counted, not checked; the first bytes are held by the sniffer
        until they show what the body is (b"" meanwhile)."""
        if self._stopped:
            self._ignored += len(chunk)
            return None
        room = self.limits.max_bytes - self._fed
        self._fed += len(chunk)
        if len(chunk) > room:
            self._ignored += len(chunk) - room
            chunk = chunk[:room]
            self._stop("byte", self.limits.max_bytes, None)
        sniffer = self.sniffer
        if not sniffer.decided:
            chunk = sniffer.sniff(chunk, final=False)
        if sniffer.opaque:
            sniffer.swallow(chunk)
            return None
        return chunk

    def _long_digits_possible(self, chunk: bytes) -> bool:
        """Whether an event ``chunk`` completes may hold 16 digits in a row (an integer beyond 2^53)."""
        decoder = self.decoder
        return bool(decoder._data) or decoder.pending_line or has_long_digits(decoder._buf + chunk)

    def close(self, *, reader_stopped: bool = False) -> LintResult:
        """End of the stream. ``reader_stopped``: the reader, not the server, ended it (a client that left the
        proxy): what arrived is checked, the end of the stream is not (no terminal event, no ``[DONE]`` and an
        unfinished last event are then nobody's fault)."""
        if self._closed_result is not None:
            return self._closed_result
        out: list[Finding] = []
        sniffer = self.sniffer
        if not sniffer.decided:
            held = sniffer.sniff(b"", final=True)
            if held and not sniffer.opaque:
                for item in self.decoder.feed(held):
                    self._take(item, out)
        if self._stopped:
            self._report_stop(out)
        if sniffer.opaque:
            self._emit(sniffer.finding(), out)
        else:
            self._finish(out, reader_stopped=reader_stopped)
        summary = self.machine.summary()
        self.sink.settle(StreamFacts(truncated=summary.truncated), out)
        result = self._closed_result = self._result(summary)
        result.findings = touched(result, self.dialect.effects(), frozenset(self.profile.severity))  # per finding
        return result

    def _finish(self, out: list[Finding], *, reader_stopped: bool) -> None:
        """The decoder's last input, then the end of the stream checked, if the stream reached it."""
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
            return  # the end of the stream was never checked: say nothing about it
        if self.decoder.events_dispatched == 0 and not self.sink.reported(_EMPTY_EXPLAINED):
            what = "" if self.decoder.bytes_seen == 0 else " (no events: only blank lines or comments)"
            self._emit(framing.EMPTY_STREAM.finding(end, what=what), out)
        elif not self._foreign:
            for finding in self.machine.finish(end):
                self._emit(finding, out)
            if self._format is not None and self.dialect.answer_texts is not None:  # structured output
                answers = self.dialect.answer_texts(self.machine.summary()) or []
                for finding in structured_output.check(self._format, answers, end, self.dialect.clients_for):
                    self._emit(finding, out)
            if self._done_rule == "required" and not self._done_seen:
                self._emit(framing.DONE_MISSING.finding(end), out)

    def _result(self, summary: StreamSummary) -> LintResult:
        return LintResult(
            findings=self.sink.findings(),
            events=min(self.decoder.events_dispatched, self.limits.max_events),
            bytes=self.decoder.bytes_seen + self.sniffer.opaque_bytes,
            terminal=summary.terminal,
            terminals=summary.terminals,
            response_id=summary.response_id,
            profile=self.profile.name,
            dialect=self.dialect.name,
            trace=self._trace.entries if self._trace is not None else None,
            texts=summary.texts if self._keep_texts else None,  # kept for a structured check only: not shown
            items=list(summary.items),
            stop_reason=summary.stop_reason,
        )

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
        obj: Any = _UNPARSED
        if ev.data != b"[DONE]":
            with contextlib.suppress(orjson.JSONDecodeError):
                obj = orjson.loads(ev.data)
            if isinstance(obj, dict):
                self._adopt(obj)
        if self._trace is not None:
            self._trace.observe(ev, obj, self.dialect, parsed=obj is not _UNPARSED)
        return obj

    def _event_full(self, ev: SSEEvent, out: list[Finding], obj: Any = _UNPARSED,
                    violations: list[Any] | None = None, raw: list[bytes] | None = None) -> None:
        """One event with every check, ``obj`` its data if already parsed, ``violations`` its schema
        violations if already validated; ``raw``: the data of a huge event, in a list that holds the only
        reference to it (``ev.data`` is then empty)."""
        if ev.data == b"[DONE]":
            self._done(ev.position, out)
            return
        if self._done_seen:
            self._emit(
                framing.AFTER_TERMINAL.finding(ev.position, what=f"event {ev.event or 'data'}", terminal="[DONE]"),
                out,
            )
            return
        obj = self._parse(ev, obj, out, raw)
        if obj is _UNPARSED:
            return
        if self._first_object:
            self._recognise(ev, obj, out)
        if self._foreign:
            return
        self._check_object(ev, obj, violations, out)

    def _done(self, pos: Position, out: list[Finding]) -> None:
        """The ``[DONE]`` sentinel: a second one, and one the profile forbids, are findings."""
        self._plain = False
        if self._foreign:
            return
        if self._done_seen:
            self._emit(framing.AFTER_TERMINAL.finding(pos, what="a second [DONE]", terminal="[DONE]"), out)
        self._done_seen = True
        if self._done_rule == "forbidden":
            self._emit(framing.DONE_SENT.finding(pos), out)

    def _parse(self, ev: SSEEvent, obj: Any, out: list[Finding], raw: list[bytes] | None = None) -> Any:
        """The event's data as an object to check further, or ``_UNPARSED`` (json_scan.event_object)."""
        obj, findings = json_scan.event_object(ev.data, obj, raw, self.limits.max_json_depth, ev.position)
        for finding in findings:
            self._emit(finding, out)
        return obj

    def _recognise(self, ev: SSEEvent, obj: dict[str, Any], out: list[Finding]) -> None:
        """The stream's first event object decides its dialect (unless one was given), whether it is another
        API's stream (one SCH010, then silence) and whether the hot path may be taken."""
        self._adopt(obj)
        self._first_object = False
        foreign = dialects.other_api(obj, besides=self.dialect)
        if foreign is not None:
            self._foreign = True
            api, evidence = foreign
            self._emit(schema.WRONG_API.finding(ev.position, api=api, evidence=evidence, expected=self.dialect.api,
                                                details={"api": api, "evidence": evidence}), out)
        self._plain = not self._foreign and self._trace is None

    def _check_object(self, ev: SSEEvent, obj: dict[str, Any], violations: list[Any] | None,
                      out: list[Finding]) -> None:
        """An event object of the dialect: its framing, its schema, then the machine (what it means in the
        stream)."""
        dialect = self.dialect
        etype = dialect.event_type(obj)
        pos = Position(line=ev.line, byte=ev.byte, event_index=ev.index,
                       event_type=etype if etype is not None else ev.event)
        if ev.data_lines > 1:
            self._emit(framing.MULTILINE_DATA.finding(pos, count=ev.data_lines), out)
        if dialect.screen is not None:
            screened, go_on = dialect.screen(obj, pos)
            for finding in screened:
                self._emit(finding, out)
            if not go_on:
                return
        if etype is None:
            self._emit(schema.MISSING_TYPE.finding(pos), out)
            return
        if dialect.event_names:
            if ev.event is None:
                self._emit(framing.MISSING_EVENT_LINE.finding(pos), out)
            elif ev.event != etype:
                self._emit(framing.EVENT_MISMATCH.finding(pos, event=ev.event, type=etype), out)
        if not self.machine.terminated:
            if violations is None:
                violations = self.schemas.validate_event(obj)
            if violations:
                for finding in dialect.schema_findings(violations, etype, pos):
                    self._emit(finding, out)
        try:
            findings = self.machine.handle(obj, pos)
        except Exception as exc:  # noqa: BLE001 - one event's verdict, never the run (docs/robustness.md)
            findings = [framing.CHECKER_ERROR.finding(pos, error=f"{type(exc).__name__}: {exc}")]
        for finding in findings:
            self._emit(finding, out)


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
