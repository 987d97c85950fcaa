"""GitHub Actions workflow commands: findings become annotations on the run and the pull request.

``::error file=F,line=L,title=T::MESSAGE`` per finding that matters: every
error and warning, and info findings when ``--fail-on info`` makes them fail
the gate. Other info findings (known deviations of a profile, notes) are
printed as plain log lines, because GitHub shows only a handful of
annotations per step and they would crowd out the real ones. The escaping is
the one the Actions runner undoes (``%``, CR, LF in the message; also ``:``
and ``,`` in properties).
"""

from __future__ import annotations

from pathlib import Path
from typing import IO

from checker.engine import LintResult
from checker.findings import Finding, Severity
from checker.report import ReportOptions, Summary
from checker.report.affected import Affected, affected
from checker.report.junit import finding_line

COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(name: str | None, finding: Finding, *, line: int | None = None, touched: Affected | None = None) -> str:
    """One workflow command; ``name`` is the file it points at (None: an annotation on the run, no file);
    ``touched``: the clients the finding breaks or degrades on its stream (checker.report.affected)."""
    pos = finding.position
    title = f"{finding.code} {finding.name}"
    message = finding.message
    if pos.event_type:
        message += f" (event {pos.event_type})"
    if finding.occurrences > 1:
        message += f" ×{finding.occurrences}"
    if finding.known_deviation:
        message += f"\nknown deviation: {finding.known_deviation}"
    if touched:
        message += f"\n{touched.words()}"
    props = f"title={escape_property(title)}"
    if name is not None:
        props = f"file={escape_property(name)},line={line or max(1, pos.line)},{props}"
    return f"::{COMMAND[finding.severity]} {props}::{escape_data(message)}"


class GithubReporter:
    def __init__(self, stream: IO[str], options: ReportOptions) -> None:
        self.stream = stream
        self.options = options

    def start(self) -> None:
        pass

    def file(self, name: str, result: LintResult) -> None:
        write = self.stream.write
        failed = any(f.severity >= self.options.fail_on for f in result.findings)
        write(f"{'FAIL' if failed else 'ok'} {name} ({result.events} events, profile {result.profile})\n")
        quiet: list[Finding] = []
        target, line = self.file_of(name, result)
        for finding in result.findings:
            if finding.severity >= Severity.WARNING or finding.severity >= self.options.fail_on:
                write(annotation(target, finding, line=line, touched=affected(finding, result)) + "\n")
            else:
                quiet.append(finding)
        if quiet:
            # Folded in the log: known deviations and notes are there when someone looks.
            write(f"::group::{len(quiet)} info finding(s) in {escape_data(name)}\n")
            for finding in quiet:
                write(f"{finding_line(finding, affected(finding, result))}\n")
            write("::endgroup::\n")

    def file_of(self, name: str, result: LintResult) -> tuple[str | None, int | None]:
        """The file an annotation points at: a capture is its own file. A probe scenario is the capture
        ``--save`` wrote, else the scenario file it came from, else none (an annotation on the run: GitHub
        drops one whose file is not in the repository), with the line to point at (None: the finding's)."""
        info = getattr(result, "http", None)
        if info is None:
            return name, None
        saved, source = info.get("saved"), info.get("source")
        if saved and Path(saved).is_file():
            return str(saved), None
        if source and Path(source).is_file():
            return str(source), 1  # the finding's line is in the body, not in the request's file
        return None, None

    def finish(self, summary: Summary) -> None:
        for message in summary.io_errors:
            self.stream.write(f"::error title=sse-check::{escape_data(message)}\n")
        line = (f"{summary.files} capture(s): {summary.failed_files} failed at --fail-on {self.options.fail_on}; "
                f"{summary.errors} error(s), {summary.warnings} warning(s), {summary.infos} info")
        if summary.baselined:
            line += f"; {summary.baselined} finding(s) hidden by the baseline"
        self.stream.write(line + "\n")
