"""A run template's matcher: an event's data bytes with holes (checker/run_template.py says why a match is safe).

Two implementations with the same results: the compiled one (checker/_speedups.c ``Matcher``), used when it was
built, and a regular expression, the pure-Python fallback (and the reference: tests/test_native.py compares
them on random templates and data). The compiled one also spares a pattern compiled per template, which on a
long stream of many short messages cost a quarter of the lint.

A hole is a JSON token of its kind: a string body without ``"``, ``\\`` or control characters (its quotes are
in the literals), or an integer of at most 15 digits without a leading zero. A *pinned* hole is matched as a
string and then compared with the template's bytes, so that the pattern is the event's shape alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from checker.dialects.runs import Take
from checker.native import speedups

# The decoder's run hook (checker/sse.py SSEDecoder.run): wire(block, pos, fits, room) takes the whole events
# of the run at block[pos:] one after the other, each within ``fits`` bytes, at most ``room`` of them, until one
# does not match; it returns where they end and how many it took.
Wire = Callable[[bytes, int, int, int], tuple[int, int]]

_TEXT_HOLE = rb'([^"\\\x00-\x1f]*)'
_NUMBER_HOLE = rb"(0|[1-9][0-9]{0,14})"
_KIND_CODES = {"text": b"t", "pinned": b"p", "number": b"n"}


class RunMatcher:
    """``shape(data)``: the data has the template's shape (its holes holding any value of their kind), nothing
    noted. ``match(data)``: one event's data, taken (True: its text kept, its number noted) or not (False:
    nothing changes). ``wire``: the same for whole events in the decoder's block (None when the event name
    cannot be written back exactly). ``flush()``: the texts taken so far go to ``take``, in one call."""

    __slots__ = ("shape", "match", "wire", "flush")

    def __init__(self, shape: Callable[[bytes], bool], match: Callable[[bytes], bool], wire: Wire | None,
                 flush: Callable[[], None]) -> None:
        self.shape, self.match, self.wire, self.flush = shape, match, wire, flush


def make(literals: list[bytes], kinds: list[str], pins: list[bytes | None], text: int, number: int | None,
         floor: int | None, name: str | None, take: Take) -> RunMatcher:
    """The matcher of ``literals[0] hole[0] literals[1] ... literals[-1]`` (``kinds[i]`` the kind of hole i:
    "text", "number" or "pinned", whose bytes must be ``pins[i]``); hole ``text`` is the text kept, hole
    ``number`` (if any) the number that must rise above the last, the first above ``floor`` (if not None).
    ``name``: the SSE event name of the run's events (None: no ``event:`` line)."""
    # On the wire: ``event: NAME`` LF ``data: DATA`` LF LF. A name that starts with a space is left to the
    # decoder (its events are matched once decoded), as it always was: rare, and not worth a proof of its own.
    head = None if name is not None and name.startswith(" ") else \
        (b"" if name is None else b"event: " + name.encode("utf-8") + b"\n") + b"data: "
    last = -1 if floor is None else floor
    if speedups is not None:
        try:
            compiled = speedups.Matcher(tuple(literals), b"".join(_KIND_CODES[k] for k in kinds), tuple(pins),
                                        head or b"", text, -1 if number is None else number, last)
        except (ValueError, OverflowError):  # a shape it does not take (a hole not closed by its next byte; 64
            pass  # holes or more), or a floor beyond 64 bits: the regex takes those
        else:
            return _compiled(compiled, head is not None, number is not None, take)
    return _regex(literals, kinds, pins, text, number, last, head, take)


def _compiled(matcher: Any, on_wire: bool, numbered: bool, take: Take) -> RunMatcher:
    """The compiled Matcher's methods, and a flush that hands its texts on (checker/_speedups.c)."""
    drain = matcher.drain

    def flush() -> None:
        texts, count = drain()
        if count:
            take(texts.decode("utf-8"), count, matcher.last if numbered else None)

    return RunMatcher(matcher.shape, matcher.match, matcher.wire if on_wire else None, flush)


def _regex(literals: list[bytes], kinds: list[str], pins: list[bytes | None], text: int, number: int | None,
           last: int, head: bytes | None, take: Take) -> RunMatcher:
    """The pure-Python matcher: one regular expression (re's cache shares it between templates of one shape)."""
    pattern = [re.escape(literals[0])]
    for kind, literal in zip(kinds, literals[1:]):
        pattern += [_NUMBER_HOLE if kind == "number" else _TEXT_HOLE, re.escape(literal)]
    compiled = re.compile(b"".join(pattern), re.DOTALL)
    pinned = tuple((n + 1, pin) for n, pin in enumerate(pins) if pin is not None)
    text_group, number_group = text + 1, None if number is None else number + 1
    texts: list[bytes] = []

    def taken(m: re.Match[bytes] | None) -> bool:
        nonlocal last
        if m is None:
            return False
        for group, value in pinned:
            if m[group] != value:
                return False
        if number_group is not None:
            if (n := int(m[number_group])) <= last:
                return False
            last = n
        texts.append(m[text_group])
        return True

    fullmatch = compiled.fullmatch

    def shape(data: bytes) -> bool:
        return fullmatch(data) is not None

    def match(data: bytes) -> bool:
        return taken(fullmatch(data))

    wire: Wire | None = None
    if head is not None:
        whole = re.compile(re.escape(head) + compiled.pattern + b"\n\n", re.DOTALL).match

        def wire(block: bytes, pos: int, fits: int, room: int) -> tuple[int, int]:
            count, n = 0, len(block)
            while pos < n and count < room:
                m = whole(block, pos, pos + fits)
                if not taken(m):
                    break
                pos = m.end()  # type: ignore[union-attr]
                count += 1
            return pos, count

    def flush() -> None:
        if texts:
            take(b"".join(texts).decode("utf-8"), len(texts), None if number is None else last)
            texts.clear()

    return RunMatcher(shape, match, wire, flush)
