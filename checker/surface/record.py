"""The record of one flow's run: each step's request, status and answer, as plain JSON.

A feature's rules judge a flow from this record only (pure, like the engine): the probe builds it as the steps
run, ``--save`` writes it as ``<flow>.flow.json`` beside the steps' captures, and the rules' examples are
records (``captures/surface/*.flow.json``, each with the codes it must give in ``expect``), judged again by the
tests. So a verdict on a flow can be reproduced from what was saved.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from checker.findings import Finding, Position

RECORD_VERSION = 1
START = Position(line=1, byte=0)


@dataclass(slots=True, kw_only=True)
class StepRecord:
    name: str
    method: str = "POST"
    url: str | None = None
    expect: str = "stream"
    request: Any = None  # the body sent (None for a GET or a DELETE)
    status: int | None = None  # None: no answer (not sent, or no connection)
    answer: Any = None  # the JSON answer, or what a stream accumulated ({"id", "output"}; checker.surface.flow)
    skipped: str | None = None  # why the step was not sent

    @property
    def ok(self) -> bool:
        """A 2xx answer."""
        return self.status is not None and 200 <= self.status < 300

    @property
    def error_text(self) -> str:
        """The error answer's message (else its code), at most 120 characters: what a finding quotes of it."""
        error = self.answer.get("error") if isinstance(self.answer, Mapping) else None
        if isinstance(error, Mapping):
            return str(error.get("message") or error.get("code") or "")[:120]
        return str(error or "")[:120]

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "method": self.method, "url": self.url, "expect": self.expect,
                "request": self.request, "status": self.status, "answer": self.answer, "skipped": self.skipped}

    @classmethod
    def from_dict(cls, obj: Mapping[str, Any]) -> StepRecord:
        status = obj.get("status")
        return cls(name=str(obj.get("name") or ""), method=str(obj.get("method") or "POST"), url=obj.get("url"),
                   expect=str(obj.get("expect") or "stream"), request=obj.get("request"),
                   status=status if isinstance(status, int) else None, answer=obj.get("answer"),
                   skipped=obj.get("skipped"))


@dataclass(slots=True, kw_only=True)
class FlowRecord:
    flow: str
    feature: str
    model: str
    api: str | None = None
    details: dict[str, Any] = field(default_factory=dict)  # what the flow sent on purpose (ids, the tool output)
    facts: dict[str, Any] = field(default_factory=dict)  # what the rest of the run showed (model_answered)
    steps: list[StepRecord] = field(default_factory=list)

    def step(self, name: str) -> StepRecord | None:
        return next((s for s in self.steps if s.name == name), None)

    def as_dict(self) -> dict[str, Any]:
        return {"record_version": RECORD_VERSION, "flow": self.flow, "feature": self.feature, "model": self.model,
                "api": self.api, "details": self.details, "facts": self.facts,
                "steps": [s.as_dict() for s in self.steps]}

    @classmethod
    def from_dict(cls, obj: Mapping[str, Any]) -> FlowRecord:
        steps = obj.get("steps")
        return cls(flow=str(obj.get("flow") or ""), feature=str(obj.get("feature") or ""),
                   model=str(obj.get("model") or ""), api=obj.get("api"),
                   details=dict(obj.get("details") or {}), facts=dict(obj.get("facts") or {}),
                   steps=[StepRecord.from_dict(s) for s in steps if isinstance(s, Mapping)]
                   if isinstance(steps, list) else [])


# What a judge says: findings, each on the step it is about.
StepFinding = tuple[str, Finding]
Judge = Callable[[FlowRecord], list[StepFinding]]
