"""The one place that decides about colour (``--color``, ``NO_COLOR``, ``FORCE_COLOR``) and width.

Width: a terminal's own width; ``$COLUMNS`` when set (as every Unix tool reads it, also when the output is
a pipe); otherwise, for a file or a pipe, no hard wrap at all, so that a report written with ``-o`` keeps
each finding on its line for grep and diff. Every line is written without trailing blanks (rich pads
table cells and wrapped lines with spaces).
"""

from __future__ import annotations

import os
import re
import sys
from typing import IO, Any

from rich.console import Console
from rich.table import Table

# A line never wraps below this (a long table row is better cropped than folded to one word per line).
MIN_WIDTH = 40
# "No hard wrap": wide enough for any message the engine writes (quoted input is capped).
UNWRAPPED = 4000

# The blanks and colour codes at the end of a line (rich closes a style after its padding).
_TRAILING = re.compile(r"(?:[ \t]|\x1b\[[0-9;]*m)+$", re.MULTILINE)
_CODES = re.compile(r"\x1b\[[0-9;]*m")


def _rstrip(text: str) -> str:
    """``text`` without blanks at the end of any line; the colour codes among them are kept."""
    return _TRAILING.sub(lambda m: "".join(_CODES.findall(m.group(0))), text)


class _Rstripped:
    """A text stream that drops the blanks rich leaves at the end of a line (also before a colour reset)."""

    def __init__(self, stream: IO[str] | None) -> None:
        self._fixed = stream  # None: whatever sys.stdout is at the time (rich's live displays redirect it)
        self._pending = ""

    @property
    def _stream(self) -> IO[str]:
        return self._fixed if self._fixed is not None else sys.stdout

    def write(self, text: str) -> int:
        text = self._pending + text
        head, newline, tail = text.rpartition("\n")
        self._pending = tail
        if newline:
            self._stream.write(_rstrip(head) + "\n")
        return len(text)

    def flush(self) -> None:
        if self._pending:
            self._stream.write(_rstrip(self._pending))
            self._pending = ""
        self._stream.flush()

    def isatty(self) -> bool:
        return self._stream.isatty()

    def fileno(self) -> int:
        return self._stream.fileno()

    @property
    def encoding(self) -> str:
        return getattr(self._stream, "encoding", "utf-8") or "utf-8"

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def output_width(stream: IO[str]) -> int | None:
    """The width to wrap at: None for a terminal (rich asks it), ``$COLUMNS``, or no wrap (a file, a pipe).
    A file written with ``-o`` is never wrapped: ``$COLUMNS`` is the terminal's width, not the file's."""
    if stream is not sys.stdout and stream is not sys.stderr:
        return UNWRAPPED
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return max(int(columns), MIN_WIDTH)
    try:
        if stream.isatty():
            return None
    except (AttributeError, ValueError):
        pass
    return UNWRAPPED


class _Console(Console):
    def print(self, *objects: Any, **kwargs: Any) -> None:
        # A table's header is never chopped into pieces: each column is at least as wide as its header (the
        # cells wrap or the table is cropped instead).
        for obj in objects:
            if isinstance(obj, Table):
                for column in obj.columns:
                    if isinstance(column.header, str) and column.header:
                        column.min_width = max(column.min_width or 0, len(column.header))
        super().print(*objects, **kwargs)

    def on_broken_pipe(self) -> None:
        # rich exits 1 here; the CLI takes a closed pipe (`sse-check lint … | head`) as the reader having what it
        # wanted, and exits 0 quietly (checker.cli).
        self.quiet = True
        raise BrokenPipeError


def make_console(stream: IO[str], color: str = "auto", *, width: int | None = None) -> Console:
    if color == "always":
        force = True
    elif color == "never" or os.environ.get("NO_COLOR"):
        force = False
    elif os.environ.get("FORCE_COLOR"):
        force = True
    else:
        force = None  # rich decides from the stream (a terminal or not)
    chosen = width or output_width(stream)
    # stdout is looked up at each write, so that rich's live displays (probe's progress) can redirect it.
    return _Console(
        file=_Rstripped(None if stream is sys.stdout else stream),  # type: ignore[arg-type]
        force_terminal=force,
        no_color=force is False,
        highlight=False,
        emoji=False,  # a ":name:" in a message or a capture's name is text, never an emoji
        soft_wrap=False,
        width=chosen,
    )
