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


# --- the pages of CompatCanary and openai-compatible-tester (docs/peers/README.md's rule) ---------------------

PEERS = ROOT / "docs" / "peers"
# The pages whose check tables (the section "Its checks, one by one") are held to the mapping rule.
CHECK_TABLES = ("compatcanary.md", "openai-compatible-tester.md")
TICKED = re.compile(r"`([a-z_]+\.[a-z_]+)`")
# How a row that maps to no rule or row says why.
REASONS = ("not flagged", "not sent", "out of sse-check's scope")
# A backticked dotted name whose first part is a capability's is meant as a capability row (``text.format`` is not).
PREFIXES = {name.split(".")[0] for name in capability_rows()}


def test_the_index_and_the_peer_pages_are_there() -> None:
    assert {"README.md", *CHECK_TABLES} <= {page.name for page in PAGES}


def ours(page: Path) -> str:
    """The page without the first cell of each table row: there the peers' own names stand (``models.list``)."""
    return "\n".join(line.split("|", 2)[-1] if line.startswith("|") else line
                     for line in page.read_text(encoding="utf-8").splitlines())


@pytest.mark.parametrize("name", ("README.md", *CHECK_TABLES))
def test_every_backticked_capability_row_exists(name: str) -> None:
    # These pages write a capability row as `feature.api` (their steps never: `tool_turn.call` would be read as one).
    named = {n for n in TICKED.findall(ours(PEERS / name)) if n.split(".")[0] in PREFIXES}
    assert sorted(named - capability_rows()) == []


def check_rows(page: Path) -> list[str]:
    """The rows of the page's check table (after its heading, up to the next heading), without the header."""
    text = page.read_text(encoding="utf-8")
    start = text.index("## Its checks, one by one")
    end = text.find("\n## ", start + 1)
    lines = text[start:end if end != -1 else None].splitlines()
    return [line for line in lines if line.startswith("|") and not set(line) <= set("|- ")][1:]


@pytest.mark.parametrize("name", CHECK_TABLES)
def test_every_peer_check_maps_to_a_rule_or_a_row_or_says_why_not(name: str) -> None:
    rows = check_rows(PEERS / name)
    assert len(rows) >= 20, "the table lists the peer's checks"
    for row in rows:
        answer = row.rstrip(" |").rsplit("|", 1)[-1]
        mapped = CODE.search(answer) or any(n in capability_rows() for n in TICKED.findall(answer)) \
            or "`models`" in answer or "`--transport websocket`" in answer or "readiness" in answer
        assert mapped or any(reason in answer for reason in REASONS), f"{name}: {row[:100]}"
