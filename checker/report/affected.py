"""Which clients one finding breaks or degrades on this stream: the line under a finding in every report.

A rule's ``clients`` say who *can* care about it; what the finding does to a client on *this* stream is the
matrix's effect (``checker.compat.effect``: the dialect's table, cited and checked against the real clients,
with ``Rule.clients`` only as the fallback of a rule without a row). A report that printed ``Rule.clients`` under
a finding would say "breaks: openai-python" beside a matrix (and a real openai-python) that says ok, so every
reporter asks here instead. A client this finding breaks is broken in the matrix too (its cell is at least as
bad as any of its findings' effects), so the two never contradict each other.
"""

from __future__ import annotations

from dataclasses import dataclass

from checker.engine import LintResult
from checker.findings import Finding


@dataclass(frozen=True, slots=True)
class Affected:
    """The clients a finding breaks and those it degrades (finish, but lose or change something), in the
    dialect's client order."""

    breaks: tuple[str, ...] = ()
    degrades: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.breaks or self.degrades)

    def words(self) -> str:
        """``breaks: a, b · degrades: c``, or "" when the finding touches no client."""
        parts = []
        if self.breaks:
            parts.append(f"breaks: {', '.join(self.breaks)}")
        if self.degrades:
            parts.append(f"degrades: {', '.join(self.degrades)}")
        return " · ".join(parts)


def affected(finding: Finding, result: LintResult) -> Affected:
    """What ``finding`` does to each client of the stream's dialect (pure: the matrix's effects, no client run)."""
    from checker.compat import Verdict, effect, effects_of

    breaks: list[str] = []
    degrades: list[str] = []
    for client in effects_of(result).clients:
        found = effect(finding, client, result)
        if found is None:
            continue
        if found.verdict is Verdict.BREAKS:
            breaks.append(client)
        elif found.verdict is Verdict.DEGRADED:
            degrades.append(client)
    return Affected(tuple(breaks), tuple(degrades))
