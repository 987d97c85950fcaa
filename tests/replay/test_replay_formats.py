"""``sse-check replay --format junit|markdown|github``: one testcase per case, read back by real parsers."""

from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from junitparser import Failure, JUnitXml

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "cases" / "reasoning-replay.json"

# A client that sends the history back unchanged: it keeps reasoning it should drop, so some cases fail.
ECHO = "import json, sys; json.dump(json.load(sys.stdin), sys.stdout)"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "checker", "replay", str(CASES), *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=120, env={"NO_COLOR": "1", "PATH": "/usr/bin:/bin"})


def echo_args() -> list[str]:
    return ["--cmd", f"'{sys.executable}' -c '{ECHO}'"]


@pytest.fixture(scope="module")
def reference_junit() -> str:
    proc = run("--format", "junit")
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_junit_one_testcase_per_case(reference_junit: str) -> None:
    root = ET.fromstring(reference_junit)
    cases = root.findall("./testsuite/testcase")
    assert len(cases) == int(root.get("tests") or 0) > 0
    assert root.get("failures") == "0"
    assert all(c.get("file") == str(CASES) for c in cases)
    assert all(re.search(r"#\d+: ", c.get("name") or "") for c in cases)


def test_junit_failures_read_by_junitparser() -> None:
    proc = run(*echo_args(), "--format", "junit")
    assert proc.returncode == 1, proc.stderr
    suite = next(iter(JUnitXml.fromstring(proc.stdout)))
    failed = [case for case in suite if any(isinstance(r, Failure) for r in case.result)]
    assert failed and suite.failures == len(failed)
    failure = next(r for r in failed[0].result if isinstance(r, Failure))
    assert failure.type == "replay-mismatch" and failure.message


def test_markdown_and_github() -> None:
    markdown = run(*echo_args(), "--format", "markdown")
    assert markdown.returncode == 1
    assert markdown.stdout.startswith("### ❌ sse-check replay: ")
    rows = [line for line in markdown.stdout.splitlines() if line.startswith("| `")]
    assert rows and all(len(re.split(r"(?<!\\)\|", row)) == 8 for row in rows)
    assert any("❌ FAIL" in row for row in rows)

    github = run(*echo_args(), "--format", "github")
    assert github.returncode == 1
    errors = [line for line in github.stdout.splitlines() if line.startswith("::error ")]
    assert errors and all(f"file={CASES}" in line.replace("%3A", ":") for line in errors)
    assert all("\n" not in line for line in errors)


# --- the registry -----------------------------------------------------------------------------------------


def test_replay_reports_come_from_the_one_reporter_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """replay's formats are the registry's case reporters (checker.report.CASE_REPORTERS), in the order the
    docs list them; a plugin's case reporter is found by name like a lint reporter."""
    from importlib.metadata import EntryPoint

    import checker.report as report
    from checker.commands.replay import FORMATS

    assert FORMATS == ("text", "json", "junit", "markdown", "github") == tuple(report.CASE_REPORTERS)
    assert set(FORMATS) - {"text", "json"} <= set(report.REPORTERS)  # the CI formats exist for lint too
    fake = EntryPoint(name="tap", value="checker.replay.formats:GithubCaseReporter",
                      group=report.CASE_ENTRY_POINT_GROUP)
    monkeypatch.setattr(report, "_case_entry_points", lambda: {"tap": fake})
    assert report.reporter_names(cases=True)[-1] == "tap" and "tap" in report.FormatNames(cases=True)
    assert report.get_case_reporter("tap").__name__ == "GithubCaseReporter"
    with pytest.raises(ValueError, match="unknown format 'nope'"):
        report.get_case_reporter("nope")
