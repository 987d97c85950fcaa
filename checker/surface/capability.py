"""Features and the capability table: one row per feature, supported / unsupported / broken.

A :class:`Feature` is one thing a client may rely on (``GET /v1/models``, a tool turn in chat, streaming on
``/v1/responses``): its name, its title, the rule families of its own checks and its judge (the pure function
that reads a :class:`~checker.surface.record.FlowRecord` and gives findings). Feature modules register theirs
with :func:`register`; :mod:`checker.surface.features` lists the modules.

A feature's row is decided by what its flows did (:class:`FlowOutcome`):

* ``unsupported``: every flow met a *gate* step answered 404, 405 or 501, or an error that says the feature is
  not supported (or its dialect's endpoint is not served at all): one line, never a failure;
* ``broken``: a flow failed: a step answered an error where a success was due, a step could not be built from
  an earlier answer (FLW001), or the feature's judge gave an error; the first such finding is the row's;
* ``not checked``: no flow got an answer (a replay server with no capture of it);
* ``supported`` otherwise (its warnings are named in ``why``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from checker.findings import Finding, Severity
from checker.surface.record import FlowRecord, Judge

STATUSES: tuple[str, ...] = ("supported", "unsupported", "broken", "not checked")


@dataclass(frozen=True, slots=True, kw_only=True)
class Feature:
    name: str  # the row's key: "models", "tool_turn.chat"
    title: str  # what the row says: "GET /v1/models (list, model under test)"
    families: tuple[str, ...] = ()  # the rule families its judge reports: they act through this row
    judge: Judge | None = None


FEATURES: dict[str, Feature] = {}


def register(feature: Feature) -> Feature:
    """Add a feature (its module registers it at import time); a name is registered once."""
    if feature.name in FEATURES and FEATURES[feature.name] != feature:
        raise ValueError(f"feature {feature.name!r} registered twice")
    FEATURES[feature.name] = feature
    return feature


def feature_families() -> frozenset[str]:
    """The rule families of every feature's own checks (they decide capability rows, not client matrices)."""
    return frozenset(f for feature in FEATURES.values() for f in feature.families) | {"FLW"}


# --- what a flow did -----------------------------------------------------------------------------------


@dataclass(slots=True, kw_only=True)
class FlowOutcome:
    """One flow's run: its record, whether the server offers it, and what failed (in step order)."""

    flow: str
    feature: str
    record: FlowRecord
    unsupported: str | None = None  # why the server does not offer it ("GET /v1/models: 404")
    not_checked: str | None = None  # why it got no answer (a replay server without its capture)
    failures: list[tuple[str, Finding]] = field(default_factory=list)  # (step id, finding) that break it
    warnings: list[tuple[str, Finding]] = field(default_factory=list)  # the judge's lesser findings


@dataclass(frozen=True, slots=True, kw_only=True)
class Capability:
    feature: str
    title: str
    status: str  # one of STATUSES
    why: str = ""
    finding: dict[str, Any] | None = None  # {"code", "message", "step"}: the first that decided the row
    flows: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {"feature": self.feature, "title": self.title, "status": self.status, "why": self.why,
                "finding": self.finding, "flows": list(self.flows)}


def finding_ref(step: str, finding: Finding) -> dict[str, Any]:
    return {"code": finding.code, "message": finding.message, "step": step}


def capability(name: str, outcomes: Sequence[FlowOutcome]) -> Capability:
    """The row of feature ``name`` from its flows' outcomes (see the module's doc for the order)."""
    feature = FEATURES.get(name)
    title = feature.title if feature is not None else name
    flows = tuple(o.flow for o in outcomes)
    failed = [(o, step, f) for o in outcomes for step, f in o.failures]
    if failed:
        # The feature's own finding says best what broke (TUR001 rather than the HTP001 of the same answer).
        own = [entry for entry in failed if feature is not None and entry[2].code[:3] in feature.families]
        _, step, finding = (own or failed)[0]
        return Capability(feature=name, title=title, status="broken", why=finding.message,
                          finding=finding_ref(step, finding), flows=flows)
    answered = [o for o in outcomes if o.unsupported is None and o.not_checked is None]
    if not answered:
        if outcomes and all(o.unsupported is not None for o in outcomes):
            return Capability(feature=name, title=title, status="unsupported",
                              why=str(outcomes[0].unsupported), flows=flows)
        why = next((o.not_checked for o in outcomes if o.not_checked), "no flow ran")
        return Capability(feature=name, title=title, status="not checked", why=str(why), flows=flows)
    warned = [(step, f) for o in answered for step, f in o.warnings]
    why = "; ".join(dict.fromkeys(f"{f.code} {f.message}" for _, f in warned)) if warned else ""
    return Capability(feature=name, title=title, status="supported", why=why,
                      finding=finding_ref(*warned[0]) if warned else None, flows=flows)


def dialect_capability(api: str, endpoint: str, findings: Sequence[tuple[str, Finding]], *, probed: bool,
                       not_served: str | None) -> Capability:
    """The row of streaming on one dialect's endpoint, from the scenario suite: ``findings`` as (scenario,
    finding) in run order; broken at its first error."""
    name, title = f"stream.{api}", f"streams on /v1{endpoint}"
    if not_served is not None:
        return Capability(feature=name, title=title, status="unsupported", why=not_served)
    if not probed:
        return Capability(feature=name, title=title, status="not checked", why="no scenario of it was answered")
    errors = [(scenario, f) for scenario, f in findings if f.severity >= Severity.ERROR]
    if errors:
        scenario, finding = errors[0]
        more = f" (and {len(errors) - 1} more error(s))" if len(errors) > 1 else ""
        return Capability(feature=name, title=title, status="broken", why=f"{finding.message}{more}",
                          finding=finding_ref(scenario, finding))
    return Capability(feature=name, title=title, status="supported")
