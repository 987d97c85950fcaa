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
VERDICT_STYLES = {"ready": "green", "degraded": "yellow", "broken": "bold red", "unknown": "dim"}


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
        because = str(row.get("because") or "")
        if row.get("without"):
            because += ("; " if because else "") + "works without " + ", ".join(row["without"])
        table.add_row(str(row.get("client")), Text(str(row.get("verdict")), style=VERDICT_STYLES.get(
            str(row.get("verdict")), "")), Text(because, style="dim" if row.get("verdict") == "ready" else ""))
    return table


def print_surface(console: Console, extra: Mapping[str, Any]) -> None:
    """Both tables, when the run computed them."""
    if extra.get("capabilities"):
        console.print()
        console.print(capability_table(extra["capabilities"]))
    if extra.get("readiness"):
        console.print()
        console.print(readiness_table(extra["readiness"]))
