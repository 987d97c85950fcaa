"""A compact terminal timeline: the HTML report's swimlanes drawn with rich.

The same :class:`~checker.report.lanes.Timeline` as the HTML report: one lane
per output item plus the response lifecycle, one mark per event (folded into
columns when the stream is longer than the terminal is wide), each item's
added → done bar, an orange bar for an item whose done came after a later
item was added, and the findings under the event that raised them.
"""

from __future__ import annotations

from collections.abc import Mapping

from rich.console import Console
from rich.text import Text

from checker.engine import LintResult
from checker.findings import Severity
from checker.report.lanes import OVERFLOW_LANE, RESPONSE_LANE, Lane, Mark, Timeline, build_timeline

# One character per kind of mark (the HTML legend uses the same shapes).
GLYPHS = {"added": "[", "done": "]", "delta": "·", "part": "|", "textdone": "=", "error": "E", "sentinel": "D",
          "other": "•", "keepalive": "'", "lifecycle": "o", "terminal": "■"}
# The legend, in reading order: (kind, what it is); only the kinds a timeline draws are listed.
LEGEND = (("added", "added"), ("delta", "delta"), ("part", "part"), ("textdone", "text done"), ("done", "done"),
          ("keepalive", "keep-alive"), ("other", "other"), ("error", "error"), ("sentinel", "[DONE]"))
# Unit types drawn alike across dialects: reasoning, text, calls.
LANE_STYLE = {"reasoning": "magenta", "thinking": "magenta", "redacted_thinking": "magenta", "message": "blue",
              "text": "blue", "choice": "blue", "function_call": "green", "tool_use": "green",
              "server_tool_use": "green"}
LATE_STYLE = "bold color(208)"
SEVERITY_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "bold yellow", Severity.INFO: "bold cyan"}
LABEL_WIDTH = 30


def _glyph(mark: Mark, letters: Mapping[str, str]) -> str:
    return letters.get(mark.type) or GLYPHS.get(mark.kind, "•")


def _lane_style(lane: Lane) -> str:
    if lane.key in (RESPONSE_LANE, OVERFLOW_LANE):
        return "white"
    return LANE_STYLE.get(lane.item_type or "", "cyan")


def _short(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width // 2 - 1] + "…" + text[-(width // 2):]


def _label(lane: Lane) -> str:
    if lane.key in (RESPONSE_LANE, OVERFLOW_LANE):
        return lane.label
    kind = lane.item_type or "item"
    return f"{kind} {_short(lane.key, max(8, LABEL_WIDTH - 2 - len(kind)))}"


def render_timeline(console: Console, result: LintResult) -> None:
    width = max(20, min(100, (console.width or 100) - LABEL_WIDTH - 6))
    timeline = build_timeline(result, max_columns=width)
    if not timeline.lanes:
        return
    console.print(Text(f"  timeline ({timeline.events} events, {timeline.per_column}/column): {legend(timeline)}",
                       style="dim"))
    severities = _severities(timeline, result)
    for lane in timeline.lanes:
        row = Text()
        row.append(f"  {_label(lane):<{LABEL_WIDTH}} ", style=_lane_style(lane))
        console.print(row + _row(lane, timeline))
    if severities:
        ruler = Text()
        ruler.append(f"  {'findings':<{LABEL_WIDTH}} ", style="dim")
        for column in range(timeline.columns + 1):
            worst = severities.get(column)
            ruler.append("▲" if worst is not None else " ", style=SEVERITY_STYLE[worst] if worst is not None else "")
        console.print(ruler)
    for lane in timeline.lanes:
        if lane.late_after is not None:
            done = f"done #{lane.done_index}" if lane.done_index is not None else "never done"
            console.print(Text(f"  {'':<{LABEL_WIDTH}} {_label(lane)}: {done}, after "
                               f"{_short(lane.late_after, 24)} was added (#{lane.late_after_index})", style=LATE_STYLE))


def legend(timeline: Timeline) -> str:
    """The marks this timeline draws, each with its glyph: "[ added · delta ] done  S D ✓ lifecycle  ─ span"."""
    drawn = [mark for lane in timeline.lanes for mark in lane.marks]
    lettered = dict.fromkeys(timeline.letters[m.type] for m in drawn if m.type in timeline.letters)
    kinds = {m.kind for m in drawn if m.type not in timeline.letters}
    words = [f"{GLYPHS[kind]} {what}" for kind, what in LEGEND if kind in kinds]
    words += [f"{GLYPHS[kind]} {kind}" for kind in ("lifecycle", "terminal") if kind in kinds]
    if lettered:
        words.append(f"{' '.join(lettered)} lifecycle")
    return "  ".join([*words, "─ span", "▲ finding"])


def _severities(timeline: Timeline, result: LintResult) -> dict[int, Severity]:
    """The worst finding per column (findings about the whole stream sit after the last event)."""
    worst: dict[int, Severity] = {}
    for index, numbers in timeline.findings_at.items():
        column = timeline.end_column if index is None else timeline.column(index)
        severity = max(result.findings[n].severity for n in numbers)
        if column not in worst or severity > worst[column]:
            worst[column] = severity
    return worst


def _row(lane: Lane, timeline: Timeline) -> Text:
    style = _lane_style(lane)
    cells: list[tuple[str, str]] = [(" ", "")] * (timeline.columns + 1)
    span = lane.span
    if span is not None:
        start, end = span
        last = timeline.column(end) if end is not None else timeline.end_column
        fill = LATE_STYLE if lane.late_after is not None else style
        for column in range(timeline.column(start), last + 1):
            cells[column] = ("─" if end is not None else "┄", fill)
    flagged = {timeline.column(i) for i in timeline.findings_at if i is not None and timeline.lane_of.get(i) == lane.key}
    for mark in lane.marks:
        mark_style = "bold " + style
        if mark.kind == "done" and lane.late_after is not None and mark.index == lane.done_index:
            mark_style = LATE_STYLE
        if mark.column in flagged:
            mark_style += " underline"
        cells[mark.column] = (_glyph(mark, timeline.letters), mark_style)
    text = Text()
    for glyph, cell_style in cells:
        text.append(glyph, style=cell_style)
    return text
