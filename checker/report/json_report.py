"""The JSON report: one versioned document per run (schema: docs/report-schema.json)."""

from __future__ import annotations

import json
from typing import IO, Any

from checker import __version__
from checker.engine import LintResult
from checker.findings import Severity
from checker.report import REPORT_VERSION, ReportOptions, Summary


def result_dict(name: str, result: LintResult, fail_on: Severity) -> dict[str, Any]:
    return {
        "path": name,
        "profile": result.profile,
        "events": result.events,
        "bytes": result.bytes,
        "terminal": result.terminal,
        "response_id": result.response_id,
        "passed": not any(f.severity >= fail_on for f in result.findings),
        "counts": {
            "error": result.count(Severity.ERROR),
            "warning": result.count(Severity.WARNING),
            "info": result.count(Severity.INFO),
        },
        "findings": [f.as_dict() for f in result.findings],
    }


class JsonReporter:
    def __init__(self, stream: IO[str], options: ReportOptions) -> None:
        self.stream = stream
        self.options = options
        self.files: list[dict[str, Any]] = []

    def start(self) -> None:
        pass

    def file(self, name: str, result: LintResult) -> None:
        entry = result_dict(name, result, self.options.fail_on)
        if self.options.clients:
            from checker.compat import matrix

            entry["clients"] = matrix(result).as_dict()
        outcomes = self.options.oracles.get(name)
        if outcomes:
            entry["oracles"] = {client: outcome.as_dict() for client, outcome in outcomes.items()}
        self.files.append(entry)

    def finish(self, summary: Summary) -> None:
        document = {
            "version": REPORT_VERSION,
            "tool": {"name": "sse-check", "version": __version__},
            "command": self.options.command,
            "profile": self.options.profile,
            "fail_on": str(self.options.fail_on),
            "files": self.files,
            "summary": {
                "files": summary.files,
                "failed_files": summary.failed_files,
                "error": summary.errors,
                "warning": summary.warnings,
                "info": summary.infos,
                "io_errors": summary.io_errors,
                "baselined": summary.baselined,
            },
            **self.options.extra,
        }
        json.dump(document, self.stream, indent=2, ensure_ascii=False)
        self.stream.write("\n")
