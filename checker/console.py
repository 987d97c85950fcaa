"""The one place that decides about colour (``--color``, ``NO_COLOR``, ``FORCE_COLOR``) and width.

Width: a terminal's own width; ``$COLUMNS`` when set (as every Unix tool reads it, also when the output is
a pipe); otherwise, for a file or a pipe, no hard wrap at all, so that a report written with ``-o`` keeps
each finding on its line for grep and diff. Every line is written without trailing blanks (rich pads
table cells and wrapped lines with spaces).

rich is imported only when something needs it: :class:`PlainLines` writes a line that rich would write
unchanged (it fits the width, its characters are one cell each, its styles are plain SGR codes) without it,
so that a passing capture's report costs no rich import (issue 19's start-up target).
"""

from __future__ import annotations

import functools
import os
import re
import sys
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

# A line never wraps below this (a long table row is better cropped than folded to one word per line).
MIN_WIDTH = 40
# "No hard wrap": wide enough for any message the engine writes (quoted input is capped).
UNWRAPPED = 4000

# The blanks and colour codes at the end of a line (rich closes a style after its padding).
_TRAILING = r"(?:[ \t]|\x1b\[[0-9;]*m)+$"
_CODES = r"\x1b\[[0-9;]*m"


def _rstrip(text: str) -> str:
    """``text`` without blanks at the end of any line; the colour codes among them are kept."""
    return re.sub(_TRAILING, lambda m: "".join(re.findall(_CODES, m.group(0))), text, flags=re.MULTILINE)


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


@functools.cache
def _console_class() -> type[Console]:
    """rich's Console as sse-check uses it (defined on first use: importing rich costs start-up)."""
    from rich.console import Console
    from rich.table import Table

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
            # rich exits 1 here; the CLI takes a closed pipe (`sse-check lint … | head`) as the reader having what
            # it wanted, and exits 0 quietly (checker.cli).
            self.quiet = True
            raise BrokenPipeError

    return _Console


def forced_color(color: str) -> bool | None:
    """``--color`` with ``NO_COLOR`` and ``FORCE_COLOR``: True/False, or None (rich decides from the stream)."""
    if color == "always":
        return True
    if color == "never" or os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return None


def make_console(stream: IO[str], color: str = "auto", *, width: int | None = None) -> Console:
    force = forced_color(color)
    chosen = width or output_width(stream)
    # stdout is looked up at each write, so that rich's live displays (probe's progress) can redirect it.
    return _console_class()(
        file=_Rstripped(None if stream is sys.stdout else stream),  # type: ignore[arg-type]
        force_terminal=force,
        no_color=force is False,
        highlight=False,
        emoji=False,  # a ":name:" in a message or a capture's name is text, never an emoji
        soft_wrap=False,
        width=chosen,
    )


# -- lines without rich ------------------------------------------------------------------------------------

# The SGR codes rich writes for the styles the plain lines use (attributes first, then the colour).
_SGR = {"": "", "bold": "1", "dim": "2", "bold red": "1;31", "bold green": "1;32", "bold yellow": "1;33",
        "red": "31", "green": "32", "yellow": "33", "cyan": "36"}
# Characters other than printable ASCII that take one cell in rich (its cell widths), as the reports use them.
_ONE_CELL = frozenset("·×…–—→")


class PlainLines:
    """Lines written as rich writes them, without rich, when rich would write them unchanged: the line fits the
    width (no wrap), every character is one cell, its styles are in ``_SGR``, and the decisions rich would
    make about colour and width are known without it (else :meth:`line` writes nothing and returns False, and
    the caller draws the line with rich). tests/test_plain_lines.py compares both, byte for byte."""

    def __init__(self, stream: IO[str], color: str = "auto", *, width: int | None = None) -> None:
        self._stream = stream
        self._color = color
        self._width = width
        self._mode: tuple[bool, int | None] | None | bool = False  # False: not decided yet

    def _target(self) -> IO[str]:
        return sys.stdout if self._stream is sys.stdout else self._stream

    def mode(self) -> tuple[bool, int | None] | None:
        """(styled, width; None: the terminal's), or None when only rich can tell."""
        if self._mode is False:
            self._mode = _plain_mode(self._stream, self._color, self._width)
        return self._mode  # type: ignore[return-value]

    def line(self, *segments: tuple[str, str]) -> bool:
        """Write ``segments`` ((text, style) pairs) as one line; False (nothing written) when rich must."""
        mode = self.mode()
        if mode is None:
            return False
        styled, width = mode
        if width is None:
            width = _terminal_width()
        size = 0
        for text, style in segments:
            if style not in _SGR or not (text.isascii() and text.isprintable() or _one_cell(text)):
                return False
            size += len(text)
        last = next((text for text, _ in reversed(segments) if text), "")
        if size > width or last.endswith(" "):  # rich's padding and styles around trailing blanks: rich's job
            return False
        if styled:
            out = "".join(f"\x1b[{_SGR[style]}m{text}\x1b[0m" if style and text else text
                          for text, style in segments)
        else:
            out = "".join(text for text, _ in segments)
        self._target().write(out + "\n")
        return True

    def flush(self) -> None:
        self._target().flush()


def _one_cell(text: str) -> bool:
    return all(ch in _ONE_CELL or (ch.isascii() and ch.isprintable()) for ch in text)


def _plain_mode(stream: IO[str], color: str, width: int | None) -> tuple[bool, int | None] | None:
    """What rich would decide for make_console(stream, color, width=width): whether it styles (a terminal) and
    its width (None: the terminal's, asked at each line); None where only rich knows (Windows, Jupyter, IDLE,
    a dumb terminal, an unusual $COLUMNS)."""
    if sys.platform == "win32" or "IPython" in sys.modules:
        return None
    if getattr(sys.stdin, "__module__", "").startswith("idlelib"):
        return None
    terminal = forced_color(color)
    environ = os.environ
    if terminal is None:  # rich's Console.is_terminal
        compatible = environ.get("TTY_COMPATIBLE", "")
        if compatible in ("0", "1"):
            terminal = compatible == "1"
        elif "FORCE_COLOR" in environ:
            terminal = environ["FORCE_COLOR"] != ""
        else:
            try:
                terminal = bool(stream.isatty())
            except (AttributeError, ValueError):
                terminal = False
    if terminal and environ.get("TERM", "").lower() in ("dumb", "unknown"):
        return None
    chosen = width or output_width(stream)
    if chosen is None and "COLUMNS" in environ:
        return None
    return terminal, chosen


def _terminal_width() -> int:
    """The width rich reads for a terminal: the first standard stream's that has one, else 80."""
    width = None
    for fd in (0, 1, 2):
        try:
            width = os.get_terminal_size(fd).columns
        except (AttributeError, ValueError, OSError):
            continue
        break
    return width or 80
