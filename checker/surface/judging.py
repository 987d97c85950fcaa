"""A flow's verdict from its record alone: the steps that could not be built (FLW001), then its feature's judge.

The probe calls :func:`judge_record` when a flow ends; the tests call it on the rules' example records
(``captures/surface/*.flow.json``), so the verdict on a saved flow is the verdict the probe gave.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from checker.rules.flows import STEP_NOT_BUILT
from checker.surface import features
from checker.surface.capability import FEATURES
from checker.surface.record import START, FlowRecord, StepFinding

NOT_BUILT = "not sent: "  # how a step's ``skipped`` starts when an earlier answer lacked what it refers to


def judge_record(record: FlowRecord) -> list[StepFinding]:
    """FLW001 for each step not built (on the step before it, whose answer lacked the field), then the feature's
    own findings."""
    features.load_features()
    found: list[StepFinding] = []
    for index, step in enumerate(record.steps):
        if step.skipped is not None and step.skipped.startswith(NOT_BUILT):
            before = record.steps[index - 1].name if index else step.name
            found.append((before, STEP_NOT_BUILT.finding(START, step=f"{record.flow}.{step.name}",
                                                         detail=step.skipped.removeprefix(NOT_BUILT))))
    feature = FEATURES.get(record.feature)
    if feature is not None and feature.judge is not None:
        found.extend(feature.judge(record))
    return found


def expected_codes(document: Mapping[str, Any]) -> list[str]:
    """The codes an example record declares (its ``expect``)."""
    expect = document.get("expect") or []
    return sorted(str(code) for code in expect)
