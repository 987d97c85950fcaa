"""A generated archive of thousands of small captures, linted once per format: each report is whole and
consistent (every capture once, in order, the same counts), and the HTML page is capped and says what it
left out. Memory and time are make bench's business, never asserted here."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from checker.report.html import FULL_RUN, MAX_INDEX_ROWS, MAX_SECTIONS
from tests.archive.helpers import run, write_archive

COUNT = 2000
FAILING = sum(1 for i in range(COUNT) if i % 7 == 0 or i % 5 == 0)  # LIF006 or SSE003 (at --fail-on warning)


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("archive")
    write_archive(folder, COUNT)
    return folder


def test_jsonl_has_a_record_per_capture_in_order_then_the_summary(archive: Path) -> None:
    out = run("lint", str(archive), "-j", "2", "--format", "jsonl")
    assert out.returncode == 1, out.stderr
    records = [json.loads(line) for line in out.stdout.splitlines()]
    files, summary = records[:-1], records[-1]
    assert [r["record"] for r in files] == ["file"] * COUNT
    assert [r["path"] for r in files] == [str(archive / f"c{i:05d}.sse") for i in range(COUNT)]
    assert sum(not r["passed"] for r in files) == FAILING
    assert all(r["counts"]["error"] == 1 for r in files[::7])
    assert summary["record"] == "summary" and summary["command"] == "lint"
    assert summary["summary"]["files"] == COUNT and summary["summary"]["failed_files"] == FAILING


def test_the_other_formats_hold_every_capture(archive: Path, tmp_path: Path) -> None:
    for fmt in ("junit", "sarif", "text"):
        out = run("lint", str(archive), "-j", "2", "--format", fmt, "-o", str(tmp_path / f"report.{fmt}"))
        assert out.returncode == 1, out.stderr
    suite = ET.parse(tmp_path / "report.junit").getroot()
    assert suite.get("tests") == str(COUNT) and suite.get("failures") == str(FAILING)
    assert len(suite.findall("./testsuite/testcase")) == COUNT
    sarif = json.loads((tmp_path / "report.sarif").read_text())
    assert len(sarif["runs"][0]["artifacts"]) == COUNT
    assert {r["ruleId"] for r in sarif["runs"][0]["results"]} == {"LIF006", "SSE003"}
    text = (tmp_path / "report.text").read_text()
    assert f"{COUNT} capture(s): {FAILING} failed at --fail-on warning" in text
    totals = {line.split()[0]: line.split() for line in text.splitlines() if line.startswith(("LIF006", "SSE003"))}
    assert totals["LIF006"][3] == str(len(range(0, COUNT, 7)))  # captures per rule, counted not listed
    assert totals["SSE003"][3] == str(len(range(0, COUNT, 5)))


def test_the_html_page_is_capped_and_says_what_it_left_out(archive: Path, tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    out = run("lint", str(archive), "-j", "2", "--format", "html", "-o", str(page), "-q")
    assert out.returncode == 1, out.stderr
    html = page.read_text()
    sections = html.count('<section class="capture"')
    failing_early = sum(1 for i in range(FULL_RUN) if i % 7 == 0 or i % 5 == 0)
    assert sections == min(MAX_SECTIONS, FULL_RUN + (FAILING - failing_early))
    drawn_failing = sections - (FULL_RUN - failing_early)
    assert (f"Left out: {COUNT - FULL_RUN - (FAILING - failing_early)} passing and "
            f"{FAILING - drawn_failing} failing capture(s)") in html
    assert html.count("<tr data-anchor=") == MAX_INDEX_ROWS
    assert f"{COUNT} capture(s): {FAILING} failed" in html
