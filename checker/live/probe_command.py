"""``sse-check probe BASE_URL --model M``: run the scenario suite against a live server.

This module turns options into a :class:`checker.live.probe.ProbeConfig`, runs the scenarios (with a rich
progress display on a terminal) and reports each scenario through the same reporters as ``lint``, plus
the HTTP facts of its exchange. The probing itself is ``checker.live.probe``; the verdicts come from
``checker.http_checks`` and the engine.

Exit codes, as lint: 0 no finding at or above ``--fail-on``; 1 at least one; 2 a usage error, or a
server that could not be reached at all (every scenario failed to connect) or probed at all (every
scenario skipped), after printing the report.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rich.table import Table
from rich.text import Text

from checker.commands.common import (
    add_engine_arguments,
    baseline_run,
    check_output,
    engine_options,
    finish_baseline,
    warn_unmatched_baseline,
    open_output,
    positive_count,
    positive_seconds,
    report_options,
)
from checker.console import make_console
from checker.engine import LintResult
from checker.errors import UsageError
from checker.findings import Severity
from checker.live import probe as prober
from checker.live.scenarios import Scenario, load_scenario_files, pick, suite
from checker.report import Summary, get_reporter
from checker.report.json_report import JsonReporter
from checker.report.text import TextReporter, exchange_facts, verdict_text

HELP = "probe a live server's POST /v1/responses with a suite of scenarios"

EPILOG = """\
examples:
  sse-check probe http://127.0.0.1:8080 --model qwen3 --profile llama.cpp
  sse-check probe https://api.openai.com/v1 --model gpt-5-mini --save out/ \\
      --format json -o report.json
  sse-check probe http://127.0.0.1:8000 --model x \\
      --scenario plain_text,parallel_calls --concurrency 2
  sse-check probe --list-scenarios

The base URL may end in /v1 or not (…/v1/responses is POSTed). The API key
is read from the environment variable named by --api-key-env (default
OPENAI_API_KEY) and sent as "Authorization: Bearer …" when set; --header adds
any other header. Secrets never appear in the report or in saved files.

--save DIR writes NAME.sse (the raw body, also when cut short) and
NAME.meta.json (request, status, headers, timings, how it ended) per
scenario; `sse-check lint DIR` then reports exactly the same findings.
--replay runs the live replay instead of the scenarios, as
`sse-check replay --live URL` does.

Exit codes: 0 clean, 1 findings at or above --fail-on, 2 a usage error or a
server that could not be reached (one line on stderr).
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
    which.add_argument("--list-scenarios", action="store_true", help="list the scenarios and exit (no network)")
    which.add_argument("--replay", nargs="?", const="responses", default=None, metavar="DIALECT",
                       choices=["responses", "openai-chat"],
                       help="instead of the scenarios, the live replay: does the server's prefix cache survive "
                            "reasoning sent back exact, dropped or altered? (DIALECT: responses, the default, or "
                            "openai-chat; text or json report)")
    conn = parser.add_argument_group("connection")
    conn.add_argument("--api-key-env", metavar="NAME", default=None,
                      help="environment variable holding the API key (default: OPENAI_API_KEY, if set)")
    conn.add_argument("--header", "-H", action="append", default=[], metavar="'NAME: VALUE'",
                      help="an extra request header (auth, routing); repeatable; sensitive values are redacted")
    conn.add_argument("--insecure", action="store_true", help="do not verify TLS certificates (prints a warning)")
    conn.add_argument("--concurrency", type=positive_count, default=1, metavar="N", help="scenarios run at once (default: 1)")
    conn.add_argument("--save", metavar="DIR", help="save NAME.sse and NAME.meta.json per scenario in DIR")
    conn.add_argument("--no-progress", action="store_true", help="no progress display (it is shown only on a terminal)")
    limits = parser.add_argument_group(
        "timeouts", "Each one is a finding when hit. The caps are --max-bytes and --max-events\n"
                    "below: reading stops once a stream is past them.")
    defaults = prober.ProbeLimits()
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





_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


def parse_headers(values: list[str]) -> list[tuple[str, str]]:
    headers = []
    for value in values:
        name, colon, rest = value.partition(":")
        name, rest = name.strip(), rest.strip()
        if not colon or not _HEADER_NAME.fullmatch(name):
            raise UsageError(f"--header {value!r}: expected 'Name: value'")
        if any(ch in rest for ch in "\r\n\0"):
            raise UsageError(f"--header {name}: the value contains a line break or NUL")
        headers.append((name, rest))
    return headers


# --- run -------------------------------------------------------------------------------------------------


def run(args: argparse.Namespace) -> int:
    scenarios = suite(load_scenario_files(args.scenario_file))
    chosen = pick(scenarios, args.scenario)
    if args.list_scenarios:
        return _list(chosen, args)
    if not args.base_url:
        raise UsageError("probe needs a BASE_URL (or --list-scenarios)")
    if not args.model:
        raise UsageError("probe needs --model (the model name the server should use)")
    check_output(args.output)
    config = dataclasses.replace(_config(args), engine=engine_options(args))
    if args.replay:
        from checker.replay.live_command import run_probe_replay

        return run_probe_replay(args, config, config.engine)
    gate = baseline_run(args)
    report = report_options(args, command="probe")
    shown_url = config.redactor.url(config.url)
    report.extra = {"target": {"url": shown_url, "model": config.redactor.text(args.model)}, "skipped": []}
    summary = Summary()
    failed = False
    interrupted: prober.Interrupted | None = None
    # The text report shows each scenario when it ends; the other formats are one document, in suite order.
    as_it_goes = args.format == "text"
    with open_output(args.output) as stream:
        reporter = _reporter(args.format)(stream, report)
        reporter.start()

        held: list[prober.ScenarioResult] = []  # connect errors, until the server has answered once
        answered = False

        def report_one(outcome: prober.ScenarioResult) -> None:
            nonlocal failed, answered
            if not answered and outcome.ending == "connect-error":
                held.append(outcome)
                return
            if not answered and outcome.meta is not None:
                answered = True
                for earlier in held:
                    report_one(earlier)
                held.clear()
            if outcome.result is None:
                report.extra["skipped"].append({"scenario": outcome.scenario.name, "reason": outcome.skipped})
                return
            outcome.result.http["source"] = outcome.scenario.source
            result = gate.apply(outcome.scenario.name, outcome.result)
            failed |= summary.add(result, report.fail_on)
            reporter.file(outcome.scenario.name, result)

        with _progress(chosen, enabled=_show_progress(args)) as on_progress:
            try:
                results = prober.run(chosen, config, concurrency=args.concurrency, progress=on_progress,
                                     stop_if_unreachable=True, on_result=report_one if as_it_goes else None)
            except prober.Interrupted as stop:  # what ended (the one cut short too) is reported below
                interrupted, results = stop, stop.results
        unreachable = _unreachable(results) if interrupted is None else None
        if unreachable is not None:  # one line (by the CLI), not one HTP007 per scenario, and no report file
            raise UsageError(f"cannot connect to {shown_url}: {unreachable}")
        if not as_it_goes:
            for outcome in results:
                report_one(outcome)
        for outcome in held:  # the server never answered, yet not every scenario failed to connect (skips)
            report_one(outcome)
        report.extra["skipped"].sort(key=lambda e: [s.name for s in chosen].index(e["scenario"]))
        summary.baselined = gate.hidden
        summary.baseline_note = gate.note()
        if interrupted is not None:
            report.extra["interrupted"] = _interrupt_note(interrupted, len(chosen))
        reporter.finish(summary)
    warn_unmatched_baseline(args, gate)
    if interrupted is not None:
        print(f"sse-check: {report.extra['interrupted']}", file=sys.stderr)
        return 128 + interrupted.signum  # 130 for SIGINT (Ctrl-C), 143 for SIGTERM
    probed = [r for r in results if r.result is not None]
    if not probed:
        print(f"sse-check: nothing probed: {shown_url} answered no scenario (every one skipped)", file=sys.stderr)
        return 2
    if gate.recorded is not None:
        finish_baseline(args, gate)
        return 0
    return 1 if failed else 0


def _unreachable(results: list[prober.ScenarioResult]) -> str | None:
    """Why the server could not be reached at all (no scenario got through to it), or None."""
    sent = [r for r in results if r.skipped != prober.UNREACHABLE and r.meta is not None]
    if not sent or any(r.ending != "connect-error" for r in sent):
        return None
    detail = str(sent[0].meta["ending"].get("detail") or sent[0].ending) if sent[0].meta else ""
    return detail + (" (is the server running, on this port?)" if "refused" in detail.lower() else "")


def _interrupt_note(stop: prober.Interrupted, total: int) -> str:
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


def _config(args: argparse.Namespace) -> prober.ProbeConfig:
    url = prober.endpoint(args.base_url)
    headers = parse_headers(args.header)
    secrets = prober.secrets_of_headers(headers)
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    secrets += [s for s in (parts.password,) if s]
    env_name = args.api_key_env or "OPENAI_API_KEY"
    key = os.environ.get(env_name, "")
    if args.api_key_env and not key:
        raise UsageError(f"--api-key-env {env_name}: the environment variable is not set")
    if key:
        secrets.append(key)
        if not any(name.lower() == "authorization" for name, _ in headers):
            headers.append(("Authorization", f"Bearer {key}"))
    if args.insecure:
        print("sse-check: warning: --insecure: TLS certificates are not verified", file=sys.stderr)
    save_dir = None
    if args.save:
        save_dir = Path(args.save)
        if save_dir.exists() and not save_dir.is_dir():
            raise UsageError(f"--save {args.save}: not a directory")
        save_dir.mkdir(parents=True, exist_ok=True)
    limits = prober.ProbeLimits(
        connect_timeout=args.connect_timeout, first_byte_timeout=args.first_byte_timeout,
        idle_timeout=args.idle_timeout, total_timeout=args.total_timeout, close_timeout=args.close_timeout,
        max_bytes=args.max_bytes, max_events=args.max_events,  # the engine's limits, shared with lint
    )
    return prober.ProbeConfig(url=url, model=args.model, headers=tuple(headers), redactor=prober.Redactor(secrets),
                              verify=not args.insecure, limits=limits, save_dir=save_dir)


def _list(scenarios: list[Scenario], args: argparse.Namespace) -> int:
    if args.format == "json":
        rows = [{"name": s.name, "expect": s.expect, "summary": s.summary, "replay": list(s.replay_names),
                 "pair": s.pair, "source": s.source, "request": s.request(args.model or "MODEL")} for s in scenarios]
        json.dump(rows, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    console = make_console(sys.stdout, args.color)
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
    console.print(table)
    console.print(f"{len(scenarios)} scenarios; --scenario NAME picks some, --scenario-file adds your own.")
    return 0


# --- progress --------------------------------------------------------------------------------------------


def _show_progress(args: argparse.Namespace) -> bool:
    return not args.no_progress and sys.stderr.isatty()


@contextmanager
def _progress(scenarios: list[Scenario], *, enabled: bool) -> Iterator[prober.Progress]:
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


# --- reporting -------------------------------------------------------------------------------------------


def _reporter(name: str) -> Any:
    if name == "text":
        return ProbeTextReporter
    if name == "json":
        return ProbeJsonReporter
    return get_reporter(name)


def _time(value: Any) -> str:
    if not isinstance(value, (int, float)):
        return "–"
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"


def http_line(info: dict[str, Any]) -> Text:
    """The HTTP facts under a scenario's header: status and size, timings, and where it came from."""
    timings = info.get("timings") or {}
    ending = info.get("ending") or {}
    status = info.get("status")
    head = f"HTTP {status}" if status is not None else "no response"
    if info.get("content_type"):
        head += f" {info['content_type']}"
    end = f"ended: {ending.get('kind', '?')}"
    if "closed_after_terminal" in timings:
        end += f", {_time(timings['closed_after_terminal'])} after the terminal event"
    if info.get("partial"):
        end += " (partial)"
    lines = [" · ".join([head, f"{info.get('bytes', 0)} bytes, {info.get('events', 0)} events", end])]
    times = []
    if status is not None:
        times.append(f"TTFB {_time(timings.get('first_byte'))} (headers {_time(timings.get('headers'))})")
    if info.get("expect") != "nonstream" and "first_event" in timings:
        times.append(f"first delta {_time(timings.get('first_delta'))}")
        times.append(f"largest gap {_time(timings.get('largest_gap'))}")
    times.append(f"total {_time(timings.get('total'))}")
    lines.append(" · ".join(times))
    extra = []
    if info.get("replayed_as") and info.get("replayed_as") != info.get("scenario"):
        extra.append(f"replayed from capture {info['replayed_as']}")
    if info.get("parity"):
        extra.append(f"parity: {info['parity']}")
    if info.get("saved"):
        extra.append(f"saved: {info['saved']}")
    if extra:
        lines.append(" · ".join(extra))
    return Text("\n".join("  " + line for line in lines), style="dim")


class ProbeTextReporter(TextReporter):
    """lint's text report, one line per scenario as it ends (with its HTTP facts), and a table of the
    exchanges at the end. A failing scenario also gets its timings under the line."""

    noun = "scenario"
    keep_rows = True  # the exchanges table at the end lists every scenario

    def facts(self, name: str, result: LintResult) -> str:
        return exchange_facts(getattr(result, "http", None) or {}, result, failed=self.failed(result))

    def details(self, name: str, result: LintResult) -> None:
        info = getattr(result, "http", None)
        if info and (self.failed(result) or info.get("partial")):
            self.console.print(http_line(info))

    def finish(self, summary: Summary) -> None:
        c = self.console
        skipped = self.options.extra.get("skipped") or []
        if not self.options.quiet:
            if self.deviations:
                self.print_deviations()
            if self.totals and len(self.rows) > 1:
                self.print_totals()
            if len(self.rows) + len(skipped) > 1:
                c.print()
                c.print(self.exchanges_table(skipped))
        for entry in skipped:
            c.print(Text(f"skipped {entry['scenario']}: {entry['reason']}", style="yellow"))
        for error in summary.io_errors:
            c.print(Text(f"error: {error}", style="bold red"))
        if self.options.extra.get("interrupted"):
            c.print(Text(self.options.extra["interrupted"], style="bold yellow"))
        target = self.options.extra.get("target") or {}
        c.print(f"probed {target.get('url', '?')} (model {target.get('model', '?')}, profile {self.options.profile})")
        self.print_summary(summary)

    def summary_extra(self) -> str:
        skipped = self.options.extra.get("skipped") or []
        return f"; {len(skipped)} skipped" if skipped else ""

    def exchanges_table(self, skipped: list[dict[str, Any]]) -> Table:
        """One row per scenario: verdict, status, timings, findings. Fits 80 columns with the built-in
        scenario names, which are never cut; the ending gets a column only when one did not complete."""
        endings = [str(((getattr(r, "http", {}) or {}).get("ending") or {}).get("kind", "–")) for _, r in self.rows]
        show_ending = any(e != "complete" for e in endings)
        table = Table(box=None, pad_edge=False, padding=(0, 1, 0, 0))
        table.add_column("scenario", no_wrap=True)
        table.add_column("verdict", no_wrap=True)
        table.add_column("HTTP", no_wrap=True)
        if show_ending:
            table.add_column("ended", overflow="fold")
        for column in ("TTFB", "delta", "gap", "total"):
            table.add_column(column, no_wrap=True, justify="right")
        table.add_column("e/w/i", justify="right", no_wrap=True)
        for (name, result), ending in zip(self.rows, endings):
            info = getattr(result, "http", {}) or {}
            timings = info.get("timings") or {}
            status = info.get("status")
            row: list[Any] = [name, verdict_text(self.failed(result)), str(status if status is not None else "–")]
            if show_ending:
                row.append(ending)
            row += [_time(timings.get("first_byte")), _time(timings.get("first_delta")),
                    _time(timings.get("largest_gap")), _time(timings.get("total")),
                    f"{result.count(Severity.ERROR)}/{result.count(Severity.WARNING)}/{result.count(Severity.INFO)}"]
            table.add_row(*row)
        for entry in skipped:
            table.add_row(entry["scenario"], Text("skip", style="yellow"), *["–"] * (6 + show_ending), "")
        return table


class ProbeJsonReporter(JsonReporter):
    """lint's JSON document; each file entry (a scenario) adds ``http``, the document ``target`` and ``skipped``."""

    def entry(self, name: str, result: LintResult) -> dict[str, Any]:
        entry = super().entry(name, result)
        info = getattr(result, "http", None)
        if info is not None:
            entry["http"] = info
        return entry
