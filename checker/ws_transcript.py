"""The capture of a WebSocket exchange: ``X.ws.jsonl``, a transcript of one connection, one JSON record a line.

An SSE capture is the body's bytes; a WebSocket connection has no such body: what a client sees is a
sequence of messages, each a text or a binary frame, then a close. The transcript keeps exactly that, in
order, so that ``sse-check lint X.ws.jsonl`` replays the connection through the same checks as the live
``probe --transport websocket`` that wrote it (checker/ws_checks.py), and gives the same findings:

* line 1, the header: ``{"format": "sse-check websocket transcript", "version": 1, "url": …,
  "status": 101, "headers": [[name, value], …]}`` (the handshake's answer; secrets masked);
* ``{"t": 0.01, "send": "<text>", "scenario": "plain_text"}``: a message the client sent (a
  ``response.create``), with the scenario it stands for;
* ``{"t": 0.2, "text": "<text>"}``: a text message received, exactly as it arrived;
* ``{"t": 0.2, "binary": "<base64>"}``: a binary message received;
* ``{"t": 1.5, "close": {"received": [1000, ""], "sent": [1000, ""], "server_first": false}}``: how the
  connection ended (``received`` null when no close frame came: the TCP connection dropped, 1006);
* ``{"t": 31.0, "timeout": "idle", "seconds": 30, "waiting": "…"}``: the client stopped waiting.

``t`` is seconds since the connection opened. A finding's position is the record's line in the transcript
(and its byte offset), so it points at the message. Sans-I/O: bytes in, records out.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Any

import orjson

from checker.errors import UsageError

WS_SUFFIX = ".ws.jsonl"
FORMAT = "sse-check websocket transcript"
VERSION = 1
KINDS = ("send", "text", "binary", "close", "timeout")


@dataclass(frozen=True, slots=True)
class Record:
    """One line of a transcript: ``kind`` is "header" or one of :data:`KINDS`; ``value`` the record's payload
    (the text, the decoded bytes, the close or timeout object); ``fields`` the whole JSON object."""

    kind: str
    line: int
    byte: int
    size: int
    value: Any
    fields: dict[str, Any]


def is_ws_capture(name: str) -> bool:
    return name.endswith(WS_SUFFIX)


def ws_stem(name: str) -> str:
    return name[: -len(WS_SUFFIX)] if name.endswith(WS_SUFFIX) else name


def header(url: str, status: int, headers: list[list[str]] | list[tuple[str, str]], **extra: Any) -> bytes:
    """The first line of a transcript."""
    return line({"format": FORMAT, "version": VERSION, "url": url, "status": status,
                 "headers": [list(pair) for pair in headers], **extra})


def line(obj: dict[str, Any]) -> bytes:
    """One record as a transcript line (compact JSON, no raw newline: the text's own are escaped)."""
    return orjson.dumps(obj) + b"\n"


def binary_value(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


class TranscriptReader:
    """Feed a transcript's bytes in any chunking; get its records as their lines complete.

    A line that is not a record is a one-line :class:`UsageError` naming it: a transcript is written by
    sse-check, so a bad line means a damaged file, not a server's defect."""

    def __init__(self, name: str = "transcript") -> None:
        self.name = name
        self._buf = b""
        self._line = 0
        self._offset = 0  # of self._buf[0] in the file
        self.bytes_seen = 0

    def feed(self, chunk: bytes) -> list[Record]:
        self.bytes_seen += len(chunk)
        self._buf += chunk
        out: list[Record] = []
        while (end := self._buf.find(b"\n")) >= 0:
            raw, self._buf = self._buf[:end], self._buf[end + 1:]
            self._take(raw, end + 1, out)
        return out

    def close(self) -> list[Record]:
        out: list[Record] = []
        if self._buf.strip():
            raw, self._buf = self._buf, b""
            self._take(raw, len(raw), out)
        return out

    def _take(self, raw: bytes, size: int, out: list[Record]) -> None:
        self._line += 1
        at, self._offset = self._offset, self._offset + size
        if not raw.strip():
            return
        record = self._record(raw, self._line, at, size)
        out.append(record)

    def _record(self, raw: bytes, number: int, at: int, size: int) -> Record:
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise self._bad(number, f"not JSON ({exc})") from None
        if not isinstance(obj, dict):
            raise self._bad(number, "not a JSON object")
        if number == 1 or "format" in obj:
            if obj.get("format") != FORMAT:
                raise self._bad(number, f"not an sse-check websocket transcript (no \"format\": \"{FORMAT}\")")
            return Record("header", number, at, size, obj, obj)
        kind = next((k for k in KINDS if k in obj), None)
        if kind is None:
            raise self._bad(number, f"a record without any of {', '.join(KINDS)}")
        value = obj[kind]
        if kind in ("send", "text", "binary") and not isinstance(value, str):
            raise self._bad(number, f"\"{kind}\" is not a string")
        if kind == "binary":
            try:
                value = base64.b64decode(value, validate=True)
            except (binascii.Error, ValueError):
                raise self._bad(number, "\"binary\" is not base64") from None
        return Record(kind, number, at, size, value, obj)

    def _bad(self, number: int, reason: str) -> UsageError:
        return UsageError(f"{self.name}: line {number}: {reason}")
