"""Schema violations of a Responses event as findings: which rule each violation is, and one line per object.

The schema set (checker/schemas.py) says where an event breaks the description; this module says which
rule that is. A missing field with a rule of its own (``sequence_number``: LIF015, ``logprobs``: SCH008,
``output_index``: ITM001, ``content_index``: CNT001) is that rule; any other violation is grouped by what
it is inside (the usage: LIF018, an output item: SCH003, the response: SCH002, a content part: SCH004,
else the event itself: SCH001), and the missing properties of one object are one finding ("missing 'a',
'b', 'c'"), so a reduced response object is one line. Used by the engine for events and by
:mod:`checker.dialects.responses.nonstream` for a ``stream: false`` Response object.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from checker.dialects.vendors import vendor_graded
from checker.dialects.responses.vendor_shapes import SHAPES
from checker.findings import Finding, Position
from checker.schema_errors import missing_properties, value_facts
from checker.rules import content, items, lifecycle, schema
from checker.rules.registry import Rule

# Missing fields that have a rule of their own, by pointer.
FIELD_RULES: dict[str, Rule] = {
    "/sequence_number": lifecycle.SEQUENCE_MISSING,
    "/logprobs": schema.LOGPROBS_MISSING,
    "/output_index": items.OUTPUT_INDEX_MISSING,
    "/content_index": content.CONTENT_INDEX_MISSING,
}


def schema_findings(violations: Sequence[Any], etype: str, pos: Position) -> list[Finding]:
    """Schema violations (``checker.schemas.Violation``) of one event of type ``etype`` as findings at ``pos``:
    a field with a rule of its own gets that rule; the others are grouped by rule, and missing properties
    of one object are one finding."""
    out: list[Finding] = []
    missing: dict[tuple[Rule, str], list[str]] = {}
    for violation in violations:
        pointer: str = violation.pointer
        if violation.keyword == "required" and pointer in FIELD_RULES:
            details = {"keyword": "required", "missing": [violation.missing], "pointer": pointer, "type": etype}
            out.append(FIELD_RULES[pointer].finding(pos, pointer=pointer, details=details, type=etype))
            continue
        rule = schema_rule(pointer)
        if violation.keyword == "required" and violation.missing is not None:
            parent = pointer.rsplit("/", 1)[0]
            missing.setdefault((rule, parent), []).append(violation.missing)
            continue
        details = {"keyword": violation.keyword, "missing": [], "pointer": pointer, "type": etype,
                   **value_facts(violation)}
        out.append(_finding(rule, pos, pointer, details, etype, violation.message))
    for (rule, parent), names in missing.items():
        details = {"keyword": "required", "missing": names, "pointer": parent, "type": etype}
        text = missing_properties(names, shown=5)
        out.append(_finding(rule, pos, parent, details, etype, text))
    return vendor_graded(out, SHAPES)  # what OpenAI's own server sends: info


def schema_rule(pointer: str) -> Rule:
    """The rule of a violation at ``pointer`` (a JSON pointer into the event), by what it is inside."""
    if pointer.startswith("/response/usage"):
        return lifecycle.USAGE_MALFORMED
    if pointer.startswith("/response/output/") or _under(pointer, "/item"):
        return schema.ITEM_SCHEMA
    if _under(pointer, "/response"):
        return schema.RESPONSE_SCHEMA
    if _under(pointer, "/part"):
        return schema.PART_SCHEMA
    return schema.EVENT_SCHEMA


def _under(pointer: str, prefix: str) -> bool:
    """``pointer`` is ``prefix`` or inside it (``/item_id`` is not inside ``/item``)."""
    return pointer == prefix or pointer.startswith(prefix + "/")


def _finding(rule: Rule, pos: Position, pointer: str, details: dict[str, Any], etype: str, text: str) -> Finding:
    if rule is lifecycle.USAGE_MALFORMED:
        return rule.finding(pos, pointer=pointer, details=details, detail=f"{pointer}: {text}")
    return rule.finding(pos, pointer=pointer, details=details, type=etype, where=pointer or "/", detail=text)
