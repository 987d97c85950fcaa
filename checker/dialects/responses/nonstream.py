"""A ``stream: false`` answer checked as what it is: a Response object, the terminal snapshot of a stream.

The probe compares a non-streaming answer with its streamed pair (HTP015-HTP017); this module checks the
object itself, as the engine checks a terminal event's ``response``: the Response schema of the profile's
schema set (SCH002 for the response, SCH003 for an output item and its parts, LIF018 for usage), and the
checks of every output item's final form (:mod:`checker.dialects.responses.item_forms`: id prefixes, a call's id and call_id,
arguments that must parse as JSON). A reasoning item whose content holds an ``output_text`` part, say, is
an SCH003 here exactly as it would be in ``response.completed``.

Pure: a decoded object in, findings out (positions at the start of the body, which has no events).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from checker.dialects.responses import item_forms
from checker.dialects.responses.schema_findings import schema_findings
from checker.findings import Finding, Position
from checker.schemas import SchemaSet

START = Position(line=1, byte=0)
WHAT = "the non-streaming answer's"


def response_object_findings(obj: dict[str, Any], schemas: SchemaSet) -> list[Finding]:
    """Findings on one non-streaming Response object."""
    # The engine's classification works on an event's pointers (/response/...): check the object under that
    # name, then show the pointers as they are in the body.
    violations = [dataclasses.replace(v, pointer="/response" + v.pointer)
                  for v in schemas.validate_object("Response", obj)]
    out = [_in_body(f) for f in schema_findings(violations, WHAT, START)]
    output = obj.get("output")
    if isinstance(output, list):
        for index, item in enumerate(output):
            if isinstance(item, dict):
                out.extend(item_forms.id_findings(item, START))
                out.extend(item_forms.arguments_findings(item, START, item_forms.item_label(item, index)))
    return out


def _in_body(finding: Finding) -> Finding:
    def strip(value: Any) -> Any:
        if isinstance(value, str) and (value == "/response" or value.startswith("/response/")):
            return value[len("/response"):] or "/"
        return value

    details = {key: strip(value) for key, value in finding.details.items()}
    message = finding.message.replace(" /response/", " /").replace("/response: ", "/: ")
    return dataclasses.replace(finding, message=message, pointer=strip(finding.pointer), details=details)
