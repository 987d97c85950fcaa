"""What changed between two streams of the same scenario (two builds of a server).

Three things are compared, each abstracted from what legitimately changes
from run to run (ids, text, the number of deltas):

* the **event grammar**: per lane (the response's lifecycle, and each output
  item, named by its type and rank: "reasoning", "function call #2"), the
  sequence of event types, with a run of deltas counted as one; the global
  order of the non-delta events across lanes (so a ``done`` that now arrives
  after another item's ``added`` is seen); and the top-level fields every
  event of a type carries (so "sequence_number disappeared" is seen);
* the **findings**, by rule code and normalised message (as baselines do),
  the HTTP findings apart: for captures saved by ``sse-check probe --save``
  the HTTP exchange recorded in each ``X.meta.json`` is judged too (status,
  content type, timeouts, the connection's close), as ``lint`` judges it;
* the **final output shape**: the terminal event type and the item types of
  its ``response.output``, in order.

Sans-I/O like the engine: :class:`ShapeBuilder` is fed bytes; the
``sse-check diff`` command reads the files.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from checker import dialects
from checker.baseline import normalise_message
from checker.dialects.base import Dialect, Piece, Unit
from checker.findings import Finding
from checker.sse import SSEDecoder, SSEEvent

RESPONSE_LANE = "response"
# Past this many reorderings a diff is a different stream, not a reordering: say how many more.
MAX_MOVES_SHOWN = 10
# Pieces whose runs count as one step of a lane (a dialect's ``Piece.kind``), and are no landmarks.
RUN_KINDS = frozenset({"delta", "keepalive"})

Landmark = tuple[str, str, int]  # (lane, event symbol, occurrence of that pair)


def short_type(etype: str, prefix: str = "response.") -> str:
    """An event type as a diff shows it: without its dialect's common prefix."""
    return etype.removeprefix(prefix) if etype + "." != prefix else etype


@dataclass(slots=True)
class StreamShape:
    """A stream abstracted from ids and text."""

    lanes: dict[str, list[str]] = field(default_factory=dict)  # lane -> event symbols, delta runs as one
    landmarks: list[tuple[str, str]] = field(default_factory=list)  # non-delta events in order: (lane, symbol)
    fields: dict[str, frozenset[str]] = field(default_factory=dict)  # symbol -> keys on every event of it
    output: tuple[str, ...] | None = None  # item types of the terminal event's response.output
    terminal: str | None = None
    events: int = 0
    # How the stream's dialect names things: its event types' common prefix, its units' nouns in prose.
    prefix: str = ""
    nouns: Mapping[str, str] = field(default_factory=dict)
    dialect: str = ""  # the dialect the stream was read as ("" before its first event object)
    title: str = ""
    stream_noun: str = "response"  # the stream's own lane in prose ("the completion's lifecycle")
    named: set[str] = field(default_factory=set)  # lanes the dialect names itself ("choice 0"): no article


class ShapeBuilder:
    """Feed a capture's bytes; ``close()`` returns its :class:`StreamShape`.

    ``dialect``: the stream's; by default its first event object decides (checker.dialects.recognise), and a
    stream no dialect recognises is read as the default dialect's."""

    def __init__(self, dialect: Dialect | None = None) -> None:
        self._decoder = SSEDecoder()
        self.shape = StreamShape()
        self._dialect: Dialect | None = None
        if dialect is not None:
            self._use(dialect)
        self._lane_of_id: dict[str, str] = {}
        self._lane_by_index: list[str] = []
        self._per_type: Counter[str] = Counter()

    def feed(self, chunk: bytes) -> None:
        self._take(self._decoder.feed(chunk))

    def close(self) -> StreamShape:
        self._take(self._decoder.close())
        return self.shape

    def _use(self, dialect: Dialect) -> None:
        self._dialect = dialect
        shape = self.shape
        shape.prefix, shape.nouns, shape.dialect = dialect.event_prefix, dialect.unit_nouns, dialect.name
        shape.title, shape.stream_noun = dialect.title, dialect.stream_lane

    def _take(self, items: Iterable[Any]) -> None:
        for item in items:
            if isinstance(item, SSEEvent):
                self._event(item)

    def _event(self, ev: SSEEvent) -> None:
        self.shape.events += 1
        if ev.data.strip() == b"[DONE]":
            self._add(RESPONSE_LANE, "[DONE]", None)
            return
        try:
            obj = orjson.loads(ev.data)
        except orjson.JSONDecodeError:
            self._add(RESPONSE_LANE, "(not JSON)", None)
            return
        if not isinstance(obj, dict):
            self._add(RESPONSE_LANE, "(not an object)", None)
            return
        dialect = self._dialect
        if dialect is None:
            found, _ = dialects.recognise(obj)
            self._use(found or dialects.default())
            dialect = self._dialect
            assert dialect is not None
        etype = dialect.event_type(obj)
        symbol = short_type(etype, dialect.event_prefix) if etype is not None else "(no type)"
        if dialect.pieces is not None:
            for piece in dialect.pieces(obj):
                self._add_piece(dialect, piece, obj, symbol)
        else:
            unit = dialect.unit(obj) if dialect.unit is not None else None
            self._add(self._lane(dialect, unit), symbol, obj, run=symbol.endswith(".delta"))
        if etype in dialect.terminal_types:
            self.shape.terminal = symbol
            output = dialect.final_output(obj) if dialect.final_output is not None else None
            if output is not None:
                self.shape.output = output

    def _add_piece(self, dialect: Dialect, piece: Piece, obj: dict[str, Any], event: str) -> None:
        """One piece of an event; the event's fields are its type's (a chunk's, not its content's)."""
        symbol = short_type(piece.symbol, dialect.event_prefix) if dialect.event_prefix else piece.symbol
        self._add(self._lane(dialect, piece.unit), symbol, obj, run=piece.kind in RUN_KINDS, fields_of=event)

    def _lane(self, dialect: Dialect, unit: Unit | None) -> str:
        if unit is None:
            return RESPONSE_LANE
        if unit.name is not None:
            self.shape.named.add(unit.name)
            return unit.name
        if unit.id is not None and unit.id in self._lane_of_id:
            return self._lane_of_id[unit.id]
        if not unit.opens:
            lane = self._by_index(unit.index)
            if lane is not None:
                return lane
        if unit.carries:
            # An opened unit, or a finished one never seen: a lane of its own.
            return self._new_lane(dialect, unit.type, unit.id)
        return "unknown item"

    def _by_index(self, index: int | None) -> str | None:
        if index is not None and 0 <= index < len(self._lane_by_index):
            return self._lane_by_index[index]
        return None

    def _new_lane(self, dialect: Dialect, given: str | None, item_id: str | None) -> str:
        kind = given if given is not None else "item"
        word = dialect.unit_words.get(kind, kind)
        self._per_type[word] += 1
        rank = self._per_type[word]
        lane = word if rank == 1 else f"{word} #{rank}"
        if item_id is not None:
            self._lane_of_id[item_id] = lane
        self._lane_by_index.append(lane)
        return lane

    def _add(self, lane: str, symbol: str, obj: dict[str, Any] | None, *, run: bool = False,
             fields_of: str | None = None) -> None:
        shape = self.shape
        sequence = shape.lanes.setdefault(lane, [])
        if not (run and sequence and sequence[-1] == symbol):
            sequence.append(symbol)
        if not run:
            shape.landmarks.append((lane, symbol))
        if obj is not None:
            keys, key = frozenset(obj), fields_of or symbol
            shape.fields[key] = shape.fields[key] & keys if key in shape.fields else keys


def shape_of(data: bytes) -> StreamShape:
    builder = ShapeBuilder()
    builder.feed(data)
    return builder.close()


# --- comparing -------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Change:
    """One difference, in words, with machine-usable details."""

    aspect: str  # grammar | fields | findings | output | scenario
    kind: str  # moved | renamed | dropped | added | lane-dropped | lane-added | disappeared | appeared | new | gone | changed
    text: str
    details: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"aspect": self.aspect, "kind": self.kind, "text": self.text, "details": self.details}


@dataclass(frozen=True, slots=True)
class Words:
    """How lanes are named in prose: the dialect's nouns for its unit types ("reasoning item"), the lanes it
    names itself ("choice 0", said without an article) and the stream's own lane ("the completion's")."""

    nouns: Mapping[str, str]
    named: frozenset[str] = frozenset()
    stream: str = "response"

    @classmethod
    def of(cls, old: StreamShape, new: StreamShape) -> "Words":
        return cls(new.nouns or old.nouns, frozenset(old.named | new.named), new.stream_noun or old.stream_noun)

    def noun(self, lane: str) -> str:
        """'reasoning item', 'message', 'function call #2', 'response': a lane in prose."""
        for word, noun in self.nouns.items():
            if lane.startswith(word):
                return lane.replace(word, noun, 1)
        return lane

    def the(self, lane: str) -> str:
        if lane == RESPONSE_LANE:
            return f"the {self.stream}"
        return lane if lane in self.named else f"the {self.noun(lane)}"

    def whose(self, lane: str) -> str:
        return f"{self.the(lane)}'s"

    def in_(self, lane: str) -> str:
        return f"the {self.stream}'s lifecycle" if lane == RESPONSE_LANE else self.the(lane)


def _lane_change(lane: str, old: StreamShape, new: StreamShape, words: Words) -> Change | None:
    """A lane on one side only, or None."""
    if lane not in new.lanes:
        text = (f"the {words.stream}'s lifecycle events disappeared" if lane == RESPONSE_LANE
                else f"{words.the(lane)} disappeared")
        return Change(aspect="grammar", kind="lane-dropped", text=text, details={"lane": lane})
    if lane not in old.lanes:
        events = ", ".join(f"`{s}`" for s in new.lanes[lane])
        text = f"{lane} is new ({events})" if lane in words.named else f"a new {words.noun(lane)} appears ({events})"
        return Change(aspect="grammar", kind="lane-added", text=text,
                      details={"lane": lane, "events": new.lanes[lane]})
    return None


def compare_grammar(old: StreamShape, new: StreamShape) -> list[Change]:
    words = Words.of(old, new)
    changes: list[Change] = []
    renames: dict[tuple[str, str], list[str]] = {}
    for lane in _ordered(old.lanes, new.lanes):
        one_sided = _lane_change(lane, old, new, words)
        if one_sided is not None:
            changes.append(one_sided)
            continue
        a, b = old.lanes[lane], new.lanes[lane]
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
            if tag == "equal":
                continue
            if tag == "replace" and i2 - i1 == j2 - j1:
                for x, y in zip(a[i1:i2], b[j1:j2]):
                    renames.setdefault((x, y), []).append(lane)
                continue
            # One line per symbol of a dropped or added stretch ("3 times" when it repeats).
            for symbol, n in Counter(a[i1:i2] if tag in ("delete", "replace") else ()).items():
                changes.append(Change(aspect="grammar", kind="dropped",
                                      text=f"`{symbol}` disappeared from {words.in_(lane)}{_times(n)}",
                                      details={"lane": lane, "event": symbol, "count": n}))
            for symbol, n in Counter(b[j1:j2] if tag in ("insert", "replace") else ()).items():
                changes.append(Change(aspect="grammar", kind="added",
                                      text=f"`{symbol}` is new in {words.in_(lane)}{_times(n)}",
                                      details={"lane": lane, "event": symbol, "count": n}))
    for (x, y), lanes in renames.items():
        unique = list(dict.fromkeys(lanes))
        where = ", ".join(words.in_(lane) for lane in unique)
        changes.append(Change(aspect="grammar", kind="renamed", text=f"`{x}` is now `{y}` (in {where})",
                              details={"old": x, "new": y, "lanes": unique}))
    changes.extend(_moves(old.landmarks, new.landmarks, words))
    return changes


def _times(n: int) -> str:
    return f" ({n} times)" if n > 1 else ""


def _aspect(code: str) -> str:
    """Findings about the HTTP exchange (from a probe's recorded ``X.meta.json``) are their own aspect."""
    return "http" if code.startswith("HTP") else "findings"


def _ordered(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    return list(dict.fromkeys([*a, *b]))


def _numbered(marks: list[tuple[str, str]]) -> list[Landmark]:
    seen: Counter[tuple[str, str]] = Counter()
    out: list[Landmark] = []
    for mark in marks:
        out.append((mark[0], mark[1], seen[mark]))
        seen[mark] += 1
    return out


def _moves(old_marks: list[tuple[str, str]], new_marks: list[tuple[str, str]], words: Words) -> list[Change]:
    """Reorderings of the non-delta events that both streams have, as "X now arrives after Y"."""
    a, b = _numbered(old_marks), _numbered(new_marks)
    common = set(a) & set(b)
    a = [m for m in a if m in common]
    b = [m for m in b if m in common]
    if a == b:
        return []
    kept: set[Landmark] = set()
    for block in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_matching_blocks():
        kept.update(a[block.a: block.a + block.size])
    old_pos = {m: i for i, m in enumerate(a)}
    new_pos = {m: i for i, m in enumerate(b)}
    changes: list[Change] = []
    said: set[tuple[Landmark, Landmark]] = set()
    moved_all = [m for m in b if m not in kept]
    for done, moved in enumerate(moved_all):
        if len(changes) == MAX_MOVES_SHOWN:
            # Each phrase costs a scan of the stream: past the shown ones, only count.
            rest = len(moved_all) - done
            changes.append(Change(aspect="grammar", kind="moved", text=f"… and {rest} more reordered event(s)",
                                  details={"more": rest}))
            break
        # The crossing closest to the moved event: what it now follows, or what now follows it.
        now_before = [m for m in b[: new_pos[moved]] if old_pos[m] > old_pos[moved]]
        now_after = [m for m in b[new_pos[moved] + 1:] if old_pos[m] < old_pos[moved]]
        # Always phrased as "the one that came first before now arrives after the other".
        pair = (moved, now_before[-1]) if now_before else (now_after[0], moved) if now_after else None
        if pair is None or pair in said:
            continue
        said.add(pair)
        (lane, symbol, _), (other_lane, other_symbol, _) = pair
        changes.append(Change(
            aspect="grammar", kind="moved",
            text=f"{words.whose(lane)} `{symbol}` now arrives after {words.whose(other_lane)} `{other_symbol}`",
            details={"lane": lane, "event": symbol, "after_lane": other_lane, "after_event": other_symbol},
        ))
    return changes


def compare_fields(old: StreamShape, new: StreamShape) -> list[Change]:
    """Top-level fields that every event of a type carried and no longer does (or the reverse)."""
    gone: dict[str, list[str]] = {}
    came: dict[str, list[str]] = {}
    for symbol in old.fields.keys() & new.fields.keys():
        for key in sorted(old.fields[symbol] - new.fields[symbol]):
            gone.setdefault(key, []).append(symbol)
        for key in sorted(new.fields[symbol] - old.fields[symbol]):
            came.setdefault(key, []).append(symbol)
    changes: list[Change] = []
    for key, symbols in sorted(gone.items()):
        had = [s for s in old.fields if key in old.fields[s] and s in new.fields]
        changes.append(_field_change("disappeared", key, sorted(symbols), everywhere=len(symbols) == len(had)))
    for key, symbols in sorted(came.items()):
        has = [s for s in new.fields if key in new.fields[s] and s in old.fields]
        changes.append(_field_change("appeared", key, sorted(symbols), everywhere=len(symbols) == len(has)))
    return changes


def _field_change(kind: str, key: str, symbols: list[str], *, everywhere: bool) -> Change:
    on = "from" if kind == "disappeared" else "on"
    if len(symbols) == 1:
        where = f"{on} `{symbols[0]}`"
    elif everywhere:
        where = f"{on} every event ({len(symbols)} event types)"
    else:
        shown = ", ".join(f"`{s}`" for s in symbols[:6]) + (" …" if len(symbols) > 6 else "")
        where = f"{on} {len(symbols)} event types ({shown})"
    return Change(aspect="fields", kind=kind, text=f"`{key}` {kind} {where}",
                  details={"field": key, "events": symbols})


def compare_findings(old: Iterable[Finding], new: Iterable[Finding]) -> list[Change]:
    def keyed(findings: Iterable[Finding]) -> dict[tuple[str, str], Finding]:
        out: dict[tuple[str, str], Finding] = {}
        for f in findings:
            out.setdefault((f.code, normalise_message(f.message)), f)
        return out

    a, b = keyed(old), keyed(new)
    changes = [
        Change(aspect=_aspect(code), kind="new", text=f"new finding {code} ({f.severity}): {f.message}",
               details={"code": code, "severity": str(f.severity), "message": f.message})
        for (code, norm), f in b.items() if (code, norm) not in a
    ]
    changes += [
        Change(aspect=_aspect(code), kind="gone", text=f"finding gone {code} ({f.severity}): {f.message}",
               details={"code": code, "severity": str(f.severity), "message": f.message})
        for (code, norm), f in a.items() if (code, norm) not in b
    ]
    return changes


def compare_output(old: StreamShape, new: StreamShape) -> list[Change]:
    changes: list[Change] = []
    if old.terminal != new.terminal:
        changes.append(Change(
            aspect="output", kind="changed",
            text=f"the stream now ends with {_terminal(new.terminal, new.prefix)} "
                 f"(was {_terminal(old.terminal, old.prefix)})",
            details={"field": "terminal", "old": old.terminal, "new": new.terminal},
        ))
    if old.output != new.output:
        changes.append(Change(
            aspect="output", kind="changed",
            text=f"the final output is now {_items(new.output)} (was {_items(old.output)})",
            details={"field": "output", "old": list(old.output or ()), "new": list(new.output or ())},
        ))
    return changes


def dialect_change(old: StreamShape, new: StreamShape) -> Change:
    return Change(aspect="dialect", kind="changed",
                  text=f"OLD is {_a(old.title)} stream and NEW {_a(new.title)} stream: their event grammars "
                       f"are not comparable, only their findings are",
                  details={"old": old.dialect, "new": new.dialect})


def _a(title: str) -> str:
    return f"{'an' if title[:1].lower() in 'aeiou' else 'a'} {title}"


def _terminal(symbol: str | None, prefix: str) -> str:
    return f"`{prefix}{symbol}`" if symbol else "no terminal event"


def _items(types: tuple[str, ...] | None) -> str:
    if types is None:
        return "absent"
    return "[" + ", ".join(types) + "]" if types else "empty"


def compare(old: StreamShape, new: StreamShape, old_findings: Iterable[Finding] = (),
            new_findings: Iterable[Finding] = ()) -> list[Change]:
    """Every change from OLD to NEW: grammar, fields, findings, final output (in that order). Streams of two
    dialects have no grammar in common: the dialect change, then the findings."""
    if old.dialect and new.dialect and old.dialect != new.dialect:
        return [dialect_change(old, new), *compare_findings(old_findings, new_findings)]
    return [
        *compare_grammar(old, new),
        *compare_fields(old, new),
        *compare_findings(old_findings, new_findings),
        *compare_output(old, new),
    ]
