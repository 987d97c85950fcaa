"""The HTML report: one self-contained page per run (``--format html --output report.html``).

Per capture (or probe scenario) a section with the swimlane picture
(``html_svg``), the findings table, the client matrix and the text each item
accumulated; an index on top with one row per capture and its verdict. CSS and
script are package data inlined into the page, and a Content-Security-Policy
forbids every fetch, so the file opens offline and a hostile capture cannot
make it load anything.

Everything from a capture is escaped: text with ``html.escape``, the per-event
data (raw JSON for the details panel) as JSON inside a
``<script type="application/json">`` with ``<``, ``>`` and ``&`` written as
``\\u003c`` etc., so no ``</script>`` in an event can end the block.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from typing import IO, Any

import orjson

from checker.engine import TRACE_DATA_CLIP, LintResult
from checker.findings import Finding, Severity
from checker.report import ReportOptions, Summary
from checker.report.html_svg import esc, render_lanes
from checker.report.html_tables import client_rows, client_table, findings_table, items_block
from checker.report.lanes import Timeline, arrival_times, build_timeline, dialect_of
from checker.report.spool import Spool
from checker.version import __version__

# Columns of the picture: past this many events, events are folded into columns.
MAX_COLUMNS = 1500
# Raw event JSON embedded per capture for the details panel: every event of a
# small capture; of a large one the flagged and structural events first.
MAX_RAW_EVENTS = 3000

CSP = ("default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; "
       "base-uri 'none'; form-action 'none'")


# An archive's report stays one page a browser opens: the first FULL_RUN captures each get a section (a run
# of a few hundred captures is drawn whole, as always); past them only failing captures do, up to
# MAX_SECTIONS in all, and the index lists at most MAX_INDEX_ROWS captures. The page says what it left out.
FULL_RUN = 300
MAX_SECTIONS = 500
MAX_INDEX_ROWS = 1000


@dataclass(slots=True)
class IndexRow:
    """What the index shows of one capture (never the result itself: the page must not hold the run)."""

    anchor: str | None  # None: no section on the page
    name: str
    failed: bool
    events: int
    counts: tuple[int, int, int]
    terminal: str | None
    codes: str
    http: dict[str, Any]


class HtmlReporter:
    """Renders one section per ``file()`` as it comes (spooled, so memory stays flat), and writes the page
    at ``finish()``."""

    def __init__(self, stream: IO[str], options: ReportOptions) -> None:
        self.stream = stream
        self.options = options
        self.sections = Spool()
        self.index: list[IndexRow] = []
        self.seen = 0
        self.left_out = {"failing": 0, "passing": 0}  # captures with no section
        self.unlisted = 0  # captures not in the index either

    def start(self) -> None:
        pass

    def file(self, name: str, result: LintResult) -> None:
        self.seen += 1
        failed = any(f.severity >= self.options.fail_on for f in result.findings)
        drawn = self.sections.count < MAX_SECTIONS and (failed or self.seen <= FULL_RUN)
        anchor = f"cap-{self.sections.count}" if drawn else None
        if anchor is not None:
            self.sections.add(render_section(anchor, name, result, self.options, failed))
        else:
            self.left_out["failing" if failed else "passing"] += 1
        if drawn or len(self.index) < MAX_INDEX_ROWS:
            self.index.append(IndexRow(anchor, name, failed, result.events,
                                       (result.count(Severity.ERROR), result.count(Severity.WARNING),
                                        result.count(Severity.INFO)),
                                       result.terminal, " ".join(result.codes()), _http_facts(result)))
        else:
            self.unlisted += 1

    def finish(self, summary: Summary) -> None:
        head, _, tail = render_page(self.options, summary, self.index, ["\0sections"],
                                    self._left_out_note()).partition("\0sections")
        # A capture's text may hold lone surrogates; the file must still be UTF-8.
        self.stream.write(_utf8(head))
        self.sections.file.seek(0)
        while block := self.sections.file.read(2**20):
            self.stream.write(_utf8(block))
        self.sections.file.close()
        self.stream.write(_utf8(tail))

    def _left_out_note(self) -> str:
        failing, passing = self.left_out["failing"], self.left_out["passing"]
        if not failing and not passing:
            return ""
        noun = _noun(self.options)
        parts = [f"This page draws {self.sections.count} of {self.seen} {noun}s: every one of the first "
                 f"{FULL_RUN}, then only failing ones, {MAX_SECTIONS} at most. Left out: {passing} passing and "
                 f"{failing} failing {noun}(s)"]
        if self.unlisted:
            parts.append(f"; {self.unlisted} of them are not in the index either")
        parts.append(". Every capture's findings: --format jsonl (or json).")
        return "".join(parts)


def _utf8(text: str) -> str:
    return text.encode("utf-8", "replace").decode("utf-8")


# -- the page -------------------------------------------------------------------


def _asset(name: str) -> str:
    return resources.files("checker.report").joinpath("assets", name).read_text(encoding="utf-8")


def render_page(options: ReportOptions, summary: Summary, index: list[IndexRow], sections: list[str],
                left_out: str = "") -> str:
    """The whole document: head with inline CSS, the run's totals and legend, the index, the sections."""
    title = f"sse-check {options.command} report"
    totals = (f"{summary.files} {_noun(options)}(s): {summary.failed_files} failed at --fail-on "
              f"{options.fail_on}; {summary.errors} error(s), {summary.warnings} warning(s), {summary.infos} info")
    errors = "".join(f'<li>{esc(e)}</li>' for e in summary.io_errors)
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{esc(CSP)}">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{_asset('report.css')}</style></head><body>"
        f'<header><h1>{esc(title)}</h1><p class="meta">sse-check {esc(__version__)} · profile '
        f"{esc(options.profile)} · fail on {esc(options.fail_on)}</p>"
        f'<p class="totals">{esc(totals)}</p>'
        + (f'<ul class="io-errors">{errors}</ul>' if errors else "")
        + (f'<p class="left-out">{esc(left_out)}</p>' if left_out else "")
        + _legend()
        + "</header><main>"
        + _index_table(index, options)
        + "".join(sections)
        + f"</main><script>{_asset('report.js')}</script></body></html>\n"
    )


def _noun(options: ReportOptions) -> str:
    return "scenario" if options.command == "probe" else "capture"


def _legend() -> str:
    return (
        '<p class="legend">Lanes: one per output item, plus the response lifecycle. '
        "<b>[</b> output_item.added · <b>•</b> delta · <b>|</b> content/summary part · <b>◆</b> text/arguments done · "
        "<b>]</b> output_item.done · <b>C P Q</b> created/in_progress/queued · <b>■</b> terminal event. "
        "The bar runs from an item's added to its done; an orange bar is an item whose done came after a later "
        "item was added. <b class=\"f\">▼</b> marks the event a finding was raised on: click it (or a table row) "
        "for the details.</p>"
    )


def _index_table(index: list[IndexRow], options: ReportOptions) -> str:
    live = any(row.http for row in index)
    rows = []
    for row in index:
        verdict = '<span class="verdict breaks">FAIL</span>' if row.failed else '<span class="verdict ok">ok</span>'
        errors, warnings, infos = row.counts
        link = (f'<a href="#{row.anchor}">{esc(row.name)}</a>' if row.anchor
                else f'{esc(row.name)} <span class="none">(not drawn)</span>')
        rows.append(
            f'<tr data-anchor="{row.anchor or ""}"><td>{link}</td><td>{verdict}</td>'
            f"<td class=\"n\">{row.events}</td><td class=\"n\">{errors}</td>"
            f"<td class=\"n\">{warnings}</td><td class=\"n\">{infos}</td>"
            f"<td>{esc(row.terminal or 'no terminal event')}</td>{_http_cell(row.http) if live else ''}"
            f"<td class=\"codes\">{esc(row.codes)}</td></tr>"
        )
    return (
        f'<section class="index"><h2>Index</h2><table class="index-table"><thead><tr><th>{_noun(options)}</th>'
        "<th>verdict</th><th>events</th><th>errors</th><th>warnings</th><th>info</th><th>ended by</th>"
        + ("<th>HTTP · TTFB · total</th>" if live else "")
        + "<th>rules</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table></section>"
    )


def _http_cell(info: dict[str, Any]) -> str:
    recorded = info.get("timings")
    timings: dict[str, Any] = recorded if isinstance(recorded, dict) else {}
    parts = [str(info.get("status", "–"))]
    for key in ("first_byte", "total"):
        value = timings.get(key)
        parts.append(_seconds(value) if isinstance(value, (int, float)) else "–")
    return f"<td>{esc(' · '.join(parts))}</td>"


# -- one capture ------------------------------------------------------------------


def render_section(anchor: str, name: str, result: LintResult, options: ReportOptions, failed: bool) -> str:
    """One capture's (or scenario's) section: lanes, details panel, findings, clients, items, data."""
    timeline = build_timeline(result, max_columns=MAX_COLUMNS)
    times = arrival_times(result)
    verdict = '<span class="verdict breaks">FAIL</span>' if failed else '<span class="verdict ok">ok</span>'
    facts = (f"{dialect_of(result).title}: {result.events} events, {result.bytes:,} bytes, profile "
             f"{result.profile}, ended by {result.terminal or 'no terminal event'}")
    if result.response_id:
        facts += f", response {result.response_id}"
    parts = [
        f'<section class="capture" id="{anchor}" data-name="{esc(name)}" data-failed="{str(failed).lower()}">',
        f"<h2>{verdict} <span class=\"cname\">{esc(name)}</span></h2>",
        f'<p class="meta">{esc(facts)}</p>',
        _timings(result),
        _lanes_block(timeline, result, times),
        '<aside class="details" hidden><button type="button" class="close" aria-label="close">×</button>'
        '<h4 class="d-title"></h4><div class="d-findings"></div><p class="d-event"></p>'
        '<pre class="d-raw"></pre></aside>',
        f"<h3>Findings ({len(result.findings)})</h3>",
        findings_table(result.findings, result),
        "<h3>Clients</h3>",
        client_table(_client_matrix(result, options, name)),
        "<h3>Items: accumulated text and arguments</h3>",
        items_block(result.texts),
        _data_script(result, timeline, times),
        "</section>",
    ]
    return "".join(parts)


def _lanes_block(timeline: Timeline, result: LintResult, times: dict[int, float]) -> str:
    if result.trace is None:
        if _http_facts(result):
            return '<p class="none">No event stream to draw: the answer was not streamed.</p>'
        return '<p class="none">No event trace (the report was produced without one).</p>'
    svg = render_lanes(timeline, result.findings, times)
    if not svg:
        return '<p class="none">No events to draw: the body is not an event stream.</p>'
    notes = []
    if timeline.per_column > 1:
        notes.append(f"{timeline.events:,} events are folded into {timeline.columns:,} columns "
                     f"({timeline.per_column} events each); each lane shows the most significant event of a column "
                     f"(an item's added or done before its deltas).")
    if timeline.folded_lanes:
        notes.append(f"{timeline.folded_lanes} item(s) beyond the first lanes share the lane '(more items)'.")
    if len(result.trace) > MAX_RAW_EVENTS:
        notes.append(f"Raw JSON is kept for {MAX_RAW_EVENTS:,} of the {len(result.trace):,} events "
                     "(flagged and structural events first).")
    toggle = ""
    if times:
        toggle = (
            '<div class="xmode" role="radiogroup" aria-label="x axis">x axis: '
            '<button type="button" class="on" data-mode="index">event index</button>'
            '<button type="button" data-mode="time">arrival time</button></div>'
        )
    note = "".join(f'<p class="fold-note">{esc(n)}</p>' for n in notes)
    return f'<div class="lanes-wrap">{toggle}{note}{svg}</div>'


def _http_facts(result: LintResult) -> dict[str, Any]:
    """What a live probe recorded about the exchange (``ProbeLintResult.http``); {} for a capture."""
    info = getattr(result, "http", None)
    return info if isinstance(info, dict) else {}


# The probe's timings worth a place on the page, in reading order.
_TIMING_NAMES = (("first_byte", "TTFB"), ("headers", "headers"), ("first_event", "first event"),
                 ("first_delta", "first delta"), ("largest_gap", "largest gap"), ("terminal", "terminal event"),
                 ("total", "total"), ("closed_after_terminal", "closed after terminal"))


def _timings(result: LintResult) -> str:
    info = _http_facts(result)
    timings = info.get("timings") if isinstance(info.get("timings"), dict) else getattr(result, "timings", None)
    cells = []
    if info:
        status = info.get("status")
        head = f"HTTP {status}" if status is not None else "no response"
        if info.get("content_type"):
            head += f" {info['content_type']}"
        cells.append(f"<span><b>{esc(head)}</b></span>")
        ending = info.get("ending")
        if isinstance(ending, dict) and ending.get("kind"):
            cells.append(f"<span><b>ended</b> {esc(ending['kind'])}</span>")
    if isinstance(timings, dict):
        for key, label in _TIMING_NAMES:
            if isinstance(timings.get(key), (int, float)):
                cells.append(f"<span><b>{esc(label)}</b> {esc(_seconds(timings[key]))}</span>")
    return f'<p class="timings">{"".join(cells)}</p>' if cells else ""


def _seconds(value: float) -> str:
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"


def _client_matrix(result: LintResult, options: ReportOptions, name: str) -> list[dict[str, Any]]:
    """The rows of the client matrix, with what the real clients did when the run ran them (--oracle)."""
    chosen = getattr(options, "clients", None)
    names = [str(c) for c in chosen] if isinstance(chosen, (list, tuple, set, frozenset)) and chosen else None
    rows = client_rows(result, names)
    oracles = getattr(options, "oracles", None)
    comparisons = oracles.get(name) if isinstance(oracles, dict) else None
    if isinstance(comparisons, dict):
        for row in rows:
            comparison = comparisons.get(row.get("client"))
            if comparison is not None:
                row["real"] = (f"{comparison.outcome.version}: {comparison.outcome.summary} "
                               f"({comparison.agreement.value}: {comparison.why})")
    return rows


def _data_script(result: LintResult, timeline: Timeline, times: dict[int, float]) -> str:
    data = {
        "findings": [_finding_data(f, result) for f in result.findings],
        "events": _events_data(result, timeline, times),
        "clip": TRACE_DATA_CLIP,
    }
    return f'<script type="application/json" class="capture-data">{script_json(data)}</script>'


def _finding_data(f: Finding, result: LintResult) -> dict[str, Any]:
    from checker.report.affected import affected

    d = f.as_dict()
    d["where"] = f"{f.position.line}:{f.position.byte}"
    d["affected"] = affected(f, result).words()  # the details panel's line: this stream's effects, not Rule.clients
    return d


def _events_data(result: LintResult, timeline: Timeline, times: dict[int, float]) -> dict[str, Any]:
    trace = result.trace or []
    chosen: list[Any]
    if len(trace) <= MAX_RAW_EVENTS:
        chosen = trace
    else:
        flagged = {i for i in timeline.findings_at if i is not None}
        drawn = {m.index for lane in timeline.lanes for m in lane.marks}
        ranked = sorted(trace, key=lambda e: (e.index not in flagged, e.type.endswith(".delta"),
                                              e.index not in drawn, e.index))
        chosen = sorted(ranked[:MAX_RAW_EVENTS], key=lambda e: e.index)
    out: dict[str, Any] = {}
    for e in chosen:
        raw = e.data.decode("utf-8", "replace") if e.data else None
        out[str(e.index)] = {"type": e.type, "lane": timeline.lane_of.get(e.index, e.lane), "line": e.line,
                             "byte": e.byte, "at": times.get(e.index), "raw": raw,
                             "clipped": len(e.data) >= TRACE_DATA_CLIP}
    return out


def script_json(value: Any) -> str:
    """JSON safe inside <script>: no '<', '>' or '&' survives, so no '</script>' or '<!--'."""
    try:
        text = orjson.dumps(value, default=str).decode("utf-8")
    except (TypeError, orjson.JSONEncodeError):
        text = json.dumps(value, ensure_ascii=True, default=str)
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))
