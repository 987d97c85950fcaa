"""Findings made outside the engine (the proxy's RPL findings across a conversation, the live replay's RPL1xx
ones), settled as the engine settles its own: the profile's switches and severities, --select and --ignore."""

from __future__ import annotations

from collections.abc import Sequence

from checker.engine_options import EngineOptions
from checker.findings import Finding


def settle(findings: Sequence[Finding], engine: EngineOptions) -> list[Finding]:
    """``findings`` under the engine options ``engine`` (profile, select, ignore: checker.commands.common)."""
    profile = engine.profile
    select = tuple(s.upper() for s in engine.select or ())
    ignore = tuple(s.upper() for s in engine.ignore or ())
    out = []
    for finding in findings:
        code = finding.code
        if not profile.is_enabled(code) or (select and not code.startswith(select)) or \
                (ignore and code.startswith(ignore)):
            continue
        out.append(profile.apply(finding))
    return out
