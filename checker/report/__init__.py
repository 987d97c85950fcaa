"""Reporters, chosen by name (flake8's formatter plugins, check-jsonschema's reporters).

A reporter has a small lifecycle: ``start()``, ``file(name, result)`` once per
capture or scenario, ``finish(summary)``. It writes to the stream it was
given and never decides the exit code. rich is used only by the text
reporter.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import IO, Any, Protocol

from checker.engine import LintResult
from checker.findings import Severity

REPORT_VERSION = 1

# name -> "module:Class"; later formats (junit, sarif, github, markdown, html) register here.
REPORTERS: dict[str, str] = {
    "text": "checker.report.text:TextReporter",
    "json": "checker.report.json_report:JsonReporter",
}


@dataclass(slots=True, kw_only=True)
class ReportOptions:
    command: str
    profile: str
    fail_on: Severity
    color: str = "auto"  # auto | always | never
    timeline: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Summary:
    files: int = 0
    errors: int = 0
    warnings: int = 0
    infos: int = 0
    failed_files: int = 0
    io_errors: list[str] = field(default_factory=list)

    def add(self, result: LintResult, fail_on: Severity) -> bool:
        """Count one result; True when it fails the run."""
        self.files += 1
        self.errors += result.count(Severity.ERROR)
        self.warnings += result.count(Severity.WARNING)
        self.infos += result.count(Severity.INFO)
        failed = any(f.severity >= fail_on for f in result.findings)
        self.failed_files += failed
        return failed


class Reporter(Protocol):
    def __init__(self, stream: IO[str], options: ReportOptions) -> None: ...
    def start(self) -> None: ...
    def file(self, name: str, result: LintResult) -> None: ...
    def finish(self, summary: Summary) -> None: ...


def get_reporter(name: str) -> type[Reporter]:
    try:
        target = REPORTERS[name]
    except KeyError:
        raise ValueError(f"unknown format {name!r} (choose from {', '.join(REPORTERS)})") from None
    module_name, _, attr = target.partition(":")
    return getattr(importlib.import_module(module_name), attr)
