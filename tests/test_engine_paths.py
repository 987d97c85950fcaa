"""The engine's hot path changes nothing: fast and full paths agree on the whole corpus, and the
lifecycle table is total.

The engine takes an inlined hot path for well-framed events that the schema and
the machine's ``try_fast`` accept (checker/engine.py ``StreamLinter.feed``,
checker/dialects/responses/machine.py ``ResponsesMachine.try_fast``). Both promise to report
exactly what the general path would. These tests hold them to it: every capture
is linted once as usual and once with the hot paths switched off (trace on, so
the engine takes ``_event`` for every event, and ``try_fast`` refusing every
event, so the machine takes its general path), and the findings must be equal,
field for field.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from checker.captures import request_for
from checker.engine import LintResult, StreamLinter
from checker.dialects.messages.machine import MessagesMachine
from checker.dialects.responses.machine import LIFECYCLE, LIFECYCLE_KIND, ResponsesMachine
from checker.profiles import PROFILES, get_profile
from checker.rules import RULES

ROOT = Path(__file__).resolve().parents[1]
ALL_CAPTURES = sorted((ROOT / "captures").rglob("*.sse"))
# Every dialect's machine (each has its own hot path).
MACHINES = (ResponsesMachine, MessagesMachine)


def _lint(data: bytes, profile: str, request: dict[str, Any] | None, *, full: bool) -> LintResult:
    linter = StreamLinter(profile=get_profile(profile), request=request, trace=full)
    for start in range(0, len(data), 4096):
        linter.feed(data[start:start + 4096])
    return linter.close()


@pytest.mark.parametrize("path", ALL_CAPTURES, ids=lambda p: p.relative_to(ROOT / "captures").as_posix())
def test_fast_and_full_paths_agree(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = path.read_bytes()
    request = request_for(path)
    fast = {profile: _lint(data, profile, request, full=False) for profile in PROFILES}
    for machine in MACHINES:
        monkeypatch.setattr(machine, "try_fast", lambda self, etype, event: False)
    for profile, quick in fast.items():
        slow = _lint(data, profile, request, full=True)
        assert slow.findings == quick.findings, profile
        assert (slow.events, slow.bytes, slow.terminal, slow.response_id) == (
            quick.events, quick.bytes, quick.terminal, quick.response_id)


def test_the_fast_path_is_taken_on_plain_deltas(monkeypatch: pytest.MonkeyPatch) -> None:
    """Guards the test above: were try_fast never taken, it would compare the full path with itself."""
    taken: list[str] = []
    original = ResponsesMachine.try_fast

    def spy(self: ResponsesMachine, etype: str, event: dict[str, Any]) -> bool:
        accepted = original(self, etype, event)
        if accepted:
            taken.append(etype)
        return accepted

    monkeypatch.setattr(ResponsesMachine, "try_fast", spy)
    _lint((ROOT / "captures" / "conforming" / "text.sse").read_bytes(), "openai", None, full=False)
    assert "response.output_text.delta" in taken


def test_the_messages_fast_path_is_taken_on_plain_deltas(monkeypatch: pytest.MonkeyPatch) -> None:
    taken: list[str] = []
    original = MessagesMachine.try_fast

    def spy(self: MessagesMachine, etype: str, event: dict[str, Any]) -> bool:
        accepted = original(self, etype, event)
        if accepted:
            taken.append(etype)
        return accepted

    monkeypatch.setattr(MessagesMachine, "try_fast", spy)
    _lint((ROOT / "captures" / "messages" / "conforming" / "text.sse").read_bytes(), "openai", None, full=False)
    assert "content_block_delta" in taken


STATES = ("start", "created", "queued", "in_progress", "output")
KINDS = sorted(set(LIFECYCLE_KIND.values()) | {"item", "other"})


def test_lifecycle_table_is_total() -> None:
    """Every (state, kind of event) before the terminal event has a row: no transition is left to a default.
    After the terminal event the machine reports any event itself (SSE/LIF rules for events after it)."""
    missing = [pair for pair in itertools.product(STATES, KINDS) if pair not in LIFECYCLE]
    assert not missing
    assert {state for state, _ in LIFECYCLE} == set(STATES)


def test_lifecycle_table_is_consistent() -> None:
    states = set(STATES) | {"terminal"}
    for (state, kind), (next_state, rule) in LIFECYCLE.items():
        assert next_state in states, (state, kind)
        assert rule is None or rule in RULES, (state, kind, rule)
        # Only a terminal event ends the response; nothing else leads to "terminal".
        assert (next_state == "terminal") == (kind == "terminal"), (state, kind)
    # Every state is reachable from "start".
    seen, todo = {"start"}, ["start"]
    while todo:
        here = todo.pop()
        for (state, _), (next_state, _) in LIFECYCLE.items():
            if state == here and next_state not in seen:
                seen.add(next_state)
                todo.append(next_state)
    assert seen == states
