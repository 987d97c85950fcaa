"""``probe --repeat``'s pure parts (checker.live.repeat): nearest-rank percentiles, the latency summary, the
verdict of a run and RPT001 when the runs disagree; and serve's ``every`` fault that makes a flaky server."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from checker.findings import Finding, Position, Severity
from checker.live.faults import Faults, parse_header
from checker.live.repeat import flaky_finding, latency_summary, load_finding, percentile, verdict_of
from checker.live.serve_every import InFlight, every_nth
from checker.live.timing import ExchangeTimer


def test_nearest_rank_percentiles_are_measured_values() -> None:
    values = [50.0, 15.0, 35.0, 20.0, 40.0]  # the textbook example, unsorted
    assert percentile(values, 30) == 20.0  # rank ceil(0.3 * 5) = 2
    assert percentile(values, 40) == 20.0
    assert percentile(values, 50) == 35.0
    assert percentile(values, 95) == 50.0
    assert percentile(values, 100) == 50.0
    assert percentile([7.0], 1) == 7.0
    hundred = [float(v) for v in range(1, 101)]
    assert (percentile(hundred, 50), percentile(hundred, 95), percentile(hundred, 99)) == (50.0, 95.0, 99.0)
    ten = [float(v) for v in range(10)]
    assert percentile(ten, 99) == 9.0  # fewer than 100 runs: p99 is the largest


@pytest.mark.parametrize("values, p", [([], 50), ([1.0], 0), ([1.0], 101)])
def test_a_percentile_of_nothing_or_out_of_range_is_an_error(values: list[float], p: float) -> None:
    with pytest.raises(ValueError):
        percentile(values, p)


def test_the_latency_summary_counts_only_the_runs_that_measured_each_timing() -> None:
    timings = [{"first_byte": 0.01, "first_delta": 0.02, "largest_gap": 0.005, "total": 0.1},
               {"first_byte": 0.03, "total": 0.3},  # cut short before the first delta
               None,  # skipped
               {"first_byte": 0.02, "first_delta": 0.04, "largest_gap": 0.001, "total": 0.2}]
    summary = latency_summary(timings)
    assert summary["first_byte"] == {"runs": 3, "p50": 0.02, "p95": 0.03, "p99": 0.03}
    assert summary["first_delta"] == {"runs": 2, "p50": 0.02, "p95": 0.04, "p99": 0.04}
    assert summary["total"]["p50"] == 0.2
    assert latency_summary([{"total": 1.0}]).keys() == {"total"}


def test_the_gap_percentiles_pool_every_gap_of_every_run() -> None:
    timings = [{"total": 1.0}, {"total": 2.0}, None]
    gaps = [[0.001, 0.002, 0.050], [0.003] * 7, [9.0]]  # the third run was not measured: its gaps are left out
    summary = latency_summary(timings, [gaps[0], gaps[1], None])
    assert summary["gap"] == {"runs": 2, "count": 10, "p50": 0.003, "p95": 0.050, "p99": 0.050}
    assert "gap" not in latency_summary(timings, [[], None, None])  # a one-event stream has no gap


def test_the_timer_keeps_every_inter_event_gap_and_the_largest() -> None:
    timer = ExchangeTimer(0.0)
    timer.body(b"data: {}\n\n", 0.10, offset=0, events=2, terminated=False)  # two events in the first read
    timer.body(b"data: {}\n\n", 0.15, offset=10, events=3, terminated=False)
    timer.body(b": comment\n\n", 0.30, offset=20, events=3, terminated=False)  # no event: no gap
    timer.body(b"data: {}\n\n" * 3, 0.50, offset=32, events=6, terminated=True)
    assert [round(g, 6) for g in timer.gaps] == [0.0, 0.05, 0.35, 0.0, 0.0]  # one per event after the first
    assert round(timer.timings["largest_gap"], 6) == 0.35 and "gaps" not in timer.timings


def _finding(code: str, severity: Severity) -> Finding:
    return Finding(code=code, name=code.lower(), severity=severity, message="m", position=Position(1, 0))


def test_the_same_verdict_every_run_is_not_flaky() -> None:
    warn = [_finding("HTP002", Severity.WARNING)]
    verdicts = [verdict_of(warn, Severity.WARNING, ending="complete", status=200) for _ in range(4)]
    assert verdicts[0].failed is True and verdicts[0].codes == ("HTP002",)
    assert flaky_finding("plain_text", verdicts) is None  # failing the same way each time is not flaky


def test_runs_that_differ_are_named_against_the_usual_verdict() -> None:
    ok = verdict_of([], Severity.WARNING, ending="complete", status=200)
    bad = verdict_of([_finding("HTP001", Severity.ERROR)], Severity.WARNING, ending="complete", status=500)
    finding = flaky_finding("plain_text", [ok, bad, ok, bad, ok])
    assert finding is not None and finding.code == "RPT001" and finding.severity == Severity.WARNING
    assert "3 of 5 runs: passed [no findings]" in finding.message
    assert "run 2: failed [HTP001] HTTP 500; run 4: failed [HTP001] HTTP 500" in finding.message
    assert [d["run"] for d in finding.details["differing"]] == [2, 4]
    # a tie: the first run's verdict is the usual one
    tie = flaky_finding("x", [bad, ok])
    assert tie is not None and [d["run"] for d in tie.details["differing"]] == [2]


def test_a_different_set_of_codes_or_a_skip_is_a_different_verdict() -> None:
    info = verdict_of([_finding("LIF010", Severity.INFO)], Severity.WARNING)
    clean = verdict_of([], Severity.WARNING)
    assert info.failed is False and clean.failed is False
    assert flaky_finding("s", [clean, info]) is not None  # both pass, yet the findings changed
    skipped = verdict_of(None, Severity.WARNING, skipped="timeout before the headers")
    finding = flaky_finding("s", [clean, clean, skipped])
    assert finding is not None and "run 3: skipped (timeout before the headers)" in finding.message


class _Server:
    """Stands for a replay server: the count is kept per server."""


def test_the_every_fault_applies_the_others_to_every_nth_request_only() -> None:
    faults = Faults().with_overrides(parse_header("status=500;every=3"))
    assert faults.every == 3 and "every=3" in faults.header_value()
    server = _Server()
    statuses = [every_nth(server, faults).status for _ in range(7)]
    assert statuses == [None, None, 500, None, None, 500, None]
    assert every_nth(_Server(), Faults(status=429)).status == 429  # without every: every request


def test_the_first_fault_applies_the_others_to_the_first_n_requests_only() -> None:
    faults = Faults().with_overrides(parse_header("status=429;first=2"))
    assert faults.first == 2 and "first=2" in faults.header_value()
    server = _Server()
    assert [every_nth(server, faults).status for _ in range(4)] == [429, 429, None, None]
    both = Faults(status=500, every=2, first=3)  # together: requests 2 only (even, and among the first 3)
    server = _Server()
    assert [every_nth(server, both).status for _ in range(5)] == [None, 500, None, None, None]


def test_the_busy_fault_applies_only_while_other_requests_are_answered() -> None:
    server, faults = _Server(), Faults(status=503, busy=1)
    seen: list[int | None] = []
    release = asyncio.Event()

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append(every_nth(server, faults).status)
        await release.wait()

    counted = InFlight(app, server)

    async def main() -> None:
        first = asyncio.create_task(counted({"type": "http"}, None, None))
        await asyncio.sleep(0)
        second = asyncio.create_task(counted({"type": "http"}, None, None))  # arrives while the first is answered
        await asyncio.sleep(0)
        release.set()
        await asyncio.gather(first, second)
        await counted({"type": "http"}, None, None)  # alone again

    asyncio.run(main())
    assert seen == [None, 503, None]


def test_a_verdict_seen_only_under_load_is_rpt002() -> None:
    ok = verdict_of([], Severity.WARNING, ending="complete", status=200)
    busy = verdict_of([_finding("HTP001", Severity.ERROR)], Severity.WARNING, ending="complete", status=503)
    finding = load_finding("plain_text", [(4, [ok, busy, busy, ok]), (1, [ok, ok, ok])])  # levels in any order
    assert finding is not None and finding.code == "RPT002"
    assert finding.message == ("plain_text: a verdict seen only under load, never in 3 runs at concurrency 1 "
                               "(passed [no findings]); at concurrency 4: failed [HTP001] HTTP 503 in runs 2, 3 "
                               "of 4")
    assert finding.details["under_load"] == [{"concurrency": 4, "runs": [2, 3], "of": 4, **busy.as_dict()}]
    # the same verdicts at every level, or one already seen alone, or nothing to compare with: no finding
    assert load_finding("s", [(1, [ok, busy]), (8, [busy, busy])]) is None
    assert load_finding("s", [(1, [ok]), (8, [ok, ok])]) is None
    assert load_finding("s", [(8, [busy])]) is None
    skipped = verdict_of(None, Severity.WARNING, skipped="not served")
    assert load_finding("s", [(1, [skipped]), (8, [busy])]) is None
