"""``probe --repeat N``: what N runs of the same scenario say together (no I/O here).

Two things come out of the runs of one scenario:

* a latency summary: the p50, p95 and p99 of each timing the probe records per exchange
  (checker.live.timing: ``first_byte`` (TTFB), ``first_delta``, ``largest_gap`` (the largest silence
  between two events of a run) and ``total``), over the runs that recorded it, and of ``gap``: every
  inter-event gap of every run pooled (a stream of n events has n - 1 of them), so that p50 is the usual
  pace of the stream and p99 its stalls, however few runs there were. Percentiles are by the
  **nearest-rank** method: the p-th percentile of n sorted values is the value of rank ``ceil(p/100 * n)``
  (1-based), so it is always one of the measured values, never an interpolation, and p99 of fewer than 100
  runs is the largest one;
* flakiness: each run's verdict is (passed or failed at ``--fail-on``, the set of finding codes, how the
  exchange ended, its HTTP status, the statuses retried before it); when the runs do not all have the same
  verdict, one RPT001 finding names the runs that differed and how (checker/rules/repeat.py);
* load: with several levels of ``--concurrency``, a verdict that runs at a higher level had and no run at
  the lowest level had is RPT002, naming the level, the verdict and its runs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from checker.findings import Finding, Position, Severity
from checker.rules.repeat import FLAKY_VERDICT, LOAD_VERDICT

PERCENTILES: tuple[int, ...] = (50, 95, 99)
# The per-run timings summarised (checker.live.timing's names) and how reports title them.
MEASURES: tuple[tuple[str, str], ...] = (
    ("first_byte", "TTFB"),
    ("first_delta", "first delta"),
    ("largest_gap", "largest gap"),
    ("total", "total"),
)
# Every inter-event gap of every run, pooled.
GAP = ("gap", "gap")
# The columns of the text table (80 columns hold four): the pooled gap instead of the largest one.
SHOWN: tuple[tuple[str, str], ...] = (MEASURES[0], MEASURES[1], GAP, MEASURES[3])


def percentile(values: Sequence[float], p: float) -> float:
    """The ``p``-th percentile (0 < p <= 100) of ``values`` by the nearest-rank method."""
    if not values:
        raise ValueError("no values")
    if not 0 < p <= 100:
        raise ValueError(f"a percentile is in (0, 100]: {p}")
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[rank - 1]


def latency_summary(timings: Sequence[Mapping[str, Any] | None],
                    gaps: Sequence[Sequence[float] | None] = ()) -> dict[str, dict[str, Any]]:
    """Per measure, ``{"runs": n, "p50": s, "p95": s, "p99": s}`` over the runs' timings that have it (a run
    cut short may lack a first delta); a measure no run has is left out. ``gaps`` are the runs' inter-event
    gaps (None for a run not measured): ``gap`` is over all of them pooled, with their ``count``."""
    summary: dict[str, dict[str, Any]] = {}
    for key, _title in MEASURES:
        values = [float(t[key]) for t in timings if t and isinstance(t.get(key), (int, float))]
        if values:
            summary[key] = {"runs": len(values), **{f"p{p}": percentile(values, p) for p in PERCENTILES}}
    pooled = [float(g) for run in gaps if run for g in run]
    if pooled:
        summary[GAP[0]] = {"runs": sum(1 for run in gaps if run), "count": len(pooled),
                           **{f"p{p}": percentile(pooled, p) for p in PERCENTILES}}
    return summary


@dataclass(frozen=True, slots=True)
class Verdict:
    """What one run of a scenario concluded: what a flaky server changes from one run to the next."""

    failed: bool | None  # None: the run was skipped (no verdict)
    codes: tuple[str, ...] = ()
    ending: str | None = None
    status: int | None = None
    skipped: str | None = None
    retried: tuple[int | None, ...] = ()  # the statuses of the answers retried before this one

    def describe(self) -> str:
        if self.failed is None:
            return f"skipped ({self.skipped})"
        words = "failed" if self.failed else "passed"
        words += f" [{', '.join(self.codes)}]" if self.codes else " [no findings]"
        if self.status is not None and self.status != 200:
            words += f" HTTP {self.status}"
        if self.retried:
            words += f" after {', '.join(str(s) for s in self.retried)} retried"
        if self.ending and self.ending != "complete":
            words += f" ended {self.ending}"
        return words

    def as_dict(self) -> dict[str, Any]:
        return {"failed": self.failed, "codes": list(self.codes), "ending": self.ending, "status": self.status,
                "retried": list(self.retried), "skipped": self.skipped}


def verdict_of(findings: Sequence[Finding] | None, fail_on: Severity, *, ending: str | None = None,
               status: int | None = None, skipped: str | None = None,
               retried: tuple[int | None, ...] = ()) -> Verdict:
    """A run's verdict from its findings (None when it was skipped); ``retried``: the statuses of the answers
    the probe retried before the last one (checker.live.retry_run), whose findings are among ``findings``."""
    if findings is None:
        return Verdict(failed=None, ending=ending, status=status, skipped=skipped or "no verdict")
    return Verdict(failed=any(f.severity >= fail_on for f in findings), codes=tuple(sorted({f.code for f in findings})),
                   ending=ending, status=status, retried=retried)


def flaky_finding(scenario: str, verdicts: Sequence[Verdict]) -> Finding | None:
    """RPT001 when the runs' verdicts are not all the same: the most common verdict (the first run's on a tie)
    and each run that differed from it (1-based run numbers)."""
    if len(set(verdicts)) <= 1:
        return None
    counts: dict[Verdict, int] = {}
    for verdict in verdicts:
        counts[verdict] = counts.get(verdict, 0) + 1
    usual = max(counts, key=lambda v: (counts[v], -verdicts.index(v)))
    differing = [(k + 1, v) for k, v in enumerate(verdicts) if v != usual]
    runs = [k for k, _ in differing]
    how = "; ".join(f"run {k}: {v.describe()}" for k, v in differing)
    details = {"scenario": scenario, "runs": len(verdicts), "usual": usual.as_dict(), "usual_runs": counts[usual],
               "differing": [{"run": k, **v.as_dict()} for k, v in differing]}
    return FLAKY_VERDICT.finding(Position(line=0, byte=0), details=details, scenario=scenario, total=len(verdicts),
                                 same=counts[usual], usual=usual.describe(), runs=", ".join(map(str, runs)), how=how)


def load_finding(scenario: str, levels: Sequence[tuple[int, Sequence[Verdict]]]) -> Finding | None:
    """RPT002 when a run at a higher concurrency had a verdict that no run at the lowest one had: per level
    above the lowest, each such verdict and its runs (1-based). None when every verdict under load was seen
    without it too, or when the lowest level has no verdict to compare with (all skipped)."""
    ordered = sorted(levels, key=lambda level: level[0])
    if len(ordered) < 2:
        return None
    base_level, base = ordered[0]
    seen = {v for v in base if v.failed is not None}
    if not seen:
        return None
    new: list[dict[str, Any]] = []
    for concurrency, verdicts in ordered[1:]:
        for verdict in dict.fromkeys(v for v in verdicts if v.failed is not None and v not in seen):
            runs = [k + 1 for k, v in enumerate(verdicts) if v == verdict]
            new.append({"concurrency": concurrency, "runs": runs, "of": len(verdicts), **verdict.as_dict(),
                        "words": verdict.describe()})
    if not new:
        return None
    counts: dict[Verdict, int] = {}
    for verdict in base:
        counts[verdict] = counts.get(verdict, 0) + 1
    usual = max(counts, key=lambda v: (counts[v], -list(base).index(v)))
    how = "; ".join(f"at concurrency {n['concurrency']}: {n['words']} in run{'s' if len(n['runs']) > 1 else ''} "
                    f"{', '.join(map(str, n['runs']))} of {n['of']}" for n in new)
    details = {"scenario": scenario, "base": {"concurrency": base_level, "runs": len(base), **usual.as_dict()},
               "under_load": [{k: v for k, v in n.items() if k != "words"} for n in new]}
    return LOAD_VERDICT.finding(Position(line=0, byte=0), details=details, scenario=scenario, base=base_level,
                                total=len(base), usual=usual.describe(), how=how)
