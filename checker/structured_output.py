"""Structured output: does the streamed answer's text join to the JSON the request asked for?

A request may fix the shape of the answer's text: Responses ``text.format``, Chat Completions
``response_format`` (``json_schema`` or ``json_object``), Anthropic Messages ``output_config.format`` (or the
beta's ``output_format``). Each dialect reads its request into a :class:`RequestedFormat` and its stream's
final texts into :class:`Answer` records (``checker/dialects/*/structured.py``); :func:`check` judges them
with the schema the request itself sent (docs/spec.md §8).

What is not judged, because the text was never promised to be whole: an answer cut by the token limit or
ended otherwise than normally (the dialect leaves it out), and a refusal, which comes as a refusal part
(Responses ``refusal``, chat ``delta.refusal``) or Anthropic's ``stop_reason: "refusal"``, not as text.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from checker.findings import Finding, Position
from checker.rules import structured as rules

Kind = Literal["json_schema", "json_object"]
# How much of the text and of a validation error a finding quotes.
QUOTE = 80
# How many schema violations one finding names.
SHOWN_ERRORS = 3


@dataclass(frozen=True, slots=True)
class RequestedFormat:
    """The shape a request asked the answer's text to have."""

    kind: Kind
    where: str  # the request field that asked for it: "text.format", "response_format", …
    schema: Mapping[str, Any] | None = None  # json_schema: the schema the request sent
    strict: bool = False  # the server promised to follow the schema (OpenAI strict; Anthropic: always)
    name: str | None = None  # the schema's name, when the request gave one


@dataclass(frozen=True, slots=True)
class Answer:
    """One text of the final answer that the requested format applies to."""

    unit: str  # where it is, in the dialect's words: "output 0 part 0", "choice 0", "block 1"
    text: str
    # Why the text is not whole ("finish_reason length", "status incomplete", "stop_reason max_tokens"), or
    # None: a text cut by the token limit is not judged, only said (FMT006).
    cut: str | None = None


def check(requested: RequestedFormat, answers: Sequence[Answer], position: Position,
          clients_for: Callable[[str], tuple[str, ...]] | None = None) -> list[Finding]:
    """The findings on the answers' texts against ``requested``, all at ``position`` (the end of the stream).
    ``clients_for`` names the clients a rule breaks in the stream's dialect (the rules name the Responses
    ones)."""
    out: list[Finding] = []
    for answer in answers:
        out.extend(_check_one(requested, answer, position))
    if clients_for is not None:
        out = [dataclasses.replace(f, clients=clients_for(f.code)) for f in out]
    return out


def _check_one(requested: RequestedFormat, answer: Answer, position: Position) -> list[Finding]:
    fields: dict[str, Any] = {"unit": answer.unit, "where": requested.where, "kind": requested.kind}
    if answer.cut is not None:
        # A cut text is not judged as JSON, but one that cannot even begin the JSON asked for shows that the
        # format was not followed at all (a server that ignores it answers in prose).
        wrong_start = _cannot_begin(answer.text, requested)
        if wrong_start is not None:
            return [rules.NOT_JSON.finding(position, error=f"{wrong_start}, cut by {answer.cut}",
                                           text=_quote(answer.text), cut=answer.cut, **fields)]
        return [rules.CUT.finding(position, cut=answer.cut, **fields)]
    value, error = parse_json(answer.text)
    if error is not None:
        return [rules.NOT_JSON.finding(position, error=error, text=_quote(answer.text), **fields)]
    if requested.kind == "json_object":
        if not isinstance(value, dict):
            return [rules.NOT_AN_OBJECT.finding(position, value_type=_json_type(value), **fields)]
        return []
    if requested.schema is None:
        return []
    validator, problem = _validator(json.dumps(requested.schema, sort_keys=True))
    if validator is None:
        return [rules.SCHEMA_UNUSABLE.finding(position, detail=problem, **fields)]
    errors = [_error_text(e) for _, e in zip(range(SHOWN_ERRORS + 1), validator.iter_errors(value))]
    if not errors:
        return []
    shown = "; ".join(errors[:SHOWN_ERRORS]) + ("; …" if len(errors) > SHOWN_ERRORS else "")
    rule = rules.SCHEMA_MISMATCH if requested.strict else rules.SCHEMA_MISMATCH_LOOSE
    name = f"the schema {requested.name!r}" if requested.name else "the schema"
    return [rule.finding(position, detail=shown, schema=name, **fields)]


def parse_json(text: str) -> tuple[Any, str | None]:
    """The JSON value of ``text`` and None, or None and why it is not JSON (NaN and Infinity are not JSON,
    and JSON.parse, which openai-node's parse helpers use, rejects them)."""
    if not text.strip():
        return None, "the text is empty"

    def refuse(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    try:
        return json.loads(text, parse_constant=refuse), None
    except json.JSONDecodeError as exc:
        return None, f"{exc.msg} at character {exc.pos}"
    except (ValueError, RecursionError) as exc:
        return None, str(exc) or type(exc).__name__


# The characters a JSON value can begin with (RFC 8259: object, array, string, number, true, false, null).
JSON_STARTS = frozenset('{["-0123456789tfn')


def _cannot_begin(text: str, requested: RequestedFormat) -> str | None:
    """Why ``text``, cut short, cannot be the beginning of the JSON ``requested`` asks for; None when it can
    (nothing but the first character is judged: sound for any cut, never a false alarm)."""
    stripped = text.lstrip(" \t\r\n")
    if not stripped:
        return None
    schema = requested.schema or {}
    if requested.kind == "json_object" or schema.get("type") == "object":
        return None if stripped[0] == "{" else "it does not begin with the '{' of the JSON object asked for"
    return None if stripped[0] in JSON_STARTS else "it does not begin like any JSON value"


@lru_cache(maxsize=64)
def _validator(schema_json: str) -> tuple[Any, str]:
    """A compiled validator of the schema (JSON text, so that it can be a cache key), or None and why not."""
    import jsonschema_rs

    try:
        return jsonschema_rs.validator_for(json.loads(schema_json)), ""
    except Exception as exc:  # noqa: BLE001 - any schema the library refuses: say why, check nothing
        return None, str(exc).splitlines()[0][:QUOTE] if str(exc) else type(exc).__name__


def _error_text(error: Any) -> str:
    path = "/".join(str(p) for p in error.instance_path)
    return f"{'/' + path if path else 'the value'}: {_quote(str(error.message))}"


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return "a number"
    return "a string" if isinstance(value, str) else "an array" if isinstance(value, list) else type(value).__name__


def _quote(text: str) -> str:
    return text if len(text) <= QUOTE else text[:QUOTE] + "…"


def json_schema_format(value: Any, where: str, *, nested: str | None = None,
                       strict_default: bool = False) -> RequestedFormat | None:
    """A format object as OpenAI and Anthropic write it: ``{"type": "json_schema", ...}`` (its name, schema and
    strict beside the type, or under ``nested``: chat's ``json_schema``) or ``{"type": "json_object"}``; None
    for any other (``text``, a malformed value: the request checks judge those)."""
    if not isinstance(value, Mapping):
        return None
    kind = value.get("type")
    if kind == "json_object":
        return RequestedFormat(kind="json_object", where=where)
    if kind != "json_schema":
        return None
    body = value.get(nested) if nested is not None else value
    if not isinstance(body, Mapping):
        return None
    schema = body.get("schema")
    strict = body.get("strict")
    name = body.get("name")
    return RequestedFormat(kind="json_schema", where=where, schema=schema if isinstance(schema, Mapping) else None,
                           strict=strict if isinstance(strict, bool) else strict_default,
                           name=name if isinstance(name, str) else None)
