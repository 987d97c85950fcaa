"""A finished stream's findings graded per finding by what they do to the clients (docs/severity.md): the clients
each one touches on this stream, and an error where a client a real run stands behind breaks on it. Run once per
stream by the engine, after the profile has labelled its known deviations."""

from __future__ import annotations

from dataclasses import replace

from checker.dialects.base import ClientEffects, Linted, Verdict
from checker.findings import Finding, Severity


def touched(result: Linted, effects: ClientEffects, fixed: frozenset[str] = frozenset()) -> list[Finding]:
    """The stream's findings, each naming as its ``clients`` the clients of the matrix it breaks or degrades *on
    this stream* (its row's first effect whose condition holds), not every client its rule may touch: a report
    never prints "breaks: codex" beside a finding whose effect leaves codex ok. A rule without a row keeps the
    ``Rule.clients`` of this dialect's matrix (the matrix's fallback reads them).

    And its severity, per finding (docs/severity.md): a finding that breaks a client a real run stands behind
    (``ClientEffects.proven``) is an error, whatever its rule's default, unless a known deviation
    labels it, its profile sets the rule's severity (``fixed``), the rule describes a conforming stream
    (``ClientEffects.by_design``), or the client's call would end the same way without it (an end effect of that
    verdict: a conforming stream cut by its length)."""
    out = []
    for finding in result.findings:
        row = effects.by_rule.get(finding.code)
        hits: dict[str, Verdict] = {}
        for client in effects.clients:
            if row is None:
                if client in finding.clients:
                    hits[client] = Verdict.BREAKS
                continue
            hit = next((e for e in row.get(client, ()) if e.when is None or e.when(finding, result)), None)
            if hit is not None and hit.verdict > Verdict.OK:
                hits[client] = hit.verdict
        named = tuple(hits)
        if named != finding.clients:
            finding = replace(finding, clients=named)
        if (finding.severity is not Severity.ERROR and finding.known_deviation is None and finding.code not in fixed
                and finding.code not in effects.by_design and row is not None
                and any(_proven_touch(c, v, result, effects) for c, v in hits.items())):
            finding = replace(finding, severity=Severity.ERROR)
        elif finding.code in effects.legal and not hits and finding.severity is Severity.WARNING:
            finding = replace(finding, severity=Severity.INFO)
        out.append(finding)
    return out


def _proven_touch(client: str, verdict: Verdict, result: Linted, effects: ClientEffects) -> bool:
    # A break only: a degraded field (openai-node's last `created`) stays the rule's warning, as the policy
    # test grades rules (tests/test_severity_policy.py), and the matrix says what the client loses.
    if client not in effects.proven or verdict is not Verdict.BREAKS:
        return False
    return not any(end.verdict >= verdict and end.when(result) for end in effects.at_end.get(client, ()))
