"""Runs of near-identical events: the engine's shortcut for the next delta of a run, decided on its bytes.

Most events of a long stream are deltas into the same open part, and their data differ from the previous
delta's only in the text (and, in Responses, the sequence number): ``{"id":"chatcmpl-1",…,"delta":{"content":
" w00"},…}``. When a machine's hot path has taken such an event, it may offer a *run* (``Machine.run_spec``):
the path of the string the next event of the run may change, the path of an integer it may change, the paths
of strings it ignores (OpenAI's random ``obfuscation``), and ``take(text, number)``, which applies such an event
exactly as ``try_fast`` would (True) or changes nothing (False). The engine then matches the next events'
bytes against a :class:`Template` made of the first event's bytes with those values as holes, and an event
that matches is taken without parsing, hazard checks, schema validation or ``try_fast``.

Why a match gives the same findings as the full pipeline (tests/test_engine_paths.py checks it on the corpus):

* A hole matches only a whole JSON token of its kind: a string body without ``"``, ``\\`` or control
  characters (between quotes that are part of the template), or an integer of at most 15 digits without a
  leading zero (between punctuation). Swapping one token for another of the same kind changes no other
  token, so the event parses to the template event's object with those values replaced, at the same paths;
  building checks the paths by parsing the template filled with other values (:func:`build`).
* So the event has the template event's keys (no repeated key, no ``error``), its nesting depth, its type
  and SSE event name (part of the template), and no number beyond 2^53 (the hole has at most 15 digits, the
  rest are the template event's bytes, which had no 16-digit run); the data is UTF-8 (the decoder validated
  or repaired it).
* Its schema verdict is the template event's (valid): the schema puts no constraint on a hole's value beyond
  its JSON type (:func:`free_in_schema`, read from the schema documents, refusing any keyword that could).
* The decoder (SSEDecoder.run) takes whole events ``event: NAME\ndata: DATA\n\n`` (LF only, valid UTF-8, within
  its limits, between two events) that it would have decoded to one event of that name and data, and only
  before any other event of the feed, so the engine hands them to the machine first.
* The machine's state since the template event changed only by ``take``, which keeps what ``try_fast``
  compared (each machine's ``run_spec`` says why), so ``take`` does what ``try_fast`` would.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import orjson

from checker import run_match
from checker.dialects.runs import JsonPath, RunSpec, Take
from checker.run_match import Wire
from checker.schema_files import BASE_URI, document, join

_TEXT_BODY = re.compile(rb'[^"\\\x00-\x1f]*').match
# What may follow an integer's last digit inside a longer number.
_IN_NUMBER = frozenset([b"0", b"1", b"2", b"3", b"4", b"5", b"6", b"7", b"8", b"9", b".", b"e", b"E"])
_ANNOTATIONS = frozenset({"$schema", "$id", "$comment", "title", "description", "default", "examples",
                          "deprecated", "readOnly", "writeOnly", "$defs", "definitions"})
# Keywords of an object or array on the path that look at other members or the count, never at the hole's value.
_OBJECT_KEYWORDS = frozenset({"type", "properties", "required", "additionalProperties", "minProperties",
                              "maxProperties"})
_ARRAY_KEYWORDS = frozenset({"type", "items", "minItems", "maxItems"})
_LEAF_TYPES = {"text": frozenset({"string"}), "number": frozenset({"integer", "number"})}


class Template:
    """The bytes of a run's next event, with holes. ``match(data)`` notes a matching event's data as taken
    (True) or does nothing (False: the event goes the usual way); ``wire`` does the same for the whole simple
    events at a place in the decoder's block (SSEDecoder.run, run_match.Wire), ``lines`` the lines each
    spans; ``flush()`` hands the events
    noted so far to the machine, in one ``take``: the engine calls it before anything else reads or changes
    the machine."""

    __slots__ = ("name", "match", "wire", "flush", "built_at", "lines")

    def __init__(self, name: str | None, match: Callable[[bytes], bool], wire: Wire | None,
                 flush: Callable[[], None], built_at: int) -> None:
        self.name = name  # the SSE event name the run's events carry
        self.match = match
        self.wire = wire
        self.flush = flush
        self.built_at = built_at  # the index of the event it was made from
        self.lines = 2 if name is None else 3


class RunTemplates:
    """One stream's templates: made on request, with a back-off when they keep failing at once (a stream
    whose events differ in more than the holes would otherwise pay for a template per event)."""

    def __init__(self, schema_set: Any, spec: Callable[[dict[str, Any]], RunSpec | None] | None) -> None:
        name = getattr(schema_set, "name", None) if hasattr(schema_set, "_event_validators") else None
        self._name: str | None = name if isinstance(name, str) else None
        self._spec = spec if self._name is not None else None
        self._skip = 0  # template requests still to refuse
        self._backoff = 1
        self.enabled = self._spec is not None
        # The last request: (index, SSE name, type). A template is made from the second event of a run, the
        # first one that follows an event of its kind taken by the hot path: most event types of a real answer
        # come once (created, added, done), and a template for them would be made and dropped at once.
        self._last: tuple[int, str | None, str] = (-2, None, "")

    def start(self, index: int, data: bytes, obj: dict[str, Any], name: str | None, etype: str) -> Template | None:
        """A template from event ``index`` (its data and object), which the hot path just took, or None; None
        too for the first event of a run (the event before it was not one of its kind taken by the hot path)."""
        last, self._last = self._last, (index, name, etype)
        if last != (index - 1, name, etype):
            return None
        if self._skip:
            self._skip -= 1
            return None
        spec = self._spec(obj) if self._spec is not None else None
        schema_set = self._name
        if spec is None or schema_set is None:
            return None
        text, number, ignored, floor, take = spec
        if not all(free_in_schema(schema_set, etype, path, "text", obj) for path in (text, *ignored)) or \
                (number is not None and not free_in_schema(schema_set, etype, number, "number", obj)):
            return None
        made = build(data, obj, name, text, number, ignored, floor, take)
        return None if made is None else Template(name, *made, index)

    def dropped(self, template: Template, index: int) -> None:
        """``template`` failed on event ``index``: if that was the first event after it, back off."""
        if index == template.built_at + 1:
            self._skip, self._backoff = self._backoff, min(self._backoff * 2, 256)
        else:
            self._backoff = 1


def build(data: bytes, obj: dict[str, Any], name: str | None, text: JsonPath, number: JsonPath | None,
          ignored: tuple[JsonPath, ...], floor: int | None,
          take: Take) -> tuple[Callable[[bytes], bool], Wire | None, Callable[[], None]] | None:
    """The matcher of ``data`` (whose object is ``obj``) with holes at the given paths, and its flush; None
    when a hole cannot be placed for sure (a value written with escapes, a key met twice, a path that does not
    check). The numbers of matching events must rise, the first above ``floor`` (when not None).

    The top-level ids (``id``, ``item_id``, …) are *pinned* holes: matched as any string, then compared with
    the template's bytes, which is the same as matching them as bytes; so the pattern is the event's shape
    alone, the same for every item of a stream, and compiled once (re's cache), not once per run."""
    if data[:1] != b"{":
        return None
    holes: list[tuple[int, int, str, JsonPath]] = []  # (start, end, kind, path) of each value's bytes
    pinned = [(key,) for key, value in obj.items() if (key == "id" or key.endswith("_id")) and type(value) is str]
    for kind, path in [("text", text), *(("text", p) for p in ignored if _get(obj, p) is not None),
                       *([("number", number)] if number is not None else []),
                       *(("pinned", p) for p in pinned if p != text and p not in ignored)]:
        span = _span(data, obj, path, "number" if kind == "number" else "text")
        if span is None:
            if kind == "pinned":
                continue  # matched as bytes
            return None
        holes.append((*span, kind, path))
    holes.sort()
    if any(a[1] > b[0] for a, b in zip(holes, holes[1:])):
        return None
    literals, at = [], 0
    for start, end, _, _ in holes:
        literals.append(data[at:start])
        at = end
    literals.append(data[at:])
    paths = [path for _, _, _, path in holes]
    matcher = run_match.make(literals, [kind for _, _, kind, _ in holes],
                             [data[start:end] if kind == "pinned" else None for start, end, kind, _ in holes],
                             paths.index(text), None if number is None else paths.index(number), floor, name, take)
    if not _checks(matcher.shape, data, obj, holes):
        return None
    return matcher.match, matcher.wire, matcher.flush


def _span(data: bytes, obj: dict[str, Any], path: JsonPath, kind: str) -> tuple[int, int] | None:
    """Where the value at ``path`` is written in ``data`` (without a string's quotes), found as its key followed
    by the value orjson writes for it, met exactly once; None otherwise. (Found with bytes.find: a pattern
    compiled per template costs more than a short run saves.)"""
    value = _get(obj, path)
    if not path or not isinstance(path[-1], str):
        return None
    key = orjson.dumps(path[-1]) + b":"
    if kind == "text":
        if type(value) is not str:
            return None
        written = key + orjson.dumps(value)
        if data.count(written) != 1 or _TEXT_BODY(written, len(key) + 1).end() != len(written) - 1:  # type: ignore
            return None
        start = data.find(written) + len(key) + 1
        return start, start + len(written) - len(key) - 2
    if type(value) is not int or not 0 <= value < 10**15 - 1:
        return None
    written = key + str(value).encode()
    found, at = [], data.find(written)
    while at >= 0:
        if data[at + len(written):at + len(written) + 1] not in _IN_NUMBER:
            found.append(at)
        at = data.find(written, at + 1)
    if len(found) != 1:
        return None
    return found[0] + len(key), found[0] + len(written)


def _checks(shape: Callable[[bytes], bool], data: bytes, obj: dict[str, Any],
            holes: list[tuple[int, int, str, JsonPath]]) -> bool:
    """The template gives back ``data``, and filled with other values parses to ``obj`` with exactly those
    values at the holes' paths (so each hole is the value at its path, not some other token)."""
    if not shape(data):
        return False
    filled, expected, at = [], orjson.loads(data), 0
    for n, (start, end, kind, path) in enumerate(holes):
        other: Any = _get(obj, path) + 1 if kind == "number" else f"{_get(obj, path)}~{n}"
        filled += [data[at:start], str(other).encode()]
        _set(expected, path, other)
        at = end
    filled.append(data[at:])
    joined = b"".join(filled)
    try:
        return shape(joined) and orjson.loads(joined) == expected
    except orjson.JSONDecodeError:
        return False


def _get(obj: Any, path: JsonPath) -> Any:
    for step in path:
        try:
            obj = obj[step]
        except (KeyError, IndexError, TypeError):
            return None
    return obj


def _set(obj: Any, path: JsonPath, value: Any) -> None:
    for step in path[:-1]:
        obj = obj[step]
    obj[path[-1]] = value


# -- the schema side ------------------------------------------------------------------------------------

# Per (schema set, event type, path, kind): the answers found so far, each with the members of the event it read
# to choose anyOf branches (see _free) and their values; a few per key (a stream of garbage types adds none).
_FREE: dict[tuple[str, str, JsonPath, str], list[tuple[tuple[tuple[JsonPath, Any], ...], bool]]] = {}
_FREE_ANSWERS = 16


def free_in_schema(schema_set: str, etype: str, path: JsonPath, kind: str, event: Any = None) -> bool:
    """Whether the event schema of ``etype`` in ``schema_set`` accepts any value of ``kind`` ("text": a string,
    "number": an integer) at ``path`` of ``event`` once it accepted ``event``: every schema on the way looks only
    at members, items and counts, and the value's own schema only at its JSON type. Unsure is False.

    An ``anyOf`` on the way (Anthropic's delta: a text, thinking, input JSON, ... delta) is read with ``event``:
    the branches a ``const`` member rules out for it (a ``type`` that differs) cannot be the one that accepted
    it; the value must be free in every other branch, so it is free in the one that did."""
    key = (schema_set, etype, path, kind)
    answers = _FREE.setdefault(key, [])
    for read, found in answers:
        if all(_get(event, at) == value and type(_get(event, at)) is type(value) for at, value in read):
            return found
    consulted: list[tuple[JsonPath, Any]] = []
    try:
        found = _free(f"{BASE_URI}{schema_set}/events/{etype}.json", path, kind, event, consulted)
    except (ValueError, KeyError, TypeError, RecursionError):
        found = False
    if len(answers) < _FREE_ANSWERS:
        answers.append((tuple(consulted), found))
    return found


def _resolve(schema: Any, base: str) -> tuple[dict[str, Any], str] | None:
    """``schema`` with a lone ``$ref`` followed (to another file; a fragment is refused), and its base URI."""
    for _ in range(8):
        if not isinstance(schema, dict):
            return None
        base = join(base, schema.get("$id", ""))
        ref = schema.get("$ref")
        if ref is None:
            return schema, base
        if set(schema) - _ANNOTATIONS != {"$ref"} or not isinstance(ref, str) or "#" in ref:
            return None
        base = join(base, ref)
        schema = document(base)
    return None


def _free(uri: str, path: JsonPath, kind: str, event: Any = None,
          consulted: list[tuple[JsonPath, Any]] | None = None) -> bool:
    return _free_from(_resolve(document(uri), uri), path, 0, kind, event,
                      [] if consulted is None else consulted)


def _free_from(resolved: tuple[dict[str, Any], str] | None, path: JsonPath, depth: int, kind: str, event: Any,
               consulted: list[tuple[JsonPath, Any]]) -> bool:
    """``_free`` from the schema of the value at ``path[:depth]``; ``consulted`` collects the event's members
    read to rule anyOf branches out."""
    for at in range(depth, len(path)):
        step = path[at]
        if resolved is None:
            return False
        schema, base = resolved
        if set(schema) - _ANNOTATIONS == {"anyOf"} and isinstance(schema["anyOf"], list) and schema["anyOf"]:
            branches = [_resolve(branch, base) for branch in schema["anyOf"]]
            if any(branch is None for branch in branches):
                return False
            container = _get(event, path[:at])
            candidates = [b for b in branches if b is not None and not _ruled_out(b[0], container, path[:at],
                                                                                   step, consulted)]
            return all(_free_from(b, path, at, kind, event, consulted) for b in candidates)
        if isinstance(step, str):
            if not set(schema) - _ANNOTATIONS <= _OBJECT_KEYWORDS:
                return False
            props = schema.get("properties", {})
            if step in props:
                resolved = _resolve(props[step], base)
            elif schema.get("additionalProperties", True) is True:
                return True  # an undeclared member: never checked
            else:
                resolved = _resolve(schema["additionalProperties"], base)
        else:
            if not set(schema) - _ANNOTATIONS <= _ARRAY_KEYWORDS:
                return False
            resolved = _resolve(schema.get("items", {}), base)
    return resolved is not None and _free_leaf(resolved[0], kind)


def _ruled_out(branch: dict[str, Any], container: Any, at: JsonPath, step: str | int,
               consulted: list[tuple[JsonPath, Any]]) -> bool:
    """Whether ``branch`` rejects ``container`` for sure: it is an object schema with a string ``const`` for a
    member (other than ``step``, the way to the value) that ``container`` holds with another string. Then it
    did not accept the event, whatever the holes hold. Anything else: maybe it did (not ruled out)."""
    if not isinstance(container, dict) or branch.get("type") != "object":
        return False
    props = branch.get("properties")
    if not isinstance(props, dict):
        return False
    for name, sub in props.items():
        if name == step or not isinstance(sub, dict) or "const" not in sub:
            continue
        const, value = sub["const"], container.get(name)
        if type(const) is str and type(value) is str:
            consulted.append(((*at, name), value))
            if value != const:
                return True
    return False


def _free_leaf(schema: dict[str, Any], kind: str) -> bool:
    """Any value of ``kind`` is valid: a ``type`` that admits it and nothing else, or an ``anyOf`` of such
    schemas of which one admits it."""
    rest = set(schema) - _ANNOTATIONS
    if not rest:
        return True
    if rest == {"type"}:
        kinds = schema["type"]
        return bool(_LEAF_TYPES[kind] & set([kinds] if isinstance(kinds, str) else kinds))
    if rest == {"anyOf"} and isinstance(schema["anyOf"], list):
        branches = [b for b in schema["anyOf"] if isinstance(b, dict) and set(b) - _ANNOTATIONS == {"type"}]
        return len(branches) == len(schema["anyOf"]) and any(_free_leaf(b, kind) for b in branches)
    return False
