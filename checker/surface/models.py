"""``GET /v1/models``: the list a client picks its model from (item 1 of issue 17; rules MOD, checker/rules/models.py).

One flow of one gate step: a server without the endpoint (404, 405, 501) makes the row "unsupported". Its answer
must be OpenAI's ``ListModelsResponse`` (reference/openai-openapi.json): ``object: "list"`` and ``data``, an
array of ``Model`` objects, each with a string ``id``, ``object: "model"``, an integer ``created`` and a string
``owned_by`` (other members are extensions, allowed). The model under test must be one of the ids; when it is
not, whether the server answered it in the scenario suite (the fact ``model_answered``) tells a server that
routes any model name (MOD003) from one that does not serve it (MOD002).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from checker.rules import models as rules
from checker.surface.capability import Feature, register
from checker.surface.flow import Flow, Step
from checker.surface.record import START, FlowRecord, StepFinding

FEATURE = "models"
LIST_STEP = "list"
SHOWN_IDS = 5  # model ids named in a finding at most
# What each Model member must be (ListModelsResponse.data[].*), and how the finding names it.
_MODEL_FIELDS: tuple[tuple[str, type, str], ...] = (
    ("id", str, "a string"), ("created", int, "an integer"), ("owned_by", str, "a string"))


def flows(apis: Sequence[str]) -> list[Flow]:
    return [Flow(name="models", feature=FEATURE,
                 summary="GET /v1/models: a valid list, with the model under test in it",
                 steps=(Step(name=LIST_STEP, method="GET", path="/models", expect="json", gate=True,
                             summary="GET /v1/models: a list of models with the model under test"),))]


def shape_problem(answer: Any) -> str | None:
    """What makes an answer no ListModelsResponse (None: it is one)."""
    if not isinstance(answer, Mapping):
        return "the answer is not a JSON object" if answer is not None else "the answer is not JSON"
    if answer.get("object") != "list":
        return f"object is {_shown(answer.get('object'))}, expected \"list\""
    data = answer.get("data")
    if not isinstance(data, list):
        return f"data is {_shown(data)}, expected an array of models"
    for index, model in enumerate(data):
        if not isinstance(model, Mapping):
            return f"data[{index}] is {_shown(model)}, expected a model object"
        if model.get("object") != "model":
            return f"data[{index}].object is {_shown(model.get('object'))}, expected \"model\""
        for name, kind, words in _MODEL_FIELDS:
            value = model.get(name)
            if not isinstance(value, kind) or isinstance(value, bool):
                return f"data[{index}].{name} is {_shown(value)}, expected {words}"
    return None


def _shown(value: Any) -> str:
    if value is None:
        return "missing or null"
    text = repr(value) if isinstance(value, str) else type(value).__name__
    return text if len(text) <= 40 else text[:39] + "…"


def listed(ids: list[str]) -> str:
    if not ids:
        return "it lists no model"
    more = f", and {len(ids) - SHOWN_IDS} more" if len(ids) > SHOWN_IDS else ""
    return "it lists " + ", ".join(ids[:SHOWN_IDS]) + more


def judge(record: FlowRecord) -> list[StepFinding]:
    """MOD001-MOD003 on the record of the models flow."""
    step = record.step(LIST_STEP)
    if step is None or not step.ok:
        return []  # no list: the HTTP checks said why (or the endpoint is not offered)
    problem = shape_problem(step.answer)
    if problem is not None:
        return [(LIST_STEP, rules.MODELS_LIST_INVALID.finding(START, pointer="/", detail=problem))]
    ids = [m["id"] for m in step.answer["data"]]
    if record.model in ids:
        return []
    details = {"model": record.model, "listed": ids[:SHOWN_IDS], "count": len(ids)}
    rule = rules.ANY_MODEL_ROUTED if record.facts.get("model_answered") else rules.MODEL_NOT_LISTED
    return [(LIST_STEP, rule.finding(START, pointer="/data", model=record.model, listed=listed(ids),
                                     details=details))]


register(Feature(name=FEATURE, title="GET /v1/models", families=("MOD",),
                 judge=judge))
