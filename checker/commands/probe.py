"""``sse-check probe BASE_URL --model M``: run the scenario suite against a live server.

This module turns options into a :class:`checker.live.probe.ProbeConfig` (checker.commands.connection), runs
the scenarios (checker.live.probe_run, with a rich progress display on a terminal) and reports each scenario
through the same reporters as ``lint``, plus the HTTP facts of its exchange (checker.live.reports). The
probing itself is ``checker.live.probe``; the verdicts come from ``checker.http_checks`` and the engine.

Exit codes, as lint: 0 no finding at or above ``--fail-on``; 1 at least one; 2 a usage error, or a
server that could not be reached at all (every scenario failed to connect) or probed at all (every
scenario skipped), after printing the report.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from rich.table import Table
from rich.text import Text

from checker.baseline import BaselineRun
from checker.commands.common import (
    EngineArgs,
    add_engine_arguments,
    baseline_run,
    check_output,
    concurrency_levels,
    engine_options,
    finish_baseline,
    nonnegative_count,
    open_output,
    positive_count,
    positive_seconds,
    report_options,
    warn_unmatched_baseline,
)
from checker.commands.connection import ConnectionOptions, probe_config
from checker.console import make_console
from checker.errors import UsageError
from checker.findings import Severity
from checker.live import adapters, probe_run
from checker.live.endpoints import probe_target
from checker.live.probe import ProbeConfig, ProbeLimits, Progress, ScenarioResult
from checker.live.reports import VERBOSE_HELP, reporter_for, required_broken_rows
from checker.live.retry import DEFAULT_RETRIES
from checker.live.scenarios import Scenario, load_scenario_files, pick, suite
from checker.report import ReportOptions, Reporter, Summary
from checker.surface import features as surface_features
from checker.surface import files as surface_files
from checker.surface import probing as surface_probe
from checker.surface.flow import Flow
from checker.surface.run import FlowRun

DEFAULT_APIS: tuple[str, ...] = ("responses", "chat", "messages")

HELP = "probe a live server's three streaming endpoints with a suite of scenarios each"

EPILOG = """\
examples:
  sse-check probe http://127.0.0.1:8080 --model qwen3 --profile llama.cpp
  sse-check probe https://api.openai.com/v1 --model gpt-5-mini --save out/ \\
      --format json -o report.json
  sse-check probe http://127.0.0.1:8000 --model x \\
      --scenario plain_text,parallel_calls --concurrency 2
  sse-check probe --list-scenarios

Every dialect of --api (default: responses,chat,messages) gets the same
suite, written in its requests and POSTed to its endpoint beside the base
URL: …/v1/responses, …/v1/chat/completions, …/v1/messages. An endpoint the
server does not have (404, 405, 501) is one line, not a failure. Chat and
Messages scenarios are named chat/NAME and messages/NAME; --scenario NAME
picks NAME in every dialect. The base URL may end in /v1 or not. The API key
is read from the environment variable named by --api-key-env (default
OPENAI_API_KEY) and sent as "Authorization: Bearer …" when set; --header adds
any other header. Secrets never appear in the report or in saved files.

--save DIR writes NAME.sse (the raw body, also when cut short) and
NAME.meta.json (request, status, headers, timings, how it ended) per
scenario; `sse-check lint DIR` then reports exactly the same findings.
--transport websocket runs the Responses scenarios over one WebSocket
connection to ws(s)://…/v1/responses instead, saved as websocket.ws.jsonl;
a server without the WebSocket mode is one "unsupported" line.
--replay runs the live replay instead of the scenarios, as
`sse-check replay --live URL` does.

Exit codes: 0 clean, 1 findings at or above --fail-on, 2 a usage error or a
server that could not be reached (one line on stderr). A profile's documented
deviations are info: they fail nothing even where a client breaks (the client
table says who); --clients-required openai-python,codex (or all) fails on it.
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EPILOG
    parser.add_argument("base_url", nargs="?", metavar="BASE_URL",
                        help="the server, e.g. http://127.0.0.1:8080 or https://api.openai.com/v1")
    parser.add_argument("--model", "-m", help="the model to ask for (required unless --list-scenarios)")
    which = parser.add_argument_group("scenarios")
    which.add_argument("--scenario", "-s", action="append", default=[], metavar="NAMES",
                       help="run only these scenarios (comma-separated; repeatable)")
    which.add_argument("--scenario-file", action="append", default=[], metavar="PATH",
                       help="add scenarios from a JSON/YAML file (a request body) or a directory of them; "
                            "a file named like a built-in scenario replaces it; repeatable")
    which.add_argument("--api", "--dialect", dest="api", action="append", default=[], metavar="NAMES",
                       help=f"the dialects to probe, comma-separated (default: {','.join(DEFAULT_APIS)}); "
                            "repeatable")
    which.add_argument("--list-scenarios", action="store_true", help="list the scenarios and exit (no network)")
    which.add_argument("--replay", nargs="?", const="responses", default=None, metavar="DIALECT",
                       choices=["responses", "openai-chat", "anthropic"],
                       help="instead of the scenarios, the live replay: does the server's prefix cache survive "
                            "reasoning sent back exact, dropped or altered? (DIALECT: responses, the default, "
                            "openai-chat or anthropic; text or json report)")
    conn = parser.add_argument_group("connection")
    conn.add_argument("--api-key-env", metavar="NAME", default=None,
                      help="environment variable holding the API key (default: OPENAI_API_KEY, if set)")
    conn.add_argument("--header", "-H", action="append", default=[], metavar="'NAME: VALUE'",
                      help="an extra request header (auth, routing); repeatable; sensitive values are redacted")
    conn.add_argument("--insecure", action="store_true", help="do not verify TLS certificates (prints a warning)")
    conn.add_argument("--concurrency", type=concurrency_levels, default=(1,), metavar="N[,M…]",
                      help="scenarios run at once (default: 1); several levels (1,8) compare them, with --repeat")
    conn.add_argument("--repeat", type=positive_count, default=1, metavar="N",
                      help="run each scenario N times: latency percentiles, and RPT001 when a verdict changes "
                           "between runs (--save DIR keeps run k in DIR/rK/)")
    conn.add_argument("--retries", type=nonnegative_count, default=DEFAULT_RETRIES, metavar="N",
                      help="send a request again after 408, 409, 429 or 5xx, waiting as the SDK would "
                           f"(Retry-After, else its backoff), up to N times (default {DEFAULT_RETRIES}; 0: never); "
                           "every answer is reported and saved")
    conn.add_argument("--save", metavar="DIR", help="save NAME.sse and NAME.meta.json per scenario in DIR")
    conn.add_argument("--transport", choices=("sse", "websocket"), default="sse",
                      help="sse (default): one POST per scenario; websocket: the Responses scenarios over one "
                           "WebSocket connection")
    conn.add_argument("--no-progress", action="store_true", help="no progress display (it is shown only on a terminal)")
    conn.add_argument("--verbose", "-v", action="store_true", help=VERBOSE_HELP)
    limits = parser.add_argument_group(
        "timeouts", "Each one is a finding when hit. The caps are --max-bytes and --max-events\n"
                    "below: reading stops once a stream is past them.")
    defaults = ProbeLimits()
    limits.add_argument("--connect-timeout", type=positive_seconds, default=defaults.connect_timeout, metavar="S",
                        help=f"seconds to connect (default {defaults.connect_timeout:g})")
    limits.add_argument("--first-byte-timeout", type=positive_seconds, default=defaults.first_byte_timeout, metavar="S",
                        help=f"seconds from the request to the headers and the first body byte "
                             f"(default {defaults.first_byte_timeout:g})")
    limits.add_argument("--idle-timeout", type=positive_seconds, default=defaults.idle_timeout, metavar="S",
                        help=f"longest silence between two reads (default {defaults.idle_timeout:g})")
    limits.add_argument("--total-timeout", type=positive_seconds, default=defaults.total_timeout, metavar="S",
                        help=f"longest exchange (default {defaults.total_timeout:g})")
    limits.add_argument("--close-timeout", type=positive_seconds, default=defaults.close_timeout, metavar="S",
                        help=f"how long the body may stay open after the terminal event "
                             f"(default {defaults.close_timeout:g})")
    add_engine_arguments(parser)


@dataclass(frozen=True, slots=True, kw_only=True)
class ProbeOptions:
    base_url: str | None = None
    model: str | None = None
    scenarios: tuple[str, ...] = ()  # --scenario NAMES
    scenario_files: tuple[str, ...] = ()
    apis: tuple[str, ...] = DEFAULT_APIS  # --api NAMES: the dialects whose built-in suites run
    list_scenarios: bool = False
    replay: str | None = None  # --replay DIALECT: the live replay instead of the scenarios
    concurrency: int = 1
    levels: tuple[int, ...] = (1,)  # --concurrency 1,8: each level compared (checker.commands.probe_repeat)
    repeat: int = 1  # --repeat N: checker.commands.probe_repeat
    retries: int = DEFAULT_RETRIES  # --retries N: checker.live.retry_run
    progress: bool = True  # --no-progress turns it off (it is shown only on a terminal anyway)
    headers: tuple[str, ...] = ()
    api_key_env: str | None = None
    insecure: bool = False
    save: str | None = None
    transport: str = "sse"  # --transport websocket: checker.commands.probe_ws
    verbose: bool = False  # --verbose: every scenario, the timings, the known deviations, the capabilities
    limits: ProbeLimits = ProbeLimits()
    engine: EngineArgs = EngineArgs()

    def connection(self) -> ConnectionOptions:
        """How to reach the server; a UsageError when BASE_URL or --model is missing."""
        if not self.base_url:
            raise UsageError("probe needs a BASE_URL (or --list-scenarios)")
        if not self.model:
            raise UsageError("probe needs --model (the model name the server should use)")
        return ConnectionOptions(base_url=self.base_url, model=self.model, headers=self.headers,
                                 api_key_env=self.api_key_env, insecure=self.insecure, save=self.save,
                                 limits=self.limits)


def options(args: argparse.Namespace) -> ProbeOptions:
    """The parser's result as probe's typed options."""
    engine = EngineArgs.from_namespace(args)
    limits = ProbeLimits(
        connect_timeout=args.connect_timeout, first_byte_timeout=args.first_byte_timeout,
        idle_timeout=args.idle_timeout, total_timeout=args.total_timeout, close_timeout=args.close_timeout,
        max_bytes=engine.limits.max_bytes, max_events=engine.limits.max_events,  # the engine's, shared with lint
    )
    return ProbeOptions(base_url=args.base_url, model=args.model, scenarios=tuple(args.scenario),
                        apis=parse_apis(args.api),
                        scenario_files=tuple(args.scenario_file), list_scenarios=args.list_scenarios,
                        replay=args.replay, concurrency=args.concurrency[0], levels=args.concurrency, repeat=args.repeat, retries=args.retries,
                        progress=not args.no_progress,
                        headers=tuple(args.header), api_key_env=args.api_key_env, insecure=args.insecure,
                        save=args.save, transport=args.transport, limits=limits, engine=engine, verbose=args.verbose)


def parse_apis(values: list[str]) -> tuple[str, ...]:
    """``--api`` values (comma-separated, repeatable) as dialect names in their registry spelling, in the
    order given, each once; the default when none is given."""
    wanted = [part.strip() for value in values for part in value.split(",") if part.strip()]
    apis: list[str] = []
    for name in wanted or DEFAULT_APIS:
        try:
            api = adapters.get(name).name
        except ValueError:
            raise UsageError(f"--api {name!r}: not a dialect (known: {', '.join(adapters.names())})") from None
        if api not in apis:
            apis.append(api)
    return tuple(apis)


# --- run -------------------------------------------------------------------------------------------------


def run(opts: ProbeOptions) -> int:
    user_flows, scenario_files = surface_files.split_scenario_files(list(opts.scenario_files))
    scenarios = suite(load_scenario_files(scenario_files), opts.apis)
    flows, left = surface_probe.pick_flows(surface_features.suite(opts.apis, user_flows), list(opts.scenarios))
    chosen = pick(scenarios, left) if left or not opts.scenarios else []
    if opts.list_scenarios:
        return _list(chosen, opts, flows)
    connection = opts.connection()
    check_output(opts.engine.output)
    config = dataclasses.replace(probe_config(connection), engine=engine_options(opts.engine), retries=opts.retries)
    if (opts.repeat > 1 or len(opts.levels) > 1) and (opts.replay or opts.transport != "sse"):
        raise UsageError("--repeat applies to the scenarios over SSE (so do several --concurrency levels), not to "
                         "--replay or --transport websocket")
    if opts.replay:
        return _replay(opts, config)
    if opts.transport == "websocket":
        from checker.commands import probe_ws

        return probe_ws.run(opts, config, chosen)
    if opts.repeat > 1 or len(opts.levels) > 1:
        from checker.commands import probe_repeat

        return probe_repeat.run(opts, config, chosen, probe_repeat.Hooks(
            sink=_Scenarios, apis=_apis, unreachable=_unreachable, dialect_rows=dialect_rows))
    gate = baseline_run(opts.engine)
    report = report_options(opts.engine, command="probe", compact=not opts.verbose)
    shown_url = config.redactor.url(config.url)
    report.extra = {"target": probe_target(shown_url, config.redactor.text(config.model), _apis(chosen)),
                    "skipped": [], "not_served": []}
    interrupted: probe_run.Interrupted | None = None
    # The text report shows each scenario when it ends; the other formats are one document, in suite order.
    as_it_goes = opts.engine.format == "text"
    with open_output(opts.engine.output) as stream:
        reporter = reporter_for("probe", opts.engine.format)(stream, report)
        reporter.start()
        sink = _Scenarios(reporter, report, gate)
        with _progress(chosen, enabled=opts.progress and sys.stderr.isatty()) as on_progress:
            try:
                results = probe_run.run(chosen, config, concurrency=opts.concurrency, progress=on_progress,
                                        stop_if_unreachable=True, on_result=sink.add if as_it_goes else None)
            except probe_run.Interrupted as stop:  # what ended (the one cut short too) is reported below
                interrupted, results = stop, stop.results
        unreachable = _unreachable(results) if interrupted is None else None
        if unreachable is not None:  # one line (by the CLI), not one HTP007 per scenario, and no report file
            raise UsageError(f"cannot connect to {shown_url}: {unreachable}")
        if not as_it_goes:
            for outcome in results:
                sink.add(outcome)
        sink.flush()
        runs = _flows(flows, config, results, chosen, report, sink) if interrupted is None else []
        report.extra["skipped"].sort(key=lambda e: [s.name for s in chosen].index(e["scenario"]))
        report.extra["dialects"] = dialect_rows(chosen, results, report)
        sink.summary.baselined = gate.hidden
        sink.summary.baseline_note = gate.note()
        if interrupted is not None:
            report.extra["interrupted"] = _interrupt_note(interrupted, len(chosen))
        report.extra["required_broken"] = required_broken_rows(report.extra.get("readiness"), report.clients_required)
        reporter.finish(sink.summary)
    warn_unmatched_baseline(opts.engine, gate)
    return _exit_code(opts, report, gate, results, runs, interrupted, sink.failed, shown_url)


def _exit_code(opts: ProbeOptions, report: ReportOptions, gate: BaselineRun, results: list[ScenarioResult],
               runs: list[FlowRun], interrupted: probe_run.Interrupted | None, failed: bool, shown_url: str) -> int:
    if interrupted is not None:
        print(f"sse-check: {report.extra['interrupted']}", file=sys.stderr)
        return 128 + interrupted.signum  # 130 for SIGINT (Ctrl-C), 143 for SIGTERM
    probed = [r for r in results if r.result is not None] + [r for run in runs for r in run.results]
    if not probed:
        print(f"sse-check: nothing probed: {shown_url} answered no scenario (every one skipped)", file=sys.stderr)
        return 2
    if gate.recorded is not None:
        finish_baseline(opts.engine, gate)
        return 0
    return 1 if failed or report.extra.get("required_broken") else 0


class _Scenarios:
    """Reports each scenario's outcome; connection errors are held until the server has answered once (a
    server that never answers is one line, not one finding per scenario)."""

    def __init__(self, reporter: Reporter, report: ReportOptions, gate: BaselineRun) -> None:
        self.reporter, self.report, self.gate = reporter, report, gate
        self.summary = Summary()
        self.failed = False
        self.held: list[ScenarioResult] = []  # connect errors, until the server has answered once
        self.answered = False

    def add(self, outcome: ScenarioResult) -> None:
        if not self.answered and outcome.ending == "connect-error":
            self.held.append(outcome)
            return
        if not self.answered and outcome.meta is not None:
            self.answered = True
            for earlier in self.held:
                self.add(earlier)
            self.held.clear()
        if outcome.skipped is not None and outcome.skipped.startswith(probe_run.NOT_SERVED):
            self._not_served(outcome)
            return
        if outcome.result is None:
            self.report.extra["skipped"].append({"scenario": outcome.scenario.name, "reason": outcome.skipped})
            return
        for attempt in outcome.attempts:  # the answers retried before this one, each with its own findings
            self.add(attempt)
        outcome.result.http["source"] = outcome.scenario.source
        result = self.gate.apply(outcome.scenario.name, outcome.result)
        # --clients-required is judged at the end on the client table (readiness), as a person reads it
        self.failed |= self.summary.add(result, self.report.fail_on)
        self.reporter.file(outcome.scenario.name, result)

    def _not_served(self, outcome: ScenarioResult) -> None:
        """One entry per dialect whose endpoint the server does not have, however many scenarios it had."""
        entries = self.report.extra["not_served"]
        api = outcome.scenario.api
        entry = next((e for e in entries if e["api"] == api), None)
        if entry is None:
            reason = outcome.skipped.removeprefix(probe_run.NOT_SERVED) if outcome.skipped else ""
            entries.append({"api": api, "reason": reason, "scenarios": 0})
            entry = entries[-1]
        entry["scenarios"] += 1

    def flush(self) -> None:
        """The held ones: the server never answered, yet not every scenario failed to connect (skips)."""
        for outcome in self.held:
            self.add(outcome)


def _flows(flows: list[Flow], config: ProbeConfig, results: list[ScenarioResult], chosen: list[Scenario],
           report: ReportOptions, sink: _Scenarios) -> list[FlowRun]:
    """The flows after the scenarios (checker.surface), each step reported as a scenario; the capability table
    and the per-client readiness into the report."""
    not_served = {e["api"]: e["reason"] for e in report.extra.get("not_served") or []}
    apis = _apis(chosen) or list(dict.fromkeys(f.api for f in flows if f.api is not None))
    runs = surface_probe.run_after(flows, config, results, apis=apis, not_served=not_served, on_result=sink.add)
    report.extra.update(surface_probe.tables(apis, results, not_served, runs))
    return runs


def _api_order(api: str) -> int:
    """Dialects in the order of the default --api list (the order they are probed in)."""
    return DEFAULT_APIS.index(api) if api in DEFAULT_APIS else len(DEFAULT_APIS)


def _apis(chosen: list[Scenario]) -> list[str]:
    """The dialects of the scenarios chosen, in probing order (the live replay's, without one, left out)."""
    return sorted({s.api for s in chosen if s.api is not None}, key=_api_order)


def dialect_rows(chosen: list[Scenario], results: list[ScenarioResult], report: ReportOptions) -> list[dict[str, Any]]:
    """The summary across dialects: per dialect probed, its scenarios passed, failed and skipped and its
    findings by severity, or that its endpoint is not served."""
    fail_on = report.fail_on
    missing = {e["api"]: e["reason"] for e in report.extra.get("not_served") or []}
    rows = []
    for api in _apis(chosen):
        mine = [r for r in results if r.scenario.api == api]
        linted = [r.result for r in mine if r.result is not None]
        failed = sum(1 for r in linted if any(f.severity >= fail_on for f in r.findings))
        counts = {sev.name.lower(): sum(r.count(sev) for r in linted) for sev in (Severity.ERROR, Severity.WARNING,
                                                                           Severity.INFO)}
        rows.append({"api": api, "endpoint": adapters.get(api).endpoint, "scenarios": len(mine),
                     "passed": len(linted) - failed, "failed": failed, "skipped": len(mine) - len(linted),
                     "findings": counts, "not_served": missing.get(api)})
    return rows


def _replay(opts: ProbeOptions, config: ProbeConfig) -> int:
    """``sse-check probe URL --model M --replay [DIALECT]``: the live replay with the probe's connection and
    engine options."""
    from checker.commands.replay import run_live

    if opts.scenarios or opts.scenario_files:
        raise UsageError("--replay sends its own requests: --scenario and --scenario-file do not apply")
    if opts.engine.baseline or opts.engine.write_baseline:
        raise UsageError("--replay keeps no baseline (--baseline, --write-baseline apply to the scenarios)")
    engine = dataclasses.replace(config.engine, trace=False, dialect=None)  # the replay's own requests decide
    assert opts.replay is not None
    return run_live(dataclasses.replace(config, engine=engine), opts.replay, fmt=opts.engine.format,
                    color=opts.engine.color, fail_on=Severity.parse(opts.engine.fail_on), output=opts.engine.output)


def _unreachable(results: list[ScenarioResult]) -> str | None:
    """Why the server could not be reached at all (no scenario got through to it), or None."""
    sent = [r for r in results if r.skipped != probe_run.UNREACHABLE and r.meta is not None]
    if not sent or any(r.ending != "connect-error" for r in sent):
        return None
    meta = sent[0].meta
    detail = str(meta.ending.detail or sent[0].ending) if meta else ""
    return detail + (" (is the server running, on this port?)" if "refused" in detail.lower() else "")


def _interrupt_note(stop: probe_run.Interrupted, total: int) -> str:
    import signal

    name = signal.Signals(stop.signum).name
    ended = [r for r in stop.results if r.ending != "interrupted"]
    cut = [r for r in stop.results if r.ending == "interrupted"]
    note = f"interrupted by {name}: {len(ended)} of {total} scenario(s) ended"
    for outcome in cut:
        note += f"; {outcome.scenario.name} was cut short"
        if outcome.saved is not None:
            note += f" (partial capture kept: {outcome.saved})"
    return note


def _list(scenarios: list[Scenario], opts: ProbeOptions, flows: list[Flow]) -> int:
    if opts.engine.format == "json":
        rows = [{"name": s.name, "api": s.api, "expect": s.expect, "summary": s.summary, "replay": list(s.replay_names),
                 "pair": s.pair, "source": s.source, "request": s.request(opts.model or "MODEL")} for s in scenarios]
        rows += [surface_probe.flow_row(flow) for flow in flows]
        json.dump(rows, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    console = make_console(sys.stdout, opts.engine.color)
    # Scenario names stay whole and the prose wraps within its column; what a replay server answers with
    # and where a scenario came from follow, dim, only where they say something.
    table = Table(box=None, pad_edge=False)
    table.add_column("scenario", no_wrap=True)
    table.add_column("expect", no_wrap=True)
    table.add_column("what it checks", overflow="fold", ratio=1)
    for s in scenarios:
        text = Text(s.summary)
        notes = []
        if list(s.replay_names) != [s.name]:
            notes.append(f"replayed from {', '.join(s.replay_names)}")
        if s.source != "built-in" and s.source not in s.summary:
            notes.append(f"from {s.source}")
        if notes:
            text.append("\n" + " · ".join(notes), style="dim")
        table.add_row(s.name, s.expect, text)
    for flow in flows:  # after the scenarios, as they run
        table.add_row(flow.name, "flow", Text(flow.summary).append(
            "\n" + " → ".join(f"{s.method} {s.name}" for s in flow.steps), style="dim"))
    console.print(table)
    console.print(f"{len(scenarios)} scenarios, {len(flows)} flows; --scenario NAME picks some, --scenario-file "
                  "adds your own.")
    return 0


# --- progress --------------------------------------------------------------------------------------------


@contextmanager
def _progress(scenarios: list[Scenario], *, enabled: bool) -> Iterator[Progress]:
    """A rich progress display on stderr, one line per scenario; a no-op off a terminal."""
    if not enabled:
        yield lambda name, phase, received, events: None
        return
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    console = make_console(sys.stderr, "auto")
    bar = Progress(SpinnerColumn(), TextColumn("{task.description:<32}"), TextColumn("{task.fields[state]}"),
                   TimeElapsedColumn(), console=console, transient=True)
    tasks = {s.name: bar.add_task(s.name, total=None, state="waiting", start=False) for s in scenarios}

    def update(name: str, phase: str, received: int, events: int) -> None:
        task = tasks.get(name)
        if task is None:
            return
        if phase == "start":
            bar.start_task(task)
            bar.update(task, state="connecting")
        elif phase == "headers":
            bar.update(task, state="headers received")
        elif phase == "body":
            bar.update(task, state=f"{received} bytes, {events} events")
        elif phase == "done":
            bar.update(task, state=f"done: {received} bytes, {events} events", total=1, completed=1)
            bar.stop_task(task)

    with bar:
        yield update
