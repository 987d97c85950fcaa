"""Server-Sent Events as a server writes them, for any dialect: an optional ``event:`` line, one ``data:`` line
and a blank line per event, and the ``data: [DONE]`` sentinel some APIs end with.

A dialect's builder (:class:`EventStream`) collects event objects in order and says how its API frames them:
Responses and Anthropic Messages name each event in an ``event:`` line equal to its ``type``; Chat
Completions sends ``data:`` lines only and ends with ``[DONE]``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, ClassVar

Event = dict[str, Any]

DONE = "[DONE]"


def dumps(obj: Any) -> str:
    """Compact JSON as servers send it (no spaces, UTF-8 kept as is)."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def frame(event: Any, *, event_line: str | None = "type", eol: str = "\n") -> str:
    """One event: ``event`` is a JSON value, or a string sent as the data as is. ``event_line`` "type" writes
    ``event: <its type>`` for an object that names one, None no ``event:`` line, any other string that name."""
    data = event if isinstance(event, str) else dumps(event)
    head = ""
    if event_line == "type" and isinstance(event, dict) and isinstance(event.get("type"), str):
        head = f"event: {event['type']}{eol}"
    elif event_line not in (None, "type"):
        head = f"event: {event_line}{eol}"
    return f"{head}data: {data}{eol}{eol}"


def frames(events: Iterable[Any], **options: Any) -> str:
    """The events framed one after another (``frame``'s options apply to each)."""
    return "".join(frame(e, **options) for e in events)


def encode_event(event: Any, **options: Any) -> bytes:
    """One event as UTF-8 bytes (see :func:`frame`)."""
    return frame(event, **options).encode()


def encode(events: Iterable[Any], **options: Any) -> bytes:
    """The events as UTF-8 bytes, framed one by one, never joined as text first (a stream may be large)."""
    return b"".join(encode_event(e, **options) for e in events)


def done(eol: str = "\n") -> str:
    """The ``data: [DONE]`` sentinel (Chat Completions ends with it; Open Responses too)."""
    return f"data: {DONE}{eol}{eol}"


class EventStream:
    """A dialect's stream builder: its methods append event objects to ``events`` (through :meth:`emit`) in the
    order the API sends them; :meth:`sse` frames them as that API does.

    A subclass sets ``EVENT_LINE`` ("type" for APIs that name each event, None for ``data:`` only) and
    ``DONE_SENTINEL`` (True when the stream ends with ``data: [DONE]``), and holds ``events`` (a dataclass
    field)."""

    EVENT_LINE: ClassVar[str | None] = "type"
    DONE_SENTINEL: ClassVar[bool] = False
    events: list[Event]

    def emit(self, event: Event) -> Event:
        self.events.append(event)
        return event

    def sse(self, *, eol: str = "\n") -> str:
        """The stream as its API frames it."""
        body = frames(self.events, event_line=self.EVENT_LINE, eol=eol)
        return body + done(eol) if self.DONE_SENTINEL else body
