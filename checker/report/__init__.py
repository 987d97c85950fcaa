"""Reporters, chosen by name (flake8's formatter plugins, check-jsonschema's reporters).

A reporter has a small lifecycle: ``start()``, ``file(name, result)`` once per
capture or scenario, ``finish(summary)``. It writes to the stream it was
given and never decides the exit code. rich is used only by the text
reporter.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from collections.abc import Callable, Iterator
from typing import IO, TYPE_CHECKING, Any, Protocol

from checker.engine import LintResult
from checker.findings import Severity

if TYPE_CHECKING:  # only a run with --oracle makes comparisons
    from checker.oracles.agreement import Comparison

REPORT_VERSION = 1

# name -> "module:Class"; later formats (junit, sarif, github, markdown, html) register here.
REPORTERS: dict[str, str] = {
    "text": "checker.report.text:TextReporter",
    "json": "checker.report.json_report:JsonReporter",
    "jsonl": "checker.report.json_report:JsonlReporter",
    "html": "checker.report.html:HtmlReporter",
    "junit": "checker.report.junit:JunitReporter",
    "sarif": "checker.report.sarif:SarifReporter",
    "github": "checker.report.github:GithubReporter",
    "markdown": "checker.report.markdown:MarkdownReporter",
}
# Third-party reporters register a "module:Class" under this entry point group.
ENTRY_POINT_GROUP = "sse_check.reporters"
# The same formats for the case runs of `sse-check replay` (checker.replay.cases.CaseResult records):
# name -> "module:Class" of a CaseReporter. A plugin adds one under CASE_ENTRY_POINT_GROUP.
CASE_REPORTERS: dict[str, str] = {
    "text": "checker.replay.formats:TextCaseReporter",
    "json": "checker.replay.formats:JsonCaseReporter",
    "junit": "checker.replay.formats:JunitCaseReporter",
    "markdown": "checker.replay.formats:MarkdownCaseReporter",
    "github": "checker.replay.formats:GithubCaseReporter",
}
CASE_ENTRY_POINT_GROUP = "sse_check.case_reporters"


@dataclass(slots=True, kw_only=True)
class ReportOptions:
    """What every reporter is told of the run: the command, the profile, --fail-on, display options."""

    command: str
    profile: str
    fail_on: Severity
    color: str = "auto"  # auto | always | never
    timeline: bool = False
    # Text report: only failing captures and the summary (--quiet); the lowest severity displayed (--show).
    # Neither changes what is counted or the exit code.
    quiet: bool = False
    show: Severity = Severity.INFO
    # The client-compatibility matrix per capture (checker.compat), in text and JSON.
    clients: bool = False
    # Real clients' runs per capture name: {name: {client: checker.oracles.agreement.Comparison}} (--oracle).
    oracles: dict[str, dict[str, Comparison]] = field(default_factory=dict)
    # --clients-required: the clients whose breakage (the matrix's verdict) fails a capture like a finding at
    # --fail-on does; ("all",): every client of each stream's dialect. Empty: breakage alone fails nothing.
    clients_required: tuple[str, ...] = ()
    # The probe's short text report (the default; --verbose turns it off): the answer (clients, endpoints), then
    # the failures, then one line on how to see the rest.
    compact: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Summary:
    """The run's totals: captures, findings by severity, failed and unreadable captures, baselined findings."""

    files: int = 0
    errors: int = 0
    warnings: int = 0
    infos: int = 0
    failed_files: int = 0
    io_errors: list[str] = field(default_factory=list)
    # Findings hidden by --baseline (known debt): not counted above, not failing the run.
    baselined: int = 0
    # "N of M baseline entries matched", so that a baseline matching nothing cannot pass unnoticed.
    baseline_note: str = ""
    # --oracle: the real clients' runs by agreement with the prediction ("agrees", "differs", ...).
    oracles: dict[str, int] = field(default_factory=dict)
    # --clients-required: each required client the matrix says breaks, with the number of captures it breaks on.
    clients_broken: dict[str, int] = field(default_factory=dict)

    def add(self, result: LintResult, fail_on: Severity, required: tuple[str, ...] = ()) -> bool:
        """Count one result; True when it fails the run: a finding at ``fail_on`` or above, or a client of
        ``required`` (--clients-required) that the stream breaks."""
        self.files += 1
        self.errors += result.count(Severity.ERROR)
        self.warnings += result.count(Severity.WARNING)
        self.infos += result.count(Severity.INFO)
        failed = any(f.severity >= fail_on for f in result.findings)
        for client in required_broken(result, required):
            self.clients_broken[client] = self.clients_broken.get(client, 0) + 1
            failed = True
        self.failed_files += failed
        return failed


def required_broken(result: LintResult, required: tuple[str, ...]) -> list[str]:
    """The clients of ``required`` (``("all",)``: every client of the stream's dialect) that this stream breaks,
    by the client matrix; those of another dialect are not asked (openai-python on a Messages stream)."""
    if not required:
        return []
    from checker.compat import Verdict, matrix  # only with --clients-required

    cells = matrix(result).cells
    wanted = set(required)
    return [cell.client for cell in cells
            if ("all" in wanted or cell.client in wanted) and cell.verdict is Verdict.BREAKS]


class Reporter(Protocol):
    def __init__(self, stream: IO[str], options: ReportOptions) -> None: ...
    def start(self) -> None: ...
    def file(self, name: str, result: LintResult) -> None: ...
    def finish(self, summary: Summary) -> None: ...


class CaseReporter(Protocol):
    """A report of a replay case run: ``write`` gets every case's result at once (a run is small)."""

    def __init__(self, stream: IO[str], *, color: str = "auto") -> None: ...
    def write(self, results: list[Any], target: Any, files: list[str]) -> None: ...


def _entry_points() -> dict[str, Any]:
    """Reporters installed by other packages (entry point group ``sse_check.reporters``)."""
    return _installed(ENTRY_POINT_GROUP)


def _case_entry_points() -> dict[str, Any]:
    """Replay case reporters installed by other packages (entry point group ``sse_check.case_reporters``)."""
    return _installed(CASE_ENTRY_POINT_GROUP)


def _installed(group: str) -> dict[str, Any]:
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in entry_points(group=group)}


def reporter_names(*, cases: bool = False) -> list[str]:
    """Every format name: the built-in ones and those of installed plugins (``cases``: of replay case runs)."""
    if cases:  # the built-in ones in the registry's order (as the docs list them), then the plugins
        return [*CASE_REPORTERS, *sorted(set(_case_entry_points()) - set(CASE_REPORTERS))]
    return sorted(set(REPORTERS) | set(_entry_points()))


class FormatNames:
    """``--format``'s choices for argparse: a built-in name is accepted without reading the installed packages'
    metadata (which costs more than the rest of a small lint's start-up); plugins are looked up on a miss,
    and listed when argparse shows the choices. ``cases``: the formats of replay case runs."""

    def __init__(self, *, cases: bool = False) -> None:
        self.cases = cases

    def __contains__(self, name: object) -> bool:
        if self.cases:
            return name in CASE_REPORTERS or name in _case_entry_points()
        return name in REPORTERS or name in _entry_points()

    def __iter__(self) -> Iterator[str]:
        return iter(reporter_names(cases=self.cases))


def get_reporter(name: str) -> type[Reporter]:
    return _load(name, REPORTERS, _entry_points, reporter_names)  # type: ignore[no-any-return]


def get_case_reporter(name: str) -> type[CaseReporter]:
    """The reporter of format ``name`` for a replay case run (``sse-check replay CASES.json``)."""
    return _load(name, CASE_REPORTERS, _case_entry_points,  # type: ignore[no-any-return]
                 lambda: reporter_names(cases=True))


def _load(name: str, table: dict[str, str], plugins: Callable[[], dict[str, Any]],
          names: Callable[[], list[str]]) -> Any:
    target = table.get(name)
    if target is None:
        # Built-ins first; a plugin's entry point only adds names, never shadows one.
        plugin = plugins().get(name)
        if plugin is None:
            raise ValueError(f"unknown format {name!r} (choose from {', '.join(names())})")
        return plugin.load()
    module_name, _, attr = target.partition(":")
    return getattr(importlib.import_module(module_name), attr)
