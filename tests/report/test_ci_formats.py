"""The CI report formats read back by real parsers: JUnit (xml.etree as CI tools read it, and junitparser),
GitHub workflow commands (as the Actions runner parses them), Markdown tables (row and column counts).

SARIF has its own module (schema validation): test_sarif_format.py.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from junitparser import Error, Failure, JUnitXml

from checker.engine import lint_bytes
from checker.findings import Severity
from checker.profiles import get_profile
from checker.report import REPORTERS, ReportOptions, Summary, get_reporter, reporter_names

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = ROOT / "captures"
CLEAN = "captures/conforming/text.sse"
BROKEN = "captures/rules/LIF006-missing-terminal-event.sse"
LLAMA = "captures/llama.cpp/plain_text.sse"


def lint(*args: str, command: str = "lint") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "checker", command, *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=120, env={"NO_COLOR": "1", "PATH": "/usr/bin:/bin"})


def render(fmt: str, files: dict[str, bytes], *, fail_on: Severity = Severity.WARNING, profile: str = "openai",
           io_errors: list[str] | None = None) -> str:
    """Run a reporter in process over in-memory captures."""
    stream = io.StringIO()
    reporter = get_reporter(fmt)(stream, ReportOptions(command="lint", profile=profile, fail_on=fail_on))
    summary = Summary(io_errors=list(io_errors or []))
    reporter.start()
    for name, data in files.items():
        result = lint_bytes(data, profile=get_profile(profile))
        summary.add(result, fail_on)
        reporter.file(name, result)
    reporter.finish(summary)
    return stream.getvalue()


def test_every_format_is_registered_by_name_once() -> None:
    """A built-in format is in REPORTERS alone: the package registers none of its own as an entry point."""
    from importlib.metadata import entry_points

    for name in ("junit", "sarif", "github", "markdown"):
        assert name in REPORTERS and name in reporter_names()
    plugins = {ep.name for ep in entry_points(group="sse_check.reporters")}
    assert not plugins & set(REPORTERS)


def test_an_entry_point_reporter_is_found_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib.metadata import EntryPoint

    import checker.report as report

    fake = EntryPoint(name="tap", value="checker.report.junit:JunitReporter", group="sse_check.reporters")
    monkeypatch.setattr(report, "_entry_points", lambda: {"tap": fake})
    assert "tap" in report.reporter_names()
    assert report.get_reporter("tap").__name__ == "JunitReporter"
    with pytest.raises(ValueError, match="unknown format 'nope'"):
        report.get_reporter("nope")


# --- JUnit ---------------------------------------------------------------------------------------------------


def test_junit_as_ci_tools_read_it() -> None:
    proc = lint(CLEAN, BROKEN, LLAMA, "--profile", "llama.cpp", "--format", "junit")
    assert proc.returncode == 1
    root = ET.fromstring(proc.stdout)
    assert root.tag == "testsuites"
    assert root.get("tests") == "3" and root.get("failures") == "1" and root.get("errors") == "0"
    suites = root.findall("testsuite")
    assert len(suites) == 1
    cases = {c.get("name"): c for c in suites[0].findall("testcase")}
    assert set(cases) == {CLEAN, BROKEN, LLAMA}
    assert all(c.get("classname") == "sse-check.lint" for c in cases.values())
    failure = cases[BROKEN].find("failure")
    assert failure is not None
    assert failure.get("type") == "LIF006"
    assert "LIF006" in (failure.get("message") or "")
    assert "76:" in (failure.text or "") and "breaks: openai-python" in (failure.text or "")
    assert cases[CLEAN].find("failure") is None and cases[LLAMA].find("failure") is None
    # Findings below --fail-on are kept, in system-out, without failing the case.
    assert "known deviation" in (cases[LLAMA].findtext("system-out") or "")


def test_junit_with_junitparser(tmp_path: Path) -> None:
    out = tmp_path / "report.xml"
    proc = lint(CLEAN, BROKEN, "--format", "junit", "--output", str(out))
    assert proc.returncode == 1 and proc.stdout == ""
    xml = JUnitXml.fromfile(str(out))
    suites = list(xml)
    assert len(suites) == 1
    suite = suites[0]
    assert suite.tests == 2 and suite.failures == 1 and suite.errors == 0
    outcome = {case.name: case for case in suite}
    assert outcome[CLEAN].is_passed
    failures = [r for r in outcome[BROKEN].result if isinstance(r, Failure)]
    assert failures and failures[0].type == "LIF006"


def test_junit_io_errors_are_error_cases_and_bad_characters_are_replaced() -> None:
    data = (CAPTURES / "conforming" / "text.sse").read_bytes()
    text = render("junit", {"evil\x00\x1b[31m.sse": data[:200]}, io_errors=["missing.sse: No such file or directory"])
    root = ET.fromstring(text)  # would raise on a NUL or ESC
    cases = root.findall("./testsuite/testcase")
    assert len(cases) == 2
    error = cases[1].find("error")
    assert error is not None and error.get("message") == "No such file or directory"
    assert root.get("errors") == "1"
    xml = JUnitXml.fromstring(text)
    assert any(isinstance(r, Error) for case in next(iter(xml)) for r in case.result)


# --- GitHub workflow commands ------------------------------------------------------------------------------------

# How the Actions runner reads a workflow command: ::name key=value,key=value::data
COMMAND = re.compile(r"^::(?P<cmd>[a-z-]+)(?: (?P<props>[^:]*))?::(?P<data>.*)$")


def unescape(text: str) -> str:
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%3A", ":").replace("%2C", ",").replace("%25", "%")


def parse_commands(text: str) -> list[tuple[str, dict[str, str], str]]:
    out = []
    for line in text.splitlines():
        m = COMMAND.match(line)
        if not m:
            continue
        props = {}
        for pair in filter(None, (m["props"] or "").split(",")):
            key, _, value = pair.partition("=")
            props[key] = unescape(value)
        out.append((m["cmd"], props, unescape(m["data"])))
    return out


def test_github_annotations() -> None:
    proc = lint(CLEAN, BROKEN, LLAMA, "--profile", "llama.cpp", "--format", "github")
    assert proc.returncode == 1
    commands = parse_commands(proc.stdout)
    errors = [c for c in commands if c[0] == "error"]
    assert len(errors) == 1
    _, props, data = errors[0]
    assert props == {"file": BROKEN, "line": "76", "title": "LIF006 missing-terminal-event"}
    assert data.startswith("stream ended without response.completed")
    assert "\nbreaks: openai-python" in data  # a multi-line annotation survives the escaping
    # The llama.cpp profile's known deviations are info: folded in a log group, not annotations.
    assert not [c for c in commands if c[0] in ("notice", "warning")]
    groups = [c for c in commands if c[0] == "group"]
    assert len(groups) == 1 and LLAMA in groups[0][2]
    assert sum(c[0] == "endgroup" for c in commands) == 1
    assert proc.stdout.rstrip().endswith("27 info")


def test_github_escapes_what_would_break_a_command() -> None:
    data = (CAPTURES / "rules" / "SCH005-unknown-event-type.sse").read_bytes()
    text = render("github", {"odd,name:1%.sse": data}, fail_on=Severity.INFO)
    commands = [c for c in parse_commands(text) if c[0] in ("error", "warning", "notice")]
    assert commands and all(c[1]["file"] == "odd,name:1%.sse" for c in commands)
    assert "::" not in text.split("::", 2)[1]  # the properties never contain the separator


def test_github_info_is_a_notice_when_it_fails_the_gate() -> None:
    text = render("github", {"x.sse": (CAPTURES / LLAMA.removeprefix("captures/")).read_bytes()},
                  profile="llama.cpp", fail_on=Severity.INFO)
    assert any(c[0] == "notice" for c in parse_commands(text))


# --- Markdown ------------------------------------------------------------------------------------------------


def table_rows(text: str, header: str) -> list[list[str]]:
    """The rows of the Markdown table whose header line is ``header``, split on unescaped bars."""
    lines = text.splitlines()
    start = lines.index(header)
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = re.split(r"(?<!\\)\|", line)[1:-1]
        rows.append([c.strip() for c in cells])
    return rows


def test_markdown_table_for_a_pr_comment() -> None:
    proc = lint(CLEAN, BROKEN, LLAMA, "--profile", "llama.cpp", "--format", "markdown")
    assert proc.returncode == 1
    text = proc.stdout
    assert text.startswith("### ❌ sse-check lint: 1 of 3 failed")
    rows = table_rows(text, "| capture | verdict | error | warning | info | rules |")
    assert [r[0] for r in rows] == [f"`{CLEAN}`", f"`{BROKEN}`", f"`{LLAMA}`"]
    assert all(len(r) == 6 for r in rows)
    assert rows[1][1] == "❌ FAIL" and rows[1][2] == "1"
    failing = table_rows(text, "| capture | line | code | severity | message |")
    assert failing[0][:4] == [f"`{BROKEN}`", "76", "LIF006", "error"]
    assert "<details><summary>27 finding(s) below <code>warning</code></summary>" in text


def test_markdown_cells_cannot_break_the_table() -> None:
    # The event type is quoted in several messages (first event, unknown type): bars, backticks, markup.
    data = b'data: {"type":"a|b`c<script>x\\n|y"}\n\n'
    text = render("markdown", {"a|b`c.sse": data})
    header = "| capture | verdict | error | warning | info | rules |"
    rows = table_rows(text, header)
    assert len(rows) == 1 and len(rows[0]) == 6
    for row in table_rows(text, "| capture | line | code | severity | message |"):
        assert len(row) == 5
        assert "<script>" not in row[4]


def test_markdown_all_clean() -> None:
    text = render("markdown", {"x.sse": (CAPTURES / "conforming" / "text.sse").read_bytes()})
    assert text.startswith("### ✅ sse-check lint: 0 of 1 failed") and "<details>" not in text


def test_formats_report_the_baseline(tmp_path: Path) -> None:
    baseline = tmp_path / "b.json"
    assert lint(BROKEN, "--write-baseline", str(baseline)).returncode == 0
    for fmt, needle in (("markdown", "1 finding(s) hidden by the baseline"),
                        ("github", "1 finding(s) hidden by the baseline"),
                        ("junit", '<property name="baselined" value="1" />')):
        proc = lint(BROKEN, "--baseline", str(baseline), "--format", fmt)
        assert proc.returncode == 0 and needle in proc.stdout, (fmt, proc.stdout)
    report = json.loads(lint(BROKEN, "--baseline", str(baseline), "--format", "sarif").stdout)
    assert report["runs"][0]["results"] == [] and report["runs"][0]["properties"]["baselined"] == 1
