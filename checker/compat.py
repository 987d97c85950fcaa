"""Which clients break: the client-compatibility matrix of one linted stream.

Every rule names the clients it breaks or degrades (``Rule.clients``). That
answers "who cares about this rule", not "what happens to codex on *this*
stream", so this module adds, per rule and client, an *effect*: a verdict and
what the user would see, the client's own error text where it is known.

* ``breaks``: the client raises or loses the turn;
* ``degraded``: it finishes, but something is missing, wrong or silently
  different (text, an event listeners wait for, the final output);
* ``ok``: the finding does not touch it.

A client's cell is decided by the first finding (in stream order) with its
worst verdict: the first thing that breaks it is what the user sees. Known
deviations decide like any other finding: a documented deviation still
breaks openai-python. The matrix is built from the findings that were
reported, so rules a profile disables (``--profile codex``) or that
``--select``/``--ignore`` leave out do not count.

Where the facts come from
-------------------------
Each dialect's table (``Dialect.effects()``: for Responses,
checker/dialects/responses/effects.py) cites the client code it reads; the
real SDKs are *run* on every bundled capture by the oracle tests
(tests/test_client_oracles.py), so a verdict the real client contradicts
fails the suite. This module is the machinery, the same for every dialect.

Rules without a row in the table fall back to ``Rule.clients`` (every named
client ``breaks``), so a new rule shows up in the matrix before it has a row.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from checker import dialects
from checker.dialects.base import ClientEffects, Effect, EndEffect, Verdict
from checker.engine import LintResult
from checker.findings import Finding

__all__ = ["Cell", "Condition", "Effect", "EndEffect", "LIMIT_CODES", "Matrix", "Verdict", "cell", "effect",
           "effects_of", "in_stream_order", "matrix"]

Condition = Callable[[Finding, LintResult], bool]


def effects_of(result: LintResult) -> ClientEffects:
    """The client effects of the dialect the stream was checked as."""
    return (dialects.get(result.dialect) if result.dialect else dialects.default()).effects()


# --- the matrix -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Cell:
    """One client's verdict on one stream, and the finding that decides it."""

    client: str
    verdict: Verdict
    finding: Finding | None = None
    symptom: str | None = None
    # What decided the cell when no finding did: how the stream ended (the dialect's ``ClientEffects.at_end``).
    cause: str | None = None

    @property
    def decided_by(self) -> str:
        """The finding's code and position, or the cause: what a report shows beside the verdict."""
        if self.finding is not None:
            return f"{self.finding.code} {self.finding.position.line}:{self.finding.position.byte}"
        return self.cause or ""

    def as_dict(self) -> dict[str, Any]:
        finding = None
        if self.finding is not None:
            finding = {"code": self.finding.code, "message": self.finding.message,
                       "position": self.finding.position.as_dict()}
        out = {"verdict": str(self.verdict), "finding": finding, "symptom": self.symptom}
        if self.cause is not None:
            out["cause"] = self.cause
        return out


@dataclass(frozen=True, slots=True)
class Matrix:
    """The cells in the order of the dialect's clients; ``caveat`` says when the findings are not the whole story."""

    cells: tuple[Cell, ...]
    caveat: str | None = None

    def __getitem__(self, client: str) -> Cell:
        for cell in self.cells:
            if cell.client == client:
                return cell
        raise KeyError(client)

    def verdicts(self) -> dict[str, str]:
        return {cell.client: str(cell.verdict) for cell in self.cells}

    def as_dict(self) -> dict[str, Any]:
        return {cell.client: cell.as_dict() for cell in self.cells}


class _Fields(dict[str, Any]):
    """Template fields from a finding; a field the finding does not carry reads as an ellipsis."""

    def __missing__(self, key: str) -> str:
        return "…"


def _fill(template: str, finding: Finding) -> str:
    fields = _Fields({k: ", ".join(map(str, v)) if isinstance(v, list) else v for k, v in finding.details.items()})
    fields.setdefault("message", finding.message)
    fields.setdefault("pointer", finding.pointer or "/")
    try:
        return template.format_map(fields)
    except (ValueError, IndexError, AttributeError, KeyError):  # a format spec the details cannot meet
        return template


# sse-check's own resource limits: past them it skips what the clients still read,
# so a limit finding degrades at most, and the findings after it may be artefacts.
LIMIT_CODES = frozenset({"SSE020", "SSE021", "SSE026", "SSE027"})


def effect(finding: Finding, client: str, result: LintResult) -> Effect | None:
    """What ``finding`` does to ``client`` on this stream; None when it does not touch it."""
    table = effects_of(result).by_rule.get(finding.code)
    if table is None:
        if client not in finding.clients:
            return None
        message = finding.message.replace("{", "{{").replace("}", "}}")  # a literal, not a template
        if finding.code in LIMIT_CODES:
            return Effect(Verdict.DEGRADED, f"past sse-check's own limit: {message}")
        return Effect(Verdict.BREAKS, message)
    for candidate in table.get(client, ()):
        if candidate.when is None or candidate.when(finding, result):
            return candidate
    return None


def in_stream_order(findings: list[Finding], check_order: tuple[str, ...] = ()) -> list[Finding]:
    """The findings in the order a client meets them: by position, then by the clients' check order in an event
    (rule family prefixes, the dialect's ``ClientEffects.check_order``)."""
    rank = {family: n for n, family in enumerate(check_order)}
    return sorted(findings, key=lambda f: (f.position.byte, f.position.line, rank.get(f.code[:3], len(rank))))


def cell(client: str, result: LintResult) -> Cell:
    effects = effects_of(result)
    worst: Cell = Cell(client, Verdict.OK)
    for finding in in_stream_order(result.findings, effects.check_order):  # the first of the worst decides
        found = effect(finding, client, result)
        if found is None or found.verdict <= worst.verdict:
            continue
        worst = Cell(client, found.verdict, finding, _fill(found.symptom, finding))
        if worst.verdict is Verdict.BREAKS:
            return worst
    # Nothing broke it while the stream was read: the user-facing call's own end decides, when it does.
    for end in effects.at_end.get(client, ()):
        if end.verdict > worst.verdict and end.when(result):
            terminal = next((t for t in result.terminals if t != effects.normal_end), result.terminal or "")
            return Cell(client, end.verdict, None, end.symptom.format(terminal=terminal),
                        cause=f"the end ({terminal})")
    return worst


def matrix(result: LintResult) -> Matrix:
    """The client-compatibility matrix of one linted stream (pure: no I/O, no clients run)."""
    limits = sorted({f.code for f in result.findings if f.code in LIMIT_CODES})
    caveat = None
    if limits:
        caveat = (f"sse-check skipped part of the stream at its own limit ({', '.join(limits)}); clients read it "
                  "all, so verdicts decided after that point may not hold")
    return Matrix(tuple(cell(client, result) for client in effects_of(result).clients), caveat)
