"""The HTML report of the bundled captures, opened in a real headless Chromium.

The report is written by the real CLI (``sse-check lint … --format html``),
then loaded from a file:// URL and driven over the DevTools protocol (the
``page`` fixture, tests/report/conftest.py): no console error or exception
while it loads and while its script runs; the lanes of the real llama-server
capture put the reasoning item's ``done`` to the right of the function
call's ``added``; clicking a finding opens its details; with arrival times (a live probe), the axis
toggle moves the marks. Screenshots go to
``test-artifacts/``; with ``SSE_CHECK_UPDATE_SCREENSHOT=1`` the README's
``docs/report.png`` is refreshed from the same page.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
BUNDLED = ("captures/conforming", "captures/llama.cpp", "captures/open-responses", "captures/rules")
LLAMA = 'section.capture[data-name$="llama.cpp/reasoning_one_call.sse"]'


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("html") / "report.html"
    proc = subprocess.run(
        [sys.executable, "-m", "checker", "lint", *BUNDLED, "--format", "html", "--output", str(out)],
        capture_output=True, text=True, cwd=ROOT, timeout=300, env={"NO_COLOR": "1", "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 1 and proc.stderr == "", proc.stderr  # the rules/ captures fail, by design
    return out


def bundled_count() -> int:
    return sum(len(list((ROOT / d).glob("*.sse"))) for d in BUNDLED)


def center_x(page: Any, selector: str) -> dict[str, float]:
    box = page.evaluate(
        f"(() => {{ const e = document.querySelector({json.dumps(selector)}); if (!e) return null;"
        " const r = e.getBoundingClientRect(); return {x: r.x + r.width / 2, data: Number(e.dataset.x)}; })()"
    )
    assert box is not None, f"nothing matches {selector}"
    return box


def test_report_renders_without_console_errors(page: Any, report: Path) -> None:
    page.open(report)
    assert page.evaluate("document.querySelectorAll('section.capture').length") == bundled_count()
    assert page.evaluate("document.querySelectorAll('.index-table tbody tr').length") == bundled_count()
    drawn = page.evaluate("[...document.querySelectorAll('svg.lanes')].map(s => s.getBoundingClientRect().width)")
    assert len(drawn) > 100 and all(width > 300 for width in drawn)
    page.screenshot(ARTIFACTS / "report-top.png")
    # Run the page's script paths too: sort both ways, open and close details, click an event mark.
    page.click(f"{LLAMA} th[data-sort='sev']")
    page.click(f"{LLAMA} th[data-sort='code']")
    page.click(f"{LLAMA} .lane[data-type='reasoning'] .mark[data-kind='delta']")
    page.click(f"{LLAMA} .details .close")
    page.click("section.capture .fmark")
    first_codes = page.evaluate(f"[...document.querySelectorAll('{LLAMA} tbody tr[data-code]')].map(r => r.dataset.code)")
    assert first_codes == sorted(first_codes)
    assert page.console_errors() == []


def test_llama_lanes_show_the_reasoning_done_after_the_call_added(page: Any, report: Path) -> None:
    page.open(report)
    page.evaluate(f"document.querySelector({json.dumps(LLAMA)}).scrollIntoView()")
    reasoning = f"{LLAMA} .lane[data-type='reasoning']"
    call = f"{LLAMA} .lane[data-type='function_call']"
    reasoning_added = center_x(page, f"{reasoning} .mark[data-kind='added']")
    reasoning_done = center_x(page, f"{reasoning} .mark[data-kind='done']")
    call_added = center_x(page, f"{call} .mark[data-kind='added']")
    call_done = center_x(page, f"{call} .mark[data-kind='done']")
    # As rendered on screen, and as the data attributes say.
    for key in ("x", "data"):
        assert reasoning_added[key] < call_added[key] < reasoning_done[key] < call_done[key]
    late = page.evaluate(f"[...document.querySelectorAll('{LLAMA} .bar.late')].map(b => b.closest('.lane').dataset.type)")
    assert late == ["reasoning"]
    assert page.console_errors() == []


def test_clicking_a_finding_reveals_its_details(page: Any, report: Path) -> None:
    page.open(report)
    panel = f"{LLAMA} .details"
    visible = f"(() => {{ const p = document.querySelector({json.dumps(panel)}); return !p.hidden && p.offsetHeight > 0; }})()"
    assert page.evaluate(visible) is False
    page.click(f"{LLAMA} .lane[data-type='function_call'] .fmark[data-i='12']")
    assert page.evaluate(visible) is True
    text = page.evaluate(f"document.querySelector({json.dumps(panel)}).innerText")
    assert "ITM011" in text
    assert "added while reasoning item 'rs_po6bF3m2itQc2jz9tzZ0I8JcQNn9GAeE' is not done" in text
    assert "37:1894" in text  # line:byte
    assert "positional" in text  # the client it breaks
    assert '"type": "response.output_item.added"' in text and '"call_id": "call_jfkWZdH1jSla4aYztFBO2Mgw9iKnO0Ug"' in text
    selected = page.evaluate(f"[...document.querySelectorAll('{LLAMA} tr.selected')].map(r => r.dataset.code)")
    assert selected == ["ITM011"]
    page.screenshot(ARTIFACTS / "report-llama-details.png", clip=_section_clip(page))
    if os.environ.get("SSE_CHECK_UPDATE_SCREENSHOT"):
        page.screenshot(ROOT / "docs" / "report.png", clip=_section_clip(page))
    # A row of the findings table opens the same panel for its finding.
    page.click(f"{LLAMA} tr[data-code='FNC002']")
    text = page.evaluate(f"document.querySelector({json.dumps(panel)}).innerText")
    assert "FNC002" in text and "85:4722" in text and '"type": "response.output_item.done"' in text
    assert page.console_errors() == []


def _section_clip(page: Any) -> dict[str, float]:
    """The llama section from its title to the bottom of the open details panel, in page coordinates."""
    return page.evaluate(
        f"(() => {{ const s = document.querySelector({json.dumps(LLAMA)});"
        " const top = s.querySelector('h2').getBoundingClientRect();"
        " const end = s.querySelector('.details').getBoundingClientRect();"
        " return {x: 0, y: top.top + window.scrollY - 8, width: Math.min(1400, document.documentElement.clientWidth),"
        " height: end.bottom - top.top + 20}; })()"
    )


def test_arrival_time_toggle_moves_the_marks(page: Any, tmp_path: Path) -> None:
    from checker.engine import StreamLinter
    from checker.findings import Severity
    from checker.report import ReportOptions, Summary
    from checker.report.html import HtmlReporter

    linter = StreamLinter(trace=True)
    blocks = (ROOT / "captures/llama.cpp/reasoning_one_call.sse").read_bytes().split(b"\n\n")
    for n, block in enumerate(blocks):
        linter.mark_time(0.01 * n if n < 12 else 0.5 + 0.01 * n)  # a long pause before the function call
        linter.feed(block + b"\n\n")
    out = tmp_path / "probe.html"
    with out.open("w", encoding="utf-8") as stream:
        reporter = HtmlReporter(stream, ReportOptions(command="probe", profile="openai", fail_on=Severity.WARNING))
        reporter.start()
        reporter.file("reasoning_one_call", linter.close())
        reporter.finish(Summary(files=1))
    page.open(out)
    added = "section.capture .lane[data-type='function_call'] .mark[data-kind='added']"
    before = center_x(page, added)
    page.click("section.capture .xmode button[data-mode='time']")
    after = center_x(page, added)
    xt = page.evaluate(f"Number(document.querySelector({json.dumps(added)}).dataset.xt)")
    assert after["data"] == xt and after["x"] > before["x"]  # the pause pushes the call to the right
    assert page.evaluate("getComputedStyle(document.querySelector('svg.lanes .axis-time')).display") != "none"
    page.click("section.capture .xmode button[data-mode='index']")
    assert center_x(page, added) == before
    assert page.console_errors() == []
