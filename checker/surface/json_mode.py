"""JSON mode (``json_object``) as a capability (rules FMT, checker/rules/structured.py; docs/spec.md §8).

JSON mode is older and looser than structured output: the request asks for a JSON object, with no schema
(Responses ``text.format: {"type": "json_object"}``, Chat Completions ``response_format: {"type":
"json_object"}``; Anthropic Messages has no such mode, so no flow of its own). Servers that follow a
``json_schema`` format do not always follow this one, and clients still send it (openai-python's and
openai-node's ``response_format`` parameter, LangChain's ``json_mode``), so it is a row of its own.

One flow per dialect that has the mode: one streamed request, probed like any scenario; the engine judges the
answer's text against the format the request sent (FMT001: not JSON, FMT004: JSON but not an object), and those
findings decide the row (checker.surface.run: a stream's findings of its feature's families). A server that
refuses the format with an error saying it is not supported makes the row "unsupported".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from checker.live import adapters
from checker.live.adapters.base import Ask
from checker.live.scenarios import MAX_OUTPUT_TOKENS, qualified
from checker.surface.capability import Feature, register
from checker.surface.flow import Flow, Step
from checker.surface.record import FlowRecord, StepFinding

FLOW = "json_mode"
# OpenAI refuses json_object unless the word JSON is in the conversation.
ASK = Ask(prompt="What is the weather in Paris? Answer with a JSON object.", reasoning="none",
          max_tokens=MAX_OUTPUT_TOKENS)
# Where each dialect that has JSON mode asks for it, and how.
FORMATS: dict[str, tuple[str, Callable[[dict[str, Any]], None]]] = {
    "responses": ("text.format", lambda body: body.update(text={"format": {"type": "json_object"}})),
    "chat": ("response_format", lambda body: body.update(response_format={"type": "json_object"})),
}


def feature_name(api: str) -> str:
    return f"{FLOW}.{api}"


def json_mode_body(api: str) -> dict[str, Any]:
    body = adapters.get(api).scenario_body(ASK)
    FORMATS[api][1](body)
    return body


def flow_for(api: str) -> Flow:
    adapter = adapters.get(api)
    where = FORMATS[adapter.name][0]
    step = Step(name="answer", api=adapter.name, body=json_mode_body(adapter.name), expect="stream", gate=True,
                replay=(FLOW,), summary=f"a JSON-mode answer ({where} json_object): a JSON object")
    return Flow(name=qualified(adapter.name, FLOW), feature=feature_name(adapter.name), api=adapter.name,
                summary=f"JSON mode ({where} json_object)", steps=(step,))


def flows(apis: Sequence[str]) -> list[Flow]:
    return [flow_for(api) for api in apis if api in FORMATS]


def judge(record: FlowRecord) -> list[StepFinding]:
    """Nothing beyond the stream's own FMT findings (see the module's doc)."""
    return []


for _api in FORMATS:
    register(Feature(name=feature_name(_api), title=f"JSON mode on /v1{adapters.get(_api).endpoint}",
                     families=("FMT",), judge=judge))
