"""The clock facts of one exchange, recorded the same way by the probe and the proxy.

The caller reads the clock (``time.monotonic``) and hands each moment to an :class:`ExchangeTimer`; the timer
keeps the meta's ``timings`` (checker.exchange_meta.ExchangeMeta.timings), in seconds from the request:
``headers``, ``first_byte``, ``first_delta`` (the first ``*.delta`` event), ``first_event``, ``largest_gap``
between two events (and ``largest_gap_at_byte``, where it ended), ``terminal`` (the terminal event),
``closed_after_terminal`` (from the terminal event to the end of the body) and ``total``.

Beside them the timer keeps :attr:`ExchangeTimer.gaps`, every inter-event gap in arrival order (one per event
after the first; events that arrived in the same read are 0 s apart), for the percentiles of
``probe --repeat`` (checker.live.repeat). They stay out of the meta: a long stream has thousands, and a
saved meta (and the proxy's log line) would grow with them; its ``largest_gap`` is kept.
"""

from __future__ import annotations

import re
from typing import Any

# The first piece of output, seen in the raw bytes: a Responses event type ending in ".delta" (in the data,
# or an `event:` line's end), an Anthropic content_block_delta, or a chat delta with non-empty content,
# reasoning or tool calls (a role-only first chunk is not output yet).
_DELTA = re.compile(rb"(?:\.delta|content_block_delta)(?:\"|\r|\n)"
                    rb"|\"delta\":\s*\{[^}]*\"(?:content|reasoning_content|reasoning|refusal|tool_calls)\":\s*(?:\"[^\"]|\[)")


class ExchangeTimer:
    """One exchange's timings, from its ``start`` (the request being sent)."""

    def __init__(self, start: float) -> None:
        self.start = start
        self.timings: dict[str, Any] = {}
        self.gaps: list[float] = []  # every inter-event gap, seconds
        self.terminal_at: float | None = None  # when the terminal event arrived
        self._events = 0
        self._last_event: float | None = None
        self._tail = b""  # the last bytes seen, so that a ".delta" split across two chunks is found

    def headers(self, now: float) -> None:
        self.timings["headers"] = now - self.start

    def first_byte(self, now: float) -> None:
        """A body byte arrived (only the first one counts)."""
        self.timings.setdefault("first_byte", now - self.start)

    def body(self, data: bytes, now: float, *, offset: int, events: int, terminated: bool) -> None:
        """``data`` (decoded body bytes, starting at byte ``offset``) was checked at ``now``: the checker has
        seen ``events`` events so far, and a terminal one if ``terminated``."""
        if "first_delta" not in self.timings and _DELTA.search(self._tail + data):
            self.timings["first_delta"] = now - self.start
        self._tail = (self._tail + data)[-96:]  # a chat delta's opening split across two chunks
        if events > self._events:
            if self._last_event is None:
                self.timings["first_event"] = now - self.start
                self.gaps.extend([0.0] * (events - self._events - 1))  # the first read's other events
            else:
                self.gaps.append(now - self._last_event)
                self.gaps.extend([0.0] * (events - self._events - 1))  # read together: no time between them
                if now - self._last_event > self.timings.get("largest_gap", 0.0):
                    self.timings["largest_gap"] = now - self._last_event
                    self.timings["largest_gap_at_byte"] = offset
            self._last_event, self._events = now, events
        if self.terminal_at is None and terminated:
            self.terminal_at = now
            self.timings["terminal"] = now - self.start

    def body_ended(self, now: float) -> None:
        """The body ended normally: how long after the terminal event (if there was one)."""
        if self.terminal_at is not None:
            self.timings["closed_after_terminal"] = now - self.terminal_at

    def finish(self, now: float) -> dict[str, Any]:
        """The exchange is over: its total time; the timings."""
        self.timings["total"] = now - self.start
        return self.timings
