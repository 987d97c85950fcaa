"""A compact terminal timeline: one lane per output item, events along the index."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from checker.engine import LintResult

# One character per event kind; the last word of the event type decides.
MARKS = {"added": "+", "delta": "·", "done": "=", "created": "C", "in_progress": "P", "queued": "Q",
         "completed": "✓", "incomplete": "I", "failed": "F"}


def _mark(event_type: str) -> str:
    if event_type == "response.output_item.done":
        return "]"
    if event_type == "response.output_item.added":
        return "["
    last = event_type.rsplit(".", 1)[-1]
    return MARKS.get(last, "•")


def render_timeline(console: Console, result: LintResult) -> None:
    trace = result.trace or []
    if not trace:
        return
    width = max(20, min(100, (console.width or 100) - 28))
    total = len(trace)
    per_col = max(1, -(-total // width))
    lanes: dict[str, list[str]] = {}
    for entry in trace:
        lanes.setdefault(entry.lane, [" "] * (-(-total // per_col)))
    flagged = {f.position.event_index for f in result.findings if f.position.event_index is not None}
    for entry in trace:
        col = entry.index // per_col if entry.index < total else -1
        row = lanes[entry.lane]
        mark = _mark(entry.type)
        # Within a bucket the item's boundaries win over its deltas.
        if row[col] in (" ", "·") or mark in "[]":
            row[col] = mark
    console.print(Text(f"  timeline ({per_col} event(s) per column; [ added, · delta, = text done, ] item done, "
                       f"! finding)", style="dim"))
    flagged_cols = {i // per_col for i in flagged}
    ruler = "".join("!" if c in flagged_cols else " " for c in range(len(next(iter(lanes.values())))))
    for lane, row in lanes.items():
        label = lane if len(lane) <= 22 else lane[:10] + "…" + lane[-11:]
        console.print(Text(f"  {label:<23} ") + Text("".join(row), style="bold"))
    console.print(Text(f"  {'findings':<23} ") + Text(ruler, style="bold red"))
