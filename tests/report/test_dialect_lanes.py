"""The timelines of Chat Completions and Anthropic Messages streams: one lane per chat choice (by index) and per
content block (by index, labelled with its type), in the lane model, the terminal ``--timeline`` and the HTML
report's SVG, each read back by parsing the output.

The captures: captures/chat/conforming/two-choices-interleaved.sse (``n: 2`` as OpenAI streams it, choice 0
text then a call, choice 1 text, and the usage chunk) and captures/messages/conforming/thinking-tool-use.sse
(a signed thinking block, a text block, a tool_use block).
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from checker.console import make_console
from checker.engine import lint_bytes
from checker.findings import Severity
from checker.profiles import get_profile
from checker.report import ReportOptions, Summary, get_reporter
from checker.report.lanes import RESPONSE_LANE, Timeline, build_timeline
from checker.report.timeline import LABEL_WIDTH, render_timeline
from checker.synth.messages import MessagesStreamBuilder
from checker.synth.messages import encode as encode_messages

ROOT = Path(__file__).resolve().parents[2]
TWO_CHOICES = ROOT / "captures" / "chat" / "conforming" / "two-choices-interleaved.sse"
SEQUENTIAL = ROOT / "captures" / "chat" / "conforming" / "two-choices.sse"
BLOCKS = ROOT / "captures" / "messages" / "conforming" / "thinking-tool-use.sse"
SVG = "{http://www.w3.org/2000/svg}"


def timeline_of(data: bytes, profile: str = "openai") -> Timeline:
    return build_timeline(lint_bytes(data, trace=True, profile=get_profile(profile)), max_columns=200)


def chunk_lines(path: Path) -> list[str]:
    """The ``data:`` lines of a capture, in order: event i is the i-th."""
    return [line for line in path.read_text().splitlines() if line.startswith("data: ")]


# --- the lane model ---------------------------------------------------------------------------------------------


def test_two_interleaved_choices_are_two_lanes_neither_late() -> None:
    timeline = timeline_of(TWO_CHOICES.read_bytes())
    assert [(lane.key, lane.item_type, lane.label) for lane in timeline.lanes] == [
        (RESPONSE_LANE, None, "completion"), ("#0", "choice", "choice #0"), ("#1", "choice", "choice #1")]
    lines = chunk_lines(TWO_CHOICES)
    completion, first, second = timeline.lanes
    # Each choice's bar runs from its role chunk to its finish_reason chunk.
    for lane, index in ((first, 0), (second, 1)):
        start, end = lane.span  # type: ignore[misc]
        assert f'"index":{index},"delta":{{"role":"assistant"' in lines[start]
        assert f'"index":{index},"delta":{{}},"logprobs":null,"finish_reason":' in lines[end]
        assert lane.late_after is None  # choices stream side by side: that is not lateness
    assert second.added_index < first.done_index  # interleaved indeed
    # Every chunk of a choice is in its lane; the usage chunk and [DONE] in the completion's.
    for n, line in enumerate(lines):
        owner = re.search(r'"choices":\[\{"index":(\d)', line)
        assert timeline.lane_of[n] == (f"#{owner.group(1)}" if owner else RESPONSE_LANE), line
    assert [m.kind for m in completion.marks] == ["lifecycle", "sentinel"]
    # The tool call's first fragment is a part of choice 0, its argument fragments deltas.
    kinds = [m.kind for m in first.marks]
    assert kinds[0] == "added" and kinds[-1] == "done" and kinds.count("part") == 1 and "delta" in kinds


def test_sequential_choices_are_lanes_too() -> None:
    timeline = timeline_of(SEQUENTIAL.read_bytes())
    assert [lane.label for lane in timeline.lanes] == ["completion", "choice #0", "choice #1"]
    assert [lane.span for lane in timeline.lanes[1:]] == [(0, 4), (5, 7)]


def test_content_blocks_are_lanes_with_their_type() -> None:
    timeline = timeline_of(BLOCKS.read_bytes())
    assert [(lane.key, lane.item_type, lane.label) for lane in timeline.lanes] == [
        (RESPONSE_LANE, None, "message"), ("#0", "thinking", "thinking #0"), ("#1", "text", "text #1"),
        ("#2", "tool_use", "tool_use #2")]
    message, thinking, text, tool = timeline.lanes
    assert [m.kind for m in message.marks] == ["lifecycle", "keepalive", "lifecycle", "terminal"]
    assert [m.type for m in message.marks] == ["message_start", "ping", "message_delta", "message_stop"]
    assert (thinking.span, text.span, tool.span) == ((2, 6), (7, 9), (10, 14))
    assert [m.kind for m in thinking.marks] == ["added", "delta", "delta", "delta", "done"]
    assert not any(lane.late_after for lane in timeline.lanes)


def test_a_block_started_before_the_previous_one_stopped_is_late() -> None:
    events = list(MessagesStreamBuilder().text(["Let me check."]).tool_use("f", ["{}"]).events())
    stop_text = next(i for i, e in enumerate(events) if e["type"] == "content_block_stop")
    start_tool = next(i for i, e in enumerate(events) if e.get("content_block", {}).get("type") == "tool_use")
    events.insert(start_tool, events.pop(stop_text))
    result = lint_bytes(encode_messages(events), trace=True)
    assert "ANT026" in result.codes()
    text = build_timeline(result, max_columns=100).lanes[1]
    assert text.label == "text #0" and text.late_after == "#1"


# --- the terminal timeline --------------------------------------------------------------------------------------


def rows(path: Path) -> tuple[str, dict[str, str]]:
    stream = io.StringIO()
    render_timeline(make_console(stream, "never", width=120), lint_bytes(path.read_bytes(), trace=True))
    lines = stream.getvalue().splitlines()
    start = 2 + LABEL_WIDTH + 1
    return lines[0], {line[2:start].strip(): line[start:] for line in lines[1:] if line.strip()}


def test_terminal_timeline_of_two_choices() -> None:
    legend, lanes = rows(TWO_CHOICES)
    assert list(lanes) == ["completion", "choice #0", "choice #1"]
    lines = chunk_lines(TWO_CHOICES)
    assert lanes["choice #0"].index("[") == 0 and lanes["choice #1"].index("[") == 1
    assert lanes["choice #0"].rindex("]") == len(lines) - 3 and lanes["choice #1"].rindex("]") == 9
    assert lanes["choice #0"][4] == "|"  # the tool call's first fragment
    assert lanes["completion"].strip() == "oD"
    assert "[ added" in legend and "| part" in legend and "C P" not in legend  # no Responses letters


def test_terminal_timeline_of_thinking_text_and_tool_use() -> None:
    legend, lanes = rows(BLOCKS)
    assert list(lanes) == ["message", "thinking #0", "text #1", "tool_use #2"]
    assert lanes["message"].rstrip() == "S'" + " " * 13 + "D✓"  # message_delta is event 15
    assert lanes["thinking #0"].strip() == "[···]" and lanes["thinking #0"].index("[") == 2
    assert lanes["text #1"].strip() == "[·]" and lanes["tool_use #2"].strip() == "[···]"
    assert "S D ✓ lifecycle" in legend and "' keep-alive" in legend


def test_cli_timeline_on_both_dialects() -> None:
    proc = subprocess.run([sys.executable, "-m", "checker", "lint", "--timeline", "--color", "never",
                           str(TWO_CHOICES), str(BLOCKS)], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "COLUMNS": "120"}, check=False)
    assert proc.returncode == 0, proc.stderr
    labels = [line[2:2 + LABEL_WIDTH].strip() for line in proc.stdout.splitlines()
              if line.startswith("  ") and line[2:3].strip() and not line.startswith("  timeline")]
    assert labels == ["completion", "choice #0", "choice #1", "message", "thinking #0", "text #1", "tool_use #2"]


# --- the HTML report --------------------------------------------------------------------------------------------


def html_sections(*paths: Path) -> list[str]:
    options = ReportOptions(command="lint", profile="openai", fail_on=Severity.WARNING)
    stream = io.StringIO()
    reporter = get_reporter("html")(stream, options)
    reporter.start()
    summary = Summary()
    for path in paths:
        result = lint_bytes(path.read_bytes(), trace=True)
        summary.add(result, options.fail_on)
        reporter.file(path.name, result)
    reporter.finish(summary)
    return re.findall(r'<section class="capture".*?</section>', stream.getvalue(), re.S)


def svg(section: str, css_class: str) -> ET.Element:
    match = re.search(rf'<svg class="{css_class}".*?</svg>', section, re.S)
    assert match is not None, css_class
    return ET.fromstring(match.group(0))  # well-formed XML, or this fails


def svg_lanes(section: str) -> tuple[list[str], dict[str, ET.Element]]:
    names = [t.text or "" for t in svg(section, "lane-labels").iter(f"{SVG}text") if t.get("class") == "lane-label"]
    lanes = {g.get("data-lane") or "": g for g in svg(section, "lanes").iter(f"{SVG}g")
             if "lane" in (g.get("class") or "").split()}
    return names, lanes


def marks(lane: ET.Element, kind: str) -> list[int]:
    return [int(g.get("data-i") or -1) for g in lane.iter(f"{SVG}g") if g.get("data-kind") == kind]


def bar(lane: ET.Element) -> ET.Element:
    return next(r for r in lane.iter(f"{SVG}rect") if "bar" in (r.get("class") or "").split())


def test_html_lanes_per_choice_and_per_content_block() -> None:
    chat, messages = html_sections(TWO_CHOICES, BLOCKS)
    names, lanes = svg_lanes(chat)
    assert names == ["completion", "choice #0", "choice #1"]
    assert [(key, lane.get("data-type")) for key, lane in lanes.items()] == [
        ("response", ""), ("#0", "choice"), ("#1", "choice")]
    assert marks(lanes["#0"], "added") == [0] and marks(lanes["#1"], "added") == [1]
    assert marks(lanes["#0"], "done") == [11] and marks(lanes["#1"], "done") == [9]
    assert marks(lanes["response"], "sentinel") == [13]
    assert not any("late" in (bar(lane).get("class") or "") for key, lane in lanes.items() if key != "response")
    assert 'class="lane lane-message"' in chat  # choices are drawn as messages

    names, lanes = svg_lanes(messages)
    assert names == ["message", "thinking #0", "text #1", "tool_use #2"]
    assert [lane.get("data-type") for lane in lanes.values()] == ["", "thinking", "text", "tool_use"]
    assert [(bar(lanes[k]).get("data-start"), bar(lanes[k]).get("data-end")) for k in ("#0", "#1", "#2")] == [
        ("2", "6"), ("7", "9"), ("10", "14")]
    assert marks(lanes["response"], "terminal") == [16] and marks(lanes["response"], "keepalive") == [1]
    # The items: each block's own text, the thinking and its signature, the tool's input.
    items = re.sub(r"<[^>]+>", " ", messages[messages.index("<h3>Items"):])
    assert "thinking  60 chars" in items and "signature  18 chars" in items and "input (valid JSON)" in items
