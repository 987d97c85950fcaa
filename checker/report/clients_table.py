"""The client matrix as a rich table under a capture (``--clients``), with real outcomes (``--oracle``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table
from rich.text import Text

from checker.compat import Matrix, Verdict
from checker.engine import LintResult

if TYPE_CHECKING:  # only a run with --oracle makes comparisons
    from checker.oracles.agreement import Comparison

VERDICT_STYLE = {Verdict.OK: "green", Verdict.DEGRADED: "yellow", Verdict.BREAKS: "bold red"}


def render_matrix(console: Console, matrix: Matrix, result: LintResult,
                  comparisons: dict[str, Comparison] | None = None) -> None:
    """One row per client: verdict, the finding that decides it, what the user sees."""
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
    for client, comparison in (comparisons or {}).items():
        console.print(oracle_line(client, comparison))


def oracle_line(client: str, comparison: Comparison) -> Text:
    """One real run beside its prediction: what the client did, then whether the prediction holds."""
    from checker.oracles.agreement import Agreement

    outcome = comparison.outcome
    line = Text(f"  real {client} {outcome.version}: {outcome.summary}")
    if comparison.agreement is Agreement.AGREES:
        line.append(f"  (agrees: {comparison.predicted})", style="green")
    elif comparison.agreement is Agreement.DIFFERS:
        line.append(f"  ≠ prediction: {comparison.why}", style="bold red")
    elif comparison.agreement is Agreement.UNCONFIRMED:
        line.append(f"  (unconfirmed: {comparison.why})", style="yellow")
    else:
        line.append("  (not run)", style="yellow")
    return line
