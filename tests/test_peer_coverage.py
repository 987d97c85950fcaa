"""The peer comparisons (docs/peers/*.md) name only what exists: every rule code is in the registry, every
capability row in the probe's capability table, every flow or scenario in ``probe --list-scenarios``.

A page that says "covered by SCH002" or "capability `inputs.image_input`" is a promise to the reader; a rule
renamed or a feature dropped must fail here, not leave the page pointing at nothing.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from checker.live import adapters
from checker.live.scenarios import builtin
from checker.rules import FAMILIES, RULES
from checker.surface.capability import FEATURES
from checker.surface.features import builtin_flows, load_features

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "docs" / "peers").glob("*.md"))
# A rule code: a registry family's prefix and three digits (other all-caps words, SHA256, are not codes).
CODE = re.compile(r"\b([A-Z]{3})(\d{3})\b")
# A capability row, as the pages write it: capability `name` (or capabilities `a`, `b`).
CAPABILITY = re.compile(r"capabilit(?:y|ies) ((?:`[\w.]+`(?:, | and )?)+)")
# A flow or scenario, as the pages write it: flow `name`, scenario `name` (or flows / scenarios with a list).
RUNNABLE = re.compile(r"(?:flows?|scenarios?) ((?:`[\w/.]+`(?:, | and )?)+)")

load_features()


def _names(listed: str) -> list[str]:
    return re.findall(r"`([\w/.]+)`", listed)


def capability_rows() -> set[str]:
    """Every row the capability table can have: each dialect's streaming row and each feature's."""
    return {f"stream.{api}" for api in adapters.names()} | set(FEATURES)


def runnable_names() -> set[str]:
    apis = list(adapters.names())
    scenarios = {scenario.name for api in apis for scenario in builtin(api)}
    return scenarios | {flow.name for flow in builtin_flows(apis)}


def test_there_are_peer_pages() -> None:
    assert PAGES, "docs/peers/ has no page"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_rule_code_a_page_names_is_in_the_registry(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    named = {prefix + digits for prefix, digits in CODE.findall(text) if prefix in FAMILIES}
    assert named, f"{page.name} names no rule"
    assert sorted(named - set(RULES)) == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_capability_row_a_page_names_exists(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    named = {name for listed in CAPABILITY.findall(text) for name in _names(listed)}
    assert sorted(named - capability_rows()) == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_flow_or_scenario_a_page_names_is_one_the_probe_runs(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    named = {name for listed in RUNNABLE.findall(text) for name in _names(listed)}
    assert sorted(named - runnable_names()) == []


def test_the_checks_see_a_wrong_name() -> None:
    # The patterns must catch what they are for, or every page passes.
    assert {p + d for p, d in CODE.findall("covered by SCH002 and XYZ123, not SHA256")} == {"SCH002", "XYZ123", "SHA256"}
    assert _names(CAPABILITY.findall("the capability `inputs.nope` row")[0]) == ["inputs.nope"]
    assert "inputs.nope" not in capability_rows() and "inputs.image_input" in capability_rows()
    assert _names(RUNNABLE.findall("flow `stored` (steps …)")[0]) == ["stored"]
    assert "stored" in runnable_names() and "plain_text_nonstream" in runnable_names()
