"""Multi-step tool use, stateless (item 2 of issue 17; rules TUR, checker/rules/tool_turns.py).

One flow per dialect probed, written by that dialect's request adapter (checker.live.adapters):

1. ``call``: a request that requires one tool call (the scenario suite's ``reasoning_one_call`` request), streamed;
2. ``answer``: the same history with the answer as emitted and one result per call (a ``function_call_output``
   item, a ``tool`` message, a ``tool_result`` block), streamed and checked like any scenario's stream;
3. ``orphan``: the same request with the result's call id replaced by one no call has: an invalid request,
   which a server must refuse (its acceptance is HTP005, as for any invalid request).

The judge checks the round trip: the result refused (TUR001), a call id of the second answer that repeats one of
the first, or two calls of one answer with one id (TUR002). A first answer without a call leaves the second
request unbuilt (FLW001). The stateful form (``previous_response_id``) is the stored responses' feature.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from checker.live import adapters
from checker.live.adapters.base import Ask, RequestAdapter
from checker.live.scenarios import MAX_OUTPUT_TOKENS, TOOLS, qualified
from checker.rules import tool_turns as rules
from checker.surface.capability import Feature, register
from checker.surface.flow import Answers, Flow, Step, UnresolvedReference
from checker.surface.record import START, FlowRecord, StepFinding

FLOW = "tool_turn"
UNKNOWN_CALL_ID = "call_sse_check_unknown"
ASK = Ask(prompt="What should I wear in Berlin?", tools=tuple(TOOLS), require_tool=True, parallel=False,
          reasoning="low", max_tokens=MAX_OUTPUT_TOKENS)
# What each dialect calls the result it sends back (the findings' words).
RESULT_WORDS = {"responses": "function_call_output", "chat": "tool message", "messages": "tool_result block"}
# The capture names a replay server may know the steps by (captures/llama.cpp: the live replay's turns).
REPLAY = {"call": ("reasoning_one_call", "tool_call", "replay-turn1"),
          "answer": ("replay-continue-exact",), "orphan": ("invalid_model", "error_previous_response_id")}


def tool_output(name: str) -> str:
    """The made-up result of a call (the same every run, so that answers can be recorded and replayed)."""
    return json.dumps({"tool": name, "result": "sunny, 18 degrees"})


def feature_name(api: str) -> str:
    return f"{FLOW}.{api}"


def _calls(adapter: RequestAdapter, answers: Answers) -> list[tuple[str, str]]:
    call = answers.get("call")
    output = call.get("output") if isinstance(call, Mapping) else None
    calls = adapter.calls_in(output) if isinstance(output, list) else []
    if not calls:
        raise UnresolvedReference("{call.output}", "the answer to a request that requires a tool call has no "
                                                   "function call", "call")
    return calls


def _answer_body(adapter: RequestAdapter, first: Mapping[str, Any], *, orphan: bool = False) -> Any:
    def build(answers: Answers) -> dict[str, Any]:
        calls = _calls(adapter, answers)
        results = [(UNKNOWN_CALL_ID if orphan else call_id, tool_output(name)) for call_id, name in calls]
        return adapter.with_tool_results(first, answers["call"]["output"], results)

    return build


def flow_for(api: str) -> Flow:
    adapter = adapters.get(api)
    first = adapter.scenario_body(ASK)
    words = RESULT_WORDS.get(adapter.name, "tool result")
    steps = (
        Step(name="call", api=adapter.name, body=first, expect="stream", replay=REPLAY["call"], gate=True,
             summary="a request that requires one tool call"),
        Step(name="answer", api=adapter.name, body=_answer_body(adapter, first), expect="stream",
             replay=REPLAY["answer"], summary=f"the history with the call's {words}: the answer checked as a stream"),
        Step(name="orphan", api=adapter.name, body=_answer_body(adapter, first, orphan=True), expect="error",
             replay=REPLAY["orphan"], summary=f"a {words} for a call id no call has: an HTTP error with a JSON body"),
    )
    return Flow(name=qualified(adapter.name, FLOW), feature=feature_name(adapter.name), api=adapter.name,
                summary=f"a tool turn: a function call, then its {words}", steps=steps,
                details={"result_words": words, "unknown_call_id": UNKNOWN_CALL_ID})


def flows(apis: Sequence[str]) -> list[Flow]:
    return [flow_for(api) for api in apis]


def judge(record: FlowRecord) -> list[StepFinding]:
    """TUR001 and TUR002 on the record of a tool-turn flow."""
    adapter = adapters.get(record.api or adapters.DEFAULT.name)
    call, answer = record.step("call"), record.step("answer")
    if call is None or not call.ok or not isinstance(call.answer, Mapping):
        return []
    first = adapter.calls_in(call.answer.get("output") or [])
    found: list[StepFinding] = []
    seen: set[str] = set()
    for call_id, _ in first:
        if call_id in seen:
            found.append(("call", rules.CALL_ID_REUSED.finding(START, call_id=call_id, where="first answer")))
        seen.add(call_id)
    if answer is None or answer.status is None or not first:
        return found
    words = str(record.details.get("result_words") or "tool result")
    if not answer.ok:
        found.append(("answer", rules.TOOL_OUTPUT_REJECTED.finding(
            START, what=words, call_id=first[0][0], status=answer.status, message=answer.error_text)))
        return found
    output = answer.answer.get("output") if isinstance(answer.answer, Mapping) else None
    for call_id, _ in adapter.calls_in(output if isinstance(output, list) else []):
        if call_id in seen:
            found.append(("answer", rules.CALL_ID_REUSED.finding(START, call_id=call_id, where="second answer")))
        seen.add(call_id)
    return found


for _api in adapters.names():
    register(Feature(name=feature_name(_api), title=f"tool turns on /v1{adapters.get(_api).endpoint}",
                     families=("TUR",), judge=judge))
