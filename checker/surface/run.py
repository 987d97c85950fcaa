"""Running flows against a live server: each step is one probed exchange, its answer kept for the next.

A step is sent by :func:`checker.live.retry_run.probe_retrying`, as a scenario is (sent again after a refusal the
SDK of its dialect retries, the answers before the last reported as its tries): a streamed answer goes through
the engine with every stream check, a JSON one through the HTTP checks, and with ``--save`` both are saved
(``<flow>.<step>.sse`` and its ``.meta.json``) and lint to the same verdict. Then its answer (the JSON body, or
what the stream accumulated) is kept under the step's name for the later steps' references. After the last
step the flow's record goes to its feature's judge, whose findings are added to the steps they are about.

A flow stops at the first step that cannot be built (FLW001), that answers an error where a success was due,
or, for a *gate* step, that shows the feature is not offered (404, 405, 501, or an error saying it is not
supported): then the feature is unsupported, the step is not reported and what ``--save`` wrote of it is
removed. Flows run one after another (their steps depend on each other; the server is not raced).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx

from checker.findings import Finding, Severity
from checker.live import adapters
from checker.live.endpoints import endpoint_for
from checker.live.outcome import OutcomeCollector
from checker.live.probe import Progress, ProbeConfig, ScenarioContext, ScenarioResult, no_progress
from checker.live.probe_run import MISSING_STATUSES, error_words
from checker.live.retry_run import probe_retrying
from checker.live.saving import write_atomic
from checker.live.scenarios import Scenario
from checker.surface.capability import FEATURES, FlowOutcome
from checker.surface.flow import Flow, Step, UnresolvedReference, step_body, step_path
from checker.surface.judging import NOT_BUILT, judge_record
from checker.surface.record import FlowRecord, StepRecord

# Words of an error that says a feature is not offered (a gate step's answer), besides 404/405/501.
NOT_OFFERED_WORDS = ("not supported", "unsupported", "not implemented", "not available")


@dataclass(frozen=True, slots=True, kw_only=True)
class Context:
    """What the scenario suite showed, that flows need: the dialects whose endpoints are not served (their
    flows are unsupported without a request) and facts for the judges (``model_answered``)."""

    not_served: Mapping[str, str] = field(default_factory=dict)
    facts: Mapping[str, Any] = field(default_factory=dict)


@dataclass(slots=True, kw_only=True)
class FlowRun:
    outcome: FlowOutcome
    results: list[ScenarioResult] = field(default_factory=list)  # the steps that were answered, in order


def step_scenario(flow: Flow, step: Step, body: Any, path: str | None, config: ProbeConfig) -> Scenario:
    """The step as the probe sends it."""
    adapter = adapters.get(step.api) if step.api is not None else None
    expect = "nonstream" if step.expect == "json" else step.expect
    name = flow.step_id(step)
    return Scenario(
        name=name, summary=step.summary or f"{flow.summary}: {step.name}", body=body if isinstance(body, dict) else {},
        expect=expect, replay=step.replay or (name,), source=flow.source, api=step.api,
        headers=(*(adapter.request_headers if adapter else ()), *step.headers),
        stream_fields=dict(adapter.stream_fields) if adapter is not None and expect == "stream" else {},
        method=step.method, url=endpoint_for(config.url, path) if path is not None else None,
        as_written=adapter is None)


def not_offered(step: Step, outcome: ScenarioResult) -> str | None:
    """Why a gate step's answer shows the server does not offer the feature (``GET /v1/models: 404``)."""
    meta = outcome.meta
    if meta is None or meta.status is None:
        return None
    words = error_words(outcome.body)
    # OpenAI answers an unknown model 404 model_not_found: an answer of the endpoint, not its absence.
    missing = meta.status in MISSING_STATUSES and not (meta.status == 404 and "model_not_found" in words)
    # A 500 that says so is the same refusal with the wrong status (llama-server: "image input is not supported"
    # when the model has no vision projector); a 503 "not available" is an outage, not an absent feature.
    refused = (400 <= meta.status < 500 or meta.status == 500) and any(w in words for w in NOT_OFFERED_WORDS)
    if not (missing or refused):
        return None
    path = urlsplit(meta.url or "").path or "the endpoint"
    return f"{step.method} {path}: {meta.status}" + (f" ({_clip(words)})" if refused and not missing else "")


def _clip(text: str, size: int = 80) -> str:
    return text if len(text) <= size else text[: size - 1] + "…"


def answer_of(step: Step, outcome: ScenarioResult) -> Any:
    """What a step answered, for references and judges: the JSON body, or the stream's accumulated output."""
    if not outcome.complete_body or outcome.meta is None:
        return None
    body = bytes(outcome.body)
    if outcome.result is not None and outcome.result.events:
        api = step.api or (adapters.recognise_stream(body[:4096]) or adapters.DEFAULT).name
        collector = OutcomeCollector(api)
        collector.feed(body)
        answered = collector.close()
        return {"id": answered.response_id, "output": answered.output}
    try:
        return json.loads(body) if body.strip() else None
    except (UnicodeDecodeError, ValueError):
        return None


def _failed(step: Step, outcome: ScenarioResult) -> Finding | None:
    """The finding that says a step answered an error where a success was due (None: it did not)."""
    meta, result = outcome.meta, outcome.result
    if step.expect == "error" or result is None or meta is None:
        return None
    if meta.status is not None and 200 <= meta.status < 300 and meta.ending.kind == "complete":
        return None
    ranked = sorted(result.findings, key=lambda f: -int(f.severity))
    return ranked[0] if ranked else None


def _own_findings(feature: str, outcome: ScenarioResult) -> list[Finding]:
    """A step's findings (its stream's, its body's) of its feature's own families: they decide the feature's row
    like its judge's (structured output is judged on the stream, where the finish and a refusal are known)."""
    own = FEATURES[feature].families if feature in FEATURES else ()
    found = outcome.result.findings if outcome.result is not None else []
    return [f for f in found if f.code[:3] in own and f.severity > Severity.INFO]


def _attach(outcome: ScenarioResult | None, finding: Finding) -> None:
    if outcome is not None and outcome.result is not None:
        outcome.result.findings = sorted([*outcome.result.findings, finding],
                                         key=lambda f: (f.position.byte, f.position.line))


class _FlowRunner:
    """One flow, step by step."""

    def __init__(self, client: httpx.AsyncClient, flow: Flow, config: ProbeConfig, context: Context,
                 progress: Progress) -> None:
        self.client, self.flow, self.config, self.progress = client, flow, config, progress
        record = FlowRecord(flow=flow.name, feature=flow.feature, model=config.model, api=flow.api,
                            details=dict(flow.details), facts=dict(context.facts))
        self.run = FlowRun(outcome=FlowOutcome(flow=flow.name, feature=flow.feature, record=record))
        self.answers: dict[str, Any] = {"model": config.model}
        self.by_step: dict[str, ScenarioResult] = {}

    async def go(self, context: Context) -> FlowRun:
        outcome = self.run.outcome
        if self.flow.api is not None and self.flow.api in context.not_served:
            outcome.unsupported = context.not_served[self.flow.api]
            return self.run
        for step in self.flow.steps:
            if not await self._step(step):
                break
        self._judge()
        self._save()
        return self.run

    async def _step(self, step: Step) -> bool:
        """Send one step; whether the flow goes on."""
        outcome, record, sid = self.run.outcome, self.run.outcome.record, self.flow.step_id(step)
        entry = StepRecord(name=step.name, method=step.method, expect=step.expect)
        record.steps.append(entry)
        try:
            body, path = step_body(step, self.answers), step_path(step, self.answers)
        except UnresolvedReference as exc:
            entry.skipped = f"{NOT_BUILT}{exc}"  # FLW001, from the record (checker.surface.judging)
            return False
        scenario = step_scenario(self.flow, step, body, path, self.config)
        # Sent again after a refusal the SDK retries (429, 503, …), as a scenario is: the answers before the last
        # are reported as the step's tries (HTP025), the flow goes on with the last.
        result = await probe_retrying(self.client, scenario, self.config, ScenarioContext(progress=self.progress))
        entry.url, entry.request = scenario.url or self.config.url_for(step.api or adapters.DEFAULT.name), \
            scenario.sent(self.config.model)
        if result.skipped is not None or result.meta is None:
            entry.skipped = result.skipped or "no answer"
            if not self.by_step:
                outcome.not_checked = entry.skipped
            return False
        entry.status = result.meta.status
        why = not_offered(step, result) if step.gate else None
        if why is not None:
            outcome.unsupported = why
            _forget(result)
            return False
        entry.answer = self.answers[step.name] = answer_of(step, result)
        self.by_step[step.name] = result
        self.run.results.append(result)
        failure = _failed(step, result)
        if failure is not None:
            outcome.failures.append((sid, failure))
            return False
        for finding in _own_findings(self.flow.feature, result):  # a stream's checks of the feature (FMT)
            (outcome.failures if finding.severity >= Severity.ERROR else outcome.warnings).append((sid, finding))
        return True

    def _judge(self) -> None:
        """The flow's rules on the whole record; each finding on the step it is about."""
        outcome = self.run.outcome
        if outcome.unsupported is not None or not self.by_step:
            return
        sink = self.config.engine.sink(collapse=False)
        sink.settle(None)  # judged as the exchange's own findings are: the profile, --select, --ignore
        for step, found in judge_record(outcome.record):
            reported = sink.emit_all([found])
            if not reported:
                continue
            finding = self.config.redactor.finding(reported[0])
            _attach(self.by_step.get(step) or self.run.results[-1], finding)
            sid = f"{self.flow.name}.{step}"
            (outcome.failures if finding.severity >= Severity.ERROR else outcome.warnings).append((sid, finding))

    def _save(self) -> None:
        if self.config.save_dir is None or self.run.outcome.unsupported is not None or not self.by_step:
            return
        target = self.config.save_dir / f"{self.flow.name}.flow.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        data = self.config.redactor.value(self.run.outcome.record.as_dict())
        write_atomic(target, (json.dumps(data, indent=2) + "\n").encode())


def _forget(outcome: ScenarioResult) -> None:
    """Remove what ``--save`` wrote of a feature's absence (it is no capture of it)."""
    if outcome.saved is None:
        return
    name = outcome.scenario.name.rpartition("/")[2]
    for path in (outcome.saved, outcome.saved.parent / f"{name}.meta.json"):
        path.unlink(missing_ok=True)


async def run_flows(flows: Sequence[Flow], config: ProbeConfig, *, context: Context = Context(),
                    progress: Progress = no_progress,
                    on_run: Callable[[FlowRun], None] | None = None) -> list[FlowRun]:
    """Run the flows one after another; ``on_run`` gets each as it ends."""
    timeout = httpx.Timeout(connect=config.limits.connect_timeout, read=None, write=config.limits.idle_timeout,
                            pool=None)
    runs: list[FlowRun] = []
    async with httpx.AsyncClient(timeout=timeout, verify=config.verify, follow_redirects=True,
                                 max_redirects=5) as client:
        for flow in flows:
            done = await flow.runner(client, config, context) if flow.runner is not None else \
                [await _FlowRunner(client, flow, config, context, progress).go(context)]
            for run in done:
                runs.append(run)
                if on_run is not None:
                    on_run(run)
    return runs


def run(flows: Sequence[Flow], config: ProbeConfig, *, context: Context = Context(),
        progress: Progress = no_progress, on_run: Callable[[FlowRun], None] | None = None) -> list[FlowRun]:
    """The synchronous entry point: :func:`run_flows` in a fresh event loop."""
    return asyncio.run(run_flows(flows, config, context=context, progress=progress, on_run=on_run))
