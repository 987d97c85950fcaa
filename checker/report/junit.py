"""JUnit XML: one ``<testcase>`` per capture or probe scenario, the way CI systems read test results.

The shape is the common denominator of Jenkins, GitLab, Azure Pipelines and
the GitHub test-report actions: ``testsuites > testsuite > testcase``; a
failing capture has one ``<failure message=… type=…>`` whose text lists its
findings like the text report; an unreadable capture is an ``<error>``;
findings below ``--fail-on`` go to ``<system-out>`` so they are visible but do
not fail the case.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import IO

from checker.version import __version__
from checker.engine import LintResult
from checker.findings import Finding
from checker.report import ReportOptions, Summary
from checker.report.affected import Affected, affected
from checker.report.spool import Spool

# XML 1.0 allows only these characters; a capture can put anything in a message
# (a NUL, an escape sequence), and one such byte would make the whole report unreadable.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def finding_line(finding: Finding, touched: Affected | None = None) -> str:
    """One finding as the text report prints it (code, severity, line:byte #event, message); ``touched``: the
    clients it breaks or degrades on its stream (checker.report.affected)."""
    pos = finding.position
    line = f"{finding.code} {finding.severity} {pos.label()} {finding.message}"
    if finding.occurrences > 1:
        line += f" (x{finding.occurrences})"
    if pos.event_type:
        line += f" [event {pos.event_type}]"
    if finding.known_deviation:
        line += f" [known deviation: {finding.known_deviation}]"
    if touched:
        line += f" [{touched.words()}]"
    return line


class JunitReporter:
    def __init__(self, stream: IO[str], options: ReportOptions) -> None:
        self.stream = stream
        self.options = options
        # Each <testcase> is serialised as its capture finishes (the counts on <testsuites> come first, so the
        # cases wait in a spool that spills to disk: memory stays flat over an archive).
        self.cases = Spool()
        self.failures = 0

    def start(self) -> None:
        pass

    def file(self, name: str, result: LintResult) -> None:
        fail_on = self.options.fail_on
        case = ET.Element("testcase", {
            "classname": f"sse-check.{self.options.command}",
            "name": xml_text(name),
            "file": xml_text(name),
            "time": "0",
        })
        failing = [f for f in result.findings if f.severity >= fail_on]
        below = [f for f in result.findings if f.severity < fail_on]
        if failing:
            self.failures += 1
            codes = sorted({f.code for f in failing})
            failure = ET.SubElement(case, "failure", {
                "message": xml_text(f"{len(failing)} finding(s) at or above {fail_on}: {', '.join(codes)}"),
                "type": codes[0],
            })
            failure.text = xml_text("\n".join(finding_line(f, affected(f, result)) for f in failing))
        facts = (f"{result.events} events, {result.bytes} bytes, profile {result.profile}, "
                 f"ended by {result.terminal or 'no terminal event'}")
        out = ET.SubElement(case, "system-out")
        out.text = xml_text("\n".join([facts, *(finding_line(f, affected(f, result)) for f in below)]))
        self._add(case)

    def _add(self, case: ET.Element) -> None:
        ET.indent(case, level=2)
        self.cases.add("    " + ET.tostring(case, encoding="unicode").rstrip() + "\n")

    def finish(self, summary: Summary) -> None:
        for message in summary.io_errors:
            name, _, reason = message.partition(": ")
            case = ET.Element("testcase", {
                "classname": f"sse-check.{self.options.command}", "name": xml_text(name), "time": "0",
            })
            ET.SubElement(case, "error", {"message": xml_text(reason or message), "type": "io-error"}).text = (
                xml_text(message)
            )
            self._add(case)
        counts = {
            "tests": str(self.cases.count),
            "failures": str(self.failures),
            "errors": str(len(summary.io_errors)),
            "skipped": "0",
            "time": "0",
        }
        root = ET.Element("testsuites", {"name": "sse-check", **counts})
        suite = ET.SubElement(root, "testsuite", {
            "name": f"sse-check {self.options.command} (profile {self.options.profile})", **counts,
        })
        props = ET.SubElement(suite, "properties")
        for key, value in (
            ("sse-check.version", __version__),
            ("profile", self.options.profile),
            ("fail_on", str(self.options.fail_on)),
            ("baselined", str(summary.baselined)),
        ):
            ET.SubElement(props, "property", {"name": key, "value": value})
        ET.SubElement(suite, "cases-here")  # where the spooled cases go
        ET.indent(root)
        head, _, tail = ET.tostring(root, encoding="unicode").partition("<cases-here />")
        self.stream.write('<?xml version="1.0" encoding="UTF-8"?>\n')
        self.stream.write(head.rstrip(" "))
        self.cases.copy_to(self.stream)
        self.stream.write("  " + tail.lstrip("\n ") + "\n")
