"""A ``stream: false`` answer checked as what it is: a Response object, the terminal snapshot of a stream, and
this dialect's hook for non-streamed answers (:data:`NONSTREAMED`: the output order, HTP015; the parity digests).

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
from collections.abc import Mapping, Sequence
from typing import Any

from checker.dialects.base import Digest, NonStreamed, id_prefix
from checker.dialects.responses import item_forms
from checker.dialects.responses.schema_findings import schema_findings
from checker.dialects.responses.vocabulary import TERMINAL_TYPES
from checker.dialects.responses.structured import nonstream_answers
from checker.findings import Finding, Position
from checker.rules import http as http_rules
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


# --- the dialect's hook (checker.dialects.base.NonStreamed) ------------------------------------------------------

# The order OpenAI's output items come in (reasoning, then the message, then calls): HTP015 checks it.
_ITEM_RANK = {"reasoning": 0, "message": 1, "function_call": 2}
_TERMINAL = "response.completed"


def problem(obj: dict[str, Any]) -> str | None:
    """Why a JSON object is not a Response object (HTP018): its ``output`` must be an array."""
    return None if isinstance(obj.get("output"), list) else "no output array"


def consistency(obj: dict[str, Any], request: Mapping[str, Any], pos: Position) -> list[Finding]:
    """HTP015: reasoning, then the message, then function calls."""
    types = [str(item.get("type")) for item in obj["output"] if isinstance(item, dict)]
    ranks = [_ITEM_RANK[t] for t in types if t in _ITEM_RANK]
    if ranks != sorted(ranks):
        return [http_rules.NONSTREAM_ORDER.finding(pos, order=", ".join(types))]
    return []


def schema(obj: dict[str, Any], schemas: Any, pos: Position) -> list[Finding]:
    return response_object_findings(obj, schemas)


def digest(obj: dict[str, Any]) -> list[Digest]:
    return digest_output(obj.get("output") or [])


def digest_output(output: Sequence[Any]) -> list[Digest]:
    """What parity compares of each output item: type, id prefixes, and its text or name + arguments."""
    digests = []
    for item in output:
        if not isinstance(item, dict):
            continue
        kind = str(item.get("type"))
        entry: Digest = {"type": kind, "id_prefix": id_prefix(item.get("id"))}
        if kind == "function_call":
            entry["call_id_prefix"] = id_prefix(item.get("call_id"))
            entry["text"] = f"{item.get('name')}({item.get('arguments')})"
        else:
            parts = [*(item.get("content") or []), *(item.get("summary") or [])]
            entry["text"] = "".join(str(p.get("text") or p.get("refusal") or "") for p in parts if isinstance(p, dict))
        digests.append(entry)
    return digests


def stream_final(events: Sequence[dict[str, Any]]) -> tuple[str, list[Digest]] | None:
    """(terminal type, digests of ``response.output``) of the last terminal event carrying an output array."""
    found = None
    for event in events:
        response = event.get("response")
        if event.get("type") in TERMINAL_TYPES and isinstance(response, dict):
            output = response.get("output")
            if isinstance(output, list):
                found = (str(event["type"]), digest_output(output))
    return found


def streamed(terminal: str) -> tuple[str, str]:
    """HTP016's terminal ("completed", as its details always held it) and how it names the streamed answer."""
    short = (terminal or _TERMINAL).removeprefix("response.")
    return short, f"response.{short} output"


NONSTREAMED = NonStreamed(what="Response object", problem=problem, consistency=consistency, schema=schema,
                          digest=digest, stream_final=stream_final, streamed=streamed,
                          call_types=frozenset({"function_call"}), answer_texts=nonstream_answers)
