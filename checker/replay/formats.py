"""CI formats for ``sse-check replay``: JUnit (one testcase per case), Markdown, GitHub annotations.

An adapter beside the command's own text and JSON reports: the same
:class:`CaseResult` records, written the way the lint reporters write theirs
(``checker.report.junit``, ``markdown``, ``github``). No SARIF: a replay case
is a JSON document with no source line to point at and no rule of the
registry behind it.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable
from typing import IO

from checker import __version__
from checker.replay.cases import CaseResult, Target
from checker.report.github import escape_data, escape_property
from checker.report.junit import xml_text
from checker.report.markdown import cell, code_cell


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


RENDERERS: dict[str, Callable[[list[CaseResult], Target, IO[str]], None]] = {
    "junit": render_junit,
    "markdown": render_markdown,
    "github": render_github,
}
