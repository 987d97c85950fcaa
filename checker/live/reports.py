"""The reports of ``sse-check probe`` and ``sse-check proxy``: lint's text and JSON reporters with the HTTP
facts of each exchange (and, for the proxy, its conversation and the prompt-cache table), and the proxy's
live line per answer. The other formats are lint's own (checker.report.get_reporter).
"""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text

from checker.engine import LintResult
from checker.findings import Finding, Severity
from checker.live.reports_surface import print_answer, print_surface
from checker.report import Reporter, Summary, get_reporter
from checker.report.json_report import JsonReporter
from checker.report.text import SEVERITY_STYLE, TextReporter, exchange_facts

# probe --verbose's help (here, beside the two reports it chooses between).
VERBOSE_HELP = ("text report: a line per scenario as it ends, the timings table, the known deviations and every "
                "capability (by default: the clients and endpoints, then the failures)")
# The verdict of a scenario the probe was interrupted in (not the server's doing, so not FAIL either).
INTERRUPTED = ("cut", "bold yellow")


def _interrupted(result: LintResult) -> bool:
    info = getattr(result, "http", None) or {}
    return (info.get("ending") or {}).get("kind") == "interrupted"


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

    def __init__(self, stream: Any, options: Any) -> None:
        super().__init__(stream, options)
        self.deferred: list[tuple[str, LintResult, list[Finding], int]] = []  # the short report's failures

    def facts(self, name: str, result: LintResult) -> str:
        return exchange_facts(getattr(result, "http", None) or {}, result, failed=self.failed(result))

    def failed(self, result: LintResult) -> bool:
        # A scenario fails on its findings; --clients-required is judged once, on the client table at the end.
        return any(f.severity >= self.options.fail_on for f in result.findings)

    def required_lines(self, result: LintResult) -> None:
        pass  # the client table at the end names the broken clients, each with its first blocking finding

    def verdict_of(self, result: LintResult) -> tuple[str, str]:
        # An exchange the probe itself cut short (Ctrl-C) proves nothing either way: never "ok" (it read
        # "ok plain_text  no response: interrupted").
        if not self.failed(result) and _interrupted(result):
            return INTERRUPTED
        return super().verdict_of(result)

    def details(self, name: str, result: LintResult) -> None:
        info = getattr(result, "http", None)
        retry = (info or {}).get("retry")
        if isinstance(retry, dict) and retry.get("line"):  # a retried answer, or one the probe did not retry
            self.console.print(Text(f"  {retry['line']}", style="yellow"))
        if info and (self.failed(result) or info.get("partial")):
            from rich.table import Table as Grid

            grid = Grid.grid(padding=(0, 1))  # a wrapped fact stays under its line, not at column 0
            grid.add_column(no_wrap=True)
            grid.add_column(overflow="fold", ratio=1)
            for line in http_line(info).plain.splitlines():
                grid.add_row(" ", Text(line.strip(), style="dim"))
            self.console.print(grid)

    def held(self, name: str, result: LintResult, failed: bool, shown: list[Finding], grouped: int) -> bool:
        # The short report: nothing per scenario as it ends; the failures (and the exchanges cut short) are
        # printed after the answer, by finish_short.
        if not self.options.compact:
            return False
        if failed or _interrupted(result):
            self.deferred.append((name, result, shown, grouped))
        return True

    def finish(self, summary: Summary) -> None:
        if self.options.compact and not self.options.quiet:
            self.finish_short(summary)
            return
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
        dialects = self.options.extra.get("dialects") or []
        if not self.options.quiet and len(dialects) > 1 and any(d["not_served"] is None for d in dialects):
            c.print()
            c.print(dialects_table(dialects))
        for entry in self.options.extra.get("not_served") or []:
            c.print(Text(f"{entry['api']}: not served ({entry['reason']}); its {entry['scenarios']} "
                         f"scenario(s) not run", style="cyan"))
        for line in skip_lines(skipped):
            c.print(Text(line, style="yellow"))
        for error in summary.io_errors:
            c.print(Text(f"error: {error}", style="bold red"))
        print_surface(c, self.options.extra)
        if self.options.extra.get("interrupted"):
            c.print(Text(self.options.extra["interrupted"], style="bold yellow"))
        self.print_end(summary)

    def print_end(self, summary: Summary) -> None:
        """What was probed, the summary, and what the exit code means when it would mislead."""
        c = self.console
        target = self.options.extra.get("target") or {}
        apis = target.get("apis") or []
        where = target.get("base") if len(apis) > 1 else None  # several endpoints: their common base
        dialects = f"{', '.join(apis)}; " if where else ""
        c.print(f"probed {where or target.get('url', '?')} ({dialects}model {target.get('model', '?')}, "
                f"profile {self.options.profile})")
        self.print_summary(summary)
        required = self.options.extra.get("required_broken") or []
        if required:
            names = ", ".join(str(row.get("client")) for row in required)
            c.print(Text(f"required client(s) broken (--clients-required): {names}: exit 1", style="bold red"))
        note = breakage_note(summary, self.options.extra.get("readiness") or [], self.options.fail_on,
                             self.options.clients_required)
        if note and not required:
            c.print(Text(note, style="bold yellow"))

    def finish_short(self, summary: Summary) -> None:
        """The default report: the answer (each client's verdict, each endpoint's), then the failures, then
        one line on how to see the rest (``--verbose``)."""
        c, extra = self.console, self.options.extra
        print_answer(c, extra)
        dialects = extra.get("dialects") or []
        if dialects:
            c.print()
            c.print(dialects_table(dialects))
        for entry in extra.get("not_served") or []:
            c.print(Text(f"{entry['api']}: not served ({entry['reason']}); its {entry['scenarios']} "
                         f"scenario(s) not run", style="cyan"))
        for line in skip_lines(extra.get("skipped") or []):
            c.print(Text(line, style="yellow"))
        for name, result, shown, grouped in self.deferred:
            c.print()
            self.render(name, result, shown, grouped)
        for error in summary.io_errors:
            c.print(Text(f"error: {error}", style="bold red"))
        if not self.deferred:
            c.print()
        if self.deviations:
            groups = self.deviations.values()
            rules = len({code for group in groups for code in group.codes})
            c.print(Text(f"known deviations of profile {self.options.profile}, as documented: "
                         f"{sum(g.findings for g in groups)} info finding(s) of {rules} rule(s), not failing",
                         style="dim"))
        if extra.get("interrupted"):
            c.print(Text(extra["interrupted"], style="bold yellow"))
        self.print_end(summary)
        c.print(Text("--verbose: every scenario with its timings, the known deviations and every capability; "
                     "--format json: all of it", style="dim"))
        self.flush()

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
        # Several dialects: a heading row per dialect and the bare names under it (80 columns still fit).
        grouped = len({name.rpartition("/")[0] for name, _ in self.rows}) > 1
        heading = None
        for (name, result), ending in zip(self.rows, endings):
            api, _, bare = name.rpartition("/")
            if grouped:
                if api != heading:
                    heading = api
                    table.add_row(Text(api or "responses", style="bold"))
                name = "  " + bare
            info = getattr(result, "http", {}) or {}
            timings = info.get("timings") or {}
            status = info.get("status")
            row: list[Any] = [name, Text(*self.verdict_of(result)), str(status if status is not None else "–")]
            if show_ending:
                row.append(ending)
            row += [_time(timings.get("first_byte")), _time(timings.get("first_delta")),
                    _time(timings.get("largest_gap")), _time(timings.get("total")),
                    f"{result.count(Severity.ERROR)}/{result.count(Severity.WARNING)}/{result.count(Severity.INFO)}"]
            table.add_row(*row)
        for entry in skipped:
            table.add_row(entry["scenario"], Text("skip", style="yellow"), *["–"] * (6 + show_ending), "")
        return table


NOT_REPLAYED = "the replay server has no capture for this scenario"


def required_broken_rows(readiness: list[dict[str, Any]] | None, required: tuple[str, ...]) -> list[dict[str, Any]]:
    """The client table's rows (readiness) of the --clients-required clients it calls broken: the probe's exit
    code follows the table a person reads (a finding of the features' own rules, MOD or TUR, acts through the
    capability table there, not as a stream's breakage)."""
    if not required:
        return []
    return [row for row in readiness or [] if row.get("verdict") == "broken"
            and ("all" in required or row.get("client") in required)]


def breakage_note(summary: Summary, readiness: list[dict[str, Any]], fail_on: Any,
                  required: tuple[str, ...] = ()) -> str | None:
    """The exit code's meaning when it would mislead: a run that passes (no finding at --fail-on: a profile's
    documented deviations are info) while the client table says clients break. Never "ok" and exit 0 beside a
    broken client without a word (issue 30); --clients-required makes their breakage fail the run."""
    if summary.failed_files or summary.io_errors:
        return None
    broken = [str(row.get("client")) for row in readiness if row.get("verdict") == "broken"]
    if not broken:
        return None
    verb = "breaks" if len(broken) == 1 else "break"
    if required:
        return f"exit 0: no finding at or above --fail-on {fail_on}; {', '.join(broken)} {verb}, not required"
    return (f"exit 0: no finding at or above --fail-on {fail_on}, but {', '.join(broken)} {verb} on what the "
            f"profile accepts; --clients-required {','.join(broken)} (or all) fails the run on that")


def skip_lines(skipped: list[dict[str, Any]]) -> list[str]:
    """One line per skipped scenario, except that a dialect whose scenarios a replay server has no capture
    of (it replays another dialect's) is one line."""
    unreplayed: dict[str, int] = {}
    for entry in skipped:
        if entry["reason"].startswith(NOT_REPLAYED):
            api = entry["scenario"].rpartition("/")[0] or "responses"
            unreplayed[api] = unreplayed.get(api, 0) + 1
    lines, said = [], set()
    for entry in skipped:
        api = entry["scenario"].rpartition("/")[0] or "responses"
        if entry["reason"].startswith(NOT_REPLAYED) and unreplayed[api] > 1:
            if api not in said:
                said.add(api)
                lines.append(f"skipped {unreplayed[api]} {api} scenarios: the replay server has no capture for them")
            continue
        lines.append(f"skipped {entry['scenario']}: {entry['reason']}")
    return lines


def dialects_table(rows: list[dict[str, Any]]) -> Table:
    """The summary across dialects (checker.commands.probe.dialect_rows): one row per dialect probed."""
    table = Table(box=None, pad_edge=False, padding=(0, 1, 0, 0))
    table.add_column("dialect", no_wrap=True)
    table.add_column("endpoint", no_wrap=True)
    for column in ("passed", "failed", "skipped"):
        table.add_column(column, no_wrap=True, justify="right")
    table.add_column("e/w/i", justify="right", no_wrap=True)
    for row in rows:
        if row["not_served"] is not None:
            table.add_row(row["api"], row["endpoint"], Text("not served", style="cyan"), "", "", "")
            continue
        counts = row["findings"]
        failed = Text(str(row["failed"]), style="bold red" if row["failed"] else "")
        table.add_row(row["api"], row["endpoint"], str(row["passed"]), failed, str(row["skipped"]),
                      f"{counts['error']}/{counts['warning']}/{counts['info']}")
    return table


class ProbeJsonReporter(JsonReporter):
    """lint's JSON document; each file entry (a scenario) adds ``http``, the document ``target`` and ``skipped``."""

    def entry(self, name: str, result: LintResult) -> dict[str, Any]:
        entry = super().entry(name, result)
        info = getattr(result, "http", None)
        if info is not None:
            entry["http"] = info
        return entry


# --- the proxy -------------------------------------------------------------------------------------------


def _worst(findings: list[Finding]) -> Finding | None:
    worst = None
    for finding in findings:
        if worst is None or finding.severity > worst.severity:
            worst = finding
    return worst


def live_line(record: Any, fail_on: Severity) -> Text:
    """One line per answer: number, request, status, events, conversation, cache, verdict, worst finding."""
    status = record.status if record.status is not None else "–"
    line = Text(f"{record.number:03d} {record.method} {record.path} {status}", style="bold")
    result = record.result
    if result is None:
        line.append(f" · {record.note or 'not checked'}", style="yellow")
        return line
    info = result.proxy
    parts = [f"{result.events} events" if record.streamed else "not streamed"]
    if info.get("conversation"):
        parts.append(f"{info['conversation']}#{info['step']}")
    usage = info.get("usage") or {}
    if usage.get("cached") is not None:
        parts.append(f"cached {usage['cached']}/{usage.get('prompt') if usage.get('prompt') is not None else '?'}")
    ending = (result.http.get("ending") or {}).get("kind")
    if ending and ending != "complete":
        parts.append(f"ended: {ending}")
    line.append(" · " + " · ".join(parts) + " · ")
    failed = any(f.severity >= fail_on for f in result.findings)
    line.append("FAIL" if failed else "ok", style="bold red" if failed else "bold green")
    worst = _worst(result.findings)
    if worst is not None:
        more = len(result.findings) - 1
        line.append(f" · {worst.code} ", style=SEVERITY_STYLE[worst.severity])
        line.append(worst.message)
        if more:
            line.append(f" (+{more} more)", style="dim")
    return line


def _tokens(value: Any) -> str:
    return str(value) if value is not None else "–"


class ProxyTextReporter(ProbeTextReporter):
    """Each answer as lint shows a capture (with its HTTP line), then the answers and cache tables."""

    noun = "answer"

    def finish(self, summary: Summary) -> None:
        c = self.console
        extra = self.options.extra
        # The findings set aside under each answer: the documented deviations grouped, then totals per rule.
        if self.deviations:
            self.print_deviations()
        if self.totals and len(self.rows) > 1:
            self.print_totals()
        if self.deviations or (self.totals and len(self.rows) > 1):
            c.print()
        if self.rows:
            table = Table(title="answers", box=None, pad_edge=False)
            for column in ("answer", "status", "conversation", "verdict", "ended", "error/warning/info", "worst"):
                table.add_column(column, no_wrap=True)
            for name, result in self.rows:
                info = getattr(result, "proxy", {}) or {}
                http = getattr(result, "http", {}) or {}
                failed = any(f.severity >= self.options.fail_on for f in result.findings)
                worst = _worst(result.findings)
                table.add_row(
                    name, _tokens(http.get("status")),
                    f"{info['conversation']}#{info['step']}" if info.get("conversation") else "–",
                    Text("FAIL", style="bold red") if failed else Text("ok", style="green"),
                    str((http.get("ending") or {}).get("kind", "–")),
                    f"{result.count(Severity.ERROR)}/{result.count(Severity.WARNING)}/{result.count(Severity.INFO)}",
                    worst.code if worst else "",
                )
            c.print(table)
        cache = extra.get("cache") or []
        if cache:
            table = Table(title="prompt cache (cached tokens vs. the previous prompt)", box=None, pad_edge=False)
            for column in ("answer", "conversation", "prompt", "cached", "previous prompt", "reuse", "from"):
                table.add_column(column, no_wrap=True, justify="right" if column in (
                    "prompt", "cached", "previous prompt", "reuse") else "left")
            beyond = False
            for row in cache:
                reuse = row.get("reuse")
                table.add_row(f"{row['number']:03d}", f"{row['conversation']}#{row['step']}",
                              _tokens(row.get("prompt_tokens")), _tokens(row.get("cached_tokens")),
                              _tokens(row.get("previous_prompt_tokens")), _reuse(reuse), row.get("source", ""))
                beyond = beyond or (reuse is not None and reuse > 1)
            c.print(table)
            if beyond:
                c.print(Text(REUSE_BEYOND, style="dim"))
        for entry in extra.get("unchecked") or []:
            c.print(Text(f"not checked {entry['name']}: {entry['note']}", style="yellow"))
        if extra.get("answers_not_shown"):
            c.print(Text(f"{extra['answers_not_shown']} earlier answer(s) not shown (--keep-answers); "
                         "the totals count them", style="dim"))
        if extra.get("skipped_queue_full"):
            c.print(Text(f"{extra['skipped_queue_full']} answer(s) forwarded unchecked: the checker's queue was "
                         "full (--check-queue)", style="yellow"))
        talks = extra.get("conversations") or []
        c.print(f"proxied {extra.get('upstream', '?')}: {summary.files} answer(s) checked in {len(talks)} "
                f"conversation(s), {extra.get('passed_through', 0)} other request(s) passed through")
        c.print(f"{summary.failed_files} failed at --fail-on {self.options.fail_on}; {summary.errors} error(s), "
                f"{summary.warnings} warning(s), {summary.infos} info")


class ProxyJsonReporter(ProbeJsonReporter):
    """lint's JSON document; each answer adds ``http`` and ``proxy`` (its request, conversation, usage)."""

    def entry(self, name: str, result: Any) -> dict[str, Any]:
        entry = super().entry(name, result)
        info = getattr(result, "proxy", None)
        if info is not None:
            entry["proxy"] = info
        return entry


# The text and JSON reports of these commands; any other format is lint's.
_OWN: dict[tuple[str, str], type[Reporter]] = {
    ("probe", "text"): ProbeTextReporter,
    ("probe", "json"): ProbeJsonReporter,
    ("proxy", "text"): ProxyTextReporter,
    ("proxy", "json"): ProxyJsonReporter,
}


def reporter_for(command: str, name: str) -> type[Reporter]:
    """The reporter class of format ``name`` for ``command`` ("probe" or "proxy")."""
    return _OWN.get((command, name)) or get_reporter(name)


# Cached tokens can outnumber the previous prompt's: the cache holds that prompt AND the answer that followed it
# (now part of this prompt). A bare "reuse 103%" read as a bug, so a note under the table says what it means.
REUSE_BEYOND = ("reuse above 100%: more tokens cached than the previous prompt had; the cache went on into the "
                "answer that followed it (now part of this prompt)")


def _reuse(reuse: float | None) -> str:
    """The reuse column: cached tokens as a percentage of the previous prompt (above 100%: REUSE_BEYOND)."""
    return f"{reuse * 100:.0f}%" if reuse is not None else "–"
