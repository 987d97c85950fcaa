"""The rules of flows (FLW, MOD, TUR, …): every example record gives exactly the codes it declares.

The examples are flow records (``captures/surface/*.flow.json``: each step's request, status and answer, as
``probe --save`` writes them), judged by :func:`checker.surface.judging.judge_record`, the function the probe
calls when a flow ends.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from checker.rules import RULES
from checker.surface.capability import feature_families
from checker.surface.features import load_features
from checker.surface.judging import expected_codes, judge_record
from checker.surface.record import FlowRecord

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = ROOT / "captures"
RECORDS = sorted((CAPTURES / "surface").glob("*.flow.json"))
load_features()
# The features' rules whose examples are flow records here (the structured-output rules, FMT, act through a
# feature's row too, but their examples are streams: captures/structured, checked by tests/test_corpus.py).
SURFACE_RULES = sorted(code for code in RULES
                       if code[:3] in feature_families() and RULES[code].bad.startswith("surface/"))


def codes_of(path: Path) -> tuple[list[str], list[str]]:
    document = json.loads(path.read_text())
    found = sorted({f.code for _, f in judge_record(FlowRecord.from_dict(document))})
    return found, expected_codes(document)


@pytest.mark.parametrize("path", RECORDS, ids=lambda p: p.name)
def test_every_record_gives_exactly_what_it_declares(path: Path) -> None:
    found, expected = codes_of(path)
    assert found == expected


@pytest.mark.parametrize("code", SURFACE_RULES)
def test_every_flow_rule_fires_on_its_bad_record_and_not_on_its_good_one(code: str) -> None:
    rule = RULES[code]
    assert rule.bad == f"surface/{code}-{rule.name}.flow.json"
    assert code in codes_of(CAPTURES / rule.bad)[0]
    assert rule.good.startswith("surface/good-")
    assert code not in codes_of(CAPTURES / rule.good)[0]


def test_every_record_is_some_rule_s_example() -> None:
    used = {RULES[c].bad for c in SURFACE_RULES} | {RULES[c].good for c in SURFACE_RULES}
    assert {f"surface/{p.name}" for p in RECORDS} == used


def test_a_record_reads_back_as_written() -> None:
    document = json.loads(RECORDS[0].read_text())
    record = FlowRecord.from_dict(document)
    assert FlowRecord.from_dict(record.as_dict()) == record
