"""The mutant corpus: seeded single-defect mutants of real streams, for holding predictions to real clients.

Every capture sse-check predicts for was written by this project or imported from another one; a prediction
that fits those streams may still be wrong on the next server's. This module makes streams nobody wrote: it
takes the real recordings of all three dialects (``SOURCES``: OpenAI's own Responses streams, the real-world
bug rebuilds, llama.cpp's and LiteLLM's recordings, the conforming streams, the Chat Completions and Messages
recordings) and changes ONE thing in each copy:

* ``field``: for every event type and every field path it carries (nested objects included): the field
  deleted, set to null, retyped (a string as a number, a number as a string, an object as a list...), emptied;
* ``ident``: ids and indexes (``id``, ``item_id``, ``call_id``, ``*_index``, ``index``, ``sequence_number``)
  changed, repeated from the event before, made negative;
* ``event``: one event dropped, duplicated, swapped with the next one, or the stream truncated after it;
* ``framing``: no ``event:`` lines, CRLF or CR line ends, each JSON value over several ``data:`` lines, a BOM,
  ``data:`` without its space, a comment line between events, the stream cut in the middle of an event.

:func:`mutants` is deterministic from its seed: the candidate mutations of each source are enumerated in
stream order and a seeded sample of them is kept, so the same seed gives the same mutants, byte for byte, on
every machine. The mutant bytes are never stored; each mutant's ``id`` names its source and its change, and
the labels (what the real clients did, ``tests/mutant_labels/``) are stored under that id.
"""

from __future__ import annotations

import functools
import hashlib
import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CAPTURES = ROOT / "captures"
SEED = 27
# The real recordings mutated, per dialect (globs under captures/). Streams larger than MAX_SOURCE_BYTES are
# left out: they would multiply the corpus's lint and client time without adding event types the smaller
# recordings do not carry.
SOURCES: dict[str, tuple[str, ...]] = {
    "responses": ("real-openai/*.sse", "real-openai/older-api/*.sse", "real-openai/edited/*.sse",
                  "real-world/*.sse", "litellm/*.sse", "llama.cpp/*.sse", "conforming/*.sse"),
    "chat": ("chat/conforming/*.sse", "chat/llama.cpp/*.sse", "llama.cpp/chat-*.sse"),
    "messages": ("messages/conforming/*.sse", "messages/llama.cpp/*.sse"),
}
MAX_SOURCE_BYTES = 30_000
# How many mutants of each kind a source gives at most, per dialect (a seeded sample of its candidates; every
# framing variant is kept, ``cut`` counts the cuts in the middle of an event). Responses has many more
# recordings than the other two dialects, so each of them gives fewer.
PER_SOURCE: dict[str, dict[str, int]] = {
    "responses": {"field": 16, "ident": 5, "event": 7, "cut": 2},
    "chat": {"field": 40, "ident": 12, "event": 14, "cut": 3},
    "messages": {"field": 40, "ident": 12, "event": 14, "cut": 3},
}
IDENT_KEYS = frozenset({"id", "item_id", "call_id", "output_index", "content_index", "summary_index", "index",
                        "sequence_number", "annotation_index"})


@dataclass(frozen=True, slots=True)
class Mutant:
    """One single-defect copy of a real stream: where it comes from, what was changed, its bytes."""

    id: str  # "<source>|<class>|<change>": stable across runs, the key of its labels
    source: str  # the capture's path under captures/
    dialect: str
    kind: str  # field, ident, event, framing
    change: str  # what was changed, in words
    data: bytes

    @property
    def mutation_class(self) -> str:
        """The class an agreement report groups by: the kind and the operation (``field:deleted``)."""
        return self.id.split("|")[1]


@dataclass(slots=True)
class _Event:
    """One SSE event block of a capture as written (its lines), with its data parsed when it is JSON."""

    lines: list[bytes]
    name: bytes | None
    obj: Any  # the parsed data (a dict for the events that matter), or None

    def render(self) -> bytes:
        return b"\n".join(self.lines)


_NOT_JSON = object()


def _split(data: bytes) -> tuple[bytes, list[_Event], bytes]:
    """(leading comment lines, events, trailing bytes) of a capture written with LF line ends."""
    head_lines: list[bytes] = []
    body = data
    while body.startswith(b":"):  # the capture's header comments (`: expect ...`) stay as they are
        line, _, body = body.partition(b"\n")
        head_lines.append(line)
    head = b"".join(line + b"\n" for line in head_lines)
    blocks = body.split(b"\n\n")
    tail = b""
    if blocks and blocks[-1].strip() == b"":
        tail = blocks.pop()
    events = []
    for block in blocks:
        lines = block.split(b"\n")
        name = next((ln[6:].strip() for ln in lines if ln.startswith(b"event:")), None)
        payload = b"\n".join(ln[5:].lstrip(b" ") if ln.startswith(b"data: ") else ln[5:]
                             for ln in lines if ln.startswith(b"data:"))
        obj: Any = None
        if payload and payload.strip() != b"[DONE]":
            try:
                obj = json.loads(payload)
            except ValueError:
                obj = None
        events.append(_Event(lines, name, obj))
    return head, events, tail


def _join(head: bytes, events: list[_Event], tail: bytes) -> bytes:
    return head + b"\n\n".join(e.render() for e in events) + (b"\n\n" if events else b"") + tail.lstrip(b"\n")


def _with_obj(event: _Event, obj: Any) -> _Event:
    """The event with its data replaced by ``obj`` (one compact data line; its other lines kept)."""
    data = b"data: " + json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()
    lines, placed = [], False
    for line in event.lines:
        if line.startswith(b"data:"):
            if not placed:
                lines.append(data)
                placed = True
            continue
        lines.append(line)
    return _Event(lines, event.name, obj)


def _paths(value: Any, prefix: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    """Every (path, value) under a JSON object, depth first; list elements by position (only the first of a
    list: the others repeat its shape)."""
    if isinstance(value, dict):
        for key, child in value.items():
            yield (*prefix, key), child
            yield from _paths(child, (*prefix, key))
    elif isinstance(value, list) and value:
        yield (*prefix, 0), value[0]
        yield from _paths(value[0], (*prefix, 0))


def _set(obj: Any, path: tuple[str | int, ...], value: Any, *, delete: bool = False) -> Any:
    copy = json.loads(json.dumps(obj))
    target = copy
    for step in path[:-1]:
        target = target[step]
    if delete:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return copy


def _retyped(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return 1
    if isinstance(value, dict):
        return [value] if value else []
    if isinstance(value, list):
        return {"0": value[0]} if value else {}
    return 0  # null


def _emptied(value: Any) -> Any:
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return 0
    if isinstance(value, str):
        return ""
    if isinstance(value, dict):
        return {}
    if isinstance(value, list):
        return []
    return _NOT_JSON  # null has nothing to empty


def _label(path: tuple[str | int, ...]) -> str:
    return ".".join(str(p) for p in path)


def _event_type(event: _Event) -> str:
    if isinstance(event.obj, dict) and isinstance(event.obj.get("type"), str):
        return event.obj["type"]
    if isinstance(event.obj, dict) and isinstance(event.obj.get("object"), str):
        return event.obj["object"]
    return (event.name or b"?").decode("utf-8", "replace")


# A candidate: (class, change in words, a function giving the mutant's bytes).
_Candidate = tuple[str, str, Any]


def _field_candidates(head: bytes, events: list[_Event], tail: bytes) -> list[_Candidate]:
    """Every field path of every event type (at its first event that carries it): deleted, nulled, retyped,
    emptied."""
    seen: set[tuple[str, tuple[str | int, ...]]] = set()
    out: list[_Candidate] = []
    for n, event in enumerate(events):
        if not isinstance(event.obj, dict):
            continue
        kind = _event_type(event)
        for path, value in _paths(event.obj):
            if (kind, path) in seen:
                continue
            seen.add((kind, path))
            where = f"{kind} #{n} {_label(path)}"
            ops: list[tuple[str, Any, bool]] = [("deleted", None, True)]
            if value is not None:
                ops.append(("nulled", None, False))
            ops.append(("retyped", _retyped(value), False))
            emptied = _emptied(value)
            if emptied is not _NOT_JSON and emptied != value:
                ops.append(("emptied", emptied, False))
            for op, new, delete in ops:
                out.append((f"field:{op}", f"{where} {op}",
                            _replace(head, events, tail, n, _set(event.obj, path, new, delete=delete))))
    return out


def _replace(head: bytes, events: list[_Event], tail: bytes, n: int, obj: Any) -> Any:
    def build() -> bytes:
        changed = list(events)
        changed[n] = _with_obj(events[n], obj)
        return _join(head, changed, tail)
    return build


def _ident_candidates(head: bytes, events: list[_Event], tail: bytes) -> list[_Candidate]:
    """Ids and indexes: changed, repeated from the previous event that carries the same key, negative."""
    out: list[_Candidate] = []
    last: dict[tuple[str | int, ...], Any] = {}
    for n, event in enumerate(events):
        if not isinstance(event.obj, dict):
            continue
        kind = _event_type(event)
        for path, value in _paths(event.obj):
            key = path[-1]
            if key not in IDENT_KEYS or isinstance(value, (dict, list)) or value is None:
                continue
            where = f"{kind} #{n} {_label(path)}"
            if isinstance(value, bool):
                continue
            if isinstance(value, int):
                changes = [("changed", value + 1), ("negative", -1 if value >= 0 else value - 1)]
            else:
                changes = [("changed", f"{value}_x")]
            previous = last.get(path)
            if previous is not None and previous != value:
                changes.append(("repeated", previous))
            last[path] = value
            for op, new in changes:
                out.append((f"ident:{op}", f"{where} {op} to {json.dumps(new)}",
                            _replace(head, events, tail, n, _set(event.obj, path, new))))
    return out


def _event_candidates(head: bytes, events: list[_Event], tail: bytes) -> list[_Candidate]:
    """One event dropped, duplicated, swapped with the next, or the stream truncated after it."""
    out: list[_Candidate] = []

    def make(changed: list[_Event], keep_tail: bool = True) -> Any:
        return lambda: _join(head, changed, tail if keep_tail else b"")

    for n, event in enumerate(events):
        kind = _event_type(event)
        out.append(("event:dropped", f"{kind} #{n} dropped", make(events[:n] + events[n + 1:])))
        out.append(("event:duplicated", f"{kind} #{n} duplicated", make(events[:n + 1] + events[n:])))
        if n + 1 < len(events):
            swapped = events[:n] + [events[n + 1], event] + events[n + 2:]
            out.append(("event:swapped", f"{kind} #{n} swapped with the next", make(swapped)))
            out.append(("event:truncated", f"stream ends after {kind} #{n}", make(events[:n + 1], False)))
    return out


def _framing_candidates(head: bytes, events: list[_Event], tail: bytes, data: bytes) -> list[_Candidate]:
    body = data[len(head):]
    out: list[_Candidate] = []

    def no_event_lines() -> bytes:
        return _join(head, [_Event([ln for ln in e.lines if not ln.startswith(b"event:")] or e.lines, None, e.obj)
                            for e in events], tail)

    def multiline() -> bytes:
        changed = []
        for e in events:
            if isinstance(e.obj, dict):
                text = json.dumps(e.obj, ensure_ascii=False, indent=1).encode()
                lines = [ln for ln in e.lines if not ln.startswith(b"data:")]
                changed.append(_Event(lines + [b"data: " + part for part in text.split(b"\n")], e.name, e.obj))
            else:
                changed.append(e)
        return _join(head, changed, tail)

    def no_space() -> bytes:
        return _join(head, [_Event([b"data:" + ln[6:] if ln.startswith(b"data: ") else
                                    b"event:" + ln[7:] if ln.startswith(b"event: ") else ln for ln in e.lines],
                                   e.name, e.obj) for e in events], tail)

    def comments() -> bytes:
        return _join(head, [_Event([b": keep-alive", *e.lines], e.name, e.obj) for e in events], tail)

    out.append(("framing:no-event-lines", "every event: line removed", no_event_lines))
    out.append(("framing:crlf", "CRLF line ends", lambda: head + body.replace(b"\n", b"\r\n")))
    out.append(("framing:cr", "CR line ends", lambda: head + body.replace(b"\n", b"\r")))
    out.append(("framing:multiline-data", "each JSON value over several data: lines", multiline))
    out.append(("framing:bom", "a UTF-8 BOM before the first byte", lambda: b"\xef\xbb\xbf" + data))
    out.append(("framing:no-space", "no space after the field colons", no_space))
    out.append(("framing:comments", "a comment line before every event", comments))
    return out


def _cut_candidates(head: bytes, events: list[_Event], tail: bytes) -> list[_Candidate]:
    out: list[_Candidate] = []
    for n, event in enumerate(events):
        rendered = event.render()
        if len(rendered) < 8:
            continue
        cut = len(_join(head, events[:n], b"")) + len(rendered) // 2

        def cut_at(at: int = cut) -> bytes:
            return _join(head, events, tail)[:at]
        out.append(("framing:cut-mid-event", f"{_event_type(event)} #{n} cut in its middle (byte {cut})", cut_at))
    return out


def _source_paths(dialect: str) -> list[Path]:
    paths: set[Path] = set()
    for pattern in SOURCES[dialect]:
        paths.update(p for p in CAPTURES.glob(pattern) if p.stat().st_size <= MAX_SOURCE_BYTES
                     and not p.with_name(p.name[:-4] + ".meta.json").is_file())
    return sorted(paths)


def _dialect_of(events: list[_Event]) -> str:
    """Which dialect a stream's first JSON event says it is (as tests/test_corpus.py tells them apart)."""
    first = next((e.obj for e in events if isinstance(e.obj, dict) and e.obj.get("type") != "ping"), {})
    if first.get("type") == "message_start":
        return "messages"
    if first.get("object") == "chat.completion.chunk" or "choices" in first:
        return "chat"
    return "responses"


def _usable(path: Path, dialect: str) -> bool:
    _, events, _ = _split(path.read_bytes())
    return (sum(isinstance(e.obj, dict) for e in events) >= 2 and b"\r" not in path.read_bytes()
            and _dialect_of(events) == dialect)


def sources(dialect: str) -> list[Path]:
    """The recordings of ``dialect`` that are mutated (a stream with at least two JSON events, LF-framed)."""
    return [p for p in _source_paths(dialect) if _usable(p, dialect)]


def _sample(rng: random.Random, candidates: list[_Candidate], limit: int) -> list[_Candidate]:
    if len(candidates) <= limit:
        return candidates
    chosen = sorted(rng.sample(range(len(candidates)), limit))
    return [candidates[i] for i in chosen]


def mutants_of(path: Path, dialect: str, seed: int = SEED) -> list[Mutant]:
    """The mutants of one source, deterministic from ``seed`` and the source's path."""
    data = path.read_bytes()
    source = path.relative_to(CAPTURES).as_posix()
    rng = random.Random(int.from_bytes(hashlib.sha256(f"{seed}:{source}".encode()).digest()[:8], "big"))
    head, events, tail = _split(data)
    by_kind = {"field": _field_candidates(head, events, tail), "ident": _ident_candidates(head, events, tail),
               "event": _event_candidates(head, events, tail),
               "framing": _framing_candidates(head, events, tail, data), "cut": _cut_candidates(head, events, tail)}
    limits = PER_SOURCE[dialect]
    out: list[Mutant] = []
    seen: set[bytes] = {data}
    for kind, candidates in by_kind.items():
        for klass, change, build in _sample(rng, candidates, limits.get(kind, len(candidates))):
            mutated = build()
            if mutated in seen:  # a change that changes nothing (or what another mutant already is)
                continue
            seen.add(mutated)
            out.append(Mutant(f"{source}|{klass}|{change}", source, dialect, klass.partition(":")[0], change, mutated))
    return out


@functools.cache
def _all(dialect: str, seed: int) -> tuple[Mutant, ...]:
    return tuple(m for path in sources(dialect) for m in mutants_of(path, dialect, seed))


def mutants(dialect: str, seed: int = SEED) -> list[Mutant]:
    """Every mutant of ``dialect``'s sources, in a stable order (built once per process)."""
    return list(_all(dialect, seed))


DIALECTS = tuple(SOURCES)


def digest(items: list[Mutant]) -> str:
    """One hash over the mutants' ids and bytes: equal digests, identical corpora."""
    h = hashlib.sha256()
    for m in items:
        h.update(m.id.encode() + b"\0" + hashlib.sha256(m.data).digest())
    return h.hexdigest()[:16]
