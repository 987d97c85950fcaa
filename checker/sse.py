"""An incremental, sans-I/O ``text/event-stream`` decoder that follows WHATWG exactly.

Spec: WHATWG HTML Living Standard, §9.2.6 "Parsing an event stream" and "Interpreting an event stream"
(summarised, with the grammar, in docs/spec.md §1).

Two stages, as in httpx-sse: bytes → lines → events. Unlike httpx-sse, this decoder strips one leading BOM,
never dispatches an event whose data buffer is empty, accepts ``retry`` only when it is all ASCII digits,
always decodes as UTF-8, and carries a CR at the end of a chunk over to the next one so that a CRLF split
across two reads is one line end, not two.

Everything that is legal for WHATWG but a hazard for real clients, or not legal at all, is reported as a
framing finding in stream order, interleaved with the events; nothing is raised. Each event and finding
carries its line number and the byte offset of its first line in the raw input.

Memory is bounded: a line longer than ``max_line_bytes`` is skipped (a finding) rather than buffered, and an
event whose data exceeds ``max_event_bytes`` is dropped (a finding) while its lines are still counted. A long
line is held once while it arrives, and its data value is built in one copy (sse_lines.long_data_value).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

from checker.findings import Finding, Position
from checker.rules import framing
from checker.sse_lines import (LONG_LINE, LineHygiene, empty_block_finding, is_utf8, long_data_value, repair,
                               return_large_blocks, trailing_partial)

BOM = b"\xef\xbb\xbf"
_FIELD_END = re.compile(rb"[:\r\n]")

# 16 MiB per line and 64 MiB per event: far above any real event (a long
# reasoning item's output_item.done is well under 1 MiB) yet small enough that
# a hostile stream cannot exhaust memory.
DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024
DEFAULT_MAX_EVENT_BYTES = 64 * 1024 * 1024

_EOL = re.compile(rb"\r\n|\r|\n")
_EOL_KINDS = {b"\r\n": "crlf", b"\r": "cr", b"\n": "lf"}
# The shape of nearly every event on the wire: an optional `event:` line, one
# `data:` line, a blank line, all LF. Matched whole, it skips the per-line path.
_SIMPLE_EVENT = re.compile(rb"(?:event:(?: ?)([^\n]*)\n)?data:(?: ?)([^\n]*)\n\n")


class SSEEvent(NamedTuple):
    """One dispatched event (a named tuple: one is made per event on the hot path).

    ``data`` stays bytes (UTF-8, already validated or repaired with U+FFFD) so
    the JSON parser can read it without another copy. ``event`` is the value of
    the last ``event:`` field, or ``None`` when the block had none.
    """

    # The event's number in the stream; it shadows tuple.index(), which nothing calls on an event.
    index: int  # type: ignore[assignment]
    data: bytes
    event: str | None
    last_event_id: str
    retry: int | None
    line: int
    byte: int
    end_byte: int
    data_lines: int

    @property
    def position(self) -> Position:
        return Position(self.line, self.byte, self.index, self.event)


class SSEDecoder:
    """Feed bytes in any chunking; get events and framing findings in order.

    ``feed(b"")`` is not end of input; call :meth:`close` once at the end.
    """

    def __init__(
        self,
        *,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES,
    ) -> None:
        self.max_line_bytes = max_line_bytes
        self.max_event_bytes = max_event_bytes
        self._buf = b""
        self._buf_offset = 0  # absolute byte offset of self._buf[0]
        # The rest of an unfinished long line, after _buf: one growing buffer (a list of 64 KiB chunks
        # scattered over the heap stayed in the RSS once freed; a large buffer goes back whole).
        self._parts = bytearray()
        self._started = False  # BOM decision made
        self._closed = False
        self._line_no = 1  # number of the next line to be completed
        self._skipping_line = False  # inside an over-long line
        self._skipped_line_start = 0  # where that line started (its end is reported there, as for any line)
        self._hygiene = LineHygiene()  # line ends, NUL bytes (checker/sse_lines.py)
        self._events = 0
        # Pending event block.
        self._data: list[bytes] = []
        self._data_size = 0
        self._event_name: str | None = None
        self._fields: list[str] = []
        self._block_line = 0
        self._block_byte = 0
        self._too_large = False
        self._error_value: str | None = None  # the value of an `error:` field in the pending block (SSE028)
        self._last_event_id = ""
        self._retry: int | None = None
        self._names: dict[bytes, str] = {}
        # A run's next events, matched whole (checker/run_template.py): run(block, pos, fits, room) takes the
        # events at pos, each within ``fits`` bytes, at most ``room``, and returns where they end and how many
        # (checker/run_match.Wire). Used once, at the start of an LF block: the events it takes come before all
        # others of the feed. The engine sets it after each feed.
        self.run: Callable[[bytes, int, int, int], tuple[int, int]] | None = None
        self.run_lines = 2  # lines in each event of the run
        self.run_limit = 0  # the run takes no event from this index on

    @property
    def events_dispatched(self) -> int:
        return self._events

    @property
    def bytes_seen(self) -> int:
        return self._buf_offset + len(self._buf) + len(self._parts)

    @property
    def pending_line(self) -> bool:
        """Part of an unfinished line is set aside (see feed)."""
        return bool(self._parts)

    def _join_parts(self, chunk: bytes = b"") -> None:
        """``_buf`` + the set-aside parts + ``chunk``, in one copy (a long line is copied once, not thrice)."""
        if self._parts:
            self._buf = b"".join([self._buf, self._parts, chunk])
            self._parts = bytearray()
        elif chunk:
            self._buf += chunk

    def feed(self, chunk: bytes) -> list[SSEEvent | Finding]:
        if self._closed:
            raise RuntimeError("feed() after close()")
        if not chunk:
            return []
        if (
            self._started
            and not self._skipping_line
            and self._buf[-1:] != b"\r"
            and b"\n" not in chunk
            and b"\r" not in chunk
        ):
            # A chunk inside a long line: set it aside and join once the line
            # ends, instead of re-copying the growing line on every chunk.
            self._parts += chunk
            if len(self._parts) > LONG_LINE:
                return_large_blocks()
            if len(self._buf) + len(self._parts) <= self.max_line_bytes:
                return []
            self._join_parts()
            out_: list[SSEEvent | Finding] = []
            self._check_line_limit(out_)
            return out_
        out: list[SSEEvent | Finding] = []
        if self._parts and (rest := self._end_long_data_line(chunk, out)) is not None:
            chunk = rest
        self._join_parts(chunk)
        if not self._started:
            if len(self._buf) < len(BOM) and BOM.startswith(self._buf):
                return out  # cannot decide about the BOM yet
            if (self._buf.startswith(BOM) and _FIELD_END.search(self._buf, len(BOM)) is None
                    and len(self._buf) <= self.max_line_bytes):
                return out  # the BOM's finding names the first field: wait for its end
            self._strip_bom(out)
        self._process(out, final=False)
        return out

    def close(self) -> list[SSEEvent | Finding]:
        """End of input: process what is buffered, discard a pending event."""
        if self._closed:
            return []
        self.run = None  # the engine checks what comes at the end
        out: list[SSEEvent | Finding] = []
        self._join_parts()
        if not self._started:
            self._strip_bom(out)
        self._process(out, final=True)
        if self._buf:
            # The last line had no line end. WHATWG processes it as a line but
            # the event it belongs to is never dispatched.
            line, self._buf = self._buf, b""
            start = self._buf_offset
            self._buf_offset += len(line)
            if not self._hygiene.nul_reported and b"\x00" in line:
                self._hygiene.report_nul(line, start, self._line_no, out)
            try:
                line.decode("utf-8")
            except UnicodeDecodeError:
                line = repair(line, start, self._line_no, out)
            self._line(line, start, self._buf_offset, out)
        if self._data or self._fields or self._event_name is not None:
            out.append(trailing_partial(self._data, Position(line=self._block_line, byte=self._block_byte,
                                                             event_index=None, event_type=self._event_name)))
        self._reset_block()
        self._closed = True
        return out

    def end_position(self) -> Position:
        """Where the stream currently ends (for findings about the whole stream)."""
        return Position(line=self._line_no, byte=self.bytes_seen)

    # -- stage 1: bytes → lines ----------------------------------------------

    def _end_long_data_line(self, chunk: bytes, out: list[SSEEvent | Finding]) -> bytes | None:
        """A long data line's end (sse_lines.long_data_value): the rest of ``chunk``, or None (general path)."""
        ended = long_data_value(self._buf, self._parts, chunk, self.max_line_bytes, self._hygiene.nul_reported)
        if ended is None:
            return None
        value, size, kind, rest = ended
        self._parts = bytearray()  # the pieces go now: the value is the only copy
        self._buf = b""
        start, self._buf_offset = self._buf_offset, self._buf_offset + size
        self._hygiene.line_end(kind, start, self._line_no, out)
        line_no = self._line_no
        self._line_no += 1
        if not self._data and not self._fields and self._event_name is None:
            self._block_line = line_no
            self._block_byte = start
        self._data_value(value, out)
        return rest

    def _strip_bom(self, out: list[SSEEvent | Finding]) -> None:
        self._started = True
        if self._buf.startswith(BOM):
            # The field the BOM sticks to: a decoder that keeps the BOM ignores that one field, which loses the
            # first event when it is `data` (openai-python's SSEDecoder).
            end = _FIELD_END.search(self._buf, len(BOM))
            first = self._buf[len(BOM):end.start()].decode("utf-8", "replace") if end else None
            out.append(framing.BOM.finding(Position(line=1, byte=0), first_field=first))
            self._buf = self._buf[len(BOM) :]
            self._buf_offset = len(BOM)

    def _process(self, out: list[SSEEvent | Finding], *, final: bool) -> None:
        buf = self._buf
        if self._skipping_line:
            m = _EOL.search(buf)
            if m is None or (m.group() == b"\r" and m.end() == len(buf) and not final):
                # Still inside the skipped line; a CR at the very end may be the first half of a CRLF.
                keep = buf[m.start():] if m is not None else b""
                self._buf_offset += len(buf) - len(keep)
                self._buf = keep
                return
            self._skipping_line = False
            # The skipped line's end is read like any other: its kind counts for mixed endings and a lone CR,
            # as when the whole line arrives in one chunk.
            self._hygiene.line_end(_EOL_KINDS[m.group()], self._skipped_line_start, self._line_no, out)
            cut = m.end()
            self._buf_offset += cut
            self._line_no += 1
            buf = self._buf = buf[cut:]
        # Take only complete lines. A CR at the very end may be the first half
        # of a CRLF: keep it until the next chunk (or close) says.
        end = max(buf.rfind(b"\n"), buf.rfind(b"\r"))
        if end < 0:
            self._check_line_limit(out)
            return
        if buf[end] == 0x0D and end == len(buf) - 1 and not final:
            end -= 1
            end = max(buf.rfind(b"\n", 0, end + 1), buf.rfind(b"\r", 0, end + 1))
            if end < 0:
                self._check_line_limit(out)
                return
        block = buf[: end + 1]
        self._buf = buf[end + 1 :]
        del buf  # a huge line is held once (as block), not twice, while it is split into events
        self._lines(block, out)
        self._check_line_limit(out)

    def _check_line_limit(self, out: list[SSEEvent | Finding]) -> None:
        if len(self._buf) > self.max_line_bytes:
            out.append(
                framing.LINE_TOO_LONG.finding(
                    Position(line=self._line_no, byte=self._buf_offset), limit=self.max_line_bytes
                )
            )
            self._skipped_line_start = self._buf_offset
            self._buf_offset += len(self._buf)
            self._buf = b""
            self._skipping_line = True
            # The event the line belonged to is damaged: drop it.
            self._reset_block()

    def _lines(self, block: bytes, out: list[SSEEvent | Finding]) -> None:
        """Split a block that ends exactly at a line end into lines."""
        base = self._buf_offset
        self._buf_offset += len(block)
        # isascii() settles most blocks without building the decoded str (as large as the block).
        valid = block.isascii() or is_utf8(block)
        hygiene = self._hygiene
        check_nul = not hygiene.nul_reported and b"\x00" in block
        # A line over the limit is skipped unread (LINE_TOO_LONG), as it is when it arrives in pieces and is
        # dropped while buffering: its bytes are not checked for NUL or UTF-8 either way.
        limit = self.max_line_bytes
        if b"\r" not in block:
            # The first LF is noted at its line; after that line when the line is over the limit (LINE_TOO_LONG
            # first), as when such a line arrives in pieces and its end is seen only after it was skipped.
            note_lf = "lf" not in hygiene.eol_kinds
            late_lf = note_lf and block.find(b"\n") > limit
            if note_lf and not late_lf:
                hygiene.note_eol("lf", base, self._line_no, out)
            if valid and not check_nul and not late_lf:
                self._lf_block(block, base, out)
                return
            pos = base
            for line in block[:-1].split(b"\n"):
                end = pos + len(line) + 1
                if len(line) <= limit:
                    if check_nul and b"\x00" in line:
                        check_nul = hygiene.report_nul(line, pos, self._line_no, out)
                    if not valid:
                        line = repair(line, pos, self._line_no, out)
                line_no = self._line_no
                self._line(line, pos, end, out)
                if late_lf:
                    late_lf = False
                    hygiene.note_eol("lf", pos, line_no, out)
                pos = end
            return
        pos = 0
        for m in _EOL.finditer(block):
            line = block[pos : m.start()]
            kind = _EOL_KINDS[m.group()]
            if len(line) <= limit:
                hygiene.line_end(kind, base + pos, self._line_no, out)
                if check_nul and b"\x00" in line:
                    check_nul = hygiene.report_nul(line, base + pos, self._line_no, out)
                if not valid:
                    line = repair(line, base + pos, self._line_no, out)
                self._line(line, base + pos, base + m.end(), out)
            else:
                # Over the limit: LINE_TOO_LONG first, then its end, the order in which pieces would show them.
                line_no = self._line_no
                self._line(line, base + pos, base + m.end(), out)
                hygiene.line_end(kind, base + pos, line_no, out)
            pos = m.end()

    def _lf_block(self, block: bytes, base: int, out: list[SSEEvent | Finding]) -> None:
        """Valid UTF-8, LF only: whole simple events at once, other lines one by one.

        The hot loop keeps the counters in locals and writes them back before
        any line goes through the general path (which reads and updates them).
        """
        match = _SIMPLE_EVENT.match
        append = out.append
        # tuple.__new__ straight: the named tuple's own __new__ is a Python function, a frame per event.
        new, event_type = tuple.__new__, SSEEvent
        names = self._names
        pos, n = 0, len(block)
        max_line, max_event = self.max_line_bytes, self.max_event_bytes
        events, line_no = self._events, self._line_no
        last_id, retry = self._last_event_id, self._retry
        idle = not self._data and self._event_name is None and not self._fields and not self._too_large
        run, self.run, fits, limit = self.run if idle else None, None, min(max_line, max_event - 1), self.run_limit
        if run is not None and events < limit:
            pos, taken = run(block, pos, fits, limit - events)
            events, line_no = events + taken, line_no + taken * self.run_lines
        while pos < n:
            if idle:
                m = match(block, pos)
                if m is not None:
                    raw_name, data = m.group(1, 2)
                    end = m.end()
                    if end - pos > max_line or len(data) >= max_event:
                        # Near a limit: line lengths exactly as the general path counts them.
                        data_start = m.start(2)
                        data_line = end - 2 - data_start + (6 if block[data_start - 1] == 0x20 else 5)
                        event_line = 0 if raw_name is None else m.end(1) - pos
                        fits = data_line <= max_line and event_line <= max_line and len(data) < max_event
                    else:
                        fits = True
                    if fits:
                        if raw_name is None:
                            append(new(event_type, (events, data, None, last_id, retry, line_no, base + pos,
                                                    base + end, 1)))
                            line_no += 2
                        else:
                            name = names.get(raw_name)
                            if name is None:
                                name = names[raw_name] = raw_name.decode("utf-8")
                            append(new(event_type, (events, data, name, last_id, retry, line_no, base + pos,
                                                    base + end, 1)))
                            line_no += 3
                        events += 1
                        pos = end
                        continue
            self._events, self._line_no = events, line_no
            nl = block.index(b"\n", pos)
            self._line(block[pos:nl], base + pos, base + nl + 1, out)
            pos = nl + 1
            events, line_no = self._events, self._line_no
            last_id, retry = self._last_event_id, self._retry
            idle = not self._data and self._event_name is None and not self._fields and not self._too_large
        self._events, self._line_no = events, line_no

    # -- stage 2: lines → events ---------------------------------------------

    def _line(self, line: bytes, pos: int, end: int, out: list[SSEEvent | Finding]) -> None:
        line_no = self._line_no
        self._line_no += 1
        if not line:
            self._dispatch(end, out)
            return
        if len(line) > self.max_line_bytes:
            # The same finding whether the line arrived whole or was cut off
            # while buffering (see _check_line_limit).
            out.append(framing.LINE_TOO_LONG.finding(Position(line=line_no, byte=pos), limit=self.max_line_bytes))
            self._reset_block()
            return
        if line[0] == 0x3A:  # ':' comment (keepalive)
            return
        if not self._data and not self._fields and self._event_name is None:
            self._block_line = line_no
            self._block_byte = pos
        colon = line.find(b":")
        if colon < 0:
            name, value = line, b""
        else:
            name = line[:colon]
            start = colon + 2 if line[colon + 1 : colon + 2] == b" " else colon + 1
            value = line[start:]  # one copy of a huge data line, not two
        if name == b"data":
            self._data_value(value, out)
        elif name == b"event":
            self._event_name = value.decode("utf-8")
            self._fields.append("event")
        elif name == b"id":
            self._fields.append("id")
            if b"\x00" in value:
                out.append(framing.ID_NUL.finding(Position(line=line_no, byte=pos)))
            else:
                self._last_event_id = value.decode("utf-8")
        elif name == b"retry":
            self._fields.append("retry")
            if value and value.isdigit() and value.isascii():
                self._retry = int(value)
            else:
                out.append(
                    framing.BAD_RETRY.finding(Position(line=line_no, byte=pos), value=value.decode("utf-8"))
                )
        else:
            field_name = name.decode("utf-8")
            self._fields.append(field_name)
            out.append(framing.UNKNOWN_FIELD.finding(Position(line=line_no, byte=pos), field=field_name))
            if field_name == "error" and self._error_value is None:
                self._error_value = value[:200].decode("utf-8", "replace")

    def _data_value(self, value: bytes, out: list[SSEEvent | Finding]) -> None:
        """The value of one ``data`` line: appended to the pending event, unless the event grew too large."""
        if self._too_large:
            return
        self._data.append(value)
        self._data_size += len(value) + 1
        if self._data_size > self.max_event_bytes:
            self._too_large = True
            self._data = []
            out.append(framing.EVENT_TOO_LARGE.finding(Position(line=self._block_line, byte=self._block_byte),
                                                       limit=self.max_event_bytes))

    def _dispatch(self, end: int, out: list[SSEEvent | Finding]) -> None:
        if self._too_large:
            self._reset_block()
            return
        if not self._data:
            found = empty_block_finding(self._fields, self._error_value,
                                        Position(line=self._block_line, byte=self._block_byte,
                                                 event_type=self._event_name))
            if found is not None:
                out.append(found)
            self._reset_block()
            return
        data = self._data[0] if len(self._data) == 1 else b"\n".join(self._data)
        event = SSEEvent(
            self._events, data, self._event_name, self._last_event_id, self._retry,
            self._block_line, self._block_byte, end, len(self._data),
        )
        self._events += 1
        out.append(event)
        self._reset_block()

    def _reset_block(self) -> None:
        self._error_value = None
        self._data = []
        self._data_size = 0
        self._event_name = None
        self._fields = []
        self._too_large = False


def decode_all(data: bytes, **limits: int) -> list[SSEEvent | Finding]:
    """Decode a whole capture held in memory (tests, small inputs)."""
    decoder = SSEDecoder(**limits)
    return decoder.feed(data) + decoder.close()
