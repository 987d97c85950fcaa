"""The swimlane model both timelines draw: one lane per output item, events as marks.

The HTML report (SVG) and the terminal ``--timeline`` (rich) are two views of
the same :class:`Timeline`, so what the page shows as a late ``done`` is what
the terminal shows too. Only the drawing differs; nothing here knows about
markup or colour.

Long streams are folded: events go into at most ``columns`` columns, and a
lane shows the most significant event of each column (an item's boundaries
beat its deltas), with the number of events folded into it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from checker import dialects
from checker.dialects.base import Dialect
from checker.engine import LintResult, TraceEntry

RESPONSE_LANE = "response"
# More lanes than this is a stream of thousands of tiny items: the rest share
# one lane, so the picture stays a picture.
MAX_LANES = 120
OVERFLOW_LANE = "(more items)"

# Event kinds, in the order a folded column prefers them (first wins).
PRIORITY = ("added", "done", "terminal", "error", "lifecycle", "sentinel", "textdone", "part", "other", "delta",
            "keepalive")
_RANK = {kind: n for n, kind in enumerate(PRIORITY)}


def dialect_of(result: LintResult) -> Dialect:
    """The dialect a result was checked as (its lanes, marks and letters)."""
    return dialects.get(result.dialect) if result.dialect else dialects.default()


def event_kind(event_type: str, marks: Mapping[str, str] | None = None) -> str:
    """The kind of mark an event type is drawn as: the dialect's ``marks`` first, then by its name."""
    if marks is None:
        marks = dialects.default().marks
    kind = marks.get(event_type)
    if kind is not None:
        return kind
    if event_type == "error":
        return "error"
    if event_type == "[DONE]":
        return "sentinel"
    if event_type.endswith(".delta"):
        return "delta"
    if event_type.endswith(".done"):
        return "textdone"
    return "other"


@dataclass(frozen=True, slots=True)
class Mark:
    column: int
    index: int  # the event drawn (the most significant one of the column)
    kind: str
    type: str
    folded: int = 1  # events of this lane in this column


@dataclass(slots=True)
class Lane:
    key: str  # item id, "#<output_index>", "response" or OVERFLOW_LANE
    item_type: str | None  # the unit's type: "reasoning", "choice", "thinking", "tool_use"
    marks: list[Mark] = field(default_factory=list)
    added_index: int | None = None  # first output_item.added
    done_index: int | None = None  # first output_item.done
    first_index: int | None = None
    last_index: int | None = None
    # The later item whose added came before this item's done (the delayed done).
    late_after: str | None = None
    late_after_index: int | None = None
    # The stream lane's name in its dialect ("completion", "message"); None: its key.
    name: str | None = None

    @property
    def label(self) -> str:
        if self.key in (RESPONSE_LANE, OVERFLOW_LANE):
            return self.name or self.key
        return f"{self.item_type or 'item'} {self.key}"

    @property
    def span(self) -> tuple[int, int | None] | None:
        """(start, end) event indices of the added → done bar; end None: never done."""
        start = self.added_index if self.added_index is not None else self.first_index
        if start is None or self.key in (RESPONSE_LANE, OVERFLOW_LANE):
            return None
        return start, self.done_index


@dataclass(slots=True)
class Timeline:
    events: int  # traced events
    columns: int
    per_column: int
    lanes: list[Lane]
    lane_of: dict[int, str]  # event index -> lane key
    findings_at: dict[int | None, list[int]]  # event index (None: the stream) -> finding numbers
    folded_lanes: int = 0
    # The letter a lifecycle or terminal event is drawn as (the dialect's ``letters``).
    letters: Mapping[str, str] = field(default_factory=dict)

    def column(self, index: int) -> int:
        return index // self.per_column

    @property
    def end_column(self) -> int:
        """The column after the last event, where findings about the whole stream sit."""
        return self.columns


def build_timeline(result: LintResult, *, max_columns: int) -> Timeline:
    """Lay a traced result out in lanes, folding events into at most ``max_columns`` columns."""
    trace: list[TraceEntry] = result.trace or []
    total = (trace[-1].index + 1) if trace else 0
    per_column = max(1, -(-total // max(1, max_columns)))
    columns = -(-total // per_column) if total else 0
    dialect = dialect_of(result)
    layout = _Layout(_item_types(result), _index_aliases(result, trace), dialect, per_column)
    for entry in trace:
        layout.place(entry)
    ordered = layout.lanes_in_order()
    if not dialect.units_overlap:
        _mark_late(ordered)
    findings_at: dict[int | None, list[int]] = {}
    for number, finding in enumerate(result.findings):
        index = finding.position.event_index
        findings_at.setdefault(index if index in layout.lane_of else None, []).append(number)
    return Timeline(total, columns, per_column, ordered, layout.lane_of, findings_at, len(layout.folded),
                    dialect.letters)


class _Layout:
    """The lanes being filled, event by event: each lane keeps the most significant mark of each column."""

    def __init__(self, types: dict[str, str], aliases: dict[str, str], dialect: Dialect, per_column: int) -> None:
        self.types, self.aliases, self.marks, self.per_column = types, aliases, dialect.marks, per_column
        name = dialect.stream_lane if dialect.stream_lane != RESPONSE_LANE else None
        self.lanes: dict[str, Lane] = {RESPONSE_LANE: Lane(RESPONSE_LANE, None, name=name)}
        self.lane_of: dict[int, str] = {}
        self.best: dict[tuple[str, int], tuple[Mark, int]] = {}
        self.folded: set[str] = set()

    def _lane(self, key: str) -> Lane:
        key = self.aliases.get(key, key)
        if key not in self.lanes:
            if len(self.lanes) > MAX_LANES:
                self.folded.add(key)
                return self.lanes.setdefault(OVERFLOW_LANE, Lane(OVERFLOW_LANE, None))
            self.lanes[key] = Lane(key, self.types.get(key))
        return self.lanes[key]

    def place(self, entry: TraceEntry) -> None:
        lane = self._lane(entry.lane)
        self.lane_of[entry.index] = lane.key
        # What the event carries (a chat chunk may open a choice and carry its text), else what its type says.
        kinds = entry.kinds or (event_kind(entry.type, self.marks),)
        kind = min(kinds, key=lambda k: _RANK.get(k, _RANK["other"]))
        kind = kind if kind in _RANK else "other"
        if lane.first_index is None:
            lane.first_index = entry.index
        lane.last_index = entry.index
        if "added" in kinds and lane.added_index is None:
            lane.added_index = entry.index
        if "done" in kinds and lane.done_index is None:
            lane.done_index = entry.index
        col = entry.index // self.per_column
        mark = Mark(col, entry.index, kind, entry.type)
        previous = self.best.get((lane.key, col))
        if previous is None:
            self.best[(lane.key, col)] = (mark, 1)
        else:
            kept, count = previous
            self.best[(lane.key, col)] = (mark if _RANK[kind] < _RANK[kept.kind] else kept, count + 1)

    def lanes_in_order(self) -> list[Lane]:
        for (key, _col), (mark, count) in self.best.items():
            self.lanes[key].marks.append(Mark(mark.column, mark.index, mark.kind, mark.type, count))
        for lane in self.lanes.values():
            lane.marks.sort(key=lambda m: m.column)
        ordered = list(self.lanes.values())
        return [] if len(ordered) == 1 and not ordered[0].marks else ordered


def _mark_late(lanes: list[Lane]) -> None:
    """An item is late when a later item was added before its own done (docs/spec.md §2, ITM011)."""
    starts = sorted((lane.added_index, lane.key) for lane in lanes if lane.added_index is not None)
    for lane in lanes:
        span = lane.span
        if span is None:
            continue
        start, end = span
        for index, key in starts:
            if key != lane.key and index > start and (end is None or index < end):
                lane.late_after, lane.late_after_index = key, index
                break


def _item_types(result: LintResult) -> dict[str, str]:
    types: dict[str, str] = {}
    for item in result.items:
        if isinstance(item.type, str):
            if isinstance(item.id, str):
                types.setdefault(item.id, item.type)
            if type(item.output_index) is int:
                types.setdefault(f"#{item.output_index}", item.type)
    return types


def _index_aliases(result: LintResult, trace: list[TraceEntry]) -> dict[str, str]:
    """'#<output_index>' lanes of events without an item id, folded into their item's lane when events name
    the item by its id too (Responses); a unit named only by its index (a content block) keeps its index lane."""
    named = {entry.lane for entry in trace}
    aliases: dict[str, str] = {}
    for item in result.items:
        if isinstance(item.id, str) and type(item.output_index) is int and item.id in named:
            aliases.setdefault(f"#{item.output_index}", item.id)
    return aliases


def arrival_times(result: LintResult) -> dict[int, float]:
    """Arrival time (seconds) per event index, when a live run recorded them.

    From the trace (``StreamLinter.mark_time``), else from a result that
    carries ``arrivals`` (a sequence indexed by event, or a mapping).
    """
    times: dict[int, float] = {}
    for entry in result.trace or []:
        at = getattr(entry, "at", None)
        if isinstance(at, (int, float)):
            times[entry.index] = float(at)
    if times:
        return times
    arrivals: Any = getattr(result, "arrivals", None)
    pairs: Iterable[tuple[Any, Any]]
    if isinstance(arrivals, dict):
        pairs = arrivals.items()
    elif isinstance(arrivals, (list, tuple)):
        pairs = enumerate(arrivals)
    else:
        return times
    for index, at in pairs:
        if type(index) is int and isinstance(at, (int, float)):
            times[index] = float(at)
    return times
