"""Where the captures of a run are linted: in this process, in a local process pool (``-j N``), or on a Dask
distributed cluster (``--dask ADDRESS``). Every way yields the results in input order, as soon as the next
one in order is ready, with a bounded number of jobs in flight: a run over millions of captures holds a few
results at a time, never the archive. Pools and Dask are imported only when used.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator
from typing import Any, TypeVar

from checker.errors import UsageError

T = TypeVar("T")
R = TypeVar("R")

# Batches in flight per worker: enough to keep every worker busy while the head of the line is slow, few
# enough that memory stays flat (each held result is one capture's findings).
IN_FLIGHT_PER_WORKER = 3


def usable_cpus() -> int:
    """The cores this process may run on (its affinity mask, as os.process_cpu_count() in Python 3.13)."""
    counter = getattr(os, "process_cpu_count", None)
    if counter is not None:
        return counter() or 1
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def ordered_map(fn: Callable[[T], R], items: Iterable[T], *, jobs: int = 1, dask: str | None = None,
                local: Callable[[T], bool] = lambda _: False) -> Generator[R, None, None]:
    """``fn`` over ``items``, results in input order. ``local(item)`` items (stdin) always run here."""
    if dask is not None:
        yield from _dask_map(fn, items, dask, local)
    elif jobs <= 1:
        yield from map(fn, items)
    else:
        yield from _pool_map(fn, items, jobs, local)


# Captures per task sent to a worker: one task per capture costs more in pickling and messages than linting a
# small capture does; a batch amortises it (results still come back in order, batch by batch).
BATCH = 16


def run_batch(fn: Callable[[T], R], batch: list[T]) -> list[R]:
    """What a worker runs: ``fn`` over a batch of items."""
    return [fn(item) for item in batch]


class _Ready:
    """Results computed here, standing in the queue of futures."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def result(self) -> Any:
        return self.value


def _windowed(submit: Callable[[list[T]], Any], fn: Callable[[T], R], items: Iterable[T], window: int,
              local: Callable[[T], bool]) -> Iterator[R]:
    """Batches of ``items`` submitted ``window`` at a time, their results yielded in order; a ``local`` item
    is run here, in its place."""
    queue: deque[Any] = deque()
    batch: list[T] = []

    def flush() -> None:
        if batch:
            queue.append(submit(list(batch)))
            batch.clear()

    for item in items:
        if local(item):
            flush()
            queue.append(_Ready([fn(item)]))
        else:
            batch.append(item)
            if len(batch) >= BATCH:
                flush()
        while len(queue) >= window:
            yield from queue.popleft().result()
    flush()
    while queue:
        yield from queue.popleft().result()


def _pool_map(fn: Callable[[T], R], items: Iterable[T], jobs: int, local: Callable[[T], bool]) -> Iterator[R]:
    import multiprocessing
    import threading
    from concurrent.futures import ProcessPoolExecutor

    # fork when this process has no other thread (the CLI): workers start at once with the engine already
    # imported. Otherwise forkserver (fork is unsafe beside threads: a lock held by another thread stays held
    # in the child), which preloads the engine; spawn where neither exists.
    methods = multiprocessing.get_all_start_methods()
    context: Any
    if "fork" in methods and threading.active_count() == 1:
        context = multiprocessing.get_context("fork")
    elif "forkserver" in methods:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload([fn.__module__])
    else:
        context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        try:
            yield from _windowed(lambda batch: pool.submit(run_batch, fn, batch), fn, items,
                                 jobs * IN_FLIGHT_PER_WORKER, local)
        except BaseException:  # GeneratorExit too (the caller stopped reading: a closed pipe, an error)
            pool.shutdown(wait=True, cancel_futures=True)  # workers gone before the interpreter's exit hooks
            raise


def _dask_map(fn: Callable[[T], R], items: Iterable[T], address: str, local: Callable[[T], bool]) -> Iterator[R]:
    try:
        from distributed import Client
    except ImportError:
        raise UsageError("--dask needs dask.distributed: pip install 'sse-check[dask]'") from None
    try:
        client = Client(address, timeout="10s", set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise UsageError(f"--dask {address}: cannot connect to the scheduler: {exc}") from None
    try:
        workers = sum(client.nthreads().values()) or 1
        yield from _windowed(lambda batch: client.submit(run_batch, fn, batch, pure=False), fn, items,
                             workers * IN_FLIGHT_PER_WORKER, local)
    finally:
        client.close()
