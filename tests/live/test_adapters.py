"""The request adapters (checker.live.adapters): one per dialect, found by name, endpoint, body or stream, and
the only place the live side knows a dialect's shape."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from checker import dialects
from checker.live import adapters
from checker.live.adapters import ReplayScript
from checker.replay import live

ROOT = Path(__file__).resolve().parents[2]


def test_each_dialect_is_found_by_name_alias_endpoint_body_and_stream() -> None:
    assert adapters.names()[0] == "responses" and set(adapters.names()) >= {"responses", "chat"}
    assert adapters.get("openai-chat") is adapters.get("chat")  # the replay's name for it
    for name in adapters.names():
        adapter = adapters.get(name)
        assert adapters.for_path(f"/v1{adapter.endpoint}") is adapter
        assert adapters.for_path(f"/proxy/prefix{adapter.endpoint}/") is adapter
    assert adapters.for_path("/v1/models") is None
    assert adapters.for_request({"model": "m", "messages": []}).name == "chat"
    assert adapters.for_request({"model": "m", "input": "hi"}).name == "responses"
    assert adapters.for_request(["not an object"]).name == "responses"  # the default
    assert adapters.for_stream(b'data: {"object":"chat.completion.chunk"}').name == "chat"
    assert adapters.for_stream(b"event: response.created\n").name == "responses"
    with pytest.raises(ValueError, match="no request adapter for the dialect 'nope'"):
        adapters.get("nope")


def test_an_adapter_is_linted_when_its_dialect_is_registered() -> None:
    for name in adapters.names():
        assert adapters.get(name).linted == (name in dialects.names())


@pytest.mark.parametrize("name", ["responses", "chat"])
def test_the_live_replay_turns_round_trip_through_the_adapter(name: str) -> None:
    adapter = adapters.get(name)
    script = live.script()
    assert isinstance(script, ReplayScript)
    first = adapter.turn1_body(script)
    assert first == live.turn1_body(name) and "stream" not in first and "model" not in first
    # Every variant of both families is built from a turn 1 with reasoning and one call; the dropped one
    # carries no reasoning, the altered one a different text.
    turn1 = _turn1(name)
    assert adapter.has_reasoning(turn1) and adapter.after_reasoning(turn1) == ("function_call",)
    bodies = {(f, v): adapter.turn2_body(script, turn1, f, v) for f, v in live.PAIRS}
    assert all(body is not None for body in bodies.values())
    exact, dropped, altered = (str(bodies[("continue", v)]) for v in live.VARIANTS)
    assert "Paris is mild" in exact and "Paris is mild" not in dropped and exact != altered


def _turn1(name: str) -> dict[str, object]:
    if name == "chat":
        return {"message": {"role": "assistant", "content": "", "reasoning_content": "Paris is mild today",
                            "tool_calls": [{"id": "c1", "type": "function",
                                            "function": {"name": "get_weather", "arguments": "{}"}}]},
                "field": "reasoning_content"}
    return {"items": [{"type": "reasoning", "id": "rs_1", "summary": [],
                       "content": [{"type": "reasoning_text", "text": "Paris is mild today"}]},
                      {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "get_weather",
                       "arguments": "{}"}]}


# The modules of the live side and the HTTP checks that once told dialects apart by name; they now ask the
# adapter or the dialect registry.
ADAPTED = [*sorted((ROOT / "checker" / "live").glob("*.py")), *sorted((ROOT / "checker" / "replay").glob("live*.py")),
           *(ROOT / "checker" / name for name in ("request_checks.py", "http_checks.py", "nonstream_checks.py")),
           *sorted((ROOT / "checker" / "commands").glob("*.py"))]
DIALECT_TEST = re.compile(r"""(?:==|!=)\s*["'](?:responses|chat|openai-chat|anthropic|messages)["']"""
                          r"""|["'](?:responses|chat|openai-chat)["']\s*(?:==|!=|if\b)""")


@pytest.mark.parametrize("path", ADAPTED, ids=lambda p: p.name)
def test_no_module_of_the_live_side_branches_on_a_dialect_name(path: Path) -> None:
    found = [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if DIALECT_TEST.search(line)]
    assert not found, found
