"""The swimlane picture of one stream as inline SVG (for the HTML report).

Every drawn element carries its event index and both x positions
(``data-xi`` along the event index, ``data-xt`` along arrival time) so the
page's script can switch axes without layout code, and a test can read the
geometry. All text is escaped here; nothing from the capture reaches the
markup unescaped.
"""

from __future__ import annotations

import html

from checker.findings import Finding
from checker.report.lanes import OVERFLOW_LANE, RESPONSE_LANE, Lane, Mark, Timeline

LABEL_W = 250
PAD = 12
LANE_H = 30
AXIS_H = 26
NOTE_W = 330  # room at the right for "done after … was added"
# Unit types drawn alike across dialects (the page's styles know reasoning, message and function_call lanes).
_LANE_CLASSES = {"reasoning": "reasoning", "thinking": "reasoning", "redacted_thinking": "reasoning",
                 "message": "message", "text": "message", "choice": "message",
                 "function_call": "function_call", "tool_use": "function_call", "server_tool_use": "function_call"}

# Mark shapes, centred on (0, 0); the same vocabulary as the terminal timeline.
_SHAPES = {
    "added": '<path d="M3,-9H-2V9H3V6H1V-6H3Z"/>',
    "done": '<path d="M-3,-9H2V9H-3V6H-1V-6H-3Z"/>',
    "delta": '<circle r="2.2"/>',
    "part": '<rect x="-1" y="-6" width="2" height="12"/>',
    "textdone": '<path d="M0,-5L5,0L0,5L-5,0Z"/>',
    "lifecycle": '<circle r="5.5"/>',
    "terminal": '<rect x="-5.5" y="-5.5" width="11" height="11" rx="2"/>',
    "error": '<path d="M0,-7L7,6H-7Z"/>',
    "sentinel": '<rect x="-4" y="-4" width="8" height="8" transform="rotate(45)"/>',
    "other": '<circle r="3.5"/>',
    "keepalive": '<circle r="1.5"/>',
}


def esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def lane_class(lane: Lane) -> str:
    if lane.key == RESPONSE_LANE:
        return "lane-response"
    drawn_as = _LANE_CLASSES.get(lane.item_type or "")
    return f"lane-{drawn_as}" if drawn_as is not None else "lane-other"


def short_id(text: str, width: int = 26) -> str:
    return text if len(text) <= width else text[: width // 2 - 1] + "…" + text[-(width // 2) + 1:]


class Geometry:
    """Where column c and time t fall, and how wide the drawing is."""

    def __init__(self, timeline: Timeline, times: dict[int, float]) -> None:
        self.columns = max(1, timeline.columns + 1)  # + the end column
        self.step = max(3.0, min(26.0, 1100.0 / self.columns))
        self.left = PAD  # the labels are a separate picture that does not scroll
        self.width = self.columns * self.step
        self.times = times
        self.t0 = min(times.values()) if times else 0.0
        span = (max(times.values()) - self.t0) if times else 0.0
        self.tspan = span if span > 0 else 1.0

    def xi(self, column: int) -> float:
        return round(self.left + (column + 0.5) * self.step, 1)

    def attrs(self, xi: float, xt: float) -> str:
        """The x data attributes of one element (``data-xt`` only when there are arrival times)."""
        timed = f' data-xt="{xt}"' if self.times else ""
        return f'data-x="{xi}" data-xi="{xi}"{timed}'

    def xt(self, index: int | None, column: int) -> float:
        if index is None or index not in self.times:
            return self.xi(column)
        fraction = (self.times[index] - self.t0) / self.tspan
        return round(self.left + 0.5 * self.step + fraction * (self.width - self.step), 1)


def render_lanes(timeline: Timeline, findings: list[Finding], times: dict[int, float]) -> str:
    """The lanes of one stream: a fixed column of labels beside the scrolling picture ('' when empty)."""
    if not timeline.lanes:
        return ""
    geo = Geometry(timeline, times)
    height = len(timeline.lanes) * LANE_H + AXIS_H + 8
    width = round(geo.left + geo.width + NOTE_W)
    out = [
        '<div class="lanes-row">',
        _labels(timeline, height, bool(times)),
        '<div class="scroll">',
        f'<svg class="lanes" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" data-mode="index" data-per-column="{timeline.per_column}" '
        f'role="img" aria-label="event timeline, one lane per output item">'
    ]
    flagged: dict[str, list[tuple[int | None, list[int]]]] = {}
    for index, numbers in timeline.findings_at.items():
        key = RESPONSE_LANE if index is None else timeline.lane_of.get(index, RESPONSE_LANE)
        flagged.setdefault(key, []).append((index, numbers))
    for row, lane in enumerate(timeline.lanes):
        out.append(_lane(lane, row, timeline, geo, findings, flagged.get(lane.key, [])))
    out.append(_axes(timeline, geo, len(timeline.lanes) * LANE_H))
    out.append("</svg></div></div>")
    return "".join(out)


def _labels(timeline: Timeline, height: int, timed: bool) -> str:
    """The lane names, outside the horizontal scroll so they stay in view on long streams."""
    out = [f'<svg class="lane-labels" xmlns="http://www.w3.org/2000/svg" width="{LABEL_W}" height="{height}" '
           f'viewBox="0 0 {LABEL_W} {height}" aria-hidden="true">']
    for row, lane in enumerate(timeline.lanes):
        y = row * LANE_H
        out.append(
            f'<g class="label-row {lane_class(lane)}" transform="translate(0,{y})">'
            f'<rect class="lane-bg" x="0" y="1" width="{LABEL_W}" height="{LANE_H - 2}"/>'
            f'<text class="lane-label" x="8" y="{LANE_H / 2 + 4}">{esc(_label(lane))}'
            f"<title>{esc(lane.label)}</title></text></g>"
        )
    axis_y = len(timeline.lanes) * LANE_H + 16
    out.append(f'<text class="axis-label axis-index" x="8" y="{axis_y}">event index</text>')
    if timed:
        out.append(f'<text class="axis-label axis-time" x="8" y="{axis_y}" display="none">arrival time</text>')
    out.append("</svg>")
    return "".join(out)


def _lane(lane: Lane, row: int, timeline: Timeline, geo: Geometry, findings: list[Finding],
          flagged: list[tuple[int | None, list[int]]]) -> str:
    y = row * LANE_H
    mid = LANE_H / 2
    lane_type = lane.item_type or ""
    parts = [
        f'<g class="lane {lane_class(lane)}" data-lane="{esc(lane.key)}" data-type="{esc(lane_type)}" '
        f'transform="translate(0,{y})">',
        f'<rect class="lane-bg" x="0" y="1" width="{round(geo.left + geo.width)}" height="{LANE_H - 2}"/>',
    ]
    span = lane.span
    if span is not None:
        parts.append(_bar(lane, span, timeline, geo, mid))
    for mark in lane.marks:
        parts.append(_mark(mark, lane, geo, mid, timeline))
    parts.append(_finding_marks(flagged, timeline, geo, findings))
    parts.append("</g>")
    return "".join(parts)


def _label(lane: Lane) -> str:
    if lane.key in (RESPONSE_LANE, OVERFLOW_LANE):
        return lane.label
    kind = lane.item_type or "item"
    # About 34 monospace characters fit the label column.
    return f"{kind} {short_id(lane.key, max(10, 33 - len(kind)))}"


def _bar(lane: Lane, span: tuple[int, int | None], timeline: Timeline, geo: Geometry, mid: float) -> str:
    start, end = span
    c1 = timeline.column(start)
    c2 = timeline.column(end) if end is not None else timeline.end_column
    x1i, x2i = geo.xi(c1), geo.xi(c2)
    x1t, x2t = geo.xt(start, c1), geo.xt(end, c2) if end is not None else geo.xi(c2)
    classes = ["bar"]
    if lane.late_after is not None:
        classes.append("late")
    if end is None:
        classes.append("open")
    title = f"{lane.label}: added #{start}, " + (f"done #{end}" if end is not None else "never done")
    if lane.late_after is not None:
        title += f"; done after {lane.late_after} was added (#{lane.late_after_index})"
    note = ""
    if lane.late_after is not None:
        note_x = x2i + 10
        what = "done after" if end is not None else "never done; after"
        note = (f'<text class="late-note" x="{note_x}" y="{mid + 4}" {geo.attrs(note_x, x2t + 10)}>'
                f'{esc(what)} {esc(short_id(lane.late_after, 22))} was added</text>')
    return (
        f'<rect class="{" ".join(classes)}" data-start="{start}" data-end="{"" if end is None else end}" '
        f'data-x1i="{x1i}" data-x2i="{x2i}" data-x1t="{x1t}" data-x2t="{x2t}" '
        f'x="{x1i}" y="{mid - 5}" width="{max(1.0, round(x2i - x1i, 1))}" height="10" rx="3">'
        f"<title>{esc(title)}</title></rect>{note}"
    )


def _mark(mark: Mark, lane: Lane, geo: Geometry, mid: float, timeline: Timeline) -> str:
    xi, xt = geo.xi(mark.column), geo.xt(mark.index, mark.column)
    classes = f"mark k-{mark.kind}"
    if mark.kind == "done" and lane.late_after is not None and mark.index == lane.done_index:
        classes += " late"
    if mark.kind == "terminal":
        classes += " t-" + mark.type.rsplit(".", 1)[-1]
    letter = timeline.letters.get(mark.type, "") if mark.kind == "lifecycle" else ""
    title = f"#{mark.index} {mark.type}"
    if mark.folded > 1:
        title += f" (+{mark.folded - 1} more event(s) of this lane in this column)"
    if mark.index in timeline.findings_at:
        classes += " flagged"
    text = f'<text class="letter" y="3.5">{letter}</text>' if letter else ""
    return (
        f'<g class="{classes}" data-i="{mark.index}" data-kind="{mark.kind}" {geo.attrs(xi, xt)} '
        f'transform="translate({xi},{mid})" tabindex="0">{_SHAPES[mark.kind]}{text}{_hit(geo.step)}'
        f"<title>{esc(title)}</title></g>"
    )


def _hit(width: float, height: float = 22.0) -> str:
    """A transparent target so a 4-pixel delta dot is still easy to click."""
    w = round(max(6.0, min(width, 14.0)))
    h = round(height)
    return f'<rect class="hit" x="{-w / 2:g}" y="{-h / 2:g}" width="{w}" height="{h}"/>'


def _finding_marks(flagged: list[tuple[int | None, list[int]]], timeline: Timeline, geo: Geometry,
                   findings: list[Finding]) -> str:
    """One marker per flagged event of a lane (or the stream's end) above the lane's mark."""
    out: list[str] = []
    for index, numbers in flagged:
        column = timeline.end_column if index is None else timeline.column(index)
        worst = max(findings[n].severity for n in numbers)
        xi = geo.xi(column)
        xt = geo.xt(index, column)
        codes = ", ".join(dict.fromkeys(findings[n].code for n in numbers))
        where = f"#{index}" if index is not None else "the stream as a whole"
        count = f'<text class="count" x="6" y="-6">{len(numbers)}</text>' if len(numbers) > 1 else ""
        out.append(
            f'<g class="fmark sev-{worst}" data-fs="{" ".join(map(str, numbers))}" '
            f'data-i="{"" if index is None else index}" {geo.attrs(xi, xt)} '
            f'transform="translate({xi},6)" tabindex="0" role="button">'
            f'<path d="M0,5L-5,-4H5Z"/>{count}{_hit(12.0, 11.0)}<title>{esc(codes)} at {esc(where)} (click for details)</title></g>'
        )
    return "".join(out)


def _axes(timeline: Timeline, geo: Geometry, y: int) -> str:
    out = [f'<g class="axis axis-index" transform="translate(0,{y})">']
    step = _nice_step(timeline.events, 12)
    index = 0
    while index <= max(0, timeline.events - 1):
        x = geo.xi(timeline.column(index))
        out.append(f'<line x1="{x}" x2="{x}" y1="0" y2="5"/><text x="{x}" y="17">#{index}</text>')
        index += step
    end_x = geo.xi(timeline.end_column)
    out.append(f'<text class="end" x="{end_x}" y="17">end</text></g>')
    if geo.times:
        out.append(f'<g class="axis axis-time" transform="translate(0,{y})" display="none">')
        span = geo.tspan
        tick = _nice_seconds(span / 8)
        t = 0.0
        while t <= span + 1e-9:
            x = round(geo.left + 0.5 * geo.step + (t / span) * (geo.width - geo.step), 1)
            out.append(f'<line x1="{x}" x2="{x}" y1="0" y2="5"/><text x="{x}" y="17">{_seconds(t)}</text>')
            t += tick
        out.append("</g>")
    return "".join(out)


def _nice_step(total: int, ticks: int) -> int:
    raw = max(1, total // max(1, ticks))
    for base in (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000):
        if base >= raw:
            return base
    magnitude = 10 ** (len(str(raw)) - 1)
    return -(-raw // magnitude) * magnitude


def _nice_seconds(raw: float) -> float:
    for base in (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300):
        if base >= raw:
            return base
    return 600.0


def _seconds(t: float) -> str:
    return f"{t * 1000:.0f} ms" if t < 1 else f"{t:.2f} s"

