"""``sse-check probe … --repeat N [--concurrency C | C1,C2,…]``: every scenario run N times at each level of
concurrency; latency percentiles, flaky verdicts and verdicts that only load brings.

At concurrency C, the N runs of the suite start together and C exchanges are in flight at a time across them
(``probe_run.run_together``): C clients at once, even for a suite of one scenario; at 1 the exchanges go one
after another. Each exchange is reported as usual under the name ``NAME #k`` (``NAME @C #k`` when several
levels are given) and, with ``--save DIR``, saved in a folder per run, ``DIR/rK/`` (``DIR/cC/rK/``), each a
normal probe save (``sse-check lint DIR/rK`` gives run k's findings exactly). Then, per level and scenario,
the latency percentiles of its runs and, when its verdict changed between runs, RPT001; per scenario, when a
higher level brought a verdict that no run at the lowest had, RPT002 (checker.live.repeat). The text report
prints them as a table; ``--format json`` carries them as ``repeat`` (``levels``: per level, per scenario
``latency``, ``verdicts``, ``flaky``; ``load``: the RPT002 findings; ``scenarios``: the first level's rows).
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rich.table import Table
from rich.text import Text

from checker.baseline import BaselineRun
from checker.commands.common import baseline_run, open_output, report_options
from checker.console import make_console
from checker.engine_options import EngineOptions
from checker.errors import UsageError
from checker.findings import Finding, Severity
from checker.live import probe_run
from checker.live.endpoints import probe_target
from checker.live.probe import ProbeConfig, ScenarioResult
from checker.live.repeat import (PERCENTILES, SHOWN, Verdict, flaky_finding, latency_summary, load_finding,
                                 verdict_of)
from checker.live.reports import reporter_for
from checker.live.scenarios import Scenario
from checker.report import ReportOptions, Reporter


@dataclass(frozen=True, slots=True)
class Hooks:
    """What this module shares with checker.commands.probe, handed in by it (so neither imports the other):
    the reporting sink of scenario outcomes, the dialects of a suite, why a server could not be reached at
    all, and the summary rows per dialect."""

    sink: Callable[[Reporter, ReportOptions, BaselineRun], Any]
    apis: Callable[[list[Scenario]], list[str]]
    unreachable: Callable[[list[ScenarioResult]], str | None]
    dialect_rows: Callable[[list[Scenario], list[ScenarioResult], ReportOptions], list[dict[str, Any]]]


@dataclass(slots=True)
class Level:
    """The runs at one level of concurrency and what they say."""

    concurrency: int
    runs: list[list[ScenarioResult]]
    rows: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    flaky: list[Finding] = dataclasses.field(default_factory=list)
    verdicts: dict[str, list[Verdict]] = dataclasses.field(default_factory=dict)


def run(opts: Any, config: ProbeConfig, chosen: list[Scenario], hooks: Hooks) -> int:
    """Probe ``chosen`` ``opts.repeat`` times at each of ``opts.levels``; the exit code as probe's (1 also for
    an RPT001 or RPT002 at --fail-on)."""
    if opts.engine.baseline or opts.engine.write_baseline:
        raise UsageError("--repeat keeps no baseline (--baseline and --write-baseline apply to one run)")
    if opts.engine.format not in ("text", "json"):
        raise UsageError(f"--repeat reports as text or json, not {opts.engine.format}")
    repeat, levels = opts.repeat, list(opts.levels)
    gate = baseline_run(opts.engine)
    report = report_options(opts.engine, command="probe")
    shown_url = config.redactor.url(config.url)
    report.extra = {"target": probe_target(shown_url, config.redactor.text(config.model), hooks.apis(chosen)),
                    "skipped": [], "not_served": []}
    done: list[Level] = []
    with open_output(opts.engine.output) as stream:
        reporter = reporter_for("probe", opts.engine.format)(stream, report)
        reporter.start()
        sink = hooks.sink(reporter, report, gate)
        for concurrency in levels:
            where = config.save_dir if len(levels) == 1 or config.save_dir is None \
                else config.save_dir / f"c{concurrency}"
            configs = [config if where is None else dataclasses.replace(config, save_dir=where / f"r{k}")
                       for k in range(1, repeat + 1)]
            try:
                runs = probe_run.run_together(chosen, configs, concurrency=concurrency, stop_if_unreachable=True)
            except probe_run.Interrupted as stop:
                print(f"sse-check: interrupted at concurrency {concurrency}", file=sys.stderr)
                return 128 + stop.signum
            if not done and (unreachable := hooks.unreachable(runs[0])) is not None:
                raise UsageError(f"cannot connect to {shown_url}: {unreachable}")
            done.append(Level(concurrency, runs))
            for k, results in enumerate(runs, 1):
                for outcome in results:
                    sink.add(_named(outcome, k, concurrency if len(levels) > 1 else None))
        sink.flush()
        everything = [r for level in done for rs in level.runs for r in rs]
        report.extra["dialects"] = hooks.dialect_rows(chosen, everything, report)
        for level in done:
            level.rows, level.flaky, level.verdicts = summarise(chosen, level.runs, report.fail_on, config.engine)
        load = [f for s in chosen if (f := load_finding(s.name, [(lv.concurrency, lv.verdicts.get(s.name, []))
                                                                  for lv in done])) is not None
                and config.engine.keeps(f.code)] if len(done) > 1 else []
        report.extra["repeat"] = {"runs": repeat, "concurrency": levels[0], "percentiles": "nearest-rank",
                                  "scenarios": done[0].rows,
                                  "levels": [{"concurrency": lv.concurrency, "scenarios": lv.rows} for lv in done],
                                  "load": [f.as_dict() for f in load]}
        extra = [f for lv in done for f in lv.flaky] + load
        for finding in extra:
            sink.summary.errors += finding.severity == Severity.ERROR
            sink.summary.warnings += finding.severity == Severity.WARNING
            sink.summary.infos += finding.severity == Severity.INFO
        if opts.engine.format == "text":
            _print(stream, opts.engine.color, done, load, repeat)
        reporter.finish(sink.summary)
    failed = sink.failed or any(f.severity >= report.fail_on for f in extra)
    if not any(r.result is not None for r in everything):
        print(f"sse-check: nothing probed: {shown_url} answered no scenario (every one skipped)", file=sys.stderr)
        return 2
    return 1 if failed else 0


def _named(outcome: ScenarioResult, k: int, concurrency: int | None = None) -> ScenarioResult:
    """The outcome reported as ``NAME #k`` or ``NAME @C #k`` (the saved files keep the scenario's name, in their
    run's folder)."""
    at = f" @{concurrency}" if concurrency is not None else ""
    scenario = dataclasses.replace(outcome.scenario, name=f"{outcome.scenario.name}{at} #{k}")
    return dataclasses.replace(outcome, scenario=scenario,
                               attempts=[_named(a, k, concurrency) for a in outcome.attempts])


def summarise(chosen: list[Scenario], runs: list[list[ScenarioResult]], fail_on: Severity,
              engine: EngineOptions) -> tuple[list[dict[str, Any]], list[Finding], dict[str, list[Verdict]]]:
    """Per scenario, its latency percentiles, its runs' verdicts and its RPT001 (if kept by --select/--ignore);
    the verdicts by scenario name."""
    rows, flaky, verdicts_of = [], [], {}
    for scenario in chosen:
        mine = [next((r for r in results if r.scenario.name == scenario.name), None) for results in runs]
        verdicts = [verdict_of(_findings(o), fail_on, ending=o.ending if o else None,
                               status=o.meta.status if o and o.meta else None,
                               retried=tuple(a.meta.status if a.meta else None for a in o.attempts) if o else (),
                               skipped=o.skipped if o else "not run") for o in mine]
        if all(v.failed is None for v in verdicts):
            continue  # skipped every time: already said once per run
        verdicts_of[scenario.name] = verdicts
        # An error answer's timings are not the server's latency: only the runs answered 2xx are measured.
        timings = [o.meta.timings if o and o.meta and o.result and 200 <= (o.meta.status or 0) < 300 else None
                   for o in mine]
        finding = flaky_finding(scenario.name, verdicts)
        if finding is not None and not engine.keeps(finding.code):
            finding = None
        if finding is not None:
            flaky.append(finding)
        gaps = [o.gaps if timed is not None and o is not None else None for o, timed in zip(mine, timings)]
        rows.append({"scenario": scenario.name, "latency": latency_summary(timings, gaps),
                     "verdicts": [v.as_dict() for v in verdicts],
                     "flaky": finding.as_dict() if finding is not None else None})
    return rows, flaky, verdicts_of


def _findings(outcome: ScenarioResult | None) -> list[Finding] | None:
    """A run's findings: its answer's and those of the answers retried before it (they count as well)."""
    if outcome is None or outcome.result is None:
        return None
    return [f for a in outcome.attempts if a.result is not None for f in a.result.findings] + outcome.result.findings


def _ms(seconds: Any) -> str:
    """Milliseconds, with a decimal below 10 ms (inter-event gaps on loopback are often fractions of one)."""
    if seconds is None:
        return "–"
    ms = seconds * 1000
    return f"{ms:.1f}" if 0 < ms < 9.95 else f"{ms:.0f}"


def _print(stream: Any, color: str, done: list[Level], load: list[Finding], repeat: int) -> None:
    """The latency table (milliseconds, p50/p95/p99 per measure; a row per scenario and level), the flaky
    verdicts and those only load brought."""
    console = make_console(stream, color)
    console.print()
    several = len(done) > 1
    at = (f"each concurrency ({', '.join(str(lv.concurrency) for lv in done)})" if several
          else f"concurrency {done[0].concurrency}")
    console.print(f"latency over {repeat} runs at {at}, ms, p50/p95/p99 (nearest rank):")
    table = Table(box=None, pad_edge=False, padding=(0, 1, 0, 0))
    table.add_column("scenario", no_wrap=True)
    if several:
        table.add_column("C", no_wrap=True, justify="right")
    for _key, title in SHOWN:
        table.add_column(title, no_wrap=True, justify="right")
    names = list(dict.fromkeys(row["scenario"] for lv in done for row in lv.rows))
    for name in names:
        for lv in done:
            row = next((r for r in lv.rows if r["scenario"] == name), None)
            if row is None:
                continue
            cells = []
            for key, _title in SHOWN:
                stats = row["latency"].get(key)
                cells.append("–" if stats is None else "/".join(_ms(stats[f"p{p}"]) for p in PERCENTILES))
            table.add_row(name, *([str(lv.concurrency)] if several else []), *cells)
    console.print(table)
    console.print(Text("gap: every inter-event gap of every run, pooled; the others: one value per run",
                       style="dim"))
    flaky = [f for lv in done for f in lv.flaky]
    for finding in flaky + load:
        console.print(Text(f"{finding.severity}  {finding.code} {finding.name}: {finding.message}",
                           style="bold yellow" if finding.severity < Severity.ERROR else "bold red"))
    if not flaky:
        console.print(f"every scenario had the same verdict in all {repeat} runs"
                      + (" at each concurrency" if several else ""))
    if several and not load:
        console.print("no verdict appeared only under load")
