"""What a lint gives back and what bounds it: :class:`LintResult`, :class:`Limits`, and the trace of events kept
for timelines (:class:`Trace`). Plain records, no I/O; :mod:`checker.engine` fills them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from checker.dialects.base import Dialect, ItemSummary
from checker.findings import Finding, Severity
from checker.sse import DEFAULT_MAX_EVENT_BYTES, DEFAULT_MAX_LINE_BYTES, SSEEvent


class TraceEntry(NamedTuple):
    index: int  # type: ignore[assignment]  # shadows tuple.index(), as SSEEvent's does
    line: int
    type: str
    lane: str  # the item id an event belongs to, or "response"
    # For the HTML report's details (recorded only with trace=True):
    byte: int = 0
    data: bytes = b""  # the event's data, clipped to TRACE_DATA_CLIP; b"" past TRACE_DATA_BUDGET
    at: float | None = None  # arrival time in seconds, when the caller marks times (a live probe)
    # The mark kinds of what the event carries, when its dialect says (``Dialect.pieces``: a chat chunk's
    # "added" role, "delta" content, "done" finish); () when its type tells (checker.report.lanes.event_kind).
    kinds: tuple[str, ...] = ()


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
    # The answer's own word for why it ended (Anthropic's stop_reason; the machine's StreamSummary.stop_reason).
    stop_reason: str | None = None

    def worst(self) -> Severity | None:
        return max((f.severity for f in self.findings), default=None)

    def count(self, severity: Severity) -> int:
        return sum(1 for f in self.findings if f.severity == severity)

    def codes(self) -> list[str]:
        return sorted({f.code for f in self.findings})


class Trace:
    """The events of one stream as timelines and the HTML report draw them (``StreamLinter(trace=True)``)."""

    def __init__(self) -> None:
        self.entries: list[TraceEntry] = []
        self._bytes = 0
        # The arrival time of the events being fed (``StreamLinter.mark_time``); None for a saved capture.
        self.now: float | None = None

    def observe(self, ev: SSEEvent, obj: Any, dialect: Dialect, *, parsed: bool) -> None:
        """Record ``ev`` under its type and lane in ``dialect``; ``obj`` is its data as parsed (``parsed``
        False: its data is not JSON)."""
        if ev.data == b"[DONE]":
            etype, lane = "[DONE]", "response"
        elif isinstance(obj, dict):
            etype, lane = dialect.event_type(obj) or "?", dialect.lane(obj)
        else:
            etype, lane = ("(not an object)" if parsed else "(not JSON)"), "response"
        self.record(ev, etype, lane, obj if isinstance(obj, dict) else None, dialect)

    def record(self, ev: SSEEvent, etype: str, lane: str, obj: dict[str, Any] | None = None,
               dialect: Dialect | None = None) -> None:
        """One event; ``obj`` its object and ``dialect`` its dialect, whose pieces give its mark kinds."""
        kinds: tuple[str, ...] = ()
        if obj is not None and dialect is not None and dialect.pieces is not None:
            kinds = tuple(dict.fromkeys(piece.kind for piece in dialect.pieces(obj)))
        kept = ev.data[:TRACE_DATA_CLIP]
        if self._bytes > TRACE_DATA_BUDGET and (kinds == ("delta",) if kinds else etype.endswith(".delta")):
            kept = b""
        self._bytes += len(kept)
        self.entries.append(TraceEntry(ev.index, ev.line, etype, lane, ev.byte, kept, self.now, kinds))
