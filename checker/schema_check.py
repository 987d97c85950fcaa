"""Whether a JSON value is valid under one of sse-check's JSON Schemas, decided by walking the schema documents
as they are: nothing compiled, jsonschema-rs not even imported.

Why: compiling an event type's validator with jsonschema-rs costs milliseconds (the Response schema alone
reads 236 files), and importing jsonschema-rs costs more than a small capture's whole lint. A lint of one
small capture (issue 19's start-up target) validates each event type a few times; walking the schema is
cheaper there, and checker.schemas compiles a type's validator only once it has been walked often enough to
pay for itself, or as soon as an event is not valid (the findings always come from the compiled validator).

The walk answers True (valid), False (not valid) or None (undecided: a keyword or a value it does not judge
exactly as jsonschema-rs does). checker.schemas trusts only True; False and None go to jsonschema-rs, so a
walk that says too little costs time, never a finding. Every keyword it judges is therefore judged exactly as
JSON Schema 2020-12 says (and jsonschema-rs does, with formats off: ``validate_formats=False``); anything
else (an unknown keyword, a pattern beyond plain character classes, a number outside 64 bits, a value that is
no JSON type) is None. tests/test_schema_check.py holds the walk to jsonschema-rs's verdict on the corpus's
events and on mutations of them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from checker.schema_files import document, join

# Keywords that never decide validity (annotations; formats are annotations with validate_formats=False).
_IGNORED = frozenset({"$schema", "$id", "$comment", "$defs", "definitions", "title", "description", "default",
                      "examples", "deprecated", "readOnly", "writeOnly", "format", "contentEncoding",
                      "contentMediaType"})
# The 64-bit range in which a JSON integer reaches jsonschema-rs unchanged (orjson reads no other).
_INT_MIN, _INT_MAX = -(2 ** 63), 2 ** 64 - 1
# A `pattern` judged with Python's re: anchors, literal letters and digits, character classes of them and
# repetition counts, which mean the same in both regex dialects on an ASCII string without a newline.
_PLAIN_PATTERN = (r"\^?(?:[A-Za-z0-9_ -]|\[\^?(?:[A-Za-z0-9_ ]|[A-Za-z0-9]-[A-Za-z0-9]|-)+\]"
                  r"|\{\d+(?:,\d*)?\}|[+*?])*\$?")
_PATTERNS: dict[str, re.Pattern[str] | None] = {}

Verdict = bool | None  # True valid, False not valid, None undecided


def is_valid(schema: Any, instance: Any, base: str) -> Verdict:
    """The verdict of ``instance`` under ``schema``, whose ``$ref``s resolve against the URI ``base``."""
    if schema is True:
        return True
    if schema is False:
        return False
    if type(schema) is not dict:
        return None
    own = schema.get("$id")
    if own is not None and own != base:
        base = join(base, own)
    verdict: Verdict = True
    for keyword, value in schema.items():
        if keyword in _IGNORED:
            continue
        check = _KEYWORDS.get(keyword)
        if check is None:
            verdict = None
            continue
        found = check(value, instance, base, schema)
        if found is False:
            return False
        if found is None:
            verdict = None
    return verdict


# -- JSON values as JSON Schema sees them ----------------------------------------


def _json_type(value: Any) -> str | None:
    """The JSON type of a value as orjson builds it; None for anything else (a subclass, a tuple, NaN)."""
    kind = type(value)
    if kind is str:
        return "string"
    if kind is dict:
        return "object"
    if kind is list:
        return "array"
    if kind is bool:
        return "boolean"
    if value is None:
        return "null"
    if kind is int:
        return "integer" if _INT_MIN <= value <= _INT_MAX else None
    if kind is float:
        if value != value or value in (float("inf"), float("-inf")):
            return None
        return "integer" if value.is_integer() else "number"  # 1.0 is an integer to JSON Schema
    return None


def _equal(a: Any, b: Any) -> Verdict:
    """JSON equality (1 == 1.0, but true != 1); None when either side is no JSON value."""
    ta, tb = _json_type(a), _json_type(b)
    if ta is None or tb is None:
        return None
    numbers = ("integer", "number")
    if ta in numbers or tb in numbers:
        return ta in numbers and tb in numbers and a == b
    if ta != tb:
        return False
    if ta == "array":
        if len(a) != len(b):
            return False
        return _all(_equal(x, y) for x, y in zip(a, b))
    if ta == "object":
        if a.keys() != b.keys():
            return False
        return _all(_equal(v, b[k]) for k, v in a.items())
    return bool(a == b)


def _all(verdicts: Any) -> Verdict:
    """A conjunction of verdicts: False wins, then None."""
    out: Verdict = True
    for verdict in verdicts:
        if verdict is False:
            return False
        if verdict is None:
            out = None
    return out


def _length(text: str) -> int | None:
    """A string's length in code points, as jsonschema-rs counts it; None when it holds a lone surrogate."""
    if text.isascii():
        return len(text)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return len(text)


# -- the keywords ---------------------------------------------------------------------
# Each takes (the keyword's value, the instance, the base URI, the whole schema) and gives a Verdict.


def _type(value: Any, instance: Any, base: str, schema: dict[str, Any]) -> Verdict:
    kind = _json_type(instance)
    if kind is None:
        return None
    names = (value,) if type(value) is str else value
    if type(names) not in (tuple, list):
        return None
    return kind in names or (kind == "integer" and "number" in names)


def _enum(value: Any, instance: Any, base: str, schema: dict[str, Any]) -> Verdict:
    if type(value) is not list:
        return None
    if type(instance) is str or instance is None:  # exact with `in`: a str or None equals only its own kind
        return instance in value
    verdicts = [_equal(instance, option) for option in value]
    return True if True in verdicts else (None if None in verdicts else False)


def _const(value: Any, instance: Any, base: str, schema: dict[str, Any]) -> Verdict:
    return _equal(instance, value)


def _ref(value: Any, instance: Any, base: str, schema: dict[str, Any]) -> Verdict:
    if type(value) is not str:
        return None
    uri, _, pointer = join(base, value).partition("#")
    try:
        target: Any = document(uri)
    except ValueError:
        return None
    for token in pointer.split("/")[1:] if pointer else ():
        token = token.replace("~1", "/").replace("~0", "~")
        if type(target) is not dict or token not in target:
            return None
        target = target[token]
    return is_valid(target, instance, uri)


def _properties(value: Any, instance: Any, base: str, schema: dict[str, Any]) -> Verdict:
    if type(instance) is not dict:
        return True
    if type(value) is not dict:
        return None
    return _all(is_valid(sub, instance[name], base) for name, sub in value.items() if name in instance)


def _required(value: Any, instance: Any, base: str, schema: dict[str, Any]) -> Verdict:
    if type(value) is not list:
        return None
    if type(instance) is not dict:
        return True
    return all(name in instance for name in value)


def _additional(value: Any, instance: Any, base: str, schema: dict[str, Any]) -> Verdict:
    if type(instance) is not dict:
        return True
    if "patternProperties" in schema:
        return None
    declared = schema.get("properties") or {}
    return _all(is_valid(value, item, base) for name, item in instance.items() if name not in declared)


def _property_names(value: Any, instance: Any, base: str, schema: dict[str, Any]) -> Verdict:
    if type(instance) is not dict:
        return True
    return _all(is_valid(value, name, base) for name in instance)


def _items(value: Any, instance: Any, base: str, schema: dict[str, Any]) -> Verdict:
    if type(instance) is not list:
        return True
    if "prefixItems" in schema:
        return None
    return _all(is_valid(value, item, base) for item in instance)


def _bound(test: Callable[[Any, Any], bool], of: tuple[str, ...]) -> Callable[..., Verdict]:
    """A keyword bounding a size or a number (minLength, maximum, …) of the instances of the JSON types ``of``."""

    def check(value: Any, instance: Any, base: str, schema: dict[str, Any]) -> Verdict:
        kind = _json_type(instance)
        if kind is None or _json_type(value) not in ("integer", "number"):
            return None
        if kind not in of:
            return True
        if kind == "string":
            size = _length(instance)
            return None if size is None else test(size, value)
        return test(len(instance) if kind in ("array", "object") else instance, value)

    return check


def _pattern(value: Any, instance: Any, base: str, schema: dict[str, Any]) -> Verdict:
    if type(instance) is not str:
        return True
    if type(value) is not str:
        return None
    if value not in _PATTERNS:
        _PATTERNS[value] = re.compile(value) if re.fullmatch(_PLAIN_PATTERN, value) else None
    compiled = _PATTERNS[value]
    if compiled is None or not instance.isascii() or "\n" in instance:
        return None
    return compiled.search(instance) is not None


def _any_of(value: Any, instance: Any, base: str, schema: dict[str, Any]) -> Verdict:
    if type(value) is not list:
        return None
    undecided = False
    for branch in value:
        verdict = is_valid(branch, instance, base)
        if verdict:
            return True
        undecided |= verdict is None
    return None if undecided else False


def _one_of(value: Any, instance: Any, base: str, schema: dict[str, Any]) -> Verdict:
    if type(value) is not list:
        return None
    valid = 0
    undecided = False
    for branch in value:
        verdict = is_valid(branch, instance, base)
        valid += verdict is True
        undecided |= verdict is None
        if valid > 1:
            return False
    return None if undecided else valid == 1


def _all_of(value: Any, instance: Any, base: str, schema: dict[str, Any]) -> Verdict:
    if type(value) is not list:
        return None
    return _all(is_valid(branch, instance, base) for branch in value)


def _not(value: Any, instance: Any, base: str, schema: dict[str, Any]) -> Verdict:
    verdict = is_valid(value, instance, base)
    return None if verdict is None else not verdict


def _if(value: Any, instance: Any, base: str, schema: dict[str, Any]) -> Verdict:
    condition = is_valid(value, instance, base)
    if condition is None:
        return None
    branch = schema.get("then" if condition else "else", True)
    return is_valid(branch, instance, base)


def _judged_by_if(value: Any, instance: Any, base: str, schema: dict[str, Any]) -> Verdict:
    """``then`` and ``else`` count only through ``if`` (alone they are ignored, as 2020-12 says)."""
    return True


_KEYWORDS: dict[str, Callable[[Any, Any, str, dict[str, Any]], Verdict]] = {
    "type": _type,
    "enum": _enum,
    "const": _const,
    "$ref": _ref,
    "properties": _properties,
    "required": _required,
    "additionalProperties": _additional,
    "propertyNames": _property_names,
    "items": _items,
    "minLength": _bound(lambda size, limit: size >= limit, ("string",)),
    "maxLength": _bound(lambda size, limit: size <= limit, ("string",)),
    "minItems": _bound(lambda size, limit: size >= limit, ("array",)),
    "maxItems": _bound(lambda size, limit: size <= limit, ("array",)),
    "minProperties": _bound(lambda size, limit: size >= limit, ("object",)),
    "maxProperties": _bound(lambda size, limit: size <= limit, ("object",)),
    "minimum": _bound(lambda number, limit: number >= limit, ("integer", "number")),
    "maximum": _bound(lambda number, limit: number <= limit, ("integer", "number")),
    "exclusiveMinimum": _bound(lambda number, limit: number > limit, ("integer", "number")),
    "exclusiveMaximum": _bound(lambda number, limit: number < limit, ("integer", "number")),
    "pattern": _pattern,
    "anyOf": _any_of,
    "oneOf": _one_of,
    "allOf": _all_of,
    "not": _not,
    "if": _if,
    "then": _judged_by_if,
    "else": _judged_by_if,
}
