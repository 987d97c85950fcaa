"""The stored-response features in ``sse-check probe``: their rows in the capability table and readiness.

The flow (:mod:`checker.surface.stored`, run by :mod:`checker.surface.stored_run`) is no template flow of
:mod:`checker.surface.flow`: it keeps every answer whole (a resumption is judged event for event, and its
stream is linted spliced after the create's first events, not alone) and polls a background response until it
settles. So it runs here, after the template flows, with the probe's own target, headers, limits and engine
options, and each of its verdicts becomes one :class:`~checker.surface.run.FlowRun` of its feature
(``stored.retrieve``, ``stored.resumption``, …): the capability table, the readiness per client and the report
take them as any flow's. ``--save`` writes the flow as ``stored.flow.json``, which judges again to the same rows.
"""

from __future__ import annotations

from collections.abc import Sequence

import httpx

from checker.findings import Finding, Severity
from checker.live import adapters
from checker.live.probe import ProbeConfig, ProbeLintResult, ScenarioResult
from checker.live.scenarios import BUILTIN, Scenario
from checker.surface.capability import Feature, FlowOutcome, register
from checker.surface.flow import Flow
from checker.surface.record import FlowRecord, StepRecord
from checker.surface.run import Context, FlowRun
from checker.surface.stored_answers import Answer, Verdict
from checker.surface.stored_run import run_stored

FLOW = "stored"
# Each stored-response feature's row: its name in the capability table, and what it says.
TITLES: dict[str, str] = {
    "retrieve": "GET /v1/responses/{id}",
    "input_items": "GET /v1/responses/{id}/input_items",
    "resumption": "stream resumption (starting_after)",
    "delete": "DELETE /v1/responses/{id}",
    "previous_response_id": "an unknown previous_response_id refused",
    "stateful tool use": "previous_response_id + function_call_output",
    "background": "background mode (polling)",
    "cancel": "POST /v1/responses/{id}/cancel",
    "conversations": "/v1/conversations",
    "compact": "POST /v1/responses/compact",
}
# The steps each feature's row is about (its findings are reported on the first).
STEPS: dict[str, tuple[str, ...]] = {
    "retrieve": ("create", "retrieve"), "input_items": ("create", "input_items"), "resumption": ("create", "resume"),
    "delete": ("delete", "deleted"), "previous_response_id": ("unknown_previous",),
    "stateful tool use": ("create", "continue"), "background": ("background", "poll_"),
    "cancel": ("cancel_background", "cancel", "cancelled"), "conversations": ("conversation_",),
    "compact": ("compact",),
}


def feature_name(feature: str) -> str:
    return f"stored.{feature.replace(' ', '_')}"


for _feature, _title in TITLES.items():
    # No families: the STO rules judge saved flows of their own (captures/stored, tests/test_stored_flows.py), and
    # their findings reach clients through these rows only.
    register(Feature(name=feature_name(_feature), title=_title))


def _step_record(answer: Answer) -> StepRecord:
    return StepRecord(name=answer.step, method=answer.method, url=answer.path,
                      expect="stream" if answer.stream is not None else "json", request=answer.request,
                      status=answer.status, answer=answer.body if answer.stream is None else None)


def flow_run(verdict: Verdict, answers: Sequence[Answer], config: ProbeConfig) -> FlowRun:
    """One feature's verdict as the FlowRun the capability table reads."""
    name = feature_name(verdict.feature)
    keep = STEPS.get(verdict.feature, ())
    steps = [_step_record(a) for a in answers
             if any(a.step == k or (k.endswith("_") and a.step.startswith(k)) for k in keep)]
    record = FlowRecord(flow=f"{FLOW}/{verdict.feature}", feature=name, model=config.model,
                        api=adapters.DEFAULT.name, steps=steps)
    outcome = FlowOutcome(flow=record.flow, feature=name, record=record)
    where = f"{FLOW}.{keep[-1] if keep else verdict.feature}"
    if verdict.state == "unsupported":
        outcome.unsupported = verdict.why
    elif verdict.state == "not checked":
        outcome.not_checked = verdict.why
    found = _judged(verdict.findings, config)
    for finding in found:
        (outcome.failures if finding.severity >= Severity.ERROR else outcome.warnings).append((where, finding))
    return FlowRun(outcome=outcome, results=[_reported(verdict, name, found, answers, config)] if found else [])


def _judged(findings: Sequence[Finding], config: ProbeConfig) -> list[Finding]:
    """A row's findings as a flow step's are judged: the profile (known deviations), --select, --ignore."""
    sink = config.engine.sink(collapse=False)
    sink.settle(None)
    return [config.redactor.finding(f) for found in findings for f in sink.emit_all([found])]


def _reported(verdict: Verdict, name: str, found: list[Finding], answers: Sequence[Answer],
              config: ProbeConfig) -> ScenarioResult:
    """The row's findings as one reported result (``stored/<feature>``), as a template flow's step carries its
    own: the report lists them and probe's exit code fails at --fail-on as for any flow's broken row."""
    keep = STEPS.get(verdict.feature, ())
    status = next((a.status for a in answers if any(a.step == k or (k.endswith("_") and a.step.startswith(k))
                                                    for k in keep)), None)
    profile = config.engine.profile
    result = ProbeLintResult(findings=list(found), events=0, bytes=0, terminal=None, response_id=None,
                             profile=profile.name,
                             http={"status": status} if status is not None else {})
    scenario = Scenario(name=f"{FLOW}/{verdict.feature.replace(' ', '_')}", summary=TITLES.get(verdict.feature, name),
                        body={}, expect="nonstream")
    return ScenarioResult(scenario=scenario, result=result)


async def run(client: httpx.AsyncClient, config: ProbeConfig, context: Context) -> list[FlowRun]:
    """The stored-response flow against the probe's target; one FlowRun per feature."""
    if adapters.DEFAULT.name in context.not_served:
        why = context.not_served[adapters.DEFAULT.name]
        return [flow_run(Verdict(feature, "unsupported", why), [], config) for feature in TITLES]
    tools_body = dict(next(s.body for s in BUILTIN if s.name == "reasoning_one_call"))
    stored = await run_stored(client, config.url, config.model, tools_body, headers=dict(config.headers),
                              timeout=config.limits.total_timeout, lint_options=config.engine,
                              save_dir=config.save_dir)
    return [flow_run(verdict, stored.answers, config) for verdict in stored.verdicts]


def flows(apis: Sequence[str]) -> list[Flow]:
    """The stored-response flow, when the Responses dialect is probed: run by :func:`run`, not step by step."""
    if adapters.DEFAULT.name not in apis:
        return []
    return [Flow(name=FLOW, feature=feature_name("retrieve"), api=adapters.DEFAULT.name, steps=(), runner=run,
                 summary="stored responses: retrieve, input_items, resumption, delete, previous_response_id, "
                         "background, cancel, conversations, compact")]
