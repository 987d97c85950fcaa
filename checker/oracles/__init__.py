"""Oracles: run a real client on a capture and record what it did.

The client matrix (``checker.compat``) *predicts* what each client does with a
stream; an oracle *asks* the client. ``sse-check lint --oracle all`` (or a list
of clients) prints both side by side, agreeing or not (``checker.oracles.agreement``,
run by ``checker.oracles.session``), and the test suite runs the oracles on every
bundled capture and fails when prediction and reality disagree, so a client
release that changes behaviour shows up as a failing test.

Oracles sit outside the sans-I/O core: they import third-party clients
lazily and never run unless asked. openai-node's oracle is a Node.js script
in tests/oracles/node (it needs node and npm) and reports the same
:class:`Outcome` shape as JSON.

The protocol every real client is run by (the normalised :class:`Outcome`, the driver command, the loopback
exchange) is ``checker.oracles.protocol``; the registry of real clients is ``checker.oracles.registry``; running
a client over many captures at once is ``checker.oracles.runner``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from checker.dialects.responses.vocabulary import TERMINAL_TYPES
from checker.oracles.protocol import DriverCall, Exchange, Job, Outcome, OutputItem, ToolCall

__all__ = ["TERMINALS", "DriverCall", "Exchange", "Job", "OracleUnavailable", "Outcome", "OutputItem", "ToolCall",
           "disagreement", "expected_output"]

if TYPE_CHECKING:  # not at run time: `lint` imports this module for the names, the matrix only with --oracle
    from checker.compat import Verdict
    from checker.engine import LintResult

TERMINALS = TERMINAL_TYPES  # the Responses terminal set (checker/dialects/responses/vocabulary.py)


class OracleUnavailable(Exception):
    """The client an oracle needs is not installed (reported as one line, exit code 2)."""


def expected_output(result: LintResult) -> list[tuple[str | None, str | None]]:
    """(type, id) of the items the stream finished, in output order: what an ``ok`` client must return."""
    done = [(i, it) for i, it in enumerate(result.items) if it.done]
    done.sort(key=lambda pair: (pair[1].output_index if type(pair[1].output_index) is int else 1 << 30, pair[0]))
    return [(it.type, it.id) for _, it in done]


def disagreement(verdict: Verdict, outcome: Outcome, result: LintResult) -> str | None:
    """Why the real outcome contradicts the predicted verdict, or None when they agree.

    breaks ⇔ the client raised. ok additionally means that a completed
    response's output is the stream's finished items. degraded only promises
    that the client finishes: what it loses is not observable from its result.
    """
    from checker.compat import Verdict

    if verdict is Verdict.BREAKS:
        if outcome.raised is None:
            return f"predicted breaks, but {outcome.client} {outcome.summary}"
        return None
    if outcome.raised is not None:
        return f"predicted {verdict}, but {outcome.client} {outcome.summary}"
    if verdict is Verdict.OK and outcome.status == "completed" and outcome.terminal == "response.completed":
        got = [(o.type, o.id) for o in outcome.output]
        want = expected_output(result)
        if got != want:
            return f"predicted ok, but the final output is {got}, the stream finished {want}"
    return None
