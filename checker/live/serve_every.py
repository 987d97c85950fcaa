"""The ``every``, ``first`` and ``busy`` faults of ``sse-check serve``: the other faults of a request apply only
to some requests, the shapes of a flaky server, a server that refuses a burst, and one that fails under load.

* ``every=N``: only the Nth, 2Nth, … request that this server process has answered since it started (all
  endpoints and scenarios counted together, in arrival order). With one scenario probed ``--repeat 4``
  times, ``--status 500 --every 2`` fails runs 2 and 4 (RPT001 then says so).
* ``first=N``: only the first N requests (a server that is rate limited, then recovers):
  ``--status 429 --first 1`` refuses the first request and answers the probe's retry.
* ``busy=N``: only a request that arrives while N or more others are being answered (counted from a request's
  arrival to the end of its response, by :class:`InFlight`): a server that fails under load and never at
  concurrency 1 (``probe --concurrency 1,4``: RPT002).

Given together, all of them must hold. The counts are the server's only state about its clients; they live
here, keyed by the replay server.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Iterator
from typing import Any

from checker.live.faults import Faults

_COUNTERS: weakref.WeakKeyDictionary[object, Iterator[int]] = weakref.WeakKeyDictionary()
_IN_FLIGHT: weakref.WeakKeyDictionary[object, list[int]] = weakref.WeakKeyDictionary()


def every_nth(server: object, faults: Faults) -> Faults:
    """``faults`` for this request of ``server`` (counted here), or none when ``every``, ``first`` or ``busy``
    leaves it out."""
    if faults.every is None and faults.first is None and faults.busy is None:
        return faults
    applies = True
    if faults.every is not None or faults.first is not None:
        number = next(_COUNTERS.setdefault(server, itertools.count(1)))
        applies = (faults.every is None or number % faults.every == 0) and (faults.first is None or
                                                                           number <= faults.first)
    if faults.busy is not None:
        others = in_flight(server) - 1  # this request is being answered too
        applies = applies and others >= faults.busy
    return faults if applies else Faults()


def in_flight(server: object) -> int:
    """How many HTTP requests ``server`` is answering now (0 without :class:`InFlight`)."""
    return _IN_FLIGHT.get(server, [0])[0]


class InFlight:
    """ASGI middleware counting the HTTP requests being answered, from arrival to the end of the response (for
    ``busy``); ``server`` is the state the count belongs to."""

    def __init__(self, app: Any, server: object) -> None:
        self.app, self.server = app, server

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        count = _IN_FLIGHT.setdefault(self.server, [0])
        count[0] += 1
        try:
            await self.app(scope, receive, send)
        finally:
            count[0] -= 1
