"""The default, human report, drawn with rich.

Short when all is well: a passing capture is one line, the findings a profile documents as known
deviations are grouped at the end (one line per deviation, with its count and the events it covers), and a
run over several captures ends with totals per rule instead of a line per capture. ``--quiet`` keeps only
failing captures and the summary; ``--show SEVERITY`` hides findings below it from the display (never from
the counts or the exit code). Every line wraps under its own column, so the report reads at 80 columns.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

from checker import dialects
from checker.console import PlainLines, make_console
from checker.engine import LintResult
from checker.findings import Finding, Severity, safe_text
from checker.report import ReportOptions, Summary, required_broken

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

SEVERITY_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}
# At most this many event types are named on a known deviation's line.
EVENTS_NAMED = 2


def where(finding: Finding) -> str:
    return finding.position.label()


def verdict(failed: bool) -> tuple[str, str]:
    """A capture's verdict word and its style."""
    return ("FAIL", "bold red") if failed else ("ok", "bold green")


def verdict_text(failed: bool) -> Text:
    from rich.text import Text

    return Text(*verdict(failed))


def stream_facts(result: LintResult) -> str:
    """What a capture was, in a few words: events, bytes and how it ended."""
    if result.events == 0:
        what = "not an event stream" if "SSE022" in result.codes() else "no events"
        return f"{result.bytes} bytes, {what}"
    ended = f"ended by {result.terminal}" if result.terminal else "no terminal event"  # stays in words: lint
    facts = f"{result.events} event{'s' if result.events != 1 else ''} · {result.bytes} bytes · {ended}"
    # The dialect is named when it is not the default one (a Responses capture's line stays as short).
    if result.dialect and result.dialect != dialects.default().name:
        facts = f"{dialects.get(result.dialect).title} · {facts}"
    return facts


def exchange_facts(info: dict[str, Any], result: LintResult, *, failed: bool = False) -> str:
    """A scenario's one line: what came back and how it ended, in words ("as expected" only when it passed)."""
    status = info.get("status")
    ending = info.get("ending") or {}
    kind = ending.get("kind", "complete")
    if status is None:
        detail = ending.get("detail") or ""
        return f"no response: {kind}" + (f" ({detail})" if detail else "")
    # A stream says its status only when it is not the 200 it should be (the table has every status).
    parts = [] if result.events and status == 200 else [f"HTTP {status}"]
    if result.events:
        parts.append(f"{result.events} event{'s' if result.events != 1 else ''}")
        parts.append(result.terminal or "no terminal event")
    else:
        content_type = (info.get("content_type") or "no content type").split(";")[0].strip()
        body = "JSON" if content_type.endswith("json") else content_type
        expect = info.get("expect")
        if expect == "error" and status >= 400:
            parts.append(f"{body} error" + ("" if failed else ", as expected"))
        elif expect == "nonstream":
            parts.append(f"{body} answer (not streamed, as asked)")
        else:
            parts.append(f"{content_type}, {result.bytes} bytes, no events")
    if kind != "complete":
        parts.append(f"ended: {kind}")
    return " · ".join(parts)  # the timings are in the table at the end (and under a failing scenario)


@dataclass(slots=True)
class DeviationGroup:
    """The findings of one known deviation across the run."""

    description: str
    count: int = 0  # occurrences
    findings: int = 0  # reported findings (a repeated message is one, with its count)
    codes: list[str] = field(default_factory=list)
    events: list[str] = field(default_factory=list)
    # Captures it was seen in: a count, not the names (a run over an archive must not hold every name); the
    # reporter sees each capture once, so the last name is enough to count it once.
    captures: int = 0
    last: str | None = None

    def add(self, name: str, finding: Finding) -> None:
        self.count += finding.occurrences
        self.findings += 1
        if finding.code not in self.codes:
            self.codes.append(finding.code)
        event = finding.position.event_type
        if event and event not in self.events:
            self.events.append(event)
        if name != self.last:
            self.captures += 1
            self.last = name


@dataclass(slots=True)
class RuleTotal:
    """One rule's line in the text report's totals: its findings, occurrences and captures."""

    code: str
    name: str
    severity: Severity
    findings: int = 0
    occurrences: int = 0
    captures: int = 0  # as DeviationGroup.captures
    last: str | None = None


class TextReporter:
    # What a capture is called in the summary ("capture", "scenario").
    noun = "capture"

    # Whether every (name, result) is kept in ``rows`` for a table at the end (probe's handful of scenarios);
    # lint keeps only counts, so its memory stays flat over an archive.
    keep_rows = False

    # Lines rich would write unchanged (a passing capture's, the summary) are written without it
    # (checker.console.PlainLines): rich is imported when a line needs it.
    plain_lines = True

    def __init__(self, stream: IO[str], options: ReportOptions) -> None:
        self._stream = stream
        self._console: Console | None = None
        self.plain = PlainLines(stream, options.color)
        self.options = options
        self.rows: list[tuple[str, LintResult]] = []
        self.count = 0
        self.deviations: dict[str, DeviationGroup] = {}
        self.totals: dict[str, RuleTotal] = {}
        self.not_shown = 0

    @property
    def console(self) -> Console:
        """rich's console for this report, made on first use."""
        if self._console is None:
            self._console = make_console(self._stream, self.options.color)
        return self._console

    def say(self, *segments: tuple[str, str]) -> None:
        """One line of (text, style) segments: written plainly when rich would write it so, else by rich."""
        if not (self.plain_lines and self.plain.line(*segments)):
            from rich.text import Text

            self.console.print(Text(*segments[0]) if len(segments) == 1 else Text.assemble(*segments))

    def blank(self) -> None:
        if not (self.plain_lines and self.plain.line()):
            self.console.print()

    def flush(self) -> None:
        if self._console is not None:
            self._console.file.flush()
        self.plain.flush()

    def start(self) -> None:
        pass

    # -- one capture --------------------------------------------------------------------------------------

    def failed(self, result: LintResult) -> bool:
        """A finding at --fail-on or above, or a --clients-required client the stream breaks (as Summary.add)."""
        if any(f.severity >= self.options.fail_on for f in result.findings):
            return True
        return bool(self.options.clients_required and required_broken(result, self.options.clients_required))

    def threshold(self) -> Severity:
        """The lowest severity displayed: --show, and in --quiet mode only what fails the run."""
        if self.options.quiet:
            return max(self.options.show, self.options.fail_on)
        return self.options.show

    def split(self, name: str, result: LintResult) -> tuple[list[Finding], int]:
        """The findings to list under a capture, and how many known deviations were set aside (grouped at the
        end); counts the run's per-rule totals and deviation groups on the way."""
        shown: list[Finding] = []
        grouped = 0
        threshold = self.threshold()
        for finding in result.findings:
            if finding.severity < threshold:
                self.not_shown += 1
                continue
            if finding.known_deviation and finding.severity == Severity.INFO:
                group = self.deviations.get(finding.known_deviation)
                if group is None:
                    group = self.deviations[finding.known_deviation] = DeviationGroup(finding.known_deviation)
                group.add(name, finding)
                grouped += 1
                continue
            total = self.totals.get(finding.code)
            if total is None:
                total = self.totals[finding.code] = RuleTotal(finding.code, finding.name, finding.severity)
            total.severity = max(total.severity, finding.severity)
            total.findings += 1
            total.occurrences += finding.occurrences
            if name != total.last:
                total.captures += 1
                total.last = name
            shown.append(finding)
        return shown, grouped

    def facts(self, name: str, result: LintResult) -> str:
        # A capture saved by `sse-check probe --save` that is not a stream (an error, a stream:false answer)
        # reads as the probe said it, from its recorded exchange (lint puts it in extra["exchanges"]).
        exchange = (self.options.extra.get("exchanges") or {}).get(name)
        if exchange is not None and not result.events:
            return f"{exchange_facts(exchange, result, failed=self.failed(result))} · {result.bytes} bytes"
        return stream_facts(result)

    def file(self, name: str, result: LintResult) -> None:
        self.count += 1
        if self.keep_rows:
            self.rows.append((name, result))
        failed = self.failed(result)
        shown, grouped = self.split(name, result)
        if self.options.quiet and not failed:
            return
        if self.held(name, result, failed, shown, grouped):
            return
        self.render(name, result, shown, grouped)

    def held(self, name: str, result: LintResult, failed: bool, shown: list[Finding], grouped: int) -> bool:
        """Whether a capture's lines wait (the probe's short report prints its failures after the answer)."""
        return False

    def render(self, name: str, result: LintResult, shown: list[Finding], grouped: int) -> None:
        """A capture's lines: its header, details, findings, and what --timeline and --clients add."""
        facts = self.facts(name, result)
        if grouped:
            facts += f" · {grouped} known deviation{'s' if grouped != 1 else ''}"
        self.header_line(self.verdict_of(result), name, facts)
        self.details(name, result)
        if self.options.clients_required:
            self.required_lines(result)
        if shown:
            findings_table(self.console, shown, result)
        if self.options.timeline and result.trace is not None:
            from checker.report.timeline import render_timeline  # only with --timeline

            render_timeline(self.console, result)
        if self.options.clients:
            from checker.compat import matrix
            from checker.report.clients_table import render_matrix

            render_matrix(self.console, matrix(result), result, self.options.oracles.get(name))
        if shown or self.options.timeline or self.options.clients:
            self.blank()
        self.flush()

    def verdict_of(self, result: LintResult) -> tuple[str, str]:
        """A capture's verdict word and style (``ok``/``FAIL``; the probe adds one for an exchange cut short)."""
        return verdict(self.failed(result))

    def header_line(self, word: tuple[str, str], name: str, facts: str) -> None:
        """``ok NAME  facts``: plainly when it fits on one line, else drawn by :meth:`header`."""
        if not (self.plain_lines and self.plain.line(word, (" ", ""), (safe_text(name), "bold"),
                                                     ("  ", ""), (facts, "dim"))):
            from rich.text import Text

            self.header(Text(*word), name, facts)

    def header(self, verdict: Text, name: str, facts: str) -> None:
        """``ok NAME  facts`` on one line; on a narrow terminal the facts wrap under the name."""
        from rich.table import Table
        from rich.text import Text

        grid = Table.grid(padding=(0, 1))
        grid.add_column(no_wrap=True)
        grid.add_column(overflow="fold")
        grid.add_row(verdict, Text.assemble((safe_text(name), "bold"), "  ", (facts, "dim")))
        self.console.print(grid)

    def required_lines(self, result: LintResult) -> None:
        """Under a capture a --clients-required client breaks on: which, and the finding that breaks it (a
        known deviation's finding is grouped at the end, so the FAIL would otherwise say no why)."""
        from checker.compat import matrix

        broken = required_broken(result, self.options.clients_required)
        if not broken:
            return
        from rich.table import Table
        from rich.text import Text

        cells = matrix(result)
        grid = Table.grid(padding=(0, 1))
        grid.add_column(no_wrap=True)  # indent: a wrapped line stays under its text
        grid.add_column(overflow="fold", ratio=1)
        for client in broken:
            cell = cells[client]
            grid.add_row(" ", Text.assemble("breaks ", (client, "bold red"), f" (required): {cell.decided_by} · ",
                                            (safe_text(cell.symptom or ""), "dim")))
        self.console.print(grid)

    def details(self, name: str, result: LintResult) -> None:
        """Lines under a capture's header, before its findings (the probe's HTTP facts)."""

    # -- the end ------------------------------------------------------------------------------------------

    def finish(self, summary: Summary) -> None:
        if not self.options.quiet:
            if self.deviations:
                self.print_deviations()
            if self.count > 1 and self.totals:
                self.print_totals()
            if self.deviations or (self.count > 1 and self.totals):
                self.blank()
        for error in summary.io_errors:
            self.say((f"error: {safe_text(error)}", "bold red"))
        self.print_summary(summary)

    def print_deviations(self) -> None:
        from rich.table import Table
        from rich.text import Text

        c = self.console
        c.print()
        groups = sorted(self.deviations.values(), key=lambda g: -g.count)
        total = sum(g.count for g in groups)
        records = sum(g.findings for g in groups)
        c.print(Text(f"known deviations of profile {self.options.profile}, as documented: {records} info "
                     f"finding(s), {total} occurrence(s)", style="bold"))
        grid = Table.grid(padding=(0, 1))
        counts = [f"  ×{g.count}" for g in groups]
        codes = [" ".join(g.codes) for g in groups]
        grid.add_column(no_wrap=True, justify="right", min_width=max(map(len, counts)))
        grid.add_column(no_wrap=True, min_width=max(map(len, codes)))
        grid.add_column(overflow="fold", ratio=1)
        for group in groups:
            # The events it covers: named when they are few, counted when they are many.
            events = [e.removeprefix("response.") for e in group.events]
            covers = ("on " + ", ".join(events)) if len(events) <= EVENTS_NAMED else f"on {len(events)} event types"
            where = []
            if self.count > 1:
                where.append(f"{group.captures} {self.noun}{'s' if group.captures != 1 else ''}")
            if events:
                where.append(covers)
            text = Text(_deviation_what(group.description))
            if where:
                text.append(" · " + " · ".join(where), style="dim")
            grid.add_row(Text(f"  ×{group.count}", style="cyan"), Text(" ".join(group.codes), style="cyan"), text)
        c.print(grid)

    def print_totals(self) -> None:
        from rich.table import Table
        from rich.text import Text

        self.console.print()
        table = Table(title="findings by rule", title_justify="left", box=None, pad_edge=False, padding=(0, 2, 0, 0))
        table.add_column("rule", no_wrap=True)
        table.add_column("severity", no_wrap=True)
        table.add_column("findings", justify="right", no_wrap=True)
        table.add_column(f"{self.noun}s", justify="right", no_wrap=True)
        table.add_column("name", overflow="fold")
        for total in sorted(self.totals.values(), key=lambda t: (-t.severity, -t.captures, t.code)):
            count = str(total.findings) + (f" (×{total.occurrences})" if total.occurrences > total.findings else "")
            table.add_row(Text(total.code, style=SEVERITY_STYLE[total.severity]), str(total.severity), count,
                          str(total.captures), total.name)
        self.console.print(table)

    def print_summary(self, summary: Summary) -> None:
        noun = "capture(s)" if self.noun == "capture" else f"{self.noun}(s)"
        line = (f"{summary.files} {noun}: {summary.failed_files} failed at --fail-on {self.options.fail_on}; "
                f"{summary.errors} error(s), {summary.warnings} warning(s), {summary.infos} info"
                + self.summary_extra())
        # rich reads the line as markup (as it always has): a "[" leaves it to rich.
        if "[" in line or not (self.plain_lines and self.plain.line((line, ""))):
            self.console.print(line)
        if summary.clients_broken:
            broken = ", ".join(f"{client} on {count} {self.noun}{'s' if count != 1 else ''}"
                               for client, count in summary.clients_broken.items())
            self.say((f"required client(s) broken (--clients-required): {broken}", "bold red"))
        notes = []
        if self.not_shown and not self.options.quiet:
            notes.append(f"{self.not_shown} finding(s) below --show {self.options.show} not shown")
        if summary.baselined:
            notes.append(f"{summary.baselined} finding(s) hidden by the baseline")
        if summary.baseline_note:
            notes.append(summary.baseline_note)
        if summary.oracles:
            runs = sum(summary.oracles.values())
            notes.append(f"real clients run {runs} time(s): " + ", ".join(
                f"{count} {_AGREEMENT_WORDS.get(what, what)}" for what, count in summary.oracles.items()))
        for note in notes:
            self.say((note, "dim"))
        self.flush()

    def summary_extra(self) -> str:
        return ""


# How the summary counts the real runs of --oracle (checker.oracles.agreement.Agreement's values).
_AGREEMENT_WORDS = {"agrees": "agree with the prediction", "differs": "differ from it",
                    "unconfirmed": "unconfirmed", "not run": "could not be run"}


def _deviation_what(description: str) -> str:
    """``llama.cpp (captures README): no event carries output_index`` → what deviates (the profile, named in
    the section's title, documents the source)."""
    source, sep, what = description.partition(": ")
    return what if sep else description


def findings_table(console: Console, findings: list[Finding], result: LintResult) -> None:
    """One row per finding: code, severity, position, then the message with a dim line of context (the event,
    the documented deviation, and the clients this finding breaks or degrades on this stream: the matrix's
    effects, checker.report.affected, never the rule's static list) under it. The message column wraps within
    itself."""
    from checker.report.affected import affected

    from rich.table import Table
    from rich.text import Text

    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)  # indent
    grid.add_column(no_wrap=True)
    grid.add_column(no_wrap=True)
    grid.add_column(no_wrap=True)
    grid.add_column(overflow="fold", ratio=1)
    for f in findings:
        style = SEVERITY_STYLE[f.severity]
        message = Text(f.message)
        if f.occurrences > 1:
            message.append(f"  (×{f.occurrences})", style="dim")
        context = [f"event {f.position.event_type}"] if f.position.event_type else []
        if f.known_deviation:
            context.append(f"known deviation: {f.known_deviation}")
        touched = affected(f, result)  # a documented deviation still breaks a client: said too
        if touched:
            context.append(touched.words())
        if context:
            message.append("\n" + " · ".join(context), style="dim")
        grid.add_row(" ", Text(f.code, style=style), Text(str(f.severity), style=style),
                     Text(where(f), style="dim"), message)
    console.print(grid)
