"""The capability table and the per-client readiness at the end of the probe's text report.

The rows are plain JSON, computed by checker.surface (capabilities, readiness) and kept in the report's
``extra``; this module only lays them out, within 80 columns: one line per row, the reason wrapped under it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

STATUS_STYLES = {"supported": "green", "unsupported": "cyan", "broken": "bold red", "not checked": "yellow"}
VERDICT_STYLES = {"ready": "green", "degraded": "yellow", "broken": "bold red", "not served": "cyan",
                  "unknown": "dim"}


def _table(first: str, second: str) -> Table:
    table = Table(box=None, pad_edge=False, padding=(0, 1, 0, 0))
    table.add_column(first, no_wrap=True)
    table.add_column(second, no_wrap=True)
    table.add_column("why", overflow="fold", ratio=1)
    return table


def capability_table(rows: list[Mapping[str, Any]]) -> Table:
    table = _table("capability", "status")
    for row in rows:
        why = str(row.get("why") or "")
        finding = row.get("finding") or {}
        if finding and row.get("status") == "broken" and finding.get("code"):
            why = f"{finding['code']} in {finding.get('step')}: {why}"
        table.add_row(str(row.get("title")), Text(str(row.get("status")), style=STATUS_STYLES.get(
            str(row.get("status")), "")), Text(why, style="dim" if row.get("status") != "broken" else ""))
    return table


def readiness_table(rows: list[Mapping[str, Any]]) -> Table:
    table = _table("client", "verdict")
    for row in rows:
        if row.get("verdict") == "unknown":
            continue  # its dialect was not probed: nothing to say here (--format json still has the row)
        because = str(row.get("because") or "")
        if row.get("without"):
            because += ("; " if because else "") + "works without " + ", ".join(row["without"])
        table.add_row(str(row.get("client")), Text(str(row.get("verdict")), style=VERDICT_STYLES.get(
            str(row.get("verdict")), "")), Text(because, style="dim" if row.get("verdict") in ("ready", "not served")
                                                  else ""))
    return table


def _grouped(rows: list[Mapping[str, Any]], key: str, name: str, why: str | None = None) -> Text:
    """One line naming the rows by their ``key`` value: ``supported: A, B · unsupported: C (404)``."""
    groups: dict[str, list[str]] = {}
    for row in rows:
        shown = str(row.get(name))
        if why is not None and row.get(key) == "unsupported" and row.get(why):
            shown += f" ({row[why]})"
        groups.setdefault(str(row.get(key)), []).append(shown)
    line = Text()
    for index, (status, names) in enumerate(groups.items()):
        line.append(" · " if index else "")
        line.append(status, style=STATUS_STYLES.get(status) or VERDICT_STYLES.get(status, ""))
        line.append(": " + ", ".join(names))
    return line


def print_surface(console: Console, extra: Mapping[str, Any]) -> None:
    """The capability table and the readiness per client: a line each when nothing is broken or degraded (short
    when all is well), else the tables, a row each with the reason."""
    capabilities, readiness = extra.get("capabilities") or [], extra.get("readiness") or []
    if capabilities and any(row.get("status") == "broken" for row in capabilities):
        console.print()
        console.print(capability_table(capabilities))
    elif capabilities:
        console.print(Text("capabilities: ").append_text(_grouped(capabilities, "status", "title", "why")))
    if readiness and any(row.get("verdict") in ("broken", "degraded") for row in readiness):
        console.print()
        console.print(readiness_table(readiness))
    elif any(row.get("verdict") != "unknown" for row in readiness):
        known = [row for row in readiness if row.get("verdict") != "unknown"]
        console.print(Text("clients: ").append_text(_grouped(known, "verdict", "client")))


def print_answer(console: Console, extra: Mapping[str, Any]) -> None:
    """The probe's short report's first lines: the client table (each client's verdict and why), and the
    capabilities in one line: counted, with the names only of those that are unsupported (when one is broken:
    the table of the broken and unsupported ones, as the long report has every row)."""
    capabilities, readiness = extra.get("capabilities") or [], extra.get("readiness") or []
    known = [row for row in readiness if row.get("verdict") != "unknown"]
    if known:
        console.print(readiness_table(known))
    if capabilities and any(row.get("status") == "broken" for row in capabilities):
        console.print()
        console.print(capability_table([row for row in capabilities if row.get("status") in ("broken", "unsupported")]))
    elif capabilities:
        line = Text("capabilities: ")
        counts: dict[str, int] = {}
        for row in capabilities:
            counts[str(row.get("status"))] = counts.get(str(row.get("status")), 0) + 1
        line.append_text(Text(", ").join(Text(f"{count} {status}", style=STATUS_STYLES.get(status, ""))
                                         for status, count in counts.items()))
        odd = [row for row in capabilities if row.get("status") == "unsupported"]
        if odd:
            line.append(" · ")
            line.append_text(_grouped(odd, "status", "title", "why"))
        console.print(line)
