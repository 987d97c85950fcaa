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
                local: Callable[[T], bool] = lambda _: False, total: int | None = None) -> Generator[R, None, None]:
    """``fn`` over ``items``, results in input order. ``local(item)`` items (stdin) always run here. ``total``,
    the number of items when known, lets the batches shrink towards the end (:func:`batch_size`)."""
    if dask is not None:
        yield from _dask_map(fn, items, dask, local, total)
    elif jobs <= 1:
        yield from map(fn, items)
    else:
        yield from _pool_map(fn, items, jobs, local, total)


# Captures per task sent to a worker: one task per capture costs more in pickling and messages than linting a
# small capture does; a batch amortises it (results still come back in order, batch by batch). The parent's
# share per capture (submitting, reading results back) halves from 16 to 64 captures a batch: on many cores
# the parent, not the workers, would otherwise set the pace.
BATCH = 16  # when the number of items is not known
MAX_BATCH = 64


def batch_size(remaining: int | None, workers: int) -> int:
    """How many items the next batch takes: with ``remaining`` known, a quarter of each worker's share of what
    is left, between 1 and :data:`MAX_BATCH` (guided scheduling: large batches while there is much to do, small
    ones at the end, so that no worker is left alone with a long last batch); else :data:`BATCH`."""
    if remaining is None:
        return BATCH
    return max(1, min(MAX_BATCH, -(-remaining // (4 * workers))))


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
              local: Callable[[T], bool], workers: int, total: int | None = None) -> Iterator[R]:
    """Batches of ``items`` submitted ``window`` at a time, their results yielded in order; a ``local`` item
    is run here, in its place. Batch sizes follow :func:`batch_size` (``total``: how many items there are)."""
    queue: deque[Any] = deque()
    batch: list[T] = []
    taken = 0
    size = batch_size(total, workers)

    def flush() -> None:
        nonlocal size
        if batch:
            queue.append(submit(list(batch)))
            batch.clear()
        size = batch_size(None if total is None else max(total - taken, 0), workers)

    for item in items:
        taken += 1
        if local(item):
            flush()
            queue.append(_Ready([fn(item)]))
        else:
            batch.append(item)
            if len(batch) >= size:
                flush()
        while len(queue) >= window:
            yield from queue.popleft().result()
    flush()
    while queue:
        yield from queue.popleft().result()


def _pool_map(fn: Callable[[T], R], items: Iterable[T], jobs: int, local: Callable[[T], bool],
              total: int | None = None) -> Iterator[R]:
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
                                 jobs * IN_FLIGHT_PER_WORKER, local, jobs, total)
        except BaseException:  # GeneratorExit too (the caller stopped reading: a closed pipe, an error)
            pool.shutdown(wait=True, cancel_futures=True)  # workers gone before the interpreter's exit hooks
            raise


def _dask_map(fn: Callable[[T], R], items: Iterable[T], address: str, local: Callable[[T], bool],
              total: int | None = None) -> Iterator[R]:
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
                             workers * IN_FLIGHT_PER_WORKER, local, workers, total)
    finally:
        client.close()
