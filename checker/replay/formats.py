"""The reports of ``sse-check replay CASES.json``: text, JSON and the CI formats (JUnit, one testcase per case;
Markdown; GitHub annotations), registered by name in :data:`checker.report.CASE_REPORTERS` beside lint's.

The :class:`CaseResult` records are written the way the lint reporters write theirs (``checker.report.junit``,
``markdown``, ``github``). No SARIF: a replay case is a JSON document with no source line to point at and no
rule of the registry behind it.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from typing import IO, Any

from rich.table import Table
from rich.text import Text

from checker.console import make_console
from checker.replay.cases import CaseResult, Target
from checker.report.github import escape_data, escape_property
from checker.report.junit import xml_text
from checker.report.markdown import cell, code_cell
from checker.version import __version__


def case_name(result: CaseResult) -> str:
    case = result.case
    return f"{case.file}#{case.number}: {case.about or '(no about)'}"


def failure_text(result: CaseResult) -> str:
    lines = [result.error] if result.error else []
    lines += [d.text for d in result.differences]
    if result.unified:
        lines += ["", result.unified.rstrip("\n")]
    return "\n".join(lines)


def render_junit(results: list[CaseResult], target: Target, stream: IO[str]) -> None:
    failed = sum(r.status == "failed" for r in results)
    skipped = sum(r.status == "skipped" for r in results)
    counts = {"tests": str(len(results)), "failures": str(failed), "errors": "0", "skipped": str(skipped),
              "time": "0"}
    root = ET.Element("testsuites", {"name": "sse-check", **counts})
    suite = ET.SubElement(root, "testsuite", {"name": xml_text(f"sse-check replay ({target.label})"), **counts})
    props = ET.SubElement(suite, "properties")
    for key, value in (("sse-check.version", __version__), ("target", target.label), ("target_kind", target.kind)):
        ET.SubElement(props, "property", {"name": key, "value": xml_text(value)})
    for result in results:
        case = ET.SubElement(suite, "testcase", {
            "classname": xml_text(f"sse-check.replay.{result.case.dialect}"),
            "name": xml_text(case_name(result)),
            "file": xml_text(result.case.file),
            "time": "0",
        })
        if result.status == "failed":
            first = result.error or (result.differences[0].text if result.differences else "differs")
            failure = ET.SubElement(case, "failure", {"message": xml_text(first), "type": "replay-mismatch"})
            failure.text = xml_text(failure_text(result))
        elif result.status == "skipped":
            ET.SubElement(case, "skipped", {"message": xml_text(result.error or "skipped")})
    ET.indent(root)
    stream.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    stream.write(ET.tostring(root, encoding="unicode"))
    stream.write("\n")


def render_markdown(results: list[CaseResult], target: Target, stream: IO[str]) -> None:
    failed = [r for r in results if r.status == "failed"]
    verdict = "❌" if failed else "✅"
    lines = [
        f"### {verdict} sse-check replay: {len(failed)} of {len(results)} case(s) failed",
        "",
        f"Target: {code_cell(target.label)}",
        "",
        "| case file | # | case | dialect | verdict | first difference |",
        "|---|--:|---|---|---|---|",
    ]
    word = {"passed": "✅ ok", "failed": "❌ FAIL", "skipped": "⏭ skip"}
    for r in results:
        first = r.error or (r.differences[0].text if r.differences else "")
        lines.append(f"| {code_cell(r.case.file)} | {r.case.number} | {cell(r.case.about or '')} | "
                     f"{cell(r.case.dialect)} | {word[r.status]} | {cell(first) if r.status == 'failed' else ''} |")
    stream.write("\n".join(lines) + "\n")


def render_github(results: list[CaseResult], target: Target, stream: IO[str]) -> None:
    for r in results:
        if r.status != "failed":
            stream.write(f"{'ok' if r.passed else 'skip'} {case_name(r)}\n")
            continue
        props = f"file={escape_property(r.case.file)},title={escape_property(f'replay case {r.case.number}')}"
        stream.write(f"::error {props}::{escape_data(case_name(r) + chr(10) + failure_text(r))}\n")
    failed = sum(r.status == "failed" for r in results)
    stream.write(f"{len(results)} cases against {target.label}: {failed} failed\n")


class _CaseReporter:
    """A case reporter of the registry (checker.report.CaseReporter): the run's results, written at once."""

    def __init__(self, stream: IO[str], *, color: str = "auto") -> None:
        self.stream, self.color = stream, color


class TextCaseReporter(_CaseReporter):
    def write(self, results: list[CaseResult], target: Target, files: list[str]) -> None:
        render_text(results, target, self.stream, color=self.color)


class JsonCaseReporter(_CaseReporter):
    def write(self, results: list[CaseResult], target: Target, files: list[str]) -> None:
        json.dump(report_document(results, target, files), self.stream, indent=2, ensure_ascii=False)
        self.stream.write("\n")


class JunitCaseReporter(_CaseReporter):
    def write(self, results: list[CaseResult], target: Target, files: list[str]) -> None:
        render_junit(results, target, self.stream)


class MarkdownCaseReporter(_CaseReporter):
    def write(self, results: list[CaseResult], target: Target, files: list[str]) -> None:
        render_markdown(results, target, self.stream)


class GithubCaseReporter(_CaseReporter):
    def write(self, results: list[CaseResult], target: Target, files: list[str]) -> None:
        render_github(results, target, self.stream)


# --- text and JSON ---------------------------------------------------------------------------------------------


REPORT_VERSION = 1


def summary(results: list[CaseResult]) -> dict[str, int]:
    return {
        "cases": len(results),
        "passed": sum(r.status == "passed" for r in results),
        "failed": sum(r.status == "failed" for r in results),
        "skipped": sum(r.status == "skipped" for r in results),
    }


def case_dict(result: CaseResult) -> dict[str, Any]:
    case = result.case
    return {
        "file": case.file,
        "case": case.number,
        "about": case.about,
        "dialect": case.dialect,
        "status": result.status,
        "passed": None if result.status == "skipped" else result.passed,
        "error": result.error,
        "diff": [d.as_dict() for d in result.differences],
        "unified_diff": result.unified or None,
        "actual": result.actual if result.status == "failed" else None,
    }


def report_document(results: list[CaseResult], target: Target, files: list[str]) -> dict[str, Any]:
    """The JSON report: one versioned document per run."""
    return {
        "version": REPORT_VERSION,
        "tool": {"name": "sse-check", "version": __version__},  # the same shape in every command's report
        "command": "replay",
        "target": {"kind": target.kind, "label": target.label},
        "files": files,
        "cases": [case_dict(r) for r in results],
        "summary": summary(results),
    }


DETAIL_INDENT = " " * 10  # under the "about" column
VERDICT = {"passed": ("ok  ", "bold green"), "failed": ("FAIL", "bold red"), "skipped": ("skip", "dim")}


def render_text(results: list[CaseResult], target: Target, stream: IO[str], *, color: str = "auto") -> None:
    console = make_console(stream, color)
    console.print(Text.assemble("replay against ", (target.label, "bold")))
    current_file = None
    for result in results:
        case = result.case
        if case.file != current_file:
            current_file = case.file
            console.print(Text(case.file, style="bold"))
        word, style = VERDICT[result.status]
        about = Text(case.about or "(no about)")
        if result.status == "skipped":
            about.append(f"  ({result.error}; the target speaks another dialect)", style="dim")
        row = Table.grid(padding=(0, 1))
        row.add_column(width=6)  # "  ok  " / "  FAIL"
        row.add_column(width=2, justify="right")
        row.add_column()
        row.add_row(Text.assemble("  ", (word, style)), Text(str(case.number), style="dim"), about)
        console.print(row)
        if result.status != "failed":
            continue
        if result.error:
            console.print(Text.assemble(DETAIL_INDENT, (result.error, "red")))
        for difference in result.differences:
            console.print(Text.assemble(DETAIL_INDENT, (difference.text, "yellow")))
        if result.unified:
            for diff_line in result.unified.splitlines():
                console.print(Text(DETAIL_INDENT + diff_line, style=_diff_style(diff_line)))
    counts = summary(results)
    tail = Text(f"\n{counts['cases']} cases: ")
    tail.append(f"{counts['passed']} passed", style="green" if counts["passed"] else "")
    tail.append(", ")
    tail.append(f"{counts['failed']} failed", style="bold red" if counts["failed"] else "")
    if counts["skipped"]:
        tail.append(f", {counts['skipped']} skipped", style="dim")
    console.print(tail)


def _diff_style(line: str) -> str:
    if line.startswith(("---", "+++")):
        return "bold"
    if line.startswith("@@"):
        return "cyan"
    if line.startswith("-"):
        return "red"
    if line.startswith("+"):
        return "green"
    return "dim"

