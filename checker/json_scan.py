"""One event's data as JSON: parsing it, and the legal JSON that clients read differently.

Pure functions on bytes and parsed values, used by the engine's full path (checker/engine.py) and, for
their cheap necessary conditions, by its inlined hot path. The hazards (rules SSE024, SSE025, SSE026 in
checker/rules/framing.py, where their sources are cited): a key given twice (``json.loads`` keeps the last, other
parsers the first), an integer beyond 2^53 or a number beyond a double (JavaScript clients round or
refuse it), nesting deeper than the limit (parsers' recursion limits differ).

Each hazard has a cheap necessary condition (a byte count, a translate and a substring search); the
exact, slow check (a second parse with hooks) runs only when it holds, so ordinary events pay a few
byte counts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

import orjson

from checker.findings import Finding, Position
from checker.native import speedups
from checker.rules import framing
from checker.rules.registry import Rule

# An event larger than this is parsed by the standard library: orjson (yyjson) first reserves a DOM of about
# eight times the input, plus a copy of it, which for the multi-megabyte response.completed of a long stream
# was the lint's peak memory. The standard parser builds the objects directly. It is used only where the two
# agree: a document that starts as an object, with no BOM, no surrogate (escaped or encoded, which only the
# standard parser accepts) and no NaN/Infinity; anything it refuses goes to orjson, for orjson's error.
# Read at call time (the engine's hot path too), so a test may lower it to send every event this way.
BIG_JSON_BYTES = 1 << 20
_INF = float("inf")
_STDLIB_ONLY = re.compile(rb"\\u[dD][89a-fA-F]|\xed[\xa0-\xbf]")

# 16 digits in a row: a necessary condition of an integer beyond 2^53 (orjson
# turns those beyond 64 bits into floats silently). Overflowing exponents need
# no prefilter: orjson refuses them, which takes the full path.
_DIGITS_AS_ZERO = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
_SIXTEEN_DIGITS = b"0" * 16

# A number token with 16 digits: after ':', '[' or ',' (JSON numbers appear nowhere else). Sixteen digits
# inside a string (a hex id has such runs by chance) need no second parse.
_LONG_NUMBER_TOKEN = re.compile(rb"[:\[,][ \t\r\n]*-?[0-9]{16}")

# Data lines that are a keep-alive written as data rather than as an SSE comment.
_KEEPALIVE_WORDS = {b"ping", b"keepalive", b"keep-alive", b"heartbeat", b""}


def long_digits_pure(data: bytes) -> bool:
    """Whether ``data`` holds 16 digits in a row (necessary for an integer beyond 2^53)."""
    # A translate and a substring search: several times cheaper than a regex scan.
    return _SIXTEEN_DIGITS in data.translate(_DIGITS_AS_ZERO)


# The engine asks this of every chunk it is fed (checker/engine.py): compiled, it skips 16 bytes at a time over
# text instead of translating a copy of the chunk (checker/_speedups.c long_digits, same answers).
has_long_digits: Callable[[bytes], bool] = speedups.long_digits if speedups is not None else long_digits_pure


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def loads(data: bytes) -> tuple[Any, bool]:
    """orjson, and for the legal JSON it refuses (a number beyond a double), the standard
    parser; the flag says the fallback was needed (so the numbers deserve a look).

    Raises ``orjson.JSONDecodeError`` for what is not JSON."""
    if len(data) > BIG_JSON_BYTES and data[:1] == b"{" and _STDLIB_ONLY.search(data) is None:
        overflowed: list[str] = []

        def as_float(text: str) -> float:
            value = float(text)
            if value in (_INF, -_INF):
                overflowed.append(text)  # orjson refuses these: the flag, as on its fallback below
            return value

        try:
            # Integers beyond a double need 16 digits, which hazards() looks for anyway.
            return json.loads(data, parse_constant=_reject_constant, parse_float=as_float), bool(overflowed)
        except (ValueError, RecursionError):
            pass
    return _loads_orjson(data)


def _loads_orjson(data: bytes) -> tuple[Any, bool]:
    """The second half of :func:`loads`: orjson, and the standard parser for the numbers orjson refuses."""
    try:
        return orjson.loads(data), False
    except orjson.JSONDecodeError as exc:
        if "number" not in str(exc):
            raise
        try:
            return json.loads(data, parse_constant=_reject_constant), True
        except (ValueError, RecursionError):
            raise exc from None


# What event_object returns for data that cannot be checked further (its findings say why).
UNPARSED: Any = object()


def event_object(data: bytes, obj: Any, raw: list[bytes] | None, max_depth: int,
                 pos: Position) -> tuple[Any, list[Finding]]:
    """An event's data as a JSON object that can be checked further (``obj`` when already parsed, else
    ``UNPARSED``), or ``UNPARSED``, with the findings of its JSON: not JSON, not an object, too deep (then
    unchecked), repeated keys and unsafe numbers (the object is still checked). ``raw``: a huge event's data,
    in a list holding its only reference (``data`` is then empty; see scan_huge)."""
    if raw is not None:
        try:
            obj, _, found = scan_huge(raw, max_depth)
        except orjson.JSONDecodeError as exc:
            return UNPARSED, [parse_error_finding(raw[0], exc, pos, max_depth)]
    else:
        unusual_numbers = False
        if obj is UNPARSED:
            try:
                obj, unusual_numbers = loads(data)
            except orjson.JSONDecodeError as exc:
                return UNPARSED, [parse_error_finding(data, exc, pos, max_depth)]
        found = hazards(data, obj, max_depth, unusual_numbers) if isinstance(obj, dict) else []
    if not isinstance(obj, dict):
        return UNPARSED, [framing.DATA_NOT_OBJECT.finding(pos, kind=json_kind(obj))]
    findings = [rule.finding(pos, **fields) for rule, fields in found]
    return (UNPARSED if any(rule is framing.JSON_TOO_DEEP for rule, _ in found) else obj), findings


def parse_error_finding(data: bytes, exc: Exception, pos: Position, max_depth: int) -> Finding:
    """What data that does not parse is: a keep-alive written as data, nesting beyond the parser's limit, or
    not JSON (with the parser's reason)."""
    stripped = data.strip()
    if stripped.startswith(b":") or stripped.lower() in _KEEPALIVE_WORDS:
        return framing.KEEPALIVE_AS_DATA.finding(pos, data=clip(data))
    if "depth limit" in str(exc):
        return framing.JSON_TOO_DEEP.finding(pos, limit=max_depth)
    return framing.DATA_NOT_JSON.finding(pos, error="empty data" if not stripped else str(exc))


def hazards(data: bytes, obj: dict[str, Any], max_depth: int,
            unusual_numbers: bool = False) -> list[tuple[Rule, dict[str, Any]]]:
    """Legal JSON that clients read differently: repeated keys, unsafe numbers, deep nesting.

    Too deep is the only hazard reported then (the other scans would recurse as deep). ``unusual_numbers``:
    :func:`loads` needed its fallback, so the numbers are scanned whatever the prefilter says.
    """
    return _hazards(_Counts.of(data), data, obj, max_depth, unusual_numbers)


class _Counts(NamedTuple):
    """The byte counts behind the hazards' necessary conditions."""

    brackets: int  # '{' and '['
    colons: int
    long_number: bool  # a number token of 16 digits or more

    @classmethod
    def of(cls, data: bytes) -> _Counts:
        return cls(data.count(b"{") + data.count(b"["), data.count(b":"),
                   has_long_digits(data) and _LONG_NUMBER_TOKEN.search(data) is not None)


def _hazards(counts: _Counts, source: bytes | str, obj: dict[str, Any], max_depth: int,
             unusual_numbers: bool) -> list[tuple[Rule, dict[str, Any]]]:
    """:func:`hazards` from the counts of the bytes; ``source`` (the bytes, or their text) for the exact
    checks, which parse it again."""
    found: list[tuple[Rule, dict[str, Any]]] = []
    if counts.brackets > max_depth and depth(obj) > max_depth:
        return [(framing.JSON_TOO_DEEP, {"limit": max_depth})]
    # A repeated key leaves one member of it in the parsed object, so the object written again compactly is
    # shorter than data that is already compact JSON: equal bytes rule it out in one C call (what servers send),
    # before the keys are counted in Python.
    if counts.colons > len(obj) and not _compact_of(obj, source) and counts.colons > key_count(obj):
        for key in duplicate_keys(source):
            found.append((framing.DUPLICATE_KEY, {"key": key}))
    # Beyond 2^53 needs 16 digits in a row; an overflowing exponent makes orjson
    # fail, and the fallback parse reports it (see loads).
    if unusual_numbers or counts.long_number:
        for number in unsafe_numbers(source):
            found.append((framing.NUMBER_RANGE, {"number": number}))
    return found


def _compact_of(obj: dict[str, Any], source: bytes | str) -> bool:
    """Whether ``source`` is ``obj`` written compactly by orjson (then no key of it was repeated)."""
    if type(source) is not bytes:
        return False
    try:
        return orjson.dumps(obj) == source
    except TypeError:  # an integer beyond 64 bits (the standard parser's): the keys are counted
        return False


def scan_huge(box: list[bytes], max_depth: int) -> tuple[Any, bool, list[tuple[Rule, dict[str, Any]]]]:
    """:func:`loads` and :func:`hazards` of a huge event's data, taken out of ``box``, which held the only
    reference to it: the bytes are freed as soon as they are decoded, so the parse holds the text and the
    objects, not the bytes too (a third copy of an 18 MB event). The same results as loads() then hazards();
    on orjson.JSONDecodeError (raised as loads() raises it) the bytes are back in ``box`` for the finding."""
    data = box.pop()
    counts = _Counts.of(data)
    if data[:1] != b"{" or _STDLIB_ONLY.search(data) is not None:
        try:
            obj, unusual = loads(data)
        except orjson.JSONDecodeError:
            box.append(data)
            raise
        return obj, unusual, _hazards(counts, data, obj, max_depth, unusual) if type(obj) is dict else []
    # As json.loads decodes bytes (no BOM here: the data starts with '{'); surrogatepass makes it reversible.
    text = data.decode("utf-8", "surrogatepass")
    del data
    overflowed: list[str] = []

    def as_float(number: str) -> float:
        value = float(number)
        if value in (_INF, -_INF):
            overflowed.append(number)
        return value

    try:
        obj = json.loads(text, parse_constant=_reject_constant, parse_float=as_float)
    except (ValueError, RecursionError):
        data = text.encode("utf-8", "surrogatepass")  # what loads() goes on with: orjson, on the bytes
        del text
        try:
            obj, unusual = _loads_orjson(data)
        except orjson.JSONDecodeError:
            box.append(data)
            raise
        return obj, unusual, _hazards(counts, data, obj, max_depth, unusual) if type(obj) is dict else []
    unusual = bool(overflowed)
    return obj, unusual, _hazards(counts, text, obj, max_depth, unusual) if type(obj) is dict else []


def depth(value: Any) -> int:
    """How deep arrays and objects nest in a parsed document (a scalar is 0, ``{}`` is 1)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict):
            node = node.values()
        elif not isinstance(node, list):
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in node if isinstance(child, (dict, list)))
    return deepest


def key_count(value: Any) -> int:
    """Keys in all objects of a parsed document (each key is one `":` in compact JSON)."""
    if type(value) is not dict and type(value) is not list:
        return 0
    count, stack = 0, [value]
    pop, push = stack.pop, stack.append  # the engine's hot path counts the keys of nested events: kept cheap
    while stack:
        node = pop()
        children: Iterable[Any] = node
        if type(node) is dict:
            count += len(node)
            children = node.values()
        for child in children:
            kind = type(child)
            if kind is dict or kind is list:
                push(child)
    return count


def duplicate_keys(data: bytes | str) -> list[str]:
    """Every key that an object of the document repeats, once per repetition, in document order."""
    found: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: set[str] = set()
        for key, _ in items:
            if key in seen:
                found.append(key)
            seen.add(key)
        return dict(items)

    try:
        json.loads(data, object_pairs_hook=pairs)
    except (ValueError, RecursionError):
        return []
    return found


def unsafe_numbers(data: bytes | str) -> list[str]:
    """The numbers a JavaScript client cannot hold: integers beyond 2^53 (clipped to 40 characters), and
    numbers that overflow a double."""
    found: list[str] = []

    def as_int(text: str) -> int:
        value = int(text)
        if abs(value) > 2**53:
            found.append(text if len(text) <= 40 else text[:37] + "…")
        return value

    def as_float(text: str) -> float:
        value = float(text)
        if value in (_INF, -_INF):
            found.append(text)
        return value

    try:
        json.loads(data, parse_int=as_int, parse_float=as_float)
    except (ValueError, RecursionError):
        return []
    return found


def json_kind(value: Any) -> str:
    """The JSON name of a parsed value's kind ("array", "number", ...)."""
    return {list: "array", str: "string", int: "number", float: "number", bool: "boolean",
            type(None): "null"}.get(type(value), type(value).__name__)


def clip(value: bytes, n: int = 60) -> str:
    """Bytes shown in a message: decoded (invalid UTF-8 replaced), at most ``n`` characters."""
    text = value.decode("utf-8", "replace")
    return text if len(text) <= n else text[:n] + "…"
