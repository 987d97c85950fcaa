"""``GET /v1/models``: the list a client picks its model from (item 1 of issue 17; rules MOD, checker/rules/models.py).

One flow of one gate step: a server without the endpoint (404, 405, 501) makes the row "unsupported". Its answer
must be OpenAI's ``ListModelsResponse``, judged by its JSON Schema generated from OpenAI's OpenAPI description
(schemas/openai/objects/ListModelsResponse.json, Model.json): ``object: "list"`` and ``data``, an array of
``Model`` objects, each with a string ``id``, ``object: "model"``, an integer ``created`` and a string
``owned_by`` (other members are extensions, allowed); each problem is a finding at its JSON pointer. The model under test must be one of the ids; when it is
not, whether the server answered it in the scenario suite (the fact ``model_answered``) tells a server that
routes any model name (MOD003) from one that does not serve it (MOD002).

A probe of the Messages dialect alone expects Anthropic's list instead (a page of ModelInfo: ``data``,
``has_more``, ``first_id``, ``last_id``), judged by what the anthropic SDKs' ``models.list()`` needs: a ``data``
array of objects with a string ``id``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from checker.rules import models as rules
from checker.schema_errors import missing_properties
from checker.schemas import load_schema_set
from checker.surface.capability import Feature, register
from checker.surface.flow import Flow, Step
from checker.surface.record import START, FlowRecord, StepFinding

FEATURE = "models"
LIST_STEP = "list"
SHOWN_IDS = 5  # model ids named in a finding at most


def flows(apis: Sequence[str]) -> list[Flow]:
    # A probe of the Messages dialect alone is a probe of an Anthropic-compatible server: its list is Anthropic's
    # page of ModelInfo (`data`, `has_more`, `first_id`, `last_id`), not OpenAI's `object: "list"` of Models.
    shape = ANTHROPIC if list(apis) == ["messages"] else OPENAI
    return [Flow(name="models", feature=FEATURE,
                 summary="GET /v1/models: a valid list, with the model under test in it",
                 steps=(Step(name=LIST_STEP, method="GET", path="/models", expect="json", gate=True,
                             summary="GET /v1/models: a list of models with the model under test"),),
                 details={"list_shape": shape})]


# The schema the answer is judged by (schemas/openai/objects/, generated from OpenAI's OpenAPI description by
# tools/gen_schemas.py): a missing or mistyped member is a finding at its JSON pointer, as an event's is.
SCHEMA_SET, SCHEMA = "openai", "ListModelsResponse"
OPENAI, ANTHROPIC = "openai", "anthropic"  # the list shapes (the flow's details say which the probe expects)
SHOWN_PROBLEMS = 5  # distinct schema problems reported at most (a list of 500 models can break 500 times)
_ENTRY = re.compile(r"^/data/\d+")


def schema_problems(answer: Any) -> list[tuple[str, str]]:
    """What makes an answer no ``ListModelsResponse``, as (JSON pointer, what is wrong there); ``[]``: it is one.

    The same problem in several models is one entry (at its first model, with how many more share it), and the
    missing members of one object are one entry, as the stream checks report them."""
    if answer is None:
        return [("", "the answer is not JSON")]
    missing: dict[str, list[str]] = {}
    seen: dict[tuple[str, str], list[str]] = {}  # (the pointer, each model's index as *; the problem) -> its pointers
    for violation in load_schema_set(SCHEMA_SET).validate_object(SCHEMA, answer):
        if violation.keyword == "required" and violation.missing is not None:
            missing.setdefault(violation.pointer.rsplit("/", 1)[0], []).append(violation.missing)
        else:
            seen.setdefault((_ENTRY.sub("/data/*", violation.pointer), violation.message), []).append(
                violation.pointer)
    for parent, names in missing.items():
        seen.setdefault((_ENTRY.sub("/data/*", parent), missing_properties(names)), []).append(parent)
    problems = []
    for (_, problem), pointers in list(seen.items())[:SHOWN_PROBLEMS]:
        more = len(pointers) - 1
        problems.append((pointers[0], problem + (f" (and in {more} more model{'s' if more > 1 else ''})"
                                                 if more else "")))
    return problems


def anthropic_problems(answer: Any) -> list[tuple[str, str]]:
    """What makes an answer no page of models for the anthropic SDKs' ``models.list()``: a ``data`` array of
    objects with a string ``id`` (what a user picks and the SDK pages by, through ``last_id``). The SDKs build
    each ModelInfo without validating it, so its other members (``type``, ``display_name``, ``created_at``) are
    not held against the server; ``[]``: it is one."""
    if not isinstance(answer, dict):
        return [("", "the answer is not a JSON object" if answer is not None else "the answer is not JSON")]
    data = answer.get("data")
    if not isinstance(data, list):
        return [("/data", "no `data` array")]
    bad = [index for index, entry in enumerate(data)
           if not isinstance(entry, dict) or not isinstance(entry.get("id"), str)]
    if not bad:
        return []
    more = f" (and {len(bad) - 1} more model{'s' if len(bad) > 2 else ''})" if len(bad) > 1 else ""
    return [(f"/data/{bad[0]}", "a model without a string `id`" + more)]


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
    anthropic = record.details.get("list_shape") == ANTHROPIC
    problems = anthropic_problems(step.answer) if anthropic else schema_problems(step.answer)
    schema = "anthropic models page" if anthropic else SCHEMA
    if problems:
        return [(LIST_STEP, rules.MODELS_LIST_INVALID.finding(START, pointer=pointer or "/", where=pointer or "/",
                                                              detail=problem,
                                                              details={"pointer": pointer, "schema": schema}))
                for pointer, problem in problems]
    ids = [m["id"] for m in step.answer["data"]]
    if record.model in ids:
        return []
    details = {"model": record.model, "listed": ids[:SHOWN_IDS], "count": len(ids)}
    rule = rules.ANY_MODEL_ROUTED if record.facts.get("model_answered") else rules.MODEL_NOT_LISTED
    return [(LIST_STEP, rule.finding(START, pointer="/data", model=record.model, listed=listed(ids),
                                     details=details))]


register(Feature(name=FEATURE, title="GET /v1/models", families=("MOD",),
                 judge=judge))
