"""The records the engine produces: positions and findings.

A finding is an immutable record (flake8's ``Violation``, h11's events): it is
recorded, never raised, and carries everything a reporter needs so that no
reporter has to look back into the stream.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, NamedTuple


class Severity(enum.IntEnum):
    """Ordered so that ``finding.severity >= fail_on`` decides the exit code."""

    INFO = 1
    WARNING = 2
    ERROR = 3

    @classmethod
    def parse(cls, text: str) -> "Severity":
        try:
            return cls[text.strip().upper()]
        except KeyError:
            raise ValueError(f"unknown severity {text!r} (use error, warning or info)") from None

    def __str__(self) -> str:
        return self.name.lower()


# Every text filled into a message (a field name, a snippet of a body, a composed clause) is cut to this many
# characters: far above what the rules compose, so only quoted input of unbounded size is ever cut.
QUOTE_CAP = 300


def _escape_char(ch: str) -> str:
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe_text(text: str, cap: int | None = None) -> str:
    """Text fit for one line of a terminal: control characters (C0, DEL, C1, line and paragraph separators)
    escaped as ``\\xNN``/``\\uNNNN``, and cut to ``cap`` characters with ``…``. A message quotes what it
    received, and what it received may be anything (a PNG, an escape sequence that clears the screen)."""
    if cap is not None and len(text) > cap:
        text = text[: cap - 1] + "…"
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() or ch == " " else _escape_char(ch) for ch in text)


class Position(NamedTuple):
    """Where in the capture a finding points.

    ``event_index`` counts dispatched SSE events from 0 (``None`` for findings
    about the framing between events or the stream as a whole); ``line`` is
    1-based; ``byte`` is the 0-based offset of the first byte of that line in
    the raw capture (before any BOM is stripped). A named tuple, not a
    dataclass: one is made per event on the hot path.
    """

    line: int
    byte: int
    event_index: int | None = None
    event_type: str | None = None

    def label(self) -> str:
        """``line:byte``, and ``#index`` for an event: how reports show a position."""
        text = f"{self.line}:{self.byte}"
        return text if self.event_index is None else f"{text} #{self.event_index}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "byte": self.byte,
            "event_index": self.event_index,
            "event_type": self.event_type,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    """One broken rule at one place."""

    code: str
    name: str
    severity: Severity
    message: str
    position: Position
    clients: tuple[str, ...] = ()
    # JSON pointer into the event's JSON (schema findings, field-level rules).
    pointer: str | None = None
    # Set when a profile documents this finding as a known deviation of the
    # server it targets (and so lowered its severity); says which deviation.
    known_deviation: str | None = None
    # How many times the same rule fired with the same message in this stream
    # (reported once, at the first position).
    occurrences: int = 1
    # Machine-usable extra facts (expected/actual values), stable keys.
    details: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def as_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "name": self.name,
            "severity": str(self.severity),
            "message": self.message,
            "position": self.position.as_dict(),
            "pointer": self.pointer,
            "clients": list(self.clients),
            "known_deviation": self.known_deviation,
            "occurrences": self.occurrences,
            "details": self.details,
        }
