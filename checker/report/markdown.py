"""Markdown for a pull-request comment or ``$GITHUB_STEP_SUMMARY``: a verdict, a table, the findings.

GitHub-flavoured tables: one row per capture or scenario, then the findings
(at most ``MAX_FINDING_ROWS``, so the comment stays under GitHub's 65,536
characters) in a collapsed ``<details>`` block. Everything from a capture is
escaped for a table cell: ``|``, backticks, ``<``, newlines.
"""

from __future__ import annotations

from typing import IO

from checker.engine import LintResult
from checker.findings import Finding, Severity
from checker.report import ReportOptions, Summary

MAX_FINDING_ROWS = 200
MAX_CELL = 300


def cell(text: str) -> str:
    """Text safe inside a table cell: no row or column breaks, no HTML, no code spans that swallow bars."""
    text = text if len(text) <= MAX_CELL else text[: MAX_CELL - 1] + "…"
    return (text.replace("\\", "\\\\").replace("|", "\\|").replace("`", "\\`").replace("<", "&lt;")
            .replace("\r", " ").replace("\n", " "))


def code_cell(text: str) -> str:
    """A file or scenario name as code; names with backticks fall back to escaped text."""
    if "`" in text or "\n" in text or "\r" in text:
        return cell(text)
    # Inside a code span only the table's own escape of `|` applies (GFM).
    return "`" + text.replace("|", "\\|") + "`"


class MarkdownReporter:
    def __init__(self, stream: IO[str], options: ReportOptions) -> None:
        self.stream = stream
        self.options = options
        self.rows: list[tuple[str, LintResult, bool]] = []
        # A probe reports scenarios, lint captures.
        self.noun = "scenario" if options.command == "probe" else "capture"

    def start(self) -> None:
        pass

    def file(self, name: str, result: LintResult) -> None:
        failed = any(f.severity >= self.options.fail_on for f in result.findings)
        self.rows.append((name, result, failed))

    def finish(self, summary: Summary) -> None:
        o = self.options
        verdict = "❌" if summary.failed_files or summary.io_errors else "✅"
        lines = [
            f"### {verdict} sse-check {o.command}: {summary.failed_files} of {summary.files} failed",
            "",
            f"Profile `{cell(o.profile)}`, failing at `{o.fail_on}`: "
            f"{summary.errors} error(s), {summary.warnings} warning(s), {summary.infos} info."
            + (f" {summary.baselined} finding(s) hidden by the baseline." if summary.baselined else ""),
            "",
            f"| {self.noun} | verdict | error | warning | info | rules |",
            "|---|---|--:|--:|--:|---|",
        ]
        for name, result, failed in self.rows:
            lines.append(
                f"| {code_cell(name)} | {'❌ FAIL' if failed else '✅ ok'} | {result.count(Severity.ERROR)} | "
                f"{result.count(Severity.WARNING)} | {result.count(Severity.INFO)} | "
                f"{' '.join(result.codes())} |"
            )
        for message in summary.io_errors:
            lines.append(f"| {cell(message)} | ⚠️ error | | | | |")
        findings = [(name, f) for name, result, _ in self.rows for f in result.findings]
        failing = [(name, f) for name, f in findings if f.severity >= o.fail_on]
        others = [(name, f) for name, f in findings if f.severity < o.fail_on]
        budget = MAX_FINDING_ROWS
        if failing:
            lines += ["", f"**{len(failing)} finding(s) at or above `{o.fail_on}`**", ""]
            lines += self._table(failing, budget)
            budget = max(20, budget - len(failing))
        if others:
            # Below the gate (known deviations, notes): there for the curious, folded away.
            lines += ["", f"<details><summary>{len(others)} finding(s) below <code>{o.fail_on}</code></summary>", ""]
            lines += self._table(others, budget)
            lines += ["", "</details>"]
        self.stream.write("\n".join(lines) + "\n")

    def _table(self, findings: list[tuple[str, Finding]], limit: int) -> list[str]:
        rows = [f"| {self.noun} | line | code | severity | message |", "|---|--:|---|---|---|"]
        rows += [self._finding_row(name, f) for name, f in findings[:limit]]
        if len(findings) > limit:
            rows.append(f"| … | | | | {len(findings) - limit} more (see the full report) |")
        return rows

    def _finding_row(self, name: str, finding: Finding) -> str:
        message = finding.message
        if finding.occurrences > 1:
            message += f" (×{finding.occurrences})"
        if finding.known_deviation:
            message += f" — known deviation: {finding.known_deviation}"
        return (f"| {code_cell(name)} | {finding.position.line} | {finding.code} | "
                f"{finding.severity} | {cell(message)} |")
