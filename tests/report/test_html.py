"""The HTML report's markup, without a browser: escaping, sections, index, lanes, size."""

from __future__ import annotations

import html
import io
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from checker.engine import lint_bytes
from checker.findings import Severity
from checker.profiles import get_profile
from checker.report import ReportOptions, Summary, get_reporter
from checker.report.html import MAX_COLUMNS, script_json
from checker.synth import StreamBuilder, encode

ROOT = Path(__file__).resolve().parents[2]
LLAMA = ROOT / "captures" / "llama.cpp" / "reasoning_one_call.sse"
SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = '</script><script>alert(1)</script><img src=x onerror="alert(2)"><!--'


def render(*captures: tuple[str, bytes], profile: str = "openai", command: str = "lint") -> str:
    options = ReportOptions(command=command, profile=profile, fail_on=Severity.WARNING)
    stream = io.StringIO()
    reporter = get_reporter("html")(stream, options)
    reporter.start()
    summary = Summary()
    for name, data in captures:
        result = lint_bytes(data, trace=True, profile=get_profile(profile))
        summary.add(result, options.fail_on)
        reporter.file(name, result)
    reporter.finish(summary)
    return stream.getvalue()


def sections(page: str) -> list[str]:
    return re.findall(r'<section class="capture".*?</section>', page, re.S)


def svg_of(section: str) -> ET.Element:
    match = re.search(r'<svg class="lanes".*?</svg>', section, re.S)
    assert match, "no lanes drawn"
    return ET.fromstring(match.group(0))  # the picture must be well-formed XML


def hostile_stream() -> bytes:
    events = list(StreamBuilder().message(["Hel", HOSTILE]).events())
    events.insert(3, {"type": "response.x" + HOSTILE, "sequence_number": 99})  # an unknown, hostile event type
    return encode(events) + b"event: " + HOSTILE.encode() + b"\ndata: " + HOSTILE.encode() + b"\n\n"


def test_hostile_capture_is_escaped_everywhere() -> None:
    page = render((f"evil{HOSTILE}.sse", hostile_stream()))
    # Two scripts only: the capture's data block and the page's own script.
    assert page.count("<script") == 2
    assert "alert(1)</script>" not in page and "<img" not in page and "<!--" not in page
    assert "&lt;/script&gt;&lt;script&gt;alert(1)" in page  # shown as text: name, message, accumulated text
    data = re.search(r'<script type="application/json" class="capture-data">(.*?)</script>', page, re.S)
    assert data is not None
    decoded = json.loads(data.group(1))
    assert any(HOSTILE in (event["raw"] or "") for event in decoded["events"].values())


def test_script_json_never_closes_its_block() -> None:
    text = script_json({"a": "</script><!-- & \u2028"})
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == {"a": "</script><!-- & \u2028"}


def test_page_is_self_contained() -> None:
    page = render(("a.sse", LLAMA.read_bytes()))
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page)
    assert csp is not None and html.unescape(csp.group(1)).startswith("default-src 'none';")
    assert not re.search(r"<(link|img|iframe)\b|\bsrc=|@import|url\(", page)
    assert not re.findall(r"https?://(?!www\.w3\.org/2000/svg)", page)


def test_one_section_per_capture_and_an_index() -> None:
    clean = encode(StreamBuilder().reasoning(["Think"]).message(["Hi"]).events())
    page = render(("one.sse", clean), ("two.sse", LLAMA.read_bytes()), ("three.sse", b"not an event stream"))
    found = sections(page)
    assert [re.search(r'data-name="([^"]*)"', s).group(1) for s in found] == ["one.sse", "two.sse", "three.sse"]
    index = re.search(r'<table class="index-table">.*?</table>', page, re.S).group(0)
    rows = re.findall(r'<tr data-anchor="(cap-\d+)"><td><a href="#(cap-\d+)">([^<]*)</a></td><td>(.*?)</td>', index)
    assert [(a, b, name) for a, b, name, _ in rows] == [
        ("cap-0", "cap-0", "one.sse"), ("cap-1", "cap-1", "two.sse"), ("cap-2", "cap-2", "three.sse")]
    assert ["ok" in v for *_, v in rows] == [True, False, False]
    assert all(f'id="cap-{n}"' in s for n, s in enumerate(found))
    assert "3 capture(s): 2 failed" in page


def test_llama_lanes_show_the_delayed_reasoning_done() -> None:
    page = render(("reasoning_one_call.sse", LLAMA.read_bytes()))
    svg = svg_of(sections(page)[0])
    lanes = {lane.get("data-type") or lane.get("data-lane"): lane for lane in svg.iter(f"{SVG}g")
             if "lane" in (lane.get("class") or "").split()}
    assert list(lanes) == ["response", "reasoning", "function_call"]
    labels = re.search(r'<svg class="lane-labels".*?</svg>', sections(page)[0], re.S)
    names = [t.text for t in ET.fromstring(labels.group(0)).iter(f"{SVG}text")]
    assert names[0] == "response" and names[1].startswith("reasoning rs_po6b") and "…" in names[1]
    assert names[2].startswith("function_call fc_jfk") and names[2].endswith("iKnO0Ug")

    def mark(lane: str, kind: str) -> ET.Element:
        found = [g for g in lanes[lane].iter(f"{SVG}g") if g.get("data-kind") == kind]
        assert len(found) == 1, (lane, kind)
        return found[0]

    reasoning_done = mark("reasoning", "done")
    call_added = mark("function_call", "added")
    assert reasoning_done.get("data-i") == "27" and call_added.get("data-i") == "12"
    assert float(reasoning_done.get("data-x")) > float(call_added.get("data-x"))
    bar = next(r for r in lanes["reasoning"].iter(f"{SVG}rect") if "bar" in (r.get("class") or ""))
    assert "late" in bar.get("class") and bar.get("data-start") == "2" and bar.get("data-end") == "27"
    assert "late" in reasoning_done.get("class")
    call_bar = next(r for r in lanes["function_call"].iter(f"{SVG}rect") if "bar" in (r.get("class") or ""))
    assert "late" not in call_bar.get("class")
    # The ITM011 finding sits on the function call's added (#12), in its lane.
    flags = [g for g in lanes["function_call"].iter(f"{SVG}g") if "fmark" in (g.get("class") or "")]
    assert any(g.get("data-i") == "12" for g in flags)


def test_conforming_items_are_not_late() -> None:
    data = encode(StreamBuilder().reasoning(["a", "b"]).function_call("f", ['{"x"', ":1}"]).message(["c"]).events())
    svg = svg_of(sections(render(("ok.sse", data)))[0])
    bars = [r for r in svg.iter(f"{SVG}rect") if "bar" in (r.get("class") or "")]
    assert len(bars) == 3 and not any("late" in r.get("class") for r in bars)


def test_findings_table_clients_and_item_texts() -> None:
    section = sections(render(("reasoning_one_call.sse", LLAMA.read_bytes())))[0]
    assert section.count("<tr data-f=") == 22
    assert 'data-code="ITM011"' in section and "37:1894 #12" in section
    assert '<th data-sort="sev"' in section and '<th data-sort="code"' in section
    clients = re.search(r'<table class="clients">.*?</table>', section, re.S).group(0)
    assert "openai-python" in clients and "positional" in clients and "breaks" in clients
    assert " weather by London info table for table time can" in section  # the reasoning text
    assert "{&quot;city&quot;:&quot;Tokyo&quot;}" in section and "(valid JSON)" in section


def test_large_capture_is_folded_and_says_so() -> None:
    data = encode(StreamBuilder().reasoning(["r"] * 3000).message(["m"] * 9000).events())
    page = render(("big.sse", data))
    section = sections(page)[0]
    svg = svg_of(section)
    marks = [g for g in svg.iter(f"{SVG}g") if (g.get("class") or "").startswith("mark")]
    assert len(marks) <= 3 * (MAX_COLUMNS + 1)
    assert "events are folded into" in section and "Raw JSON is kept for" in section
    assert len(page) < 4_000_000
    # The item boundaries survive folding.
    kinds = {g.get("data-kind") for g in marks}
    assert {"added", "done", "terminal", "lifecycle"} <= kinds


def test_arrival_times_add_the_axis_toggle() -> None:
    from checker.engine import StreamLinter
    from checker.report.html import render_section

    linter = StreamLinter(trace=True)
    for n, line in enumerate(LLAMA.read_bytes().split(b"\n\n")):
        linter.mark_time(0.05 * n)
        linter.feed(line + b"\n\n")
    result = linter.close()
    options = ReportOptions(command="probe", profile="openai", fail_on=Severity.WARNING)
    section = render_section("cap-0", "reasoning_one_call", result, options, True)
    assert 'data-mode="time"' in section and "arrival time" in section and "data-xt=" in section
    plain = render(("a.sse", LLAMA.read_bytes()))
    assert "data-xt=" not in plain and 'data-mode="time"' not in plain


def test_cli_writes_the_html_report(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    proc = subprocess.run(
        [sys.executable, "-m", "checker", "lint", str(LLAMA), str(ROOT / "captures" / "conforming"),
         "--format", "html", "--output", str(out)],
        capture_output=True, text=True, cwd=ROOT, timeout=120, env={"NO_COLOR": "1", "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == "" and proc.stderr == ""
    page = out.read_text(encoding="utf-8")
    conforming = len(list((ROOT / "captures" / "conforming").glob("*.sse")))
    assert page.startswith("<!DOCTYPE html>") and len(sections(page)) == 1 + conforming


def test_probe_results_show_http_facts_in_the_section_and_the_index() -> None:
    import dataclasses

    from checker.engine import LintResult
    from checker.report.html import HtmlReporter

    @dataclasses.dataclass(slots=True, kw_only=True)
    class Live(LintResult):  # what a probe hands the reporters: a result with its exchange's facts
        http: dict = dataclasses.field(default_factory=dict)

    plain = lint_bytes(LLAMA.read_bytes(), trace=True)
    live = Live(**{f.name: getattr(plain, f.name) for f in dataclasses.fields(LintResult)},
                http={"status": 200, "content_type": "text/event-stream", "ending": {"kind": "complete"},
                      "timings": {"first_byte": 0.0123, "first_delta": 0.05, "total": 1.5}})
    options = ReportOptions(command="probe", profile="openai", fail_on=Severity.WARNING)
    stream = io.StringIO()
    reporter = HtmlReporter(stream, options)
    reporter.start()
    reporter.file("reasoning_one_call", live)
    reporter.finish(Summary(files=1, failed_files=1))
    page = stream.getvalue()
    assert "sse-check probe report" in page and "<th>scenario</th>" in page
    assert "HTTP 200 text/event-stream" in page and "TTFB</b> 12 ms" in page and "total</b> 1.50 s" in page
    assert "<td>200 · 12 ms · 1.50 s</td>" in page


def test_html_without_output_goes_to_stdout() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "checker", "lint", str(LLAMA), "--format", "html"],
        capture_output=True, text=True, cwd=ROOT, timeout=120, env={"NO_COLOR": "1", "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 1 and proc.stdout.startswith("<!DOCTYPE html>") and proc.stdout.endswith("</html>\n")


def test_client_matrix_shows_verdicts_symptoms_and_real_outcomes() -> None:
    from checker.compat import Verdict
    from checker.oracles.agreement import Agreement, Comparison
    from checker.oracles.protocol import Outcome
    from checker.report.html import render_section

    result = lint_bytes(LLAMA.read_bytes(), trace=True)
    options = ReportOptions(command="lint", profile="openai", fail_on=Severity.WARNING)
    outcome = Outcome(client="openai-python", version="3.57.0",
                      raised="RuntimeError: Duplicate response output index None.")
    options.oracles = {"x.sse": {"openai-python": Comparison("openai-python", Verdict.BREAKS, outcome,
                                                             Agreement.AGREES, outcome.summary)}}
    section = render_section("cap-0", "x.sse", result, options, True)
    table = re.search(r'<table class="clients">.*?</table>', section, re.S).group(0)
    rows = dict(re.findall(r'<td class="client"[^>]*>([^<]+)</td><td><span class="verdict [^"]+">(\w+)</span>', table))
    assert rows["openai-python"] == "breaks" and rows["positional"] == "breaks"
    assert "the real client did" in table and "3.57.0: raises RuntimeError: Duplicate response output index None." in table
    # The deciding finding links to its row of the findings table.
    assert re.search(r'<span class="flink" data-f="\d+" tabindex="0">ITM001</span>', table)
