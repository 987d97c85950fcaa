"""The live replay over Anthropic Messages (``sse-check replay --live URL --dialect anthropic``).

Offline: the turns it sends (turn 1's content blocks sent back as the anthropic SDKs send ``message.content``:
thinking with its ``signature``, redacted_thinking with its ``data``, tool_use, then the tool results) and the
counts it reads from Anthropic's split usage. Live, against real ``sse-check serve`` processes on loopback:
the set recorded from the real llama-server (``captures/replay/llama.cpp-messages``), and an Anthropic-shaped
server that refuses a forced tool with thinking on and the controls (a dropped or altered thinking block), as
Anthropic's API does. The proxy's history checks of a Messages tool loop (RPL008-RPL010) with the real
anthropic-python as the client are in tests/live/test_proxy_messages_history.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from checker.live.outcome import OutcomeCollector
from checker.replay import live
from checker.synth.messages import MessagesStreamBuilder, encode
from tests.live.test_live_replay import MODEL, codes, live_json, run_here, variants

ROOT = Path(__file__).resolve().parents[2]
RECORDED = ROOT / "captures" / "replay" / "llama.cpp-messages"  # recorded from the real server, all of it
BUDGET = 10  # the recorded set's --thinking-budget
SIGNATURE = "EqQBCkgIARABGAIiQL3mFzGq2v7dCx0Xh1Hj4m0b1k9Yc8fQ2p5oV3sZ6tN8uR1wE4yA7iK0lM2nB5vC9xD3fG6hJ1kL4qW7eT0rY"
REDACTED = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"


def _as_sent(body: dict[str, Any]) -> str:
    return json.dumps({"model": MODEL, **body, "stream": True}, indent=2, ensure_ascii=False) + "\n"


def _turn1_of(stream: bytes) -> dict[str, Any]:
    collector = OutcomeCollector("messages")
    collector.feed(stream)
    return live.turn1_output("anthropic", collector.close().output)


def _signed_turn1() -> dict[str, Any]:
    return {"content": [
        {"type": "thinking", "thinking": "Check the weather first.", "signature": SIGNATURE},
        {"type": "redacted_thinking", "data": REDACTED},
        {"type": "tool_use", "id": "toolu_01", "name": "get_time", "input": {"city": "Paris"}}]}


# --- offline: the requests and the counts ----------------------------------------------------------------------


def test_the_recorded_requests_are_byte_for_byte_what_the_live_replay_sends() -> None:
    conversation = live.script(BUDGET)
    assert (RECORDED / "replay-turn1.request.json").read_text() == _as_sent(live.turn1_body("anthropic", conversation))
    turn1 = _turn1_of((RECORDED / "replay-turn1.sse").read_bytes())
    for family, variant in live.PAIRS:
        body = live.turn2_body("anthropic", turn1, family, variant, conversation)
        assert body is not None
        assert (RECORDED / f"replay-{family}-{variant}.request.json").read_text() == _as_sent(body), variant


def test_turn2_sends_the_blocks_back_as_they_came_or_drops_or_alters_the_thinking() -> None:
    turn1 = _signed_turn1()
    bodies = {pair: live.turn2_body("anthropic", turn1, *pair) for pair in live.PAIRS}
    exact, dropped, altered = (bodies[("continue", v)] for v in live.VARIANTS)
    assert exact and dropped and altered
    user, assistant, results = exact["messages"]
    assert user == {"role": "user", "content": live.PROMPT}
    assert assistant == {"role": "assistant", "content": turn1["content"]}  # signature and data as emitted
    assert results == {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01",
                                                     "content": "{\"time\": \"14:05\"}",
                                                     "cache_control": {"type": "ephemeral"}}]}
    assert dropped["messages"][1]["content"] == [turn1["content"][2]]  # neither thinking nor redacted_thinking
    thinking, redacted, call = altered["messages"][1]["content"]
    assert thinking == {"type": "thinking", "thinking": "Check the cold first.", "signature": SIGNATURE}
    assert (redacted, call) == (turn1["content"][1], turn1["content"][2])
    new_user = bodies[("new_user", "exact")]
    assert new_user and new_user["messages"][:2] == exact["messages"][:2]
    assert new_user["messages"][2]["content"][-1] == {"type": "text", "text": live.FOLLOW_UP,
                                                      "cache_control": {"type": "ephemeral"}}
    assert exact["thinking"] == {"type": "enabled", "budget_tokens": 1024} and exact["max_tokens"] == 1224
    assert exact["tool_choice"] == {"type": "auto"}


def test_turn1_forces_a_tool_and_falls_back_to_what_anthropic_allows_with_thinking() -> None:
    first, fallback = live.turn1_body("anthropic"), live.turn1_fallback("anthropic")
    assert first["tool_choice"] == {"type": "any"} and fallback and fallback["tool_choice"] == {"type": "auto"}
    assert {k: v for k, v in first.items() if k != "tool_choice"} == \
        {k: v for k, v in fallback.items() if k != "tool_choice"}
    assert first["messages"] == [{"role": "user", "content": [
        {"type": "text", "text": live.PROMPT, "cache_control": {"type": "ephemeral"}}]}]
    assert live.turn1_fallback("responses") is None and live.turn1_fallback("openai-chat") is None
    small = live.turn1_body("anthropic", live.script(16))
    assert small["thinking"]["budget_tokens"] == 16 and small["max_tokens"] == live.MAX_OUTPUT_TOKENS + 16


def test_a_continuation_needs_a_tool_call_and_an_alteration_needs_thinking_text() -> None:
    text_only = {"content": [{"type": "thinking", "thinking": "Just answer.", "signature": SIGNATURE},
                             {"type": "text", "text": "Sunny."}]}
    assert live.turn2_body("anthropic", text_only, "continue", "exact") is None
    assert live.unbuilt("anthropic", text_only, "continue", "exact").startswith("turn 1 called no tool")
    assert live.turn2_body("anthropic", text_only, "new_user", "exact") is not None
    redacted_only = {"content": [_signed_turn1()["content"][1], _signed_turn1()["content"][2]]}
    assert live.turn2_body("anthropic", redacted_only, "continue", "altered") is None
    assert "no text to alter" in live.unbuilt("anthropic", redacted_only, "continue", "altered")
    assert live.has_reasoning("anthropic", redacted_only) and live.reasoning_of("anthropic", redacted_only) == ""


def _stream(builder: MessagesStreamBuilder, usage: dict[str, int], output: int) -> bytes:
    events = list(builder.events(ping=False))
    events[0]["message"]["usage"] = {**usage, "output_tokens": 1}
    events[-2]["usage"] = {"output_tokens": output}
    return encode(events)


def test_the_counts_add_up_anthropics_split_usage() -> None:
    body = _stream(MessagesStreamBuilder(name="t").thinking(["Plan", " it"]).tool_use("get_time", ['{"city":"Paris"}']),
                   {"input_tokens": 12, "cache_read_input_tokens": 1400, "cache_creation_input_tokens": 60}, 30)
    counts = live.counts_from_stream("anthropic", 200, body, _turn1_of(body))
    assert (counts.input_tokens, counts.cached_tokens, counts.cache_written, counts.output_tokens) == (1472, 1400, 60, 30)
    assert (counts.reasoning_tokens, counts.reasoning_source, counts.after_reasoning) == (2, "deltas", ("function_call",))


# --- live: the real llama-server's answers, served back -----------------------------------------------------------


def test_the_real_servers_messages_replay_served_back_gives_its_table(serve: Any) -> None:
    """Every answer recorded from the real llama-server b11434: a thinking block sent back to /v1/messages keeps
    the prefix cache of the reasoning, to the token as on its Responses and chat endpoints."""
    server = serve(str(RECORDED))
    code, report = live_json(server.url, "--dialect", "anthropic", "--thinking-budget", str(BUDGET),
                             "--profile", "llama.cpp")
    assert report["aborted"] is None and report["unmeasured"] is None and report["notes"] == [], report
    assert report["target"]["url"] == server.url + "/v1/messages" and report["target"]["dialect"] == "anthropic"
    rows = variants(report)
    assert [(rows[p]["input_tokens"], rows[p]["cached_tokens"]) for p in live.PAIRS] == [
        (384, 284), (370, 273), (384, 279), (382, 273), (382, 273), (382, 273)]
    assert [rows[p]["stopped"]["at"] for p in live.PAIRS] == [
        "reasoning", "prompt", "reasoning-partial", "prompt", "prompt", "prompt"]
    assert report["families"][1]["template"] == "drops"
    assert codes(report) == ["RPL102"] and code == 0
    # what went back, as the proxy's history checks judge it: the exact thinking passes, the controls do not
    assert {p: [f["code"] for f in rows[p]["sent_back"]] for p in live.PAIRS} == {
        ("continue", "exact"): [], ("continue", "dropped"): ["RPL010"], ("continue", "altered"): ["RPL009"],
        ("new_user", "exact"): [], ("new_user", "dropped"): [], ("new_user", "altered"): ["RPL009"]}
    for request in report["requests"]:  # each answered from the capture its body matches: no header sent
        assert request["http"]["replayed_as"] == ("replay-turn1" if request["turn"] == 1 else request["name"])
    turn1 = report["measurement"]["pairs"][0]["turn1"]
    assert (turn1["input_tokens"], turn1["reasoning_tokens"], turn1["after_reasoning"]) == (
        275, 9, ["function_call", "function_call"])
    code, out, _ = run_here("replay", "--live", server.url, "--model", MODEL, "--dialect", "anthropic",
                            "--thinking-budget", str(BUDGET), "--profile", "llama.cpp")
    text = " ".join(out.split())
    assert code == 0 and "dialect anthropic" in text and "cached_tokens: cache_read_input_tokens" in text
    assert "exact 200 384 284 – 103% after the reasoning, before the tool calls" in text
    assert ("sent back (the proxy's RPL checks): exact as the rule wants · dropped RPL010 · altered RPL009"
            in text)


# --- live: an Anthropic-shaped server ---------------------------------------------------------------------------

REFUSED_TOOL = "Thinking may not be enabled when tool_choice forces tool use."
MISSING = ("messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When "
           "`thinking` is enabled, a final `assistant` message must start with a thinking block.")
INVALID = "messages.1.content.0: Invalid `signature` in `thinking` block"


def _write(folder: Path, name: str, request: dict[str, Any], body: bytes, status: int = 200) -> None:
    (folder / f"{name}.sse").write_bytes(body)
    kind = "text/event-stream" if status == 200 else "application/json"
    (folder / f"{name}.headers.txt").write_text(f"HTTP/1.1 {status} {'OK' if status == 200 else 'Bad Request'}\n"
                                                f"content-type: {kind}\nanthropic-version: 2023-06-01\n")
    (folder / f"{name}.request.json").write_text(_as_sent(request))


def _error(message: str) -> bytes:
    return json.dumps({"type": "error", "error": {"type": "invalid_request_error", "message": message}}).encode()


def anthropic_set(folder: Path) -> Path:
    """A server that answers as Anthropic's API does: HTTP 400 for a forced tool with thinking on, for a tool
    loop without its thinking and for an edited thinking block; usage with cache reads and writes."""
    folder.mkdir()
    _write(folder, "turn1-forced", live.turn1_body("anthropic"), _error(REFUSED_TOOL), 400)
    turn1_stream = _stream(MessagesStreamBuilder(name="turn1").thinking(["Check the ", "weather ", "first."],
                                                                        SIGNATURE)
                           .redacted_thinking(REDACTED).tool_use("get_time", ['{"city":', '"Paris"}']),
                           {"input_tokens": 3, "cache_creation_input_tokens": 1517, "cache_read_input_tokens": 0}, 90)
    fallback = live.turn1_fallback("anthropic")
    assert fallback is not None
    _write(folder, "turn1", fallback, turn1_stream)
    turn1 = _turn1_of(turn1_stream)
    for family, variant in live.PAIRS:
        body = live.turn2_body("anthropic", turn1, family, variant)
        assert body is not None
        name = f"{family}-{variant}"
        if family == "continue" and variant != "exact":
            _write(folder, name, body, _error(MISSING if variant == "dropped" else INVALID), 400)
            continue
        answer = _stream(MessagesStreamBuilder(name=name).text(["It is 14:05 in Paris."]),
                         {"input_tokens": 20, "cache_creation_input_tokens": 130, "cache_read_input_tokens": 1520}, 12)
        _write(folder, name, body, answer)
    return folder


def test_an_anthropic_shaped_server_refuses_the_forced_tool_and_the_controls(serve: Any, tmp_path: Path) -> None:
    server = serve(str(anthropic_set(tmp_path / "anthropic")))
    code, report = live_json(server.url, "--dialect", "anthropic")
    assert report["notes"] == [f"turn 1 refused (HTTP 400: {REFUSED_TOOL}), sent as tool_choice "
                               '{"type":"auto"} instead'], report["notes"]
    rows = variants(report)
    exact = rows[("continue", "exact")]
    assert (exact["status"], exact["input_tokens"], exact["cached_tokens"], exact["cache_written"]) == (
        200, 1670, 1520, 130)
    assert exact["stopped"]["at"] == "prompt"  # Anthropic's cache ends at a breakpoint: turn 1's prompt
    dropped = rows[("continue", "dropped")]
    assert dropped["status"] == 400 and dropped["error"] == MISSING[:160] + "…"  # clipped at 160
    assert [f["code"] for f in report["findings"]] == ["RPL106", "RPL106", "RPL102"]
    assert all(f["severity"] == "info" for f in report["findings"])
    assert report["families"][1]["template"] == "drops"
    # every answer is clean Anthropic Messages (msg_ ids, signed thinking, toolu_ ids); the refused turn 1 is a note
    assert [r["name"] for r in report["requests"]][:2] == ["replay-continue-exact-turn1", "replay-continue-exact"]
    assert not [f for r in report["requests"] for f in r["findings"] if f["severity"] != "info"], report["requests"]
    assert code == 0
    code, out, _ = run_here("replay", "--live", server.url, "--model", MODEL, "--dialect", "anthropic")
    text = " ".join(out.split())
    assert "note: turn 1 refused (HTTP 400: Thinking may not be enabled" in text
    assert "variant HTTP input_tokens cached_tokens cache_written" in text
    assert "exact 200 1670 1520 130" in text and "RPL106 info the continue control with the reasoning dropped" in text
