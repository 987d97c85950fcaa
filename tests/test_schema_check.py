"""checker.schema_check (walking a schema instead of compiling it) against jsonschema-rs, the judge.

checker.schemas trusts a walk's "valid" without asking jsonschema-rs, so a walk must never call valid what
jsonschema-rs calls invalid. This holds the walk to jsonschema-rs's verdict on every event of the corpus (each
schema set, each event type it knows), on mutations of those events (a property removed, replaced by each
JSON type, a nested value changed) and on the request sidecars; a walk that says "not valid" or "undecided"
where jsonschema-rs says valid only costs time, and is counted so that it stays rare.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from checker import schema_check
from checker.schema_files import BASE_URI, compile_rust, document, file_stems
from checker.schemas import SCHEMA_SETS, WALKS_BEFORE_COMPILE, SchemaSet

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = ROOT / "captures"
# Stand-ins for each JSON type (and the edge cases of integers and equality: 1.0, true, a long string).
REPLACEMENTS: list[Any] = [None, True, False, 0, 1, -1, 1.0, 1.5, 2 ** 63, "", "x", "é" * 70, "a" * 300, [],
                           [1], [None], {}, {"type": "x"}]


def _events() -> dict[str, list[dict[str, Any]]]:
    """Every event object of the corpus's captures, by schema set (chat chunks to chat, Messages to anthropic)."""
    out: dict[str, list[dict[str, Any]]] = {name: [] for name in SCHEMA_SETS}
    for path in sorted(CAPTURES.rglob("*.sse")):
        for line in path.read_bytes().splitlines():
            if not line.startswith(b"data:") or line[5:].strip() == b"[DONE]":
                continue
            try:
                event = orjson.loads(line[5:])
            except orjson.JSONDecodeError:
                continue
            if not isinstance(event, dict):
                continue
            if event.get("object") == "chat.completion.chunk":
                out["chat"].append(event)
            elif isinstance(event.get("type"), str) and event["type"].startswith(("message_", "content_block_")):
                out["anthropic"].append(event)
            else:
                out["openai"].append(event)
                out["open-responses"].append(event)
    return out


EVENTS = _events()
_VALIDATORS: dict[str, Any] = {}


def _rust(uri: str) -> Any:
    if uri not in _VALIDATORS:
        _VALIDATORS[uri] = compile_rust(document(uri))
    return _VALIDATORS[uri]


def _schema_uri(set_name: str, event: dict[str, Any]) -> str | None:
    key = "object" if set_name == "chat" else "type"
    name = event.get(key)
    if not isinstance(name, str) or name not in file_stems(f"{set_name}/events"):
        return None
    return f"{BASE_URI}{set_name}/events/{name}.json"


def _mutations(value: Any, depth: int = 0) -> Iterator[Any]:
    """``value`` with one thing changed: a property removed or replaced, an array item dropped or replaced."""
    if depth > 3:
        return
    if isinstance(value, dict):
        for key in list(value)[:40]:
            rest = dict(value)
            del rest[key]
            yield rest
            for other in REPLACEMENTS if depth < 2 else REPLACEMENTS[:8]:
                yield {**value, key: other}
            for inner in _mutations(value[key], depth + 1):
                yield {**value, key: inner}
        yield {**value, "x_extension": 1}
    elif isinstance(value, list) and value:
        yield value[1:]
        yield [*value, value[0]]
        for inner in _mutations(value[0], depth + 1):
            yield [inner, *value[1:]]


def _judge(uri: str, instance: Any, counts: dict[str, int]) -> None:
    walked = schema_check.is_valid(document(uri), instance, uri)
    rust = _rust(uri).is_valid(instance)
    if walked is True:
        assert rust, f"the walk calls valid what jsonschema-rs does not: {uri} {instance!r:.300}"
    elif walked is False:
        assert not rust, f"the walk calls invalid what jsonschema-rs calls valid: {uri} {instance!r:.300}"
    counts["valid" if rust else "invalid"] += 1
    counts["undecided"] += walked is None


@pytest.mark.parametrize("set_name", SCHEMA_SETS)
def test_the_walk_agrees_with_jsonschema_rs_on_the_corpus(set_name: str) -> None:
    counts = {"valid": 0, "invalid": 0, "undecided": 0}
    seen: set[bytes] = set()
    for event in EVENTS[set_name]:
        uri = _schema_uri(set_name, event)
        if uri is None:
            continue
        key = orjson.dumps(event, option=orjson.OPT_SORT_KEYS)
        if key in seen:
            continue
        seen.add(key)
        _judge(uri, event, counts)
    assert counts["valid"] + counts["invalid"] >= 10
    # The walk decides the schemas' whole vocabulary: undecided only for what it leaves to jsonschema-rs.
    assert counts["undecided"] <= counts["valid"] // 20, counts


@pytest.mark.parametrize("set_name", SCHEMA_SETS)
def test_the_walk_agrees_with_jsonschema_rs_on_mutated_events(set_name: str) -> None:
    counts = {"valid": 0, "invalid": 0, "undecided": 0}
    by_type: dict[str, list[dict[str, Any]]] = {}
    for event in EVENTS[set_name]:
        uri = _schema_uri(set_name, event)
        # Valid events to mutate (a vendor's cassette may come first in the corpus with an event the schema
        # rejects, whose mutations are nearly all invalid too).
        if uri is not None and len(by_type.setdefault(uri, [])) < 2 and _rust(uri).is_valid(event):
            by_type[uri].append(event)
    for uri, events in sorted(by_type.items()):
        for event in events:
            for mutated in _mutations(copy.deepcopy(event)):
                _judge(uri, mutated, counts)
    assert counts["invalid"] >= 50 and counts["valid"] >= 50, counts


@pytest.mark.parametrize("schema, instance", [
    ({"type": "integer"}, 1.0), ({"type": "integer"}, True), ({"type": "number"}, False), ({"enum": [1]}, True),
    ({"enum": [1]}, 1.0), ({"const": [1, {"a": None}]}, [1.0, {"a": None}]), ({"const": False}, 0),
    ({"maxLength": 2}, "éé"), ({"maxLength": 1}, "😀"), ({"minLength": 2}, "😀"),
    ({"pattern": "^[a-z]+$"}, "abc\n"), ({"pattern": "^[a-z]+$"}, "abc"), ({"pattern": "b"}, "abc"),
    ({"pattern": "^tunnel_[a-z0-9]{32}$"}, "tunnel_" + "a" * 32), ({"minimum": 0}, -0.5),
    ({"maximum": 2 ** 63}, 2 ** 64 - 1), ({"minItems": 1}, []), ({"maxProperties": 1}, {"a": 1, "b": 2}),
    ({"propertyNames": {"maxLength": 1}}, {"ab": 1}), ({"additionalProperties": False, "properties": {"a": {}}},
                                                        {"a": 1, "b": 2}),
    ({"if": {"required": ["e"]}, "else": {"required": ["c"]}}, {"e": 1}),
    ({"if": {"required": ["e"]}, "else": {"required": ["c"]}}, {"d": 1}),
    ({"oneOf": [{"type": "string"}, {"maxLength": 3}]}, "ab"), ({"oneOf": [{"type": "string"}, {"type": "null"}]}, 1),
    ({"anyOf": [{"type": "string"}, {"type": "null"}]}, None), ({"not": {"type": "null"}}, None),
    ({"then": False}, 1), ({"unknownKeyword": 1}, 1), ({"type": "string", "format": "uri"}, "not a uri"),
])
def test_each_keyword_as_jsonschema_rs_judges_it(schema: dict[str, Any], instance: Any) -> None:
    import jsonschema_rs

    rust = jsonschema_rs.validator_for(schema, validate_formats=False).is_valid(instance)
    walked = schema_check.is_valid(schema, instance, BASE_URI)
    assert walked is None or walked == rust


def test_an_undecided_walk_is_left_to_the_validator() -> None:
    assert schema_check.is_valid({"pattern": "a|b"}, "a", BASE_URI) is None  # alternation: not a plain pattern
    assert schema_check.is_valid({"type": "integer"}, 2 ** 70, BASE_URI) is None  # beyond 64 bits
    assert schema_check.is_valid({"type": "array"}, (1,), BASE_URI) is None  # no JSON type
    assert schema_check.is_valid({"dependentRequired": {}}, {}, BASE_URI) is None  # a keyword it does not judge


def test_a_schema_set_compiles_only_when_walking_stops_paying() -> None:
    """A valid event is walked WALKS_BEFORE_COMPILE times, then its type's validator is compiled; an invalid
    one compiles at once (its findings come from jsonschema-rs)."""
    schemas = SchemaSet("openai")
    delta = next(e for e in EVENTS["openai"] if e.get("type") == "response.output_text.delta"
                 and SchemaSet("openai").validate_event(e) == [])
    for _ in range(WALKS_BEFORE_COMPILE):
        assert schemas.validate_event(delta) == []
    assert schemas._event_validators == {}
    assert schemas.validate_event(delta) == []
    assert set(schemas._event_validators) == {"response.output_text.delta"}
    broken = {**delta, "delta": 1}
    fresh = SchemaSet("openai")
    assert [v.pointer for v in fresh.validate_event(broken)] == ["/delta"]
    assert set(fresh._event_validators) == {"response.output_text.delta"}


def test_the_walk_agrees_with_jsonschema_rs_on_the_request_sidecars() -> None:
    counts = {"valid": 0, "invalid": 0, "undecided": 0}
    for path in sorted(CAPTURES.rglob("*.request.json")):
        body = orjson.loads(path.read_bytes())
        api = "chat" if "messages" in body and "model" in body and "input" not in body else "responses"
        if api == "chat" and "max_tokens" in body and "system" in body:
            continue  # an Anthropic Messages request: no request schema of its own here
        uri = f"{BASE_URI}openai/requests/{api}.json"
        for instance in [body, *_mutations(body)]:
            _judge(uri, instance, counts)
    assert counts["valid"] >= 20 and counts["invalid"] >= 20, counts
