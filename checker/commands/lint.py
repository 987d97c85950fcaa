"""``sse-check lint PATH...``: lint saved captures."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from checker import dialects
from checker.captures import expand, is_url, load_json_sidecar
from checker.commands.common import (
    EngineArgs,
    add_engine_arguments,
    baseline_run,
    engine_options,
    finish_baseline,
    warn_unmatched_baseline,
    open_output,
    positive_count,
    report_options,
)
from checker.commands.config import override_for
from checker.engine_options import EngineOptions
from checker.errors import UsageError
from checker.executors import ordered_map, usable_cpus
from checker.lint_job import Done, Job, run_job
from checker.report import ReportOptions, Summary, get_reporter

if TYPE_CHECKING:
    from pathlib import Path

HELP = "lint saved text/event-stream captures of Responses streams"

EPILOG = """\
examples:
  sse-check lint capture.sse            one capture (X.request.json beside it
                                        is read too)
  sse-check lint captures/ --profile llama.cpp
                                        every *.sse below a folder
  curl -sN … | sse-check lint -         a stream on stdin
  sse-check lint capture.sse --timeline --clients
                                        the events drawn per item, and which
                                        clients break and why
  sse-check lint captures/ --format html -o report.html
  sse-check lint captures/ --select ITM,CNT --ignore ITM011 --fail-on error
  sse-check lint captures/ --write-baseline known.json
  sse-check lint captures/ --baseline known.json   only new findings fail
  sse-check lint archive/ -j 8 --format jsonl -o out.jsonl
                                        an archive: 8 worker processes, one
                                        JSON line per capture as it finishes
  sse-check lint s3://bucket/2026-12-01/ --dask tcp://scheduler:8786
                                        from object storage (the archive
                                        extra), on a Dask cluster

A capture is a streamed response body as received (curl -N, or
`sse-check probe --save DIR`). Each finding names its rule (`sse-check rules
CODE` explains it), where it is (line:byte: the line, 1-based, and the byte
offset in the capture where that line starts; #N: the event's index from 0)
and the clients it breaks or degrades on that stream. Formats: text, json,
jsonl, html, junit, sarif, github, markdown.

Exit codes: 0 no finding at or above --fail-on (default: warning), 1 at least
one, 2 a usage or I/O error (one line on stderr). A profile lowers the
deviations it documents to info, so they do not fail the run even where they
break a client (--clients shows who); --clients-required openai-python,codex
(or all) makes a capture that breaks one of those clients fail too.
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EPILOG
    parser.add_argument("paths", nargs="+", metavar="PATH", help="capture files (.sse, .sse.gz, .sse.zst), directories of them, URLs (s3://, gs://, https://, memory://; the archive extra), or - for stdin")
    parser.add_argument(
        "--request", metavar="FILE",
        help="the request body (JSON) that produced the stream(s); default: the X.request.json sidecar",
    )
    parser.add_argument(
        "--oracle", metavar="CLIENTS",
        help="also run real clients on each capture and show each outcome beside the prediction, agreeing or "
             "not (implies --clients): 'all' (every real client installed here) or names with commas, such as "
             "openai-python,codex",
    )
    parser.add_argument(
        "--jobs", "-j", type=positive_count, default=None, metavar="N",
        help="lint N captures at a time in worker processes (default: the usable cores); "
             "the report is the same as with -j 1",
    )
    parser.add_argument(
        "--dask", metavar="SCHEDULER", default=None,
        help="lint on a Dask distributed cluster (tcp://HOST:8786); needs the dask extra here and sse-check "
             "on the workers",
    )
    parser.add_argument(
        "--dialect", metavar="NAME", choices=dialects.names(), default=None,
        help="check every capture as this API's stream (one of: " + ", ".join(dialects.names()) + "); default: "
             "each capture's own, from the endpoint its X.meta.json recorded, else from its first event",
    )
    add_engine_arguments(parser)


@dataclass(frozen=True, slots=True, kw_only=True)
class LintOptions:
    """``sse-check lint``'s options, typed."""

    paths: tuple[str, ...]
    request: str | None = None  # --request FILE
    oracle: str | None = None
    jobs: int | None = None
    dask: str | None = None
    engine: EngineArgs = EngineArgs()
    dialect: str | None = None  # --dialect NAME: every capture checked as this dialect


def options(args: argparse.Namespace) -> LintOptions:
    """The parser's result as lint's typed options."""
    return LintOptions(paths=tuple(args.paths), request=args.request, oracle=args.oracle, jobs=args.jobs,
                       dask=args.dask, engine=EngineArgs.from_namespace(args), dialect=getattr(args, "dialect", None))


def run(opts: LintOptions) -> int:
    engine = opts.engine
    options = engine_options(engine, dialect=opts.dialect)
    report = report_options(engine, command="lint", clients=opts.oracle is not None)
    forced_request = None
    if opts.request:
        forced_request = load_json_sidecar(opts.request, "--request")
    sources = expand(list(opts.paths), compressed=True, transcripts=True)
    clients = _clients(opts.oracle) if opts.oracle else ()  # an unavailable client: a usage error before any work
    jobs = _jobs(opts, len(sources))
    # No baseline module for a run without --baseline or --write-baseline (start-up): gate None.
    gate = baseline_run(engine) if engine.baseline or engine.write_baseline else None
    summary = Summary()
    failed = False
    per_path: dict[int, EngineOptions] = {}  # the engine options of each matching [[overrides]] entry
    work = (Job(source, _options_for(engine, source, options, per_path, opts.dialect), forced_request,
                forced_request is not None, keep_body=bool(clients)) for source in sources)
    with open_output(engine.output) as stream:
        reporter = get_reporter(engine.format)(stream, report)
        reporter.start()
        # Closed as soon as the loop ends, even by an exception (a closed pipe): the pool's workers are shut
        # down then, not whenever the generator happens to be collected (after the exit hooks).
        with contextlib.closing(ordered_map(run_job, work, jobs=jobs, dask=opts.dask, total=len(sources),
                                            local=lambda job: job.source == "-")) as results:
            for done in _with_oracles(results, clients, report, summary):
                if done.result is None:
                    summary.io_errors.append(done.error or f"{done.name}: unreadable")
                    continue
                result = done.result if gate is None else gate.apply(gate.key(done.name), done.result)
                if done.exchange is not None:  # the text report words a saved probe's answer as probe did
                    report.extra.setdefault("exchanges", {})[done.name] = done.exchange
                failed |= summary.add(result, report.fail_on, report.clients_required)
                reporter.file(done.name, result)
                # Only what the summary needs is kept: per-capture extras go once reported.
                report.extra.get("exchanges", {}).pop(done.name, None)
                report.oracles.pop(done.name, None)
        if gate is not None:
            summary.baselined = gate.hidden
            summary.baseline_note = gate.note()
        reporter.finish(summary)
    if gate is not None:
        warn_unmatched_baseline(engine, gate)
    for message in summary.io_errors:
        print(f"sse-check: {message}", file=sys.stderr)
    if summary.io_errors:
        return 2  # and no baseline written: it would miss the unreadable captures' findings
    if gate is not None and gate.recorded is not None:
        finish_baseline(engine, gate)
        return 0  # recording today's findings is how a project adopts the gate: not a failure
    return 1 if failed else 0


def _jobs(opts: LintOptions, captures: int) -> int:
    """Worker processes for this run: -j N (default: the usable cores), never more than there are captures,
    and one (no pool to start) for a single capture."""
    if opts.dask is not None and opts.jobs is not None:
        raise UsageError("-j and --dask: give one (the Dask cluster's workers set the parallelism)")
    wanted = opts.jobs if opts.jobs is not None else usable_cpus()
    return max(1, min(wanted, captures))


def _options_for(engine: EngineArgs, source: Path | str, options: EngineOptions,
                 cache: dict[int, EngineOptions], dialect: str | None = None) -> EngineOptions:
    """The run's engine options, or those of the configuration's per-path override matching ``source``."""
    if not engine.overrides or source == "-" or (isinstance(source, str) and is_url(source)):
        return options
    from pathlib import Path  # only for a configuration with [[overrides]]

    override = override_for(engine.overrides, Path(source))
    if override is None:
        return options
    if id(override) not in cache:
        cache[id(override)] = engine_options(engine, override, dialect=dialect)
    return cache[id(override)]


def _clients(spec: str) -> tuple[str, ...]:
    """The real clients --oracle names (``all``: those installed here; the others are said once, on stderr)."""
    from checker.oracles.session import chosen, missing

    try:
        clients, left_out = chosen(spec)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    note = missing(left_out)
    if note:
        print(f"sse-check: {note}", file=sys.stderr)
    if not clients:
        raise UsageError("--oracle all: no real client is installed here (docs/clients.md says how)")
    return clients


# Captures whose real clients run together: one loopback server and one driver process per client and batch.
ORACLE_BATCH = 32


def _with_oracles(results: Iterable[Done], clients: tuple[str, ...], report: ReportOptions,
                  summary: Summary) -> Iterator[Done]:
    """The lint's results in order; with --oracle, a batch at a time, each capture's real runs set beside its
    prediction (``report.oracles``) and tallied (``summary.oracles``)."""
    if not clients:
        yield from results
        return
    from checker.oracles.session import OracleCapture, run_on

    batch: list[Done] = []

    def flush() -> Iterator[Done]:
        captures = [OracleCapture(d.name, _path_of(d.name), d.body, d.result) for d in batch
                    if d.result is not None and d.body is not None]
        named = [c.name for c in captures]
        for name, comparisons in zip(named, run_on(clients, captures), strict=True):
            if comparisons:
                report.oracles[name] = comparisons
            for comparison in comparisons.values():
                key = comparison.agreement.value
                summary.oracles[key] = summary.oracles.get(key, 0) + 1
        yield from batch
        batch.clear()

    for done in results:
        batch.append(done)
        if len(batch) >= ORACLE_BATCH:
            yield from flush()
    yield from flush()


def _path_of(name: str) -> Path | None:
    """The capture's file (its sidecars give the request and the recorded exchange), or None (stdin, a URL)."""
    from pathlib import Path

    if name == "<stdin>" or is_url(name):
        return None
    path = Path(name)
    return path if path.is_file() else None
