"""Schema failures explained: both backends' errors as one readable violation per failing leaf.

Both backends' errors are first turned into ``SchemaError`` (path, keyword, details, union branches), then
flattened into violations. A union (``anyOf``/``oneOf``) that nothing matched is not reported as such when
the value says which branch it meant: the branch whose ``type`` discriminator (or JSON type) fits is chosen
and *its* errors are reported, so an item ``{"type": "function_call", …}`` without ``call_id`` gives
"missing required property 'call_id'" at ``/item/call_id``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

# Display limits for values quoted in messages: one readable line.
_MAX_QUOTED = 40
_MAX_OPTIONS = 8


@dataclass(frozen=True, slots=True)
class SchemaViolation:
    """One failing leaf of a schema check.

    ``pointer`` is the JSON pointer of the bad field in the checked value
    (``""`` for the root); for a missing required property it is the pointer the
    missing property would have (``"/sequence_number"``). ``keyword`` is the
    failing JSON Schema keyword (``required``, ``type``, ``enum``, ``const``,
    ``anyOf``, ``oneOf``, ``additionalProperties``, …). ``message`` is one
    readable line. ``missing`` is the missing property's name for ``required``,
    else ``None``. ``value_type`` is the JSON type of the offending value
    (``"null"``, ``"string"``, …) where the keyword judged a value that is
    there (``type``, ``enum``, ``const``), else ``None``: what a client's effect
    tests (a null it skips) without reading the message.
    """

    pointer: str
    keyword: str
    message: str
    missing: str | None = None
    value_type: str | None = None


def json_type(value: Any) -> str:
    """The JSON type of a decoded value, as JSON Schema names it (``integer`` apart from ``number``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


JsonPath = tuple[str | int, ...]


@dataclass(slots=True)
class SchemaError:
    path: JsonPath
    keyword: str
    instance: Any
    message: str  # the backend's own message, used for keywords without a template below
    detail: dict[str, Any] = field(default_factory=dict)
    branches: list[list[SchemaError]] | None = None  # anyOf/oneOf: the errors of each branch


def from_rust(errors: Iterable[Any]) -> list[SchemaError]:
    out = []
    for error in errors:
        kind = error.kind
        keyword = kind.name
        detail = kind.as_dict()
        branches = None
        if keyword in ("anyOf", "oneOf"):
            context = detail.pop("context", None) or []
            branches = [from_rust(branch) for branch in context]
        out.append(SchemaError(tuple(error.instance_path), keyword, error.instance, error.message, detail, branches))
    return out


def from_python(errors: Iterable[Any]) -> list[SchemaError]:
    out = []
    for error in errors:
        keyword = str(error.validator)
        value = error.validator_value
        detail: dict[str, Any] = {}
        branches = None
        if keyword == "type":
            detail["types"] = [value] if isinstance(value, str) else list(value)
        elif keyword == "enum":
            detail["options"] = list(value)
        elif keyword == "const":
            detail["expected_value"] = value
        elif keyword == "required":
            names = [p for p in value if isinstance(error.instance, dict) and p not in error.instance]
            detail["property"] = next((p for p in names if error.message == f"{p!r} is a required property"),
                                      names[0] if names else "?")
        elif keyword == "additionalProperties" and isinstance(error.instance, dict):
            declared = error.schema.get("properties", {}) if isinstance(error.schema, dict) else {}
            detail["unexpected"] = [k for k in error.instance if k not in declared]
        elif keyword in ("anyOf", "oneOf"):
            grouped: dict[int, list[Any]] = {}
            for sub in error.context or ():
                grouped.setdefault(sub.relative_schema_path[0], []).append(sub)
            if grouped or "more than one" not in error.message:
                branches = [from_python(grouped.get(i, ())) for i in range(len(value))]
            else:
                branches = [[] for _ in value]  # valid under several branches
        out.append(SchemaError(tuple(error.absolute_path), keyword, error.instance, error.message, detail, branches))
    return out


def violations(errors: list[SchemaError]) -> list[SchemaViolation]:
    out: list[SchemaViolation] = []
    for error in errors:
        _flatten(error, out)
    seen: set[SchemaViolation] = set()
    unique = []
    for violation in out:
        if violation not in seen:
            seen.add(violation)
            unique.append(violation)
    return unique


def _flatten(error: SchemaError, out: list[SchemaViolation]) -> None:
    path, keyword, detail = error.path, error.keyword, error.detail
    if error.branches is not None:
        _flatten_union(error, out)
    elif keyword == "required":
        name = str(detail.get("property", "?"))
        out.append(SchemaViolation(_pointer(path + (name,)), "required", f"missing required property {name!r}",
                                   name))
    elif keyword == "type":
        out.append(SchemaViolation(_pointer(path), "type",
                                   f"{_quote(error.instance)} is not of type {_types(detail.get('types', ()))}",
                                   value_type=json_type(error.instance)))
    elif keyword == "enum":
        out.append(SchemaViolation(_pointer(path), "enum",
                                   f"{_quote(error.instance)} is not one of {_options(detail.get('options', ()))}",
                                   value_type=json_type(error.instance)))
    elif keyword == "const":
        expected = detail.get("expected_value")
        out.append(SchemaViolation(_pointer(path), "const", f"{_quote(error.instance)} is not {_quote(expected)}",
                                   value_type=json_type(error.instance)))
    elif keyword == "additionalProperties" and detail.get("unexpected"):
        for name in detail["unexpected"]:
            out.append(SchemaViolation(_pointer(path + (name,)), "additionalProperties",
                                       f"unexpected property {name!r}"))
    else:
        out.append(SchemaViolation(_pointer(path), keyword, error.message))


def _flatten_union(error: SchemaError, out: list[SchemaViolation]) -> None:
    path, branches, instance = error.path, error.branches or [], error.instance
    if any(not errs for errs in branches):  # oneOf valid under several branches
        out.append(SchemaViolation(_pointer(path), error.keyword,
                                   f"{_quote(instance)} matches more than one of the allowed shapes"))
        return
    candidates = [errs for errs in branches if not _rejected(errs, path)]
    if len(candidates) > 1:
        # No discriminator to go by (typically: the value has no `type` at all).
        if all(any(_missing_type(e, path) for e in errs) for errs in candidates):
            out.append(SchemaViolation(_pointer(path + ("type",)), "required", "missing required property 'type'",
                                       "type"))
            return
        fewest = min(len(errs) for errs in candidates)
        best = [errs for errs in candidates if len(errs) == fewest]
        candidates = best if len(best) == 1 else []
        if not candidates:
            out.append(SchemaViolation(_pointer(path), error.keyword,
                                       f"{_quote(instance)} matches none of the {len(branches)} allowed shapes"))
            return
    if candidates:
        for sub in candidates[0]:
            _flatten(sub, out)
        return
    # Every branch rejects the value outright: say what was expected instead.
    types = _expected_types(error)
    if types is not None:
        out.append(SchemaViolation(_pointer(path), "type", f"{_quote(instance)} is not of type {_types(types)}",
                                   value_type=json_type(instance)))
        return
    tags = _expected_tags(error)
    tag = instance.get("type") if isinstance(instance, dict) else None
    if tags and tag is not None:
        out.append(SchemaViolation(_pointer(path + ("type",)), "enum",
                                   f"unknown type {_quote(tag)}; expected one of {_options(tags)}"))
        return
    out.append(SchemaViolation(_pointer(path), error.keyword,
                               f"{_quote(instance)} matches none of the {len(branches)} allowed shapes"))


def _rejected(errors: list[SchemaError], path: JsonPath) -> bool:
    """Whether a branch rejects the value by its shape: wrong JSON type or a different ``type`` tag."""
    tag_path = path + ("type",)
    for e in errors:
        if e.path == path:
            if e.keyword == "type":
                return True
            if e.branches and all(errs and _rejected(errs, path) for errs in e.branches):
                return True
        elif e.path == tag_path and e.keyword in ("const", "enum"):
            return True
    return False


def _missing_type(error: SchemaError, path: JsonPath) -> bool:
    return error.keyword == "required" and error.path == path and error.detail.get("property") == "type"


def _expected_types(error: SchemaError) -> list[str] | None:
    """The JSON types a union accepts, if each of its branches failed only on the value's JSON type."""
    found: list[str] = []
    for errs in error.branches or []:
        kinds = None
        for e in errs:
            if e.path != error.path:
                continue
            if e.keyword == "type":
                kinds = list(e.detail.get("types", ()))
            elif e.branches is not None:
                kinds = _expected_types(e)
            if kinds is not None:
                break
        if kinds is None:
            return None
        found.extend(k for k in kinds if k not in found)
    return found or None


def _expected_tags(error: SchemaError) -> list[Any]:
    """The ``type`` tags a union's branches accept (read from their discriminator failures)."""
    tags: list[Any] = []
    for errs in error.branches or []:
        for e in errs:
            if e.path[:-1] == error.path and e.path[-1:] == ("type",):
                values = e.detail.get("options") if e.keyword == "enum" else (
                    [e.detail.get("expected_value")] if e.keyword == "const" else ())
                tags.extend(v for v in values or () if v not in tags)
            elif e.path == error.path and e.branches is not None:
                tags.extend(v for v in _expected_tags(e) if v not in tags)
    return tags


# -- formatting ---------------------------------------------------------------


def _pointer(path: JsonPath) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def _quote(value: Any) -> str:
    if isinstance(value, str):
        return repr(value if len(value) <= _MAX_QUOTED else value[:_MAX_QUOTED] + "…")
    if isinstance(value, dict):
        return "{…}" if value else "{}"
    if isinstance(value, list):
        return "[…]" if value else "[]"
    if value is None or isinstance(value, bool):
        return orjson.dumps(value).decode()
    return repr(value)


def _types(types: Iterable[str]) -> str:
    return " or ".join(types) or "?"


def _options(options: Iterable[Any]) -> str:
    shown = [_quote(o) for o in options]
    if len(shown) > _MAX_OPTIONS:
        shown = shown[:_MAX_OPTIONS] + [f"… ({len(shown) - _MAX_OPTIONS} more)"]
    return ", ".join(shown)


def value_facts(violation: SchemaViolation) -> dict[str, str]:
    """A finding's typed detail of the offending value: ``{"value_type": "null"}`` where the violation judged a
    value that is there, else nothing (a missing property has no value)."""
    return {} if violation.value_type is None else {"value_type": violation.value_type}


def missing_properties(names: list[str], *, shown: int | None = None) -> str:
    """The missing properties of one object as one finding says them ("missing required properties 'a', 'b'"),
    the first ``shown`` of them and how many more when a limit is given."""
    listed = ", ".join(repr(n) for n in names[:shown])
    if shown is not None and len(names) > shown:
        listed += f" and {len(names) - shown} more"
    return f"missing required propert{'y' if len(names) == 1 else 'ies'} {listed}"

