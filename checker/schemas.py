"""Loads the JSON Schemas in schemas/ once and validates events against them.

The schemas are package data (the wheel carries the top-level ``schemas/``
folder as ``checker/_schemas``; an editable install reads ``<repo>/schemas``).
One compiled jsonschema-rs validator per (schema set, event type) is built on
first use and kept. ``is_valid`` is the fast path; only an invalid event pays
for the detailed error walk, which reports every failing leaf and, for a
union that nothing matched (an item of no known shape), the errors of the
branch whose ``type`` the value claims.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema_rs

BASE = "https://sse-check.dev/schemas"
SETS = ("openai", "open-responses")


@dataclass(frozen=True, slots=True)
class SchemaViolation:
    pointer: str  # JSON pointer of the bad field; for "required", of the missing property
    keyword: str  # the failing JSON Schema keyword
    message: str  # one readable line
    missing: str | None = None  # for "required": the property name


def _schema_root() -> Path:
    packaged = resources.files("checker") / "_schemas"
    if packaged.is_dir():
        return Path(str(packaged))
    return Path(__file__).resolve().parents[1] / "schemas"


@functools.cache
def _documents() -> dict[str, dict[str, Any]]:
    docs: dict[str, dict[str, Any]] = {}
    for path in sorted(_schema_root().rglob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        docs[doc["$id"]] = doc
    return docs


class SchemaSet:
    """The event schemas of one flavour: ``openai`` or ``open-responses``."""

    def __init__(self, name: str) -> None:
        docs = _documents()
        self.name = name
        prefix = f"{BASE}/{name}/events/"
        self._events = {i[len(prefix) : -len(".json")]: d for i, d in docs.items() if i.startswith(prefix)}
        if name != "openai":
            base = f"{BASE}/openai/events/"
            for i, d in docs.items():
                if i.startswith(base):
                    self._events.setdefault(i[len(base) : -len(".json")], d)
        self._registry = jsonschema_rs.Registry(list(docs.items()))
        self._validators: dict[str, Any] = {}
        self._known = frozenset(self._events)

    def known_event_types(self) -> frozenset[str]:
        return self._known

    def _compile(self, event_type: str) -> Any:
        validator = jsonschema_rs.validator_for(self._events[event_type], registry=self._registry)
        self._validators[event_type] = validator
        return validator

    def validate_event(self, event: dict[str, Any]) -> list[SchemaViolation]:
        """Every violation of the event's schema; [] when valid or when the type is unknown."""
        event_type = event.get("type")
        validator = self._validators.get(event_type)  # type: ignore[arg-type]
        if validator is None:
            if event_type not in self._known:
                return []
            validator = self._compile(event_type)  # type: ignore[arg-type]
        if validator.is_valid(event):
            return []
        return _violations(validator.iter_errors(event), event)


@functools.cache
def load_schema_set(name: str) -> SchemaSet:
    if name not in SETS:
        raise ValueError(f"unknown schema set {name!r} (choose from {', '.join(SETS)})")
    return SchemaSet(name)


def _pointer(path: list[Any]) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def _at(value: Any, path: list[Any]) -> Any:
    for part in path:
        try:
            value = value[part]
        except (KeyError, IndexError, TypeError):
            return None
    return value


def _violations(errors: Any, event: dict[str, Any]) -> list[SchemaViolation]:
    out: list[SchemaViolation] = []
    for error in errors:
        out.extend(_leaves(error, event))
    seen: set[tuple[str, str]] = set()
    unique = []
    for v in out:
        if (v.pointer, v.message) not in seen:
            seen.add((v.pointer, v.message))
            unique.append(v)
    return unique


def _leaves(error: Any, event: dict[str, Any]) -> list[SchemaViolation]:
    kind = error.kind
    name = type(kind).__name__
    path = list(error.instance_path)
    if name in ("AnyOf", "OneOfNotValid") and getattr(kind, "context", None):
        branch = _claimed_branch(kind.context, path, _at(event, path))
        if branch is not None:
            return [leaf for sub in branch for leaf in _leaves(sub, event)]
        return [SchemaViolation(_pointer(path), "anyOf" if name == "AnyOf" else "oneOf",
                                "matches none of the allowed shapes", None)]
    if name == "Required":
        missing = str(kind.property)
        missing = missing.strip('"')
        return [SchemaViolation(_pointer(path + [missing]), "required",
                                f"missing required property {missing!r}", missing)]
    keyword = {"Type": "type", "Enum": "enum", "Constant": "const", "AdditionalProperties": "additionalProperties",
               "Minimum": "minimum", "Maximum": "maximum", "MinItems": "minItems", "MaxItems": "maxItems",
               "MinLength": "minLength", "MaxLength": "maxLength", "Pattern": "pattern", "Format": "format",
               "OneOfMultipleValid": "oneOf"}.get(name, name[:1].lower() + name[1:])
    return [SchemaViolation(_pointer(path), keyword, error.message, None)]


def _claimed_branch(branches: list[list[Any]], path: list[Any], value: Any) -> list[Any] | None:
    """The union branch the value claims by its ``type``: one with no error on ``type`` itself."""
    type_path = path + ["type"]
    candidates = [b for b in branches if not any(list(e.instance_path) == type_path for e in b)]
    if not candidates or (isinstance(value, dict) and "type" not in value and len(candidates) > 1):
        return None
    return min(candidates, key=len)
