"""The tables of one stream's section in the HTML report: findings, clients, items.

Plain markup built from escaped strings; the page's script only sorts rows
and fills the details panel, so every table reads the same without it.
"""

from __future__ import annotations

from typing import Any

import orjson

from checker.clients import CLIENTS, describe
from checker.engine import LintResult
from checker.findings import Finding
from checker.report.html_svg import esc, short_id

# Accumulated texts beyond this are cut on the page (the report is for
# reading, and one runaway item must not make the file unopenable).
TEXT_CLIP = 20_000


def where(finding: Finding) -> str:
    return finding.position.label()


def findings_table(findings: list[Finding], result: LintResult) -> str:
    """The findings, one row each; the last column names the clients each breaks or degrades on this stream
    (checker.report.affected: the matrix's effects, never the rule's static list)."""
    from checker.report.affected import affected

    if not findings:
        return '<p class="none">No findings.</p>'
    rows = []
    for n, f in enumerate(findings):
        pos = f.position
        notes = []
        if f.occurrences > 1:
            notes.append(f'<span class="occ">×{f.occurrences}</span>')
        if f.known_deviation:
            notes.append(f'<div class="dev">known deviation: {esc(f.known_deviation)}</div>')
        rows.append(
            f'<tr data-f="{n}" data-sev="{int(f.severity)}" data-code="{esc(f.code)}" '
            f'data-pos="{pos.byte:012d}{n:06d}" tabindex="0">'
            f'<td><span class="sev sev-{f.severity}">{f.severity}</span></td>'
            f'<td class="code">{esc(f.code)}</td><td class="name">{esc(f.name)}</td>'
            f'<td class="where">{esc(where(f))}</td>'
            f'<td class="etype">{esc(pos.event_type or "")}</td>'
            f'<td class="msg">{esc(f.message)} {"".join(notes)}</td>'
            f'<td class="clients">{esc(affected(f, result).words())}</td></tr>'
        )
    return (
        '<table class="findings sortable"><thead><tr>'
        '<th data-sort="sev" aria-sort="none" title="sort by severity">severity</th>'
        '<th data-sort="code" title="sort by code">code</th><th>name</th>'
        '<th data-sort="pos" title="sort by position">line:byte #event</th><th>event</th><th>message</th>'
        '<th>clients it breaks or degrades</th></tr></thead><tbody>' + "".join(rows) + "</tbody></table>"
    )


def client_rows(result: LintResult, clients: list[str] | None) -> list[dict[str, Any]]:
    """One row per client: its verdict on this stream, the finding that decides it and what the user sees.

    From checker.compat's matrix when it is there; else derived from the
    findings' ``clients`` (every named client breaks), so the table exists in
    every report.
    """
    try:
        from checker import compat
    except ImportError:  # pragma: no cover - compat ships with the package
        compat = None  # type: ignore[assignment]
    rows: list[dict[str, Any]] = []
    if compat is not None and callable(getattr(compat, "matrix", None)):
        matrix = compat.matrix(result)
        for cell in matrix.cells:
            finding = cell.finding
            rows.append({"client": cell.client, "verdict": str(cell.verdict), "symptom": cell.symptom,
                         "finding": _number(result, finding), "code": finding.code if finding else None,
                         "where": where(finding) if finding else getattr(cell, "cause", None)})
        caveat = getattr(matrix, "caveat", None)
        if caveat:
            rows.append({"caveat": caveat})
    else:
        names = list(CLIENTS) + sorted({c for f in result.findings for c in f.clients} - set(CLIENTS))
        for name in names:
            first = next((f for f in result.findings if name in f.clients), None)
            rows.append({"client": name, "verdict": "breaks" if first else "ok", "symptom": first.message if first else None,
                         "finding": _number(result, first), "code": first.code if first else None,
                         "where": where(first) if first else None})
    if clients:
        rows = [row for row in rows if "caveat" in row or row["client"] in clients]
    return rows


def _number(result: LintResult, finding: Finding | None) -> int | None:
    if finding is None:
        return None
    for n, candidate in enumerate(result.findings):
        if candidate is finding:
            return n
    return None


def client_table(rows: list[dict[str, Any]]) -> str:
    body = []
    caveats = []
    real = any("real" in row for row in rows)
    for row in rows:
        if "caveat" in row:
            caveats.append(f'<p class="meta">{esc(row["caveat"])}</p>')
            continue
        verdict = str(row.get("verdict", ""))
        number = row.get("finding")
        link = ""
        if row.get("code"):
            attrs = f' data-f="{number}" tabindex="0"' if number is not None else ""
            link = f'<span class="flink"{attrs}>{esc(row["code"])}</span> <span class="meta">{esc(row.get("where") or "")}</span>'
        elif row.get("where"):  # decided by how the stream ended, not by a finding
            link = f'<span class="meta">{esc(row["where"])}</span>'
        body.append(
            f'<tr><td class="client" title="{esc(describe(str(row.get("client"))))}">{esc(row.get("client", ""))}</td>'
            f'<td><span class="verdict v-{esc(verdict)}">{esc(verdict)}</span></td>'
            f'<td>{link}</td><td class="symptom">{esc(row.get("symptom") or "")}</td>'
            + (f'<td class="real">{esc(row.get("real") or "")}</td>' if real else "") + "</tr>"
        )
    return ('<table class="clients"><thead><tr><th>client</th><th>verdict</th><th>decided by</th>'
            "<th>what the user sees</th>" + ("<th>the real client did</th>" if real else "")
            + "</tr></thead><tbody>" + "".join(body) + "</tbody></table>" + "".join(caveats))


def items_block(texts: list[dict[str, Any]] | None) -> str:
    """Each unit's accumulated text: a Responses item's parts, a chat choice's fields and calls, an Anthropic
    content block's text, thinking and signature, or tool input (whatever its machine kept)."""
    if not texts:
        return '<p class="none">No output items.</p>'
    out = []
    for item in texts:
        body = _item_body(item)
        if not body:
            body.append('<p class="none">nothing streamed</p>')
        out.append(f'<details class="item" open><summary>{_item_head(item)}</summary>{"".join(body)}</details>')
    return "".join(out)


def _item_head(item: dict[str, Any]) -> str:
    # A Responses item and a chat choice have an output_index; an Anthropic content block an index.
    where, index = ("output_index", item.get("output_index")) if "output_index" in item else ("index",
                                                                                               item.get("index"))
    item_id = item.get("id") or f"#{index}"
    state = "done" if item.get("done") else "never done"
    head = (f'<span class="itype">{esc(item.get("type") or "item")}</span> '
            f'<code title="{esc(item_id)}">{esc(short_id(str(item_id), 44))}</code> '
            f'<span class="meta">{where} {esc("—" if index is None else index)}, {state}</span>')
    if item.get("name"):
        head += f' <span class="meta">{esc(item["name"])}({esc(item.get("call_id") or "")})</span>'
    return head


def _item_body(item: dict[str, Any]) -> list[str]:
    body = []
    for key in ("content", "summary"):
        for part in item.get(key) or []:
            label = f'{key}[{part.get("index")}] {part.get("type") or ""}'
            body.append(_text(label, part.get("text") or "", bool(part.get("exact", True))))
    if item.get("type") == "function_call" or item.get("arguments"):
        arguments = item.get("arguments") or ""
        body.append(_text("arguments" + _json_note(arguments), arguments, bool(item.get("arguments_exact", True))))
    for streamed in item.get("tool") or []:  # a hosted-tool call's code, arguments, commands, outputs
        body.append(_text(streamed.get("label") or "input", streamed.get("text") or "",
                          bool(streamed.get("exact", True))))
    # An Anthropic block's text (or thinking), its signature, a tool_use block's joined input, redacted data.
    for key in ("text", "signature", "data"):
        if isinstance(item.get(key), str) and item[key]:
            body.append(_text("thinking" if key == "text" and item.get("type") == "thinking" else key, item[key],
                              True))
    if isinstance(item.get("input"), str):
        body.append(_text("input" + _json_note(item["input"]), item["input"], True))
    return body


def _text(label: str, text: str, exact: bool) -> str:
    clipped = len(text) > TEXT_CLIP
    note = ""
    if clipped or not exact:
        note = f' <span class="meta">(first {min(len(text), TEXT_CLIP):,} characters)</span>'
    return (f'<div class="text"><div class="tlabel">{esc(label)} <span class="meta">{len(text):,} chars</span>'
            f'{note}</div><pre>{esc(text[:TEXT_CLIP])}</pre></div>')


def _json_note(arguments: str) -> str:
    if not arguments:
        return ""
    try:
        orjson.loads(arguments)
    except orjson.JSONDecodeError:
        return " (not valid JSON)"
    return " (valid JSON)"
