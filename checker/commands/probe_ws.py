"""``sse-check probe BASE_URL --model M --transport websocket``: the Responses scenarios over one WebSocket connection.

The probing is :mod:`checker.live.ws_probe`; the verdict is the lint of the connection's transcript
(checker/ws_checks.py), reported through the same reporters as ``lint`` as one result named after the
saved transcript, ``websocket.ws.jsonl``: ``sse-check lint`` of the file saved by ``--save`` reports the
same findings. A server that refuses the WebSocket upgrade does not offer the mode: one line on stdout
("unsupported"), exit 0, no report; the Chat Completions and Messages dialects have no WebSocket mode,
so only Responses scenarios run.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Sequence

from checker.commands.common import baseline_run, finish_baseline, open_output, report_options, warn_unmatched_baseline
from checker.errors import UsageError
from checker.live.probe import ProbeConfig, ProbeLintResult
from checker.live.scenarios import Scenario
from checker.live.ws_probe import SAVED_NAME, WsProbeResult, probe_websocket
from checker.findings import Severity
from checker.live.reports import reporter_for
from checker.report import Summary
from checker.surface.capability import Capability, finding_ref
from checker.surface.readiness import readiness
from checker.surface.websocket import FEATURE, TITLE, connection_facts

TRANSPORTS = ("sse", "websocket")
WS_FEATURE, WS_TITLE = FEATURE, TITLE  # the same row as the default probe's (checker.surface.websocket)


def websocket_scenarios(chosen: Sequence[Scenario]) -> list[Scenario]:
    """The scenarios a WebSocket connection can carry: Responses requests that stream or must be refused."""
    return [s for s in chosen if s.api in (None, "responses") and s.expect in ("stream", "error")]


def websocket_capability(outcome: WsProbeResult) -> Capability:
    """The capability row of the WebSocket mode: unsupported (the upgrade refused), not checked (no
    response.create answered), broken at its first error, else supported (its warnings named)."""
    if outcome.unsupported is not None:
        return Capability(feature=WS_FEATURE, title=WS_TITLE, status="unsupported", why=outcome.unsupported)
    result = outcome.result
    if result is None or not any(o.skipped is None for o in outcome.outcomes or []):
        return Capability(feature=WS_FEATURE, title=WS_TITLE, status="not checked",
                          why="no response.create was answered")
    errors = [f for f in result.findings if f.severity >= Severity.ERROR]
    if errors:
        more = f" (and {len(errors) - 1} more error(s))" if len(errors) > 1 else ""
        return Capability(feature=WS_FEATURE, title=WS_TITLE, status="broken", why=f"{errors[0].message}{more}",
                          finding=finding_ref(SAVED_NAME, errors[0]))
    warned = [f for f in result.findings if f.severity >= Severity.WARNING]
    return Capability(feature=WS_FEATURE, title=WS_TITLE, status="supported",
                      why="; ".join(dict.fromkeys(f"{f.code} {f.message}" for f in warned)),
                      finding=finding_ref(SAVED_NAME, warned[0]) if warned else None)


def run(opts: object, config: ProbeConfig, chosen: Sequence[Scenario]) -> int:
    """Probe, report, and return the exit code (as ``probe``: 0 clean, 1 findings at --fail-on, 2 usage)."""
    engine = getattr(opts, "engine")
    scenarios = websocket_scenarios(chosen)
    if not scenarios:
        raise UsageError("--transport websocket: no Responses scenario chosen (the WebSocket mode is the "
                         "Responses API's only)")
    outcome = asyncio.run(probe_websocket(config, scenarios))
    row = websocket_capability(outcome)
    if outcome.unsupported is not None:
        if getattr(engine, "format", "text") == "text":
            print(f"websocket: unsupported: {outcome.unsupported}")
        else:  # a machine-readable report still says it, as the capability table's one row
            print(json.dumps({"capabilities": [row.as_dict()]}, indent=2))
        return 0
    assert outcome.result is not None
    gate = baseline_run(engine)
    report = report_options(engine, command="probe")
    report.extra = {"target": {"url": outcome.url, "model": config.redactor.text(config.model),
                               "apis": ["responses"], "transport": "websocket"},
                    "skipped": [{"scenario": o.scenario, "reason": o.skipped}
                                for o in outcome.outcomes or [] if o.skipped],
                    "not_served": [],
                    "capabilities": [row.as_dict()],
                    "readiness": [r.as_dict() for r in readiness([(SAVED_NAME, outcome.result)], [row])]}
    summary = Summary()
    with open_output(engine.output) as stream:
        reporter = reporter_for("probe", engine.format)(stream, report)
        reporter.start()
        result = gate.apply(SAVED_NAME, ProbeLintResult.of(outcome.result, connection_facts(outcome)))
        failed = summary.add(result, report.fail_on)
        reporter.file(SAVED_NAME, result)
        summary.baselined = gate.hidden
        summary.baseline_note = gate.note()
        reporter.finish(summary)
    warn_unmatched_baseline(engine, gate)
    if outcome.saved:
        print(f"sse-check: saved {outcome.saved}", file=sys.stderr)
    if gate.recorded is not None:
        finish_baseline(engine, gate)
        return 0
    return 1 if failed else 0
