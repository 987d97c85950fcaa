"""The ``every`` fault of ``sse-check serve``: faults on every Nth request only, the shape of a flaky server.

``every=N`` (a flag or in the ``X-SSE-Check-Fault`` header) makes the other faults of a request apply only
when it is the Nth, 2Nth, … request that this server process has answered since it started (all endpoints
and scenarios counted together, in arrival order); the other requests are served faithfully. With one
scenario probed ``--repeat 4`` times, ``--status 500 --every 2`` fails runs 2 and 4 (RPT001 then says so).
The count is the server's only state about its clients; it lives here, keyed by the replay server.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Iterator

from checker.live.faults import Faults

_COUNTERS: weakref.WeakKeyDictionary[object, Iterator[int]] = weakref.WeakKeyDictionary()


def every_nth(server: object, faults: Faults) -> Faults:
    """``faults`` for this request of ``server`` (counted here), or none when ``every`` skips it."""
    if faults.every is None:
        return faults
    counter = _COUNTERS.setdefault(server, itertools.count(1))
    return faults if next(counter) % faults.every == 0 else Faults()
