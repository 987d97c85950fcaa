"""The WebSocket mode of the Responses API as a row of the default probe's capability table (docs/websocket.md).

``sse-check probe --transport websocket`` checks the mode in full: every Responses scenario over one connection,
then a continuation by ``previous_response_id`` (checker.commands.probe_ws). A default probe of the Responses
endpoint asks once whether the server offers it at all, so that its capability table names the mode either way:
it tries the upgrade of ``/v1/responses`` and

* refused (404, 405, 426, any HTTP answer but 101): one "unsupported" row naming the status, no finding;
* no usable answer to the upgrade within :data:`UPGRADE_TIMEOUT` (a server that keeps the connection open and
  says nothing, one that closes it, one that answers no HTTP): "unsupported" with the reason;
* accepted: the short form of the full check, one ``response.create`` (the ``plain_text`` scenario) on the
  connection, then its close, judged by the same WebSocket linter (checker.ws_checks) as the full check. Its
  findings decide the row (broken at an error) and are reported as one result named after its transcript,
  ``websocket.ws.jsonl``, which ``--save`` writes and which lints the same. A supported row does not say that every
  scenario works over the mode: ``--transport websocket`` runs them all, and the continuation.

A demanding user wants both: a default probe that tells whether the mode exists and whether a first response
over it is right, without a second command and at the cost of one short response; and the full check on demand.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx

from checker.errors import UsageError
from checker.findings import Severity
from checker.live import adapters
from checker.live.probe import ProbeConfig, ProbeLintResult, ScenarioResult
from checker.live.scenarios import BUILTIN, Scenario
from checker.live.ws_probe import SAVED_NAME, WsProbeResult, probe_websocket
from checker.surface.capability import Feature, FlowOutcome, register
from checker.surface.flow import Flow
from checker.surface.record import FlowRecord
from checker.surface.run import Context, FlowRun
from checker.ws_checks import NORMAL_CLOSE, describe_close

FLOW = "websocket"
# The result is named after the transcript --save writes (as --transport websocket names it): the lint of the
# saved file reports the same, under the same name.
RESULT = SAVED_NAME
FEATURE = "websocket.responses"
TITLE = "WebSocket /v1/responses (response.create)"
# How long the default probe waits for an answer to the upgrade: a server that offers the mode answers it at
# once; one that does not must not slow the probe down (the full check waits the probe's --connect-timeout).
UPGRADE_TIMEOUT = 3.0
SHORT_FORM = "plain_text"  # the scenario of the short form's one response.create

# No families: the WSK rules are the connection's lint (checker.ws_checks), whose findings decide this row here and
# reach the clients through it (readiness.RELIES_ON); under --transport websocket they are the clients' evidence.
register(Feature(name=FEATURE, title=TITLE))


def connection_facts(outcome: WsProbeResult) -> dict[str, Any]:
    """What the reporters show of the connection (``ProbeLintResult.http``): the upgrade, how it ended, and
    each response's scenario, id, terminal event and findings."""
    close = (outcome.close or {})
    received = close.get("received")
    normal = isinstance(received, list) and bool(received) and received[0] in NORMAL_CLOSE
    ending = {"kind": "complete" if normal else "closed", "detail": "" if normal else describe_close(close)}
    responses = [{"scenario": o.scenario, "response_id": o.response_id, "terminal": o.terminal,
                  "skipped": o.skipped, "findings": len(o.findings)} for o in outcome.outcomes or []]
    result = outcome.result
    return {"transport": "websocket", "url": outcome.url, "status": 101, "ending": ending, "responses": responses,
            "bytes": result.bytes if result else 0, "events": result.events if result else 0,
            "timings": {"total": outcome.seconds}, "saved": outcome.saved}


def short_form_config(config: ProbeConfig) -> ProbeConfig:
    """The probe's configuration with the upgrade's wait cut to :data:`UPGRADE_TIMEOUT`."""
    limits = dataclasses.replace(config.limits, connect_timeout=min(config.limits.connect_timeout, UPGRADE_TIMEOUT))
    return dataclasses.replace(config, limits=limits)


def _scenario() -> Scenario:
    return next(s for s in BUILTIN if s.name == SHORT_FORM and s.api in (None, adapters.DEFAULT.name))


async def _probe(config: ProbeConfig) -> tuple[WsProbeResult | None, str | None, str | None]:
    """(the connection's result, why the mode is unsupported, why it was not checked)."""
    try:
        from websockets.exceptions import WebSocketException
    except ImportError:
        return None, None, "the websockets package is not installed (pip install 'sse-check[websocket]')"
    shown = config.redactor.url(config.url_for(adapters.DEFAULT.name))
    try:
        outcome = await probe_websocket(short_form_config(config), [_scenario()], continuation=False)
    except UsageError as exc:  # no answer to the upgrade, one that is no HTTP/1.1 answer, no connection
        return None, str(exc), None
    except (WebSocketException, OSError) as exc:  # the connection ended in a way the client names
        return None, f"the WebSocket upgrade of {shown} failed: {str(exc) or type(exc).__name__}", None
    if outcome.unsupported is not None:
        return None, outcome.unsupported, None
    return outcome, None, None


def flow_run(config: ProbeConfig, outcome: WsProbeResult | None, unsupported: str | None,
             not_checked: str | None) -> FlowRun:
    """The connection's verdict as the FlowRun the capability table and the readiness read."""
    record = FlowRecord(flow=FLOW, feature=FEATURE, model=config.model, api=adapters.DEFAULT.name)
    row = FlowOutcome(flow=FLOW, feature=FEATURE, record=record, unsupported=unsupported, not_checked=not_checked)
    if outcome is None or outcome.result is None:
        return FlowRun(outcome=row)
    if not any(o.skipped is None for o in outcome.outcomes or []):
        row.not_checked = "no response.create was answered"
    for finding in outcome.result.findings:  # every finding of the connection: its events' too (SCH, ITM, …)
        if finding.severity >= Severity.WARNING:
            (row.failures if finding.severity >= Severity.ERROR else row.warnings).append((RESULT, finding))
    # No dialect (api None): its findings reach the clients through the row (RELIES_ON), not as the SSE streams'
    # evidence, and they do not decide the stream.responses row.
    scenario = Scenario(name=RESULT, api=None, expect="stream", body={},
                        summary="one response.create over WebSocket (the short form: --transport websocket runs "
                                "every scenario and a continuation)")
    result = ProbeLintResult.of(outcome.result, connection_facts(outcome))
    saved = Path(outcome.saved) if outcome.saved is not None else None
    return FlowRun(outcome=row, results=[ScenarioResult(scenario=scenario, result=result, saved=saved)])


async def run(client: httpx.AsyncClient, config: ProbeConfig, context: Context) -> list[FlowRun]:
    """The upgrade, and the short form when it is accepted (the HTTP client is not used: another transport)."""
    if adapters.DEFAULT.name in context.not_served:
        return [flow_run(config, None, context.not_served[adapters.DEFAULT.name], None)]
    return [flow_run(config, *await _probe(config))]


def flows(apis: Sequence[str]) -> list[Flow]:
    """The WebSocket flow, when the Responses dialect is probed (the mode is that API's only)."""
    if adapters.DEFAULT.name not in apis:
        return []
    return [Flow(name=FLOW, feature=FEATURE, api=adapters.DEFAULT.name, steps=(), runner=run,
                 summary="the WebSocket mode of /v1/responses: the upgrade, one response.create")]
