"""The live replay's report: the cache table per family, the RPL findings and each request's stream verdict,
as text (80 columns) or one JSON document (:func:`report_document`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import IO, Any

from rich.table import Table
from rich.text import Text

from checker.console import make_console
from checker.findings import Finding, Severity
from checker.live import adapters
from checker.replay import live
from checker.replay.live_run import Exchange, LiveRun, Verdict
from checker.version import __version__

REPORT_VERSION = 1


def _counts(findings: Sequence[Finding]) -> dict[str, int]:
    return {"errors": sum(f.severity == Severity.ERROR for f in findings),
            "warnings": sum(f.severity == Severity.WARNING for f in findings),
            "infos": sum(f.severity == Severity.INFO for f in findings)}


def _exchange(run: LiveRun, family: str, variant: str, turn: int) -> Exchange | None:
    return next((e for e in run.exchanges if (e.family, e.variant, e.turn) == (family, variant, turn)), None)


def report_document(run: LiveRun, verdict: Verdict) -> dict[str, Any]:
    """The JSON report of a live replay: one versioned document."""
    analysis = verdict.analysis
    families = []
    for family in live.FAMILIES:
        variants = []
        for row in analysis.rows:
            if row.family != family:
                continue
            entry = row.as_dict()
            exchange = _exchange(run, row.family, row.variant, 2)
            findings = exchange.findings if exchange else []
            entry["request"] = exchange.name if exchange else None
            entry["sent_back"] = [f.as_dict() for f in exchange.sent_back] if exchange else []
            entry["verdict"] = {"failed": any(f.severity >= verdict.fail_on for f in findings), **_counts(findings)}
            variants.append(entry)
        families.append({"family": family, "about": live.FAMILY_ABOUT[family], "variants": variants,
                         "template": analysis.template if family == "new_user" else None})
    requests = []
    for exchange in run.exchanges:
        requests.append({"name": exchange.name, "family": exchange.family, "variant": exchange.variant,
                         "turn": exchange.turn, "http": exchange.http,
                         "findings": [f.as_dict() for f in exchange.findings],
                         "failed": any(f.severity >= verdict.fail_on for f in exchange.findings)})
    every = [*verdict.findings, *(f for e in run.exchanges for f in e.findings)]
    return {
        "version": REPORT_VERSION,
        "tool": {"name": "sse-check", "version": __version__},  # the same shape in every command's report
        "command": "replay",
        "mode": "live",
        "target": {"url": run.url, "model": run.model, "dialect": run.dialect},
        "profile": verdict.profile,
        "fail_on": str(verdict.fail_on),
        "aborted": run.aborted,
        "unmeasured": analysis.unmeasured,
        "notes": list(run.notes),
        "families": families,
        "findings": [f.as_dict() for f in verdict.findings],
        "requests": requests,
        "measurement": run.measurement.as_dict(),
        "summary": {"requests": len(run.exchanges), **_counts(every), "failed": verdict.failed(run)},
    }


def _cell(value: Any) -> str:
    return "–" if value is None else str(value)


def _span(values: Sequence[int | None]) -> str:
    known = sorted({v for v in values if v is not None})
    if not known:
        return "–"
    return str(known[0]) if len(known) == 1 else f"{known[0]}–{known[-1]}"


def _verdict_text(findings: Sequence[Finding], fail_on: Severity) -> Text:
    counts = _counts(findings)
    tail = f" {counts['errors']}/{counts['warnings']}/{counts['infos']}"
    if any(f.severity >= fail_on for f in findings):
        return Text.assemble(("FAIL", "bold red"), (tail, "dim"))
    return Text.assemble(("ok", "green"), (tail, "dim"))


_SEVERITY_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}


def _finding_grid(rows: Sequence[tuple[str, Severity, Text]]) -> Table:
    """Findings as lint shows them: code, severity, then the message wrapped under itself."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(width=1)
    grid.add_column(no_wrap=True, style="bold")
    grid.add_column(no_wrap=True, width=7)
    grid.add_column(overflow="fold")
    for code, severity, message in rows:
        grid.add_row("", code, Text(str(severity), style=_SEVERITY_STYLE[severity]), message)
    return grid


def render_text(run: LiveRun, verdict: Verdict, stream: IO[str], *, color: str = "auto") -> None:
    console = make_console(stream, color)
    console.print(Text.assemble(("live replay ", "bold"), run.url, f" · model {run.model} · dialect {run.dialect}"
                                f" · profile {verdict.profile}"))
    firsts = [e for e in run.exchanges if e.turn == 1]
    if firsts:
        console.print(_turn1_line(run, firsts, verdict))
    for note in run.notes:
        console.print(Text(f"note: {note}", style="yellow"))
    for family in live.FAMILIES:
        rows = [r for r in verdict.analysis.rows if r.family == family]
        if rows:
            _print_family(console, run, verdict, family, rows)
    if run.aborted or (verdict.analysis.unmeasured and not run.measurement.pairs):
        console.print(Text(f"\nnothing measured: {run.aborted or verdict.analysis.unmeasured}", style="yellow"))
    console.print()
    if verdict.findings:
        console.print(Text("replay findings", style="bold"))
        console.print(_finding_grid([(f.code, f.severity, Text(f.message)) for f in verdict.findings]))
    else:
        console.print(Text("replay findings: none", style="green"))
    _print_stream_findings(console, run, verdict)
    every = [*verdict.findings, *(f for e in run.exchanges for f in e.findings)]
    counts = _counts(every)
    failed = sum(any(f.severity >= verdict.fail_on for f in e.findings) for e in run.exchanges)
    console.print(f"{len(run.exchanges)} request(s), {failed} failed at --fail-on {verdict.fail_on}; "
                  f"{counts['errors']} error(s), {counts['warnings']} warning(s), {counts['infos']} info")


def _turn1_line(run: LiveRun, firsts: list[Exchange], verdict: Verdict) -> Text:
    """Turn 1, sent before each turn 2: its answers, its usage and what followed the reasoning."""
    t1 = [p.turn1 for p in run.measurement.pairs] or []
    statuses = sorted({e.http["status"] for e in firsts if isinstance(e.http.get("status"), int)})
    answers = "/".join([*(f"HTTP {s}" for s in statuses)] + (
        ["no answer"] if any(not isinstance(e.http.get("status"), int) for e in firsts) else []))
    line = Text(f"turn 1 (sent before each turn 2): {len(firsts)}× {answers}")
    if not t1:
        return line
    after = t1[0].after_reasoning
    calls = sum(kind == "function_call" for kind in after)
    then = f"then {calls} function call{'s' if calls != 1 else ''}" if calls else "then " + (
        ", ".join(after) or "nothing")
    source = {"usage": "usage", "deltas": "one per delta"}.get(t1[0].reasoning_source or "", "")
    line.append(f" · input_tokens {_span([c.input_tokens for c in t1])}"
                f" · output_tokens {_span([c.output_tokens for c in t1])}"
                f" · reasoning ≈{_span([c.reasoning_tokens for c in t1])} tokens"
                + (f" ({source})" if source else "") + f", {then} · verdict ")
    line.append_text(_verdict_text([f for e in firsts for f in e.findings], verdict.fail_on))
    return line


def _print_family(console: Any, run: LiveRun, verdict: Verdict, family: str, rows: list[Any]) -> None:
    """One family's cache table (a row per variant), its boundaries and what the template does."""
    console.print()
    console.print(Text.assemble((family, "bold"), f": {live.FAMILY_ABOUT[family]}"))
    # One space between columns: at 80 columns every header stays whole and "reuse stopped" wraps.
    table = Table(box=None, pad_edge=False, padding=(0, 1, 0, 0))
    table.add_column("variant", no_wrap=True)
    table.add_column("HTTP", no_wrap=True)
    third = _third_column(rows)
    for column in ("input_tokens", "cached_tokens", third):
        table.add_column(column, justify="right", no_wrap=True)
    table.add_column("reuse", justify="right", no_wrap=True)
    table.add_column("reuse stopped", overflow="fold")
    table.add_column("verdict", no_wrap=True)
    for row in rows:
        table.add_row(*_variant_cells(run, verdict, row, third))
    console.print(table)
    legend = adapters.get(run.dialect).usage_legend
    if legend:
        console.print(Text(legend, style="dim"))
    exact = next((r for r in rows if r.variant == "exact" and r.bounds is not None), None)
    if exact is not None and exact.bounds is not None:
        b = exact.bounds
        beyond = any(r.reuse is not None and r.reuse > 1 for r in rows)
        console.print(Text(f"boundaries: previous prompt {b.previous_prompt} · + reasoning "
                           f"≈{_cell(b.reasoning_end)} · + whole output ≈{_cell(b.output_end)} "
                           "(reuse: cached tokens ÷ the previous prompt"
                           # "reuse 103%" read as a bug: it is a cache that went on past the previous prompt
                           + ("; above 100%: the cache went on into the reasoning or output that followed it"
                              if beyond else "") + ")", style="dim"))
    sent = _sent_back_line(run, rows)
    if sent is not None:
        console.print(sent)
    if family == "new_user" and verdict.analysis.template is not None:
        console.print(Text(live.TEMPLATE_TEXT[verdict.analysis.template], style="dim"))


def _sent_back_line(run: LiveRun, rows: Sequence[Any]) -> Text | None:
    """What each variant sent back of the reasoning, as the proxy's history checks (RPL0xx) judge it."""
    parts = []
    for row in rows:
        exchange = _exchange(run, row.family, row.variant, 2)
        if exchange is None:
            continue
        codes = sorted({f.code for f in exchange.sent_back})
        parts.append(f"{row.variant} " + (", ".join(codes) if codes else "as the rule wants"))
    if not parts:
        return None
    return Text("sent back (the proxy's RPL checks): " + " · ".join(parts), style="dim")


def _third_column(rows: Sequence[Any]) -> str:
    """llama.cpp's ``cache_n`` where reported, else the tokens written to the cache where reported
    (Anthropic's cache_creation_input_tokens), else ``cache_n`` (all dashes)."""
    if any(r.turn2.cache_n is not None for r in rows) or not any(r.turn2.cache_written is not None for r in rows):
        return "cache_n"
    return "cache_written"


def _variant_cells(run: LiveRun, verdict: Verdict, row: Any, third: str = "cache_n") -> list[Any]:
    t2 = row.turn2
    if t2.skipped:
        return [row.variant, "–", "–", "–", "–", "–", Text(f"not sent: {t2.skipped}", style="yellow"), ""]
    exchange = _exchange(run, row.family, row.variant, 2)
    if not t2.ok:
        stop = Text(t2.error or "no answer", style="red")
    else:
        stop = Text(row.stop.text if row.stop else "not reported")
        if t2.error:
            stop.append(f" ({t2.error})", style="yellow")
    reuse = f"{row.reuse * 100:.0f}%" if row.reuse is not None else "–"
    return [row.variant, _cell(t2.status), _cell(t2.input_tokens), _cell(t2.cached_tokens), _cell(getattr(t2, third)),
            reuse, stop, _verdict_text(exchange.findings if exchange else [], verdict.fail_on)]


def _print_stream_findings(console: Any, run: LiveRun, verdict: Verdict) -> None:
    """Stream findings by rule: the first message, and in how many requests (--format json has them all)."""
    grouped: dict[tuple[str, Severity], tuple[str, list[str]]] = {}
    for exchange in run.exchanges:
        for finding in exchange.findings:
            if finding.severity >= verdict.fail_on:
                _, names = grouped.setdefault((finding.code, finding.severity), (finding.message, []))
                if exchange.name not in names:
                    names.append(exchange.name)
    if not grouped:
        return
    console.print(Text(f"stream findings at or above --fail-on {verdict.fail_on} (the first of each rule)",
                       style="bold"))
    lines: list[tuple[str, Severity, Text]] = []
    for (code, severity), (message, names) in grouped.items():
        where = names[0] if len(names) == 1 else f"{len(names)} requests: {names[0]}, …"
        lines.append((code, severity, Text.assemble(message, (f"  ({where})", "dim"))))
    console.print(_finding_grid(lines))
