"""What a recorded request asked for: whether it is valid, and which optional features it uses.

An HTTP 4xx is judged against the request that got it (``checker.http_checks``): refusing an invalid request
is the right answer (HTP021), refusing a valid one that uses a feature the error names means the feature is
unsupported (HTP022), anything else is HTP001. This module reads the request and the error body; it never
does I/O and accepts any JSON in either (a client may send ``{"messages": 1}``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class RequestShape:
    """What this module reads of one dialect's requests (each dialect declares its own: ``Dialect.requests``)."""

    schema: str  # the request schema's name (``SchemaSet.validate_request``): "responses", "chat", "messages"
    basic: frozenset[str]  # fields every request carries: their refusal is a broken request or an unknown model
    items: str | None = None  # the field holding typed items ({"type": ...}) whose types are features


# Statuses with which a server declines what a request asks for (not authentication, rate limits or faults).
REFUSAL_STATUSES = frozenset({400, 404, 405, 409, 415, 422, 501})
# Statuses that say nothing about the request's validity: an invalid request answered so is not "refused".
NOT_ABOUT_THE_REQUEST = frozenset({401, 402, 403, 407, 408, 429})
_SHOWN_VIOLATIONS = 2
MALFORMED_KEYWORDS = frozenset({"type", "required"})


class RequestSchemas(Protocol):
    def validate_request(self, api: str, body: object) -> list[Any]: ...


@dataclass(frozen=True, slots=True)
class Feature:
    """An optional part of a request: how to name it, and the words an error would use for it."""

    label: str  # "previous_response_id", "tool type 'web_search'"
    tokens: tuple[str, ...]  # matched against the error's param and message
    specific: bool  # a value (a tool or item type) rather than a top-level field: matched first


def problems(schemas: RequestSchemas, shape: RequestShape, request: Any) -> list[Any]:
    """The request's schema violations (``SchemaViolation``s; empty when it is valid)."""
    return schemas.validate_request(shape.schema, request)


def malformed(violations: list[Any]) -> list[Any]:
    """The violations no server may take: a wrong JSON type or a missing required field.

    The others (a bound such as ``max_output_tokens >= 16``, an enum value or an item type newer than the
    description) are the reference server's policy or version: a 4xx to them is still a right refusal, but
    a server that accepts them is not accepting an invalid request (OpenAI itself takes newer values).
    """
    return [v for v in violations if v.keyword in MALFORMED_KEYWORDS]


def refusal_grounds(violations: list[Any], error: Mapping[str, str]) -> list[Any]:
    """The violations that justify refusing the request: the malformed ones always, the others (a bound, an
    enum value newer than the description) only when the error names their field, since the reference
    server's policy is not every server's and a 4xx for another reason must stay HTP001."""
    grounds = malformed(violations)
    param = re.split(r"[.\[]", error.get("param", ""), maxsplit=1)[0]
    message = error.get("message", "")
    for violation in violations:
        if violation in grounds:
            continue
        field = violation.pointer.split("/")[1] if violation.pointer.count("/") >= 1 else ""
        if field and (field == param or _mentions(message, field)):
            grounds.append(violation)
    return grounds


def shown(violations: list[Any]) -> str:
    """The first violations, one line."""
    lines = [f"{v.pointer or '/'}: {v.message}" for v in violations]
    extra = f"; and {len(lines) - _SHOWN_VIOLATIONS} more" if len(lines) > _SHOWN_VIOLATIONS else ""
    return "; ".join(lines[:_SHOWN_VIOLATIONS]) + extra


# Content parts that are text in every dialect (Responses' input_text/output_text, chat's and Messages' text).
_TEXT_PARTS = frozenset({"input_text", "output_text", "text", "refusal"})


def features(shape: RequestShape, request: Mapping[str, Any]) -> list[Feature]:
    """The optional features a (valid) request uses, most specific first."""
    found: list[Feature] = []
    tools = request.get("tools")
    for tool in tools if isinstance(tools, list) else ():
        kind = tool.get("type") if isinstance(tool, Mapping) else None
        if isinstance(kind, str) and kind != "function":
            found.append(Feature(f"tool type {kind!r}", (kind,), True))
    items = request.get(shape.items) if shape.items is not None else None
    for item in items if isinstance(items, list) else ():
        kind = item.get("type") if isinstance(item, Mapping) else None
        if isinstance(kind, str) and kind != "message":
            found.append(Feature(f"{shape.items} item type {kind!r}", (kind,), True))
        content = item.get("content") if isinstance(item, Mapping) else None
        for part in content if isinstance(content, list) else ():
            part_kind = part.get("type") if isinstance(part, Mapping) else None
            if isinstance(part_kind, str) and part_kind not in _TEXT_PARTS:
                # An image, a file or audio in a message: a model without that input refuses it in its own words,
                # "is not a multimodal model" (vLLM: captures/vllm/image_input.answer).
                found.append(Feature(f"content part type {part_kind!r}", (part_kind, "multimodal"), True))
    include = request.get("include")
    for value in include if isinstance(include, list) else ():
        if isinstance(value, str):
            found.append(Feature(f"include {value!r}", (value,), True))
    for name, value in request.items():
        if name not in shape.basic and value is not None:
            found.append(Feature(name, (name,), False))
    unique: dict[str, Feature] = {}
    for feature in sorted(found, key=lambda f: not f.specific):
        unique.setdefault(feature.label, feature)
    return list(unique.values())


def error_fields(body: bytes) -> dict[str, str]:
    """``message``, ``param``, ``code`` and ``type`` of a JSON error body, as strings (absent when not given)."""
    try:
        obj = json.loads(body)
    except (UnicodeDecodeError, ValueError):
        return {}
    error = obj.get("error") if isinstance(obj, dict) else None
    if isinstance(error, str):
        return {"message": error}
    if not isinstance(error, dict):
        return {}
    return {key: str(error[key]) for key in ("message", "param", "code", "type")
            if error.get(key) is not None and not isinstance(error.get(key), (dict, list))}


def refused_feature(shape: RequestShape, request: Mapping[str, Any], error: Mapping[str, str]) -> str | None:
    """The feature of ``request`` that the error names, if it names one.

    The error's ``param`` decides first (``tools[0].type`` names the first tool's type, ``previous_response_id``
    the field); else the feature whose name the message quotes as a word (a tool type before a field: "tool
    type 'web_search' is not supported" names web_search, not tools). An error that names nothing the request
    uses names no feature (None): HTP001 then stands, since nothing says what to leave out.
    """
    used = features(shape, request)
    param = error.get("param", "")
    if param:
        head = re.split(r"[.\[]", param, maxsplit=1)[0]
        index = re.match(r"\w+\[(\d+)\]", param)
        if head == "tools" and index is not None:
            tool = _nth(request.get("tools"), int(index.group(1)))
            kind = tool.get("type") if isinstance(tool, Mapping) else None
            if isinstance(kind, str) and kind != "function":
                return f"tool type {kind!r}"
        for feature in used:
            if head in feature.tokens or param in feature.tokens:
                return feature.label
    message = error.get("message", "")
    for feature in used:
        if any(_mentions(message, token) for token in feature.tokens):
            return feature.label
    return None


def _mentions(text: str, token: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(token)}(?!\w)", text, re.IGNORECASE) is not None


def _nth(value: Any, index: int) -> Any:
    return value[index] if isinstance(value, list) and 0 <= index < len(value) else None
