"""What the SSE decoder reports about lines themselves: mixed line ends, a lone CR, NUL bytes, invalid UTF-8.

Each is a hazard for some client rather than a WHATWG error (docs/spec.md §1): mixed endings and NUL bytes are
reported once per stream, a lone CR once, every invalid UTF-8 sequence where it is (the line then reads with
U+FFFD, as WHATWG decodes it). Off the hot path: checker/sse.py calls these only for a stream's first line end
of a kind, and for blocks that hold a CR, a NUL or invalid UTF-8.
"""

from __future__ import annotations

import codecs
from typing import TYPE_CHECKING

import orjson

from checker.findings import Finding, Position
from checker.rules import framing

if TYPE_CHECKING:
    from checker.sse import SSEEvent

# UTF-8 is checked in slices of this size, so that a huge line costs no str as large as itself.
_UTF8_SLICE = 1 << 20
_EOL_NAMES = {"lf": "LF", "crlf": "CRLF", "cr": "CR"}


class LineHygiene:
    """The line findings of one stream, and which of them were already reported."""

    __slots__ = ("eol_kinds", "mixed_reported", "lone_cr_reported", "nul_reported")

    def __init__(self) -> None:
        self.eol_kinds: set[str] = set()
        self.mixed_reported = False
        self.lone_cr_reported = False
        self.nul_reported = False

    def note_eol(self, kind: str, byte: int, line: int, out: list[SSEEvent | Finding]) -> None:
        """Note a kind of line end, seen at the line numbered ``line``."""
        self.eol_kinds.add(kind)
        if len(self.eol_kinds) > 1 and not self.mixed_reported:
            self.mixed_reported = True
            kinds = ", ".join(_EOL_NAMES[k] for k in ("crlf", "lf", "cr") if k in self.eol_kinds)
            out.append(framing.MIXED_EOL.finding(Position(line=line, byte=byte), kinds=kinds,
                                                 details={"kinds": kinds}))

    def line_end(self, kind: str, start: int, line: int, out: list[SSEEvent | Finding]) -> None:
        """Note the end of the line numbered ``line`` that starts at byte ``start``: mixed endings, a lone CR."""
        if kind not in self.eol_kinds:
            self.note_eol(kind, start, line, out)
        if kind == "cr" and not self.lone_cr_reported:
            self.lone_cr_reported = True
            out.append(framing.LONE_CR.finding(Position(line=line, byte=start), line=line))

    def report_nul(self, data: bytes, pos: int, line: int, out: list[SSEEvent | Finding]) -> bool:
        """Report the first NUL of the stream; returns whether to keep looking (never)."""
        self.nul_reported = True
        at = pos + data.index(b"\x00")
        where = "comment" if data.startswith(b":") else "data" if data.startswith(b"data") else "field"
        out.append(framing.NUL_BYTES.finding(Position(line=line, byte=pos), offset=at, where=where))
        return False


def repair(data: bytes, pos: int, line: int, out: list[SSEEvent | Finding]) -> bytes:
    """Report every invalid UTF-8 sequence of a line; return it with U+FFFD."""
    start = 0
    bad = False
    while True:
        try:
            data[start:].decode("utf-8")
            break
        except UnicodeDecodeError as exc:
            bad = True
            offset = pos + start + exc.start
            out.append(framing.INVALID_UTF8.finding(Position(line=line, byte=pos), offset=offset, reason=exc.reason))
            start += exc.end
    if not bad:
        return data
    return data.decode("utf-8", "replace").encode("utf-8")


def is_utf8(data: bytes) -> bool:
    """Whether ``data`` is valid UTF-8 (as ``data.decode("utf-8")`` judges it), without decoding it whole."""
    if len(data) <= _UTF8_SLICE:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return False
        return True
    decoder = codecs.getincrementaldecoder("utf-8")()  # a sequence cut by a slice boundary is carried over
    view = memoryview(data)
    try:
        for start in range(0, len(data), _UTF8_SLICE):
            decoder.decode(view[start : start + _UTF8_SLICE])
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def long_data_value(head: bytes, parts: bytearray, chunk: bytes, max_line: int,
                    nul_reported: bool) -> tuple[bytes, int, str, bytes] | None:
    """The value of a long ``data:`` line that ends in ``chunk`` (``head`` its start, ``parts`` the pieces
    set aside), built in one copy, not joined with the line, cut into a block, then sliced into a value
    (three copies of a multi-megabyte event); with the line's size (its end included), the kind of its end,
    and the rest of ``chunk``. ``None`` when the decoder's general path must read the line: not a data line,
    over the limit, not clean UTF-8, a NUL to report, or a CR that may be half a CRLF."""
    if len(head) < 6 or not head.startswith(b"data:"):
        return None
    lf, cr = chunk.find(b"\n"), chunk.find(b"\r")
    end = lf if cr < 0 else cr if lf < 0 else min(lf, cr)
    if end < 0 or (cr == end and end == len(chunk) - 1):
        return None
    size = len(head) + len(parts) + end
    if size > max_line:
        return None
    value = b"".join([head[6 if head[5] == 0x20 else 5 :], parts, chunk[:end]])
    if (not nul_reported and b"\x00" in value) or not (value.isascii() or is_utf8(value)):
        return None  # the general path reports them, in its order
    kind = "lf" if lf == end else "crlf" if chunk[end + 1 : end + 2] == b"\n" else "cr"
    eol = 2 if kind == "crlf" else 1
    return value, size + eol, kind, chunk[end + eol :]


# A line this long is a huge event on its way (a long answer repeated in its terminal events).
LONG_LINE = 1 << 20
_malloc_tuned = False


def trailing_partial(data: list[bytes], pos: Position) -> Finding:
    """The finding of an event left unfinished at the end of the stream (its data lines so far: ``data``), with
    whether its data is whole JSON: a decoder that flushes the pending event (openai-node's) then parses it,
    and fails only when the cut fell inside the JSON."""
    complete: bool | None = None
    if data:
        try:
            orjson.loads(b"\n".join(data))
            complete = True
        except orjson.JSONDecodeError:
            complete = False
    return framing.TRAILING_PARTIAL.finding(pos, json_complete=complete)


def return_large_blocks() -> None:
    """Have glibc's malloc give every block of 1 MiB or more back to the system when it is freed.

    By default glibc raises its mmap threshold to the size of the largest block freed so far (up to 32 MiB):
    after the first 18 MB event, the next ones (their bytes, the decoded text, the parsed strings) come from
    the heap, whose freed space stays in the resident set. A fixed threshold keeps the peak at the copies
    alive at once. Called by the decoder when a long line shows that huge events are coming; it acts once
    per process, and elsewhere (another libc) does nothing."""
    global _malloc_tuned
    if _malloc_tuned:
        return
    _malloc_tuned = True
    try:
        import ctypes

        ctypes.CDLL(None).mallopt(-3, LONG_LINE)  # M_MMAP_THRESHOLD
    except (OSError, AttributeError, TypeError, ValueError):  # pragma: no cover - not glibc (musl, macOS, Windows)
        pass


# The fields that make the SDKs' decoders (openai-python's SSEDecoder, httpx-sse) dispatch a block without data.
_DISPATCHING = frozenset({"event", "id", "retry"})


def empty_block_finding(fields: list[str], error_value: str | None, pos: Position) -> Finding | None:
    """What a block ended without data is: SSE013 when the SDKs' decoders still dispatch it (it has an event, id
    or retry field; an id alone only sets the last event id); SSE028 when it is an `error:` field that nobody
    dispatches (WHATWG's decoder nor the SDKs'); else nothing beyond SSE016, which says what was lost."""
    dispatched = any(name in _DISPATCHING for name in fields)
    if not dispatched and error_value is not None:
        return framing.ERROR_FIELD.finding(Position(line=pos.line, byte=pos.byte), detail=error_value)
    if dispatched and fields != ["id"] * len(fields):
        return framing.EMPTY_DATA.finding(pos, fields=", ".join(dict.fromkeys(fields)))
    return None
