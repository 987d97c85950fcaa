"""The one place that decides about colour (``--color``, ``NO_COLOR``, ``FORCE_COLOR``)."""

from __future__ import annotations

import os
from typing import IO

from rich.console import Console


class _Console(Console):
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
    return _Console(
        file=stream,
        force_terminal=force,
        no_color=force is False,
        highlight=False,
        soft_wrap=False,
        width=width or (None if stream.isatty() else 120),
    )
