"""The default, human report, drawn with rich."""

from __future__ import annotations

from typing import IO

from rich.table import Table
from rich.text import Text

from checker.console import make_console
from checker.engine import LintResult
from checker.findings import Finding, Severity
from checker.report import ReportOptions, Summary
from checker.report.timeline import render_timeline

SEVERITY_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}


def where(finding: Finding) -> str:
    return finding.position.label()


class TextReporter:
    def __init__(self, stream: IO[str], options: ReportOptions) -> None:
        self.console = make_console(stream, options.color)
        self.options = options
        self.rows: list[tuple[str, LintResult]] = []

    def start(self) -> None:
        pass

    def file(self, name: str, result: LintResult) -> None:
        self.rows.append((name, result))
        c = self.console
        failed = any(f.severity >= self.options.fail_on for f in result.findings)
        verdict = Text("FAIL", style="bold red") if failed else Text("ok", style="bold green")
        header = Text.assemble(
            verdict, " ", (name, "bold"),
            f"  ({result.events} events, {result.bytes} bytes, profile {result.profile}, "
            f"ended by {result.terminal or 'no terminal event'})",
        )
        c.print(header)
        for f in result.findings:
            line = Text("  ")
            line.append(f"{f.code:<7}", style=SEVERITY_STYLE[f.severity])
            line.append(f"{str(f.severity):<8}", style=SEVERITY_STYLE[f.severity])
            line.append(f"{where(f):<16}", style="dim")
            line.append(f.message)
            if f.occurrences > 1:
                line.append(f"  (×{f.occurrences})", style="dim")
            c.print(line)
            # One dim line of context: the event, and who breaks (or the documented deviation).
            context = [f"event {f.position.event_type}"] if f.position.event_type else []
            if f.known_deviation:
                context.append(f"known deviation: {f.known_deviation}")
            elif f.clients and f.severity > Severity.INFO:
                context.append(f"breaks: {', '.join(f.clients)}")
            if context:
                c.print(Text(f"{'':25}{' · '.join(context)}", style="dim"))
        if self.options.timeline and result.trace is not None:
            render_timeline(c, result)
        if self.options.clients:
            from checker.compat import matrix
            from checker.report.clients_table import render_matrix

            render_matrix(c, matrix(result), result, self.options.oracles.get(name))
        c.print()

    def finish(self, summary: Summary) -> None:
        c = self.console
        if len(self.rows) > 1:
            table = Table(title="summary", show_lines=False, box=None, pad_edge=False)
            table.add_column("capture")
            table.add_column("verdict")
            table.add_column("error", justify="right")
            table.add_column("warning", justify="right")
            table.add_column("info", justify="right")
            table.add_column("rules")
            for name, result in self.rows:
                failed = any(f.severity >= self.options.fail_on for f in result.findings)
                table.add_row(
                    name,
                    Text("FAIL", style="bold red") if failed else Text("ok", style="green"),
                    str(result.count(Severity.ERROR)),
                    str(result.count(Severity.WARNING)),
                    str(result.count(Severity.INFO)),
                    " ".join(result.codes()),
                )
            c.print(table)
        for error in summary.io_errors:
            c.print(Text(f"error: {error}", style="bold red"))
        c.print(
            f"{summary.files} capture(s): {summary.failed_files} failed at --fail-on {self.options.fail_on}; "
            f"{summary.errors} error(s), {summary.warnings} warning(s), {summary.infos} info"
        )
        if summary.baselined:
            c.print(Text(f"{summary.baselined} finding(s) hidden by the baseline", style="dim"))
