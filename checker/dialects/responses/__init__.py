"""The OpenAI Responses API streamed as Server-Sent Events (``POST /v1/responses``, ``stream: true``).

``DIALECT`` is what the engine, the reports and the client matrix know of it (see checker/dialects/base.py).
The machine, the schema findings and the client effects are imported when first used, so that recognising a
stream costs none of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from checker.dialects.base import ClientEffects, Dialect, Machine, NonStreamed, Unit, lazy
from checker.dialects.responses import vocabulary
from checker.findings import Finding, Position
from checker.request_checks import RequestShape


def recognise(obj: dict[str, Any]) -> str | None:
    """Evidence that a first event object is a Responses event: a ``response.*`` type."""
    etype = obj.get("type")
    if isinstance(etype, str) and etype.startswith(vocabulary.PREFIX):
        return f"type {etype!r}"
    return None


def event_type(obj: dict[str, Any]) -> str | None:
    etype = obj.get("type")
    return etype if isinstance(etype, str) else None


def lane(obj: dict[str, Any]) -> str:
    """The item an event belongs to (its id, else ``#<output_index>``), or "response"."""
    item = obj.get("item")
    if isinstance(item, dict) and isinstance(item.get("id"), str):
        return item["id"]
    item_id = obj.get("item_id")
    if isinstance(item_id, str):
        return item_id
    index = obj.get("output_index")
    if type(index) is int:
        return f"#{index}"
    return "response"


def unit(obj: dict[str, Any]) -> Unit | None:
    """The output item an event belongs to: the item it carries, or its ``item_id``/``output_index``."""
    raw_index = obj.get("output_index")
    index = raw_index if type(raw_index) is int else None
    item = obj.get("item")
    if isinstance(item, dict):
        item_id, kind = item.get("id"), item.get("type")
        return Unit(item_id if isinstance(item_id, str) else None, index, kind if isinstance(kind, str) else None,
                    carries=True, opens=obj.get("type") == vocabulary.OUTPUT_ITEM_ADDED)
    item_id = obj.get("item_id")
    if isinstance(item_id, str) or "output_index" in obj:
        return Unit(item_id if isinstance(item_id, str) else None, index)
    return None


def final_output(obj: dict[str, Any]) -> tuple[str, ...] | None:
    """The item types of a terminal event's ``response.output``."""
    response = obj.get("response")
    output = response.get("output") if isinstance(response, dict) else None
    if not isinstance(output, list):
        return None
    return tuple(str(it.get("type")) if isinstance(it, dict) else "?" for it in output)


def make_machine(**options: Any) -> Machine:
    from checker.dialects.responses.machine import ResponsesMachine

    return ResponsesMachine(**options)


def _schema_findings(violations: Sequence[Any], etype: str, pos: Position) -> list[Finding]:
    # Not named schema_findings: importing the submodule of that name would rebind it in this package.
    from checker.dialects.responses.schema_findings import schema_findings

    return schema_findings(violations, etype, pos)


def screen(obj: dict[str, Any], pos: Position) -> tuple[list[Finding], bool]:
    """An ``error`` member on an event other than ``error`` (LIF013's wire form is that event's own), and an
    event without a string ``type``, which goes no further."""
    import orjson

    from checker.rules import lifecycle, schema

    found: list[Finding] = []
    etype = obj.get("type")
    error = obj.get("error")
    if error and etype != vocabulary.ERROR:
        detail = orjson.dumps(error).decode("utf-8", "replace")
        found.append(lifecycle.TOP_LEVEL_ERROR.finding(pos, type=etype, detail=_clip(detail, 120)))
    if not isinstance(etype, str):
        found.append(schema.MISSING_TYPE.finding(pos))
        return found, False
    return found, True


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[:n] + "…"


def effects() -> ClientEffects:
    from checker.dialects.responses.effects import CLIENT_EFFECTS

    return CLIENT_EFFECTS


_MARKS = {
    vocabulary.OUTPUT_ITEM_ADDED: "added", vocabulary.OUTPUT_ITEM_DONE: "done",
    **{etype: "lifecycle" for etype in vocabulary.OPENING_TYPES},
    **{etype: "terminal" for etype in vocabulary.TERMINAL_TYPES},
    **{etype: "part" for etype in vocabulary.PART_TYPES},
}
_LETTERS = {vocabulary.CREATED: "C", vocabulary.QUEUED: "Q", vocabulary.IN_PROGRESS: "P",
            vocabulary.COMPLETED: "✓", vocabulary.INCOMPLETE: "I", vocabulary.FAILED: "F"}


def nonstream() -> NonStreamed:
    from checker.dialects.responses.nonstream import NONSTREAMED

    return NONSTREAMED


DIALECT = Dialect(
    name="responses",
    title="OpenAI Responses",
    endpoints=("/responses",),
    recognise=recognise,
    make_machine=make_machine,
    event_type=event_type,
    event_names=True,
    done_sentinel="forbidden",
    schema_set="openai",
    schema_findings=_schema_findings,
    rule_modules=("checker.rules.lifecycle", "checker.rules.items", "checker.rules.content",
                  "checker.rules.reasoning", "checker.rules.calls", "checker.rules.tools", "checker.rules.schema",
                  "checker.rules.reconcile", "checker.rules.ids"),
    effects=effects,
    lane=lane,
    api_name="the Responses API",
    terminal_types=vocabulary.TERMINAL_TYPES,
    marks=_MARKS,
    letters=_LETTERS,
    event_prefix=vocabulary.PREFIX,
    unit=unit,
    unit_words={"function_call": "function call"},
    unit_nouns={"reasoning": "reasoning item"},
    final_output=final_output,
    screen=screen,
    requests=RequestShape("responses", frozenset({"model", "input", "stream"}), items="input"),
    nonstream=nonstream,
    requested_format=lazy("checker.dialects.responses.structured", "requested_format"),
    answer_texts=lazy("checker.dialects.responses.structured", "answer_texts"),
)
