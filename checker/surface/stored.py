"""The stored-response flow: the requests that exercise what a server keeps of a response (issue 17 item 3).

:data:`STEPS` is the flow as data, in order: each step's method, path and body, where ``{create.id}`` (the id of
the response a step created), ``{create.call_id}`` (its first function call's call_id) and ``{after}`` (a
sequence number in the middle of the create's stream) refer to earlier answers, and ``scenario``, the
capture ``sse-check serve`` answers it with. :func:`resolve` fills a step from the answers so far; a step
whose reference cannot be filled (no response was created) is not asked, and the features that need it are
untested. The verdicts are :func:`checker.surface.stored_flow.check_flow`'s.

The create asks for a function call (the probe's ``reasoning_one_call``, streamed, ``store: true``), so the
same response serves retrieval, input items, resumption and the stateful continuation (its
``function_call_output`` alone, after ``previous_response_id``) before it is deleted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from checker.surface.stored_answers import Answer, final_response, stream_events
from checker.surface.stored_checks import function_call

UNKNOWN_ID = "resp_sse_check_unknown_000000000000000000000000"
POLLS = 8  # background polls asked at most (the flow stops one poll after a terminal status)
POLL_WAIT_S = 0.5  # the wait before the first poll, doubled before each next one (capped below): 0.5 s … 16 s
POLL_WAIT_MAX_S = 8.0
_REFERENCE = re.compile(r"\{(\w+)\.(id|call_id)\}|\{after\}")


@dataclass(frozen=True, slots=True, kw_only=True)
class Step:
    name: str
    method: str
    path: str  # relative to the API base (…/v1), may hold references
    body: Mapping[str, Any] | None = None  # may hold references in its strings
    scenario: str | None = None  # the capture a replay server answers it with
    stream: bool = False  # the answer is a stream


def _create_body(model: str, tools_body: Mapping[str, Any]) -> dict[str, Any]:
    return {"model": model, **tools_body, "store": True, "stream": True}


def steps(model: str, tools_body: Mapping[str, Any]) -> list[Step]:
    """The flow for ``model``; ``tools_body`` is the function-call request (input, tools, tool_choice…)."""
    call_output = [{"type": "function_call_output", "call_id": "{create.call_id}",
                    "output": json.dumps({"temperature_c": 14, "sky": "cloudy"})}]
    flow = [
        Step(name="create", method="POST", path="/responses", body=_create_body(model, tools_body),
             scenario="reasoning_one_call", stream=True),
        Step(name="retrieve", method="GET", path="/responses/{create.id}"),
        Step(name="input_items", method="GET", path="/responses/{create.id}/input_items?order=asc"),
        Step(name="resume", method="GET", path="/responses/{create.id}?stream=true&starting_after={after}",
             stream=True),
        Step(name="continue", method="POST", path="/responses", stream=True, scenario="tool_result_stateful",
             body={"model": model, "previous_response_id": "{create.id}", "input": call_output,
                   "tools": tools_body.get("tools"), "store": True, "stream": True}),
        Step(name="delete", method="DELETE", path="/responses/{create.id}"),
        Step(name="deleted", method="GET", path="/responses/{create.id}"),
        Step(name="unknown_previous", method="POST", path="/responses", scenario="plain_text",
             body={"model": model, "input": "hi", "previous_response_id": UNKNOWN_ID, "max_output_tokens": 16}),
        Step(name="background", method="POST", path="/responses", scenario="reasoning_one_call",
             body={"model": model, **tools_body, "store": True, "background": True}),
        *[Step(name=f"poll_{n}", method="GET", path="/responses/{background.id}") for n in range(1, POLLS + 1)],
        Step(name="cancel_background", method="POST", path="/responses", scenario="reasoning_one_call",
             body={"model": model, **tools_body, "store": True, "background": True}),
        Step(name="cancel", method="POST", path="/responses/{cancel_background.id}/cancel", body={}),
        Step(name="cancelled", method="GET", path="/responses/{cancel_background.id}"),
        Step(name="conversation_create", method="POST", path="/conversations",
             body={"items": [{"role": "user", "content": "hi"}], "metadata": {"checker": "sse-check"}}),
        Step(name="conversation_get", method="GET", path="/conversations/{conversation_create.id}"),
        Step(name="conversation_delete", method="DELETE", path="/conversations/{conversation_create.id}"),
        Step(name="conversation_deleted", method="GET", path="/conversations/{conversation_create.id}"),
        Step(name="compact", method="POST", path="/responses/compact",
             body={"model": model, "input": [{"role": "user", "content": "What should I wear in Berlin?"},
                                             {"role": "assistant", "content": "Something warm."}]}),
    ]
    return flow


def middle_sequence(answer: Answer | None) -> int | None:
    """A sequence number about halfway through a streamed answer: where the resumption cuts in (0 for a stream
    without sequence numbers, None for no stream)."""
    if answer is None or answer.stream is None:
        return None
    numbers = [e["sequence_number"] for e in stream_events(answer.stream)
               if isinstance(e.get("sequence_number"), int) and not isinstance(e.get("sequence_number"), bool)]
    # Without sequence numbers resumption is still asked (after 0), to learn whether the server offers it.
    return numbers[len(numbers) // 2 - 1] if len(numbers) >= 2 else 0


def _value(name: str, member: str | None, answers: Mapping[str, Answer]) -> str | None:
    if member is None:
        after = middle_sequence(answers.get("create"))
        return None if after is None else str(after)
    answer = answers.get(name)
    if member == "call_id":
        call = function_call(answer)
        return call["call_id"] if call else None
    final = final_response(answer)
    if final is None and answer is not None and answer.ok and isinstance(answer.body, dict):
        final = answer.body  # a conversation, a queued background response
    ident = final.get("id") if final else None
    return ident if isinstance(ident, str) else None


def _fill(text: str, answers: Mapping[str, Answer]) -> str | None:
    missing = False

    def one(match: re.Match[str]) -> str:
        nonlocal missing
        value = _value(match.group(1), match.group(2), answers)
        if value is None:
            missing = True
            return ""
        return value

    filled = _REFERENCE.sub(one, text)
    return None if missing else filled


def _fill_json(value: Any, answers: Mapping[str, Answer]) -> tuple[Any, bool]:
    if isinstance(value, str):
        filled = _fill(value, answers)
        return (value, False) if filled is None else (filled, True)
    if isinstance(value, list):
        pairs = [_fill_json(v, answers) for v in value]
        return [v for v, _ in pairs], all(ok for _, ok in pairs)
    if isinstance(value, Mapping):
        pairs2 = {k: _fill_json(v, answers) for k, v in value.items()}
        return {k: v for k, (v, _) in pairs2.items()}, all(ok for _, ok in pairs2.values())
    return value, True


def resolve(step: Step, answers: Sequence[Answer]) -> Step | None:
    """The step with its references filled from the answers so far, or None when one cannot be filled."""
    by = {answer.step: answer for answer in answers}
    path = _fill(step.path, by)
    body, complete = _fill_json(step.body, by) if step.body is not None else (None, True)
    if path is None or not complete:
        return None
    return Step(name=step.name, method=step.method, path=path, body=body, scenario=step.scenario, stream=step.stream)


def poll_wait(step: Step, first: float = POLL_WAIT_S) -> float:
    """How long to wait before a step: a background poll waits (0.5 s, then twice as long each time)."""
    if not step.name.startswith("poll_") or first <= 0:
        return 0.0
    return min(first * 2 ** (int(step.name.removeprefix("poll_")) - 1), POLL_WAIT_MAX_S)


def skip_poll(step: Step, answers: Sequence[Answer]) -> bool:
    """Polling stops one poll after the background response is terminal (that poll checks it stays so), or at
    the first poll that is not answered."""
    if not step.name.startswith("poll_"):
        return False
    seen = [a for a in answers if a.step.startswith("poll_") or a.step == "background"]
    if seen and not seen[-1].ok:
        return True  # the server does not answer polls (or the background request): nothing to wait for
    statuses = [a.body.get("status") if isinstance(a.body, dict) else None for a in seen[-2:]]
    return len(statuses) == 2 and all(s in ("completed", "incomplete", "failed", "cancelled") for s in statuses)
