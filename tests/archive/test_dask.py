"""`lint --dask ADDRESS` against a real dask.distributed LocalCluster (two worker processes, one thread each,
on loopback): the same report as `-j 1`."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.archive.helpers import run

CORPUS = ["captures/rules", "captures/http"]


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    from distributed import LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                           dashboard_address=None, scheduler_port=0)
    try:
        yield cluster.scheduler_address
    finally:
        cluster.close()


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_dask_gives_the_report_of_one_job(scheduler: str, fmt: str) -> None:
    one = run("lint", *CORPUS, "-j", "1", "--format", fmt)
    dask = run("lint", *CORPUS, "--dask", scheduler, "--format", fmt)
    assert one.returncode == dask.returncode == 1, dask.stderr
    assert dask.stdout == one.stdout and len(one.stdout) > 10_000


def test_an_unreachable_scheduler_is_one_line() -> None:
    from tests.archive.helpers import free_port

    out = run("lint", "captures/rules", "--dask", f"tcp://127.0.0.1:{free_port()}", timeout=120)
    assert out.returncode == 2 and "--dask" in out.stderr and out.stderr.count("\n") == 1
