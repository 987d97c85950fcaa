"""The history checks (RPL rules) and conversation tracking, without any network.

Each RPL rule's bad conversation (``captures/replay/RPLxxx-*.conversation.json``) produces exactly the
codes it declares and its good conversation none; the tracker keeps interleaved conversations apart;
the outcome collector reads the real llama.cpp streams; and the real llama.cpp replay experiment gives
the findings the captures README predicts.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from checker.live.adapters.chat import chat_findings, chat_message_key
from checker.live.conversation import Conversation, EmittedChat
from checker.live.history import Tracker, run_conversation
from checker.live.outcome import OutcomeCollector, outcome_from_json
from checker.rules import RULES

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = ROOT / "captures"
REPLAY = CAPTURES / "replay"
LLAMA = CAPTURES / "llama.cpp"
# RPL0xx: the history checks on real traffic (sse-check proxy); RPL1xx belong to the live replay.
RPL_RULES = sorted(code for code in RULES if code.startswith("RPL0"))
CASES = ROOT / "cases" / "reasoning-replay.json"


def fixture(relative: str) -> dict[str, Any]:
    return json.loads((CAPTURES / relative).read_text(encoding="utf-8"))


def codes_of(conversation: dict[str, Any]) -> set[str]:
    return {f.code for findings in run_conversation(conversation) for f in findings}


# --- the rule fixtures ----------------------------------------------------------------------------------


@pytest.mark.parametrize("code", RPL_RULES)
def test_every_replay_rule_has_a_bad_conversation_that_produces_it(code: str) -> None:
    rule = RULES[code]
    assert rule.bad == f"replay/{code}-{rule.name}.conversation.json"
    conversation = fixture(rule.bad)
    assert code in conversation["expect"], f"{rule.bad} does not declare {code}"
    assert codes_of(conversation) == set(conversation["expect"])


@pytest.mark.parametrize("code", RPL_RULES)
def test_every_replay_rule_has_a_good_conversation_without_any_finding(code: str) -> None:
    rule = RULES[code]
    assert rule.good.startswith("replay/good-")
    conversation = fixture(rule.good)
    assert conversation["expect"] == []
    assert codes_of(conversation) == set()


def test_every_replay_fixture_belongs_to_a_rule() -> None:
    used = {RULES[c].bad for c in RPL_RULES} | {RULES[c].good for c in RPL_RULES}
    on_disk = {p.relative_to(CAPTURES).as_posix() for p in REPLAY.glob("*.conversation.json")}
    assert on_disk == used


def test_findings_point_into_the_request() -> None:
    (first, second) = run_conversation(fixture("replay/RPL001-reasoning-item-altered.conversation.json"))
    assert first == []
    (finding,) = second
    assert finding.pointer == "/input/1"
    assert finding.details["fields"] == ["content"]
    assert "rs_1" in finding.message and "response 001" in finding.message


# --- conversations --------------------------------------------------------------------------------------


def _turn(user: str, answer: str, *, rid: str) -> tuple[dict[str, Any], dict[str, Any]]:
    request = {"model": "m", "input": [{"role": "user", "content": user}], "stream": True}
    response = {"id": rid, "output": [{"id": f"msg_{rid}", "type": "message", "role": "assistant",
                                       "content": [{"type": "output_text", "text": answer}]}]}
    return request, response


def _next(request: dict[str, Any], response: dict[str, Any], user: str) -> dict[str, Any]:
    following = copy.deepcopy(request)
    following["input"] += [*response["output"], {"role": "user", "content": user}]
    return following


def test_interleaved_conversations_are_kept_apart() -> None:
    tracker = Tracker()
    a1, ra1 = _turn("hello", "Hi A", rid="resp_a1")
    b1, rb1 = _turn("hello", "Hi B", rid="resp_b1")  # the same first message in both
    ea1, _ = tracker.begin(1, "responses", a1)
    eb1, _ = tracker.begin(2, "responses", b1)
    tracker.finish(eb1, outcome_from_json("responses", rb1))
    tracker.finish(ea1, outcome_from_json("responses", ra1))
    ea2, _ = tracker.begin(3, "responses", _next(a1, ra1, "more A"))
    eb2, _ = tracker.begin(4, "responses", _next(b1, rb1, "more B"))
    assert ea2.predecessor is ea1 and eb2.predecessor is eb1
    assert ea2.conversation is ea1.conversation
    assert eb2.conversation is eb1.conversation
    # Both open with "hello": two conversations; their second turns are told apart by the answers.
    assert eb1.conversation is not ea1.conversation
    assert (ea2.step, eb2.step) == (2, 2)


def test_an_explicit_id_groups_requests_whatever_their_content() -> None:
    tracker = Tracker()
    one, _ = tracker.begin(1, "responses", {"input": "first"}, [("session_id", "abc")])
    two, _ = tracker.begin(2, "responses", {"input": "compacted history"}, [("Session_Id", "abc")])
    other, _ = tracker.begin(3, "responses", {"input": "first"})
    assert two.conversation is one.conversation and two.conversation.label == "session_id abc"
    assert two.predecessor is one
    assert other.conversation is not one.conversation


def test_previous_response_id_names_the_predecessor() -> None:
    tracker = Tracker()
    request, response = _turn("hello", "Hi", rid="resp_1")
    first, _ = tracker.begin(1, "responses", request)
    tracker.finish(first, outcome_from_json("responses", response))
    second, _ = tracker.begin(2, "responses", {"previous_response_id": "resp_1", "input": "again"})
    assert second.predecessor is first and second.step == 2
    orphan, _ = tracker.begin(3, "responses", {"previous_response_id": "resp_unknown", "input": "x"})
    assert orphan.predecessor is None and orphan.conversation.label == "previous_response_id resp_unknown"


# --- the outcome of real llama.cpp streams --------------------------------------------------------------


def _collect(name: str, api: str = "responses", chunk: int = 7) -> Any:
    data = (LLAMA / f"{name}.sse").read_bytes()
    collector = OutcomeCollector(api)  # type: ignore[arg-type]
    for i in range(0, len(data), chunk):
        collector.feed(data[i:i + chunk])
    return collector.close()


def _completed(name: str) -> dict[str, Any]:
    for block in (LLAMA / f"{name}.sse").read_text().split("\n\n"):
        if block.startswith("event: response.completed"):
            return json.loads(block.split("data: ", 1)[1])
    raise AssertionError(name)


def test_the_collector_reads_the_final_output_and_usage_of_a_responses_stream() -> None:
    outcome = _collect("replay-continue-exact")
    completed = _completed("replay-continue-exact")
    assert outcome.output == completed["response"]["output"]
    assert outcome.response_id == completed["response"]["id"]
    assert (outcome.usage.prompt, outcome.usage.cached, outcome.usage.source) == (384, 284, "usage")


def test_the_collector_accumulates_a_chat_stream_with_llama_timings() -> None:
    outcome = _collect("chat-reasoning_text", "chat", chunk=5)
    (message,) = outcome.output
    assert message["reasoning_content"].startswith(" temperature will London")
    assert message["content"]
    assert outcome.reasoning_field == "reasoning_content"
    # llama.cpp's chat stream has no usage: the cache comes from timings (cache_n 13 + prompt_n 1)
    assert (outcome.usage.prompt, outcome.usage.cached, outcome.usage.source) == (14, 13, "timings")


# --- the real replay experiment (captures/llama.cpp/README.md) --------------------------------------------


def _turn2(output: list[dict[str, Any]]) -> dict[str, Any]:
    """replay-continue-exact's request, rebuilt from what turn 1 really emitted (as a client does)."""
    body = json.loads((LLAMA / "replay-continue-exact.request.json").read_text())
    turn1 = json.loads((LLAMA / "replay-turn1.request.json").read_text())
    outputs = [item for item in body["input"] if item.get("type") == "function_call_output"]
    calls = [item for item in output if item["type"] == "function_call"]
    for result, call in zip(outputs, calls):
        result["call_id"] = call["call_id"]
    body["input"] = [{"role": "user", "content": turn1["input"]}, *copy.deepcopy(output), *outputs]
    return body


def _two_turns(second: dict[str, Any]) -> tuple[set[str], Any]:
    tracker = Tracker()
    turn1 = json.loads((LLAMA / "replay-turn1.request.json").read_text())
    first, found = tracker.begin(1, "responses", turn1)
    assert found == []
    tracker.finish(first, _collect("replay-turn1"))
    exchange, found = tracker.begin(2, "responses", second)
    found += tracker.finish(exchange, _collect("replay-continue-exact"))
    assert exchange.predecessor is first
    return {f.code for f in found}, tracker


def test_an_exact_replay_of_the_real_turn_has_no_replay_finding() -> None:
    codes, tracker = _two_turns(_turn2(_collect("replay-turn1").output))
    assert codes == set()
    row = tracker.cache[-1]
    assert (row.previous_prompt, row.cached, row.prompt) == (275, 284, 384)
    assert row.reuse == pytest.approx(284 / 275)


def test_an_altered_or_dropped_reasoning_item_of_the_real_turn_is_reported() -> None:
    output = _collect("replay-turn1").output
    altered = copy.deepcopy(output)
    altered[0]["content"][0]["text"] = altered[0]["content"][0]["text"].strip()
    assert _two_turns(_turn2(altered))[0] == {"RPL001"}
    dropped = [item for item in output if item["type"] != "reasoning"]
    assert _two_turns(_turn2(dropped))[0] == {"RPL003"}


def test_the_recorded_turn_2_sends_reasoning_the_recorded_turn_1_did_not_emit() -> None:
    # The captures were recorded in separate runs: replay-continue-exact replays ids of another turn 1.
    codes, _ = _two_turns(json.loads((LLAMA / "replay-continue-exact.request.json").read_text()))
    assert codes == {"RPL002"}


# --- the chat check agrees with the case file ----------------------------------------------------------


def _case_ids() -> list[str]:
    return [case["about"][:40] for case in json.loads(CASES.read_text())["cases"]]


@pytest.mark.parametrize("index", range(len(_case_ids())), ids=_case_ids())
def test_a_chat_request_built_by_the_case_file_rule_passes(index: int) -> None:
    case = json.loads(CASES.read_text())["cases"][index]
    conversation = Conversation(id="c1")
    for position, message in enumerate(case["messages"]):
        if message["role"] == "assistant":
            conversation.chat[chat_message_key(position, message)] = EmittedChat(
                text=message.get("reasoning", ""), field="reasoning_content", number=position)
    codes = {f.code for f in chat_findings({"messages": case["expect"]}, conversation)}
    notes = any(m.get("turn") is False for m in case["messages"])
    # The wire does not carry `turn: false`: a request right by the case file after such a note is only
    # an info (RPL006), never a warning.
    assert codes == ({"RPL006"} if notes else set())


def test_a_reasoning_item_from_a_split_conversation_is_compared_not_unknown() -> None:
    good = fixture("replay/good-responses.conversation.json")["exchanges"][0]
    reasoning, call = good["response"]["output"]
    summary = {"role": "user", "content": "Summary of the conversation so far."}
    answer = {"id": "msg_s", "type": "message", "role": "assistant",
              "content": [{"type": "output_text", "text": "Noted."}]}

    def third(item: dict[str, Any]) -> set[str]:
        tracker = Tracker()
        first, _ = tracker.begin(1, "responses", good["request"])
        tracker.finish(first, outcome_from_json("responses", good["response"]))
        # the client compacted its history: a new conversation, by the heuristic
        second, _ = tracker.begin(2, "responses", {"input": [summary]})
        tracker.finish(second, outcome_from_json("responses", {"id": "resp_s", "output": [answer]}))
        assert second.conversation is not first.conversation
        request = {"input": [summary, answer, item, call,
                             {"type": "function_call_output", "call_id": "call_1", "output": "18"}]}
        exchange, found = tracker.begin(3, "responses", request)
        assert exchange.conversation is second.conversation
        return {f.code for f in found}

    assert third(copy.deepcopy(reasoning)) == set()
    altered = copy.deepcopy(reasoning)
    altered["content"][0]["text"] = "something else"
    assert third(altered) == {"RPL001"}
    invented = {**copy.deepcopy(reasoning), "id": "rs_invented"}
    invented["content"] = [{"type": "reasoning_text", "text": "never said"}]
    assert third(invented) == {"RPL002"}
