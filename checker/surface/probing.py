"""The surface part of a probe run: which flows run after the scenarios, what they are told, and the tables.

``sse-check probe`` (checker.commands.probe) runs its scenario suite, then :func:`run_after` runs the flows
(built-in and from ``--scenario-file``), and puts the capability table and the per-client readiness into the
report's ``extra`` (``capabilities``, ``readiness``): the text report shows them at its end, ``--format json``
carries them for CI.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from checker.engine import LintResult
from checker.live import adapters
from checker.live.probe import ProbeConfig, ScenarioResult
from checker.surface import features
from checker.surface.capability import Capability, capability, dialect_capability, feature_families
from checker.surface.flow import Flow
from checker.surface.readiness import readiness
from checker.surface.run import Context, FlowRun, run


def context_of(results: Sequence[ScenarioResult], not_served: Mapping[str, str], model: str) -> Context:
    """What the scenarios showed: the dialects not served, and whether the model under test was answered."""
    answered = any(r.meta is not None and r.meta.status is not None and 200 <= r.meta.status < 300
                   and r.scenario.expect != "error" and (r.meta.request or {}).get("model") == model
                   for r in results)
    return Context(not_served=dict(not_served), facts={"model_answered": answered})


def pick_flows(flows: Sequence[Flow], names: Sequence[str]) -> tuple[list[Flow], list[str]]:
    """The flows named (by name or bare name; all when no name is given) and the names left for scenarios."""
    wanted = [part.strip() for value in names for part in value.split(",") if part.strip()]
    if not wanted:
        return list(flows), []
    mine = {f.name for f in flows} | {f.name.rpartition("/")[2] for f in flows}
    chosen = [f for f in flows if f.name in wanted or f.name.rpartition("/")[2] in wanted]
    return chosen, [name for name in wanted if name not in mine]


def flow_row(flow: Flow) -> dict[str, Any]:
    """A flow as ``probe --list-scenarios --format json`` lists it."""
    return {"name": flow.name, "api": flow.api, "expect": "flow", "summary": flow.summary, "feature": flow.feature,
            "source": flow.source, "steps": [{"name": s.name, "method": s.method, "path": s.path, "api": s.api,
                                              "expect": s.expect, "gate": s.gate,
                                              "body": None if callable(s.body) else s.body} for s in flow.steps]}


def run_after(flows: Sequence[Flow], config: ProbeConfig, scenarios: Sequence[ScenarioResult], *,
              apis: Sequence[str], not_served: Mapping[str, str],
              on_result: Callable[[ScenarioResult], None]) -> list[FlowRun]:
    """Run ``flows`` after the scenario suite; each answered step goes to ``on_result`` as its flow ends."""
    features.load_features()
    context = context_of(scenarios, not_served, config.model)

    def report(flow_run: FlowRun) -> None:
        for outcome in flow_run.results:
            on_result(outcome)

    return run(flows, config, context=context, on_run=report)


def capability_rows(apis: Sequence[str], scenarios: Sequence[ScenarioResult], not_served: Mapping[str, str],
                    runs: Sequence[FlowRun]) -> list[Capability]:
    """The capability table: streaming on each dialect probed (from the scenarios), then each feature."""
    rows = []
    steps = [r for flow_run in runs for r in flow_run.results]
    own = feature_families()
    for api in apis:  # every answer of its endpoint: the scenarios', then the flows' steps'
        mine = [r for r in [*scenarios, *steps] if r.scenario.api == api and r.result is not None]
        findings = [(r.scenario.name, f) for r in mine if r.result is not None for f in r.result.findings
                    if f.code[:3] not in own]  # a feature's own findings (FMT) decide its row, not streaming's
        rows.append(dialect_capability(api, adapters.get(api).endpoint, findings, probed=bool(mine),
                                       not_served=not_served.get(api)))
    by_feature: dict[str, list[Any]] = {}
    for flow_run in runs:
        by_feature.setdefault(flow_run.outcome.feature, []).append(flow_run.outcome)
    rows.extend(capability(name, outcomes) for name, outcomes in by_feature.items())
    return rows


def evidence(scenarios: Sequence[ScenarioResult], runs: Sequence[FlowRun]) -> list[tuple[str, LintResult]]:
    """The streams a client reads, in run order: the scenarios', then the flows' steps of a dialect."""
    found: list[tuple[str, LintResult]] = [(r.scenario.name, r.result) for r in scenarios if r.result is not None]
    found += [(r.scenario.name, r.result) for flow_run in runs for r in flow_run.results
              if r.result is not None and r.scenario.api is not None]
    return found


def tables(apis: Sequence[str], scenarios: Sequence[ScenarioResult], not_served: Mapping[str, str],
           runs: Sequence[FlowRun]) -> dict[str, list[dict[str, Any]]]:
    """``capabilities`` and ``readiness`` for the report's extra (JSON-ready)."""
    rows = capability_rows(apis, scenarios, not_served, runs)
    return {"capabilities": [row.as_dict() for row in rows],
            "readiness": [r.as_dict() for r in readiness(evidence(scenarios, runs), rows)]}
