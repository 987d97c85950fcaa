"""The proxy's checker, off the forwarding path: one thread fed by a bounded queue.

The forwarding coroutine only *queues* each step of a watched exchange (its answer's headers, each body
chunk, its end) and goes on with the next chunk; a thread runs the steps in order. So a slow checker (a
huge event, a slow disk under ``--save``, a slow ``--log-jsonl`` target) never delays a byte, and a failing
one cannot reach the traffic. The queue holds at most ``capacity`` bytes of body: when a chunk would go
over it, that exchange stops being checked (its remaining chunks are not queued, the bytes still flow),
and the overflow is counted. Control steps (headers, end, skip) are never refused, so every exchange is
recorded, checked or not.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable
from typing import Any

DEFAULT_CAPACITY = 64 * 1024 * 1024  # bytes of body waiting for the checker


class CheckQueue:
    """Runs queued steps in order on one daemon thread (started on the first step)."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self.capacity = capacity
        self.queued_bytes = 0
        self.overflows = 0  # exchanges whose checking was given up because the queue was full
        self._steps: collections.deque[tuple[Callable[..., Any], tuple[Any, ...], int]] = collections.deque()
        self._ready = threading.Condition()
        self._thread: threading.Thread | None = None
        self._stopping = False

    def submit(self, step: Callable[..., Any], *args: Any, size: int = 0) -> bool:
        """Queue ``step(*args)``; False, and nothing queued, when ``size`` bytes would overflow the queue."""
        with self._ready:
            if size and self.queued_bytes + size > self.capacity:
                self.overflows += 1
                return False
            self.queued_bytes += size
            self._steps.append((step, args, size))
            self._ready.notify()
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="sse-check-checker", daemon=True)
                self._thread.start()
        return True

    def control(self, step: Callable[..., Any], *args: Any) -> None:
        """Queue a step that carries no body: never refused."""
        self.submit(step, *args)

    def drain(self, timeout: float | None = None) -> bool:
        """Run every queued step, then stop the thread; True if it finished within ``timeout``."""
        with self._ready:
            thread = self._thread
            self._stopping = True
            self._ready.notify()
        if thread is not None:
            thread.join(timeout)
            if thread.is_alive():
                return False
        with self._ready:
            self._thread = None
            self._stopping = False
        return True

    def _run(self) -> None:
        while True:
            with self._ready:
                while not self._steps and not self._stopping:
                    self._ready.wait()
                if not self._steps:
                    return
                step, args, size = self._steps.popleft()
            try:
                step(*args)
            except Exception:  # noqa: BLE001,S110 - each step reports its own failures; the thread must live on
                pass
            finally:
                if size:
                    with self._ready:
                        self.queued_bytes -= size
