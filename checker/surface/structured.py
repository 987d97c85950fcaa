"""Structured output as a capability (item 4 of issue 17; rules FMT, checker/rules/structured.py; docs/spec.md §8).

One flow per dialect probed, written by that dialect's request adapter (checker.live.adapters): a streamed
request for a strict ``json_schema`` answer (:data:`checker.live.scenarios.WEATHER_ANSWER`) in the dialect's
own words: Responses ``text.format``, chat ``response_format``, Anthropic ``output_config.format``. The step is
probed like any scenario, so its stream gets every stream check, the structured-output rules among them (the
request carries the format, so the engine judges the answer's text against the schema it sent); its FMT
findings decide the row (checker.surface.run: a stream's findings of its feature's families). A server that
refuses the format with an error saying it is not supported makes the row "unsupported".

Then the same request with ``stream: false``: the answer the SDKs' parse helpers read (openai-python's
``responses.parse()`` and ``chat.completions.parse()``, anthropic-python's ``messages.parse()`` all ask without
streaming), judged with the same rules (checker.nonstream_checks: the texts of the non-streamed answer against
the format the request sent). Its FMT findings decide the row too; an error where the streamed request was
answered is a broken row, as any step's.

The judge has nothing to add from the record: what the text must be is judged on each answer, where the finish
and refusal that decide whether it is judged at all are known.
"""

from __future__ import annotations

from collections.abc import Sequence

from checker.live import adapters
from checker.live.adapters.base import Ask
from checker.live.scenarios import MAX_OUTPUT_TOKENS, WEATHER_ANSWER, qualified
from checker.surface.capability import Feature, register
from checker.surface.flow import Flow, Step
from checker.surface.record import FlowRecord, StepFinding

FLOW = "structured_output"
NONSTREAM_STEP = "answer_nonstream"
ASK = Ask(prompt="What is the weather in Paris? Answer as JSON.", reasoning="none", answer_schema=WEATHER_ANSWER,
          max_tokens=MAX_OUTPUT_TOKENS)


def feature_name(api: str) -> str:
    return f"{FLOW}.{api}"


def flow_for(api: str) -> Flow:
    adapter = adapters.get(api)
    where = adapter.words.get("format", "format")
    body = adapter.scenario_body(ASK)
    step = Step(name="answer", api=adapter.name, body=body, expect="stream", gate=True,
                replay=(FLOW,), summary=f"a strict json_schema answer ({where}): JSON the request's schema accepts")
    whole = Step(name=NONSTREAM_STEP, api=adapter.name, body=body, expect="nonstream", replay=(FLOW,),
                 summary=f"the same with stream false ({where}): the answer parse() helpers read")
    return Flow(name=qualified(adapter.name, FLOW), feature=feature_name(adapter.name), api=adapter.name,
                summary=f"structured output ({where})", steps=(step, whole))


def flows(apis: Sequence[str]) -> list[Flow]:
    return [flow_for(api) for api in apis]


def judge(record: FlowRecord) -> list[StepFinding]:
    """Nothing beyond the stream's own FMT findings (see the module's doc)."""
    return []


for _api in adapters.names():
    register(Feature(name=feature_name(_api), title=f"structured output on /v1{adapters.get(_api).endpoint}",
                     families=("FMT",), judge=judge))
