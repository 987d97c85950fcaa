"""The client matrix as a rich table under a capture (``--clients``), with real outcomes (``--oracle``)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from checker.compat import Matrix, Verdict
from checker.engine import LintResult

VERDICT_STYLE = {Verdict.OK: "green", Verdict.DEGRADED: "yellow", Verdict.BREAKS: "bold red"}


def render_matrix(console: Console, matrix: Matrix, result: LintResult, outcomes: dict[str, Any] | None = None) -> None:
    """One row per client: verdict, the finding that decides it, what the user sees."""
    from checker.oracles import disagreement

    table = Table(box=None, pad_edge=False, show_edge=False, padding=(0, 1))
    table.add_column("  client", no_wrap=True)
    table.add_column("verdict", no_wrap=True)
    table.add_column("decided by", no_wrap=True)
    table.add_column("what the user sees")
    for cell in matrix.cells:
        decided = cell.decided_by
        table.add_row(
            Text("  " + cell.client),
            Text(str(cell.verdict), style=VERDICT_STYLE[cell.verdict]),
            Text(decided, style="dim"),
            Text(cell.symptom or ""),
        )
    console.print(table)
    if matrix.caveat:
        console.print(Text(f"  note: {matrix.caveat}", style="dim"))
    for client, outcome in (outcomes or {}).items():
        differs = disagreement(matrix[client].verdict, outcome, result)
        line = Text(f"  real {client} {outcome.version}: ")
        if outcome.raised is not None:
            line.append(f"raises {outcome.raised}")
        elif result.dialect not in (None, "responses"):  # no Responses status or items: what the call returned
            line.append(str(getattr(outcome, "summary", "") or "returns"))
        else:
            line.append(f"ends {outcome.status or 'without a status'}, {len(outcome.output)} output item(s)")
        if differs:
            line.append(f"  ≠ prediction: {differs}", style="bold red")
        else:
            line.append(f"  (agrees: {matrix[client].verdict})", style="green")
        console.print(line)
