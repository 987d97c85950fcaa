"""The JSON report: one versioned document per run (schema: docs/report-schema.json)."""

from __future__ import annotations

import json
from typing import IO, Any

import orjson

from checker import dialects
from checker.engine import LintResult
from checker.findings import Severity
from checker.report import REPORT_VERSION, ReportOptions, Summary
from checker.version import __version__


def result_dict(name: str, result: LintResult, fail_on: Severity) -> dict[str, Any]:
    return {
        "path": name,
        "profile": result.profile,
        "dialect": result.dialect or dialects.default().name,
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


def file_entry(name: str, result: LintResult, options: ReportOptions) -> dict[str, Any]:
    """One capture's entry of ``files[]`` (and one line of the JSONL report): the result, plus the client
    matrix with ``--clients`` and the real clients' outcomes with ``--oracle``."""
    entry = result_dict(name, result, options.fail_on)
    if options.clients:
        from checker.compat import matrix

        entry["clients"] = matrix(result).as_dict()
    comparisons = options.oracles.get(name)
    if comparisons:
        entry["oracles"] = {client: {**c.outcome.as_dict(), "prediction": c.as_dict()}
                            for client, c in comparisons.items()}
    return entry


def summary_dict(summary: Summary) -> dict[str, Any]:
    return {
        "files": summary.files,
        "failed_files": summary.failed_files,
        "error": summary.errors,
        "warning": summary.warnings,
        "info": summary.infos,
        "io_errors": summary.io_errors,
        "baselined": summary.baselined,
        **({"oracles": dict(summary.oracles)} if summary.oracles else {}),
    }


_SCALARS = frozenset({str, int, bool, type(None)})


def _orjson_writes_the_same(value: Any) -> bool:
    """Whether orjson's indented output of ``value`` is the text ``json.dumps(value, indent=2,
    ensure_ascii=False)`` writes: plain JSON types only (json refuses what orjson would convert: dataclasses,
    dates), string keys, and floats that both spell alike (orjson writes 1e-07 as 1e-7, NaN as null)."""
    stack = [value]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is dict:
            for key, child in node.items():
                if type(key) is not str:
                    return False
                stack.append(child)
        elif kind is list or kind is tuple:
            stack.extend(node)
        elif kind is float:
            if repr(node) != orjson.dumps(node).decode():
                return False
        elif kind not in _SCALARS:
            return False
    return True


def indented(value: Any) -> str:
    """``json.dumps(value, indent=2, ensure_ascii=False)``: the report's text, by orjson when it writes the
    same (the standard library's indented encoder is pure Python, a tenth of a lint's time on an archive of
    small captures); what orjson refuses (an integer beyond 64 bits, a lone surrogate) goes the standard way."""
    if _orjson_writes_the_same(value):
        try:
            return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
        except (TypeError, orjson.JSONEncodeError):
            pass
    return json.dumps(value, indent=2, ensure_ascii=False)


def run_header(options: ReportOptions) -> dict[str, Any]:
    return {
        "version": REPORT_VERSION,
        "tool": {"name": "sse-check", "version": __version__},
        "command": options.command,
        "profile": options.profile,
        "fail_on": str(options.fail_on),
    }


# Per-capture facts the text report reads from ReportOptions.extra: not part of the JSON document.
_INTERNAL_EXTRA = frozenset({"exchanges"})


class JsonReporter:
    """One JSON document, written as the run goes: the header at the start, each ``files[]`` entry as its
    capture finishes, the summary at the end. Memory stays flat in the number of captures."""

    def __init__(self, stream: IO[str], options: ReportOptions) -> None:
        self.stream = stream
        self.options = options
        self.count = 0
        self.opened = False

    def start(self) -> None:
        pass  # the header is written with the first entry: a run that fails before any (probe of an
        # unreachable server) leaves stdout empty, as its one-line error expects

    def _open(self) -> None:
        if not self.opened:
            head = json.dumps(run_header(self.options), indent=2, ensure_ascii=False)
            self.stream.write(head[:-2] + ',\n  "files": [')  # the header object, left open
            self.opened = True

    def entry(self, name: str, result: LintResult) -> dict[str, Any]:
        """One ``files[]`` entry; probe and proxy add their facts of the exchange here."""
        return file_entry(name, result, self.options)

    def file(self, name: str, result: LintResult) -> None:
        entry = indented(self.entry(name, result))
        self._open()
        self.stream.write(("," if self.count else "") + "\n    " + entry.replace("\n", "\n    "))
        self.count += 1

    def finish(self, summary: Summary) -> None:
        tail = {"summary": summary_dict(summary),
                **{k: v for k, v in self.options.extra.items() if k not in _INTERNAL_EXTRA}}
        body = json.dumps(tail, indent=2, ensure_ascii=False)
        self._open()
        self.stream.write(("\n  ]," if self.count else "],") + body[1:] + "\n")


class JsonlReporter:
    """JSON Lines: one record per capture, written (and flushed) as it finishes, the same fields as a JSON
    report's ``files[]`` entry plus ``"record": "file"``; then one ``"record": "summary"`` line with the
    run's header and summary. A consumer can read an archive's report as it grows."""

    def __init__(self, stream: IO[str], options: ReportOptions) -> None:
        self.stream = stream
        self.options = options

    def start(self) -> None:
        pass

    def file(self, name: str, result: LintResult) -> None:
        record = {"record": "file", **file_entry(name, result, self.options)}
        self.stream.write(json.dumps(record, ensure_ascii=False) + "\n")
        self.stream.flush()

    def finish(self, summary: Summary) -> None:
        record = {"record": "summary", **run_header(self.options), "summary": summary_dict(summary),
                  **{k: v for k, v in self.options.extra.items() if k not in _INTERNAL_EXTRA}}
        self.stream.write(json.dumps(record, ensure_ascii=False) + "\n")
        self.stream.flush()
