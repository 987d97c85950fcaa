"""checker/json_scan.py: parsing an event's data, and the legal JSON that clients read differently."""

from __future__ import annotations

import json

import orjson
import pytest

from checker import json_scan
from checker.findings import Position
from checker.rules import framing

POS = Position(line=1, byte=0)


@pytest.mark.parametrize(("data", "found"), [
    (b'{"n": 1234567890123456}', True),
    (b'{"n": 123456789012345}', False),  # 15 digits
    (b'{"n": 12345678.90123456}', False),  # a dot breaks the run
    (b'{"id": "x1234567890123456"}', True),  # a necessary condition only: a string's digits count too
])
def test_has_long_digits_finds_sixteen_digits_in_a_row(data: bytes, found: bool) -> None:
    assert json_scan.has_long_digits(data) is found


def test_loads_uses_orjson_and_falls_back_for_a_number_beyond_a_double() -> None:
    assert json_scan.loads(b'{"a": [1, 2.5]}') == ({"a": [1, 2.5]}, False)
    obj, unusual = json_scan.loads(b'{"a": 1e400}')
    assert obj == {"a": float("inf")} and unusual


@pytest.mark.parametrize("data", [b'{"a": NaN}', b'{"a": Infinity}', b'{"a": 1', b"", b'{"a": "\\ud800"}'])
def test_loads_refuses_what_orjson_refuses_however_large(data: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(orjson.JSONDecodeError):
        json_scan.loads(data)
    monkeypatch.setattr(json_scan, "BIG_JSON_BYTES", 0)  # the standard parser's path for large events
    with pytest.raises(orjson.JSONDecodeError):
        json_scan.loads(data)


@pytest.mark.parametrize(("data", "flagged"), [
    (b'{"a": 1e400, "b": [1, {"c": "\xc3\xa9"}]}', True), (b'{"a": -1e400}', True), (b'{"a": 1.5}', False),
])
def test_the_large_event_path_parses_and_flags_as_the_ordinary_one(data: bytes, flagged: bool,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    ordinary = json_scan.loads(data)
    monkeypatch.setattr(json_scan, "BIG_JSON_BYTES", 0)
    assert json_scan.loads(data) == ordinary
    assert ordinary[1] is flagged


def test_an_integer_beyond_64_bits_is_a_hazard_on_both_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    """orjson reads it as a float, silently; the 16-digit prefilter sends it to the exact scan either way."""
    data = b'{"n": 123456789012345678901234567890}'
    expected = [(framing.NUMBER_RANGE.code, {"number": "123456789012345678901234567890"})]
    assert _hazards(data) == expected
    monkeypatch.setattr(json_scan, "BIG_JSON_BYTES", 0)
    assert json_scan.loads(data)[0] == {"n": 123456789012345678901234567890}
    assert _hazards(data) == expected


def _hazards(data: bytes, max_depth: int = 64) -> list[tuple[str, dict[str, object]]]:
    obj, unusual = json_scan.loads(data)
    return [(rule.code, fields) for rule, fields in json_scan.hazards(data, obj, max_depth, unusual)]


def test_a_repeated_key_is_a_hazard_once_per_repetition() -> None:
    assert _hazards(b'{"type": "a", "x": {"k": 1, "k": 2, "k": 3}}') == [
        (framing.DUPLICATE_KEY.code, {"key": "k"}), (framing.DUPLICATE_KEY.code, {"key": "k"})]
    assert _hazards(b'{"a": {"k": 1}, "b": {"k": 2}}') == []  # the same key in two objects is fine
    assert _hazards(b'{"a": "k: v, k: w"}') == []  # colons inside strings only cost the exact check


def test_numbers_beyond_what_javascript_holds_are_hazards() -> None:
    limit = 2**53
    assert _hazards(f'{{"n": {limit}}}'.encode()) == []
    assert _hazards(f'{{"n": [{-(limit + 1)}]}}'.encode()) == [(framing.NUMBER_RANGE.code, {"number": str(-(limit + 1))})]
    assert _hazards(b'{"n": 1e400}') == [(framing.NUMBER_RANGE.code, {"number": "1e400"})]
    assert _hazards(b'{"id": "resp_12345678901234567890"}') == []  # digits in a string are no number
    long = "9" * 60
    assert _hazards(f'{{"n": {long}}}'.encode()) == [(framing.NUMBER_RANGE.code, {"number": "9" * 37 + "…"})]


def test_too_deep_is_the_only_hazard_reported() -> None:
    data = b'{"k": 1, "k": ' + b"[" * 10 + b"1" + b"]" * 10 + b"}"
    assert _hazards(data, max_depth=10) == [(framing.JSON_TOO_DEEP.code, {"limit": 10})]  # 11 levels deep
    assert [code for code, _ in _hazards(data, max_depth=11)] == [framing.DUPLICATE_KEY.code]


@pytest.mark.parametrize(("value", "depth", "keys"), [
    (1, 0, 0), ({}, 1, 0), ([], 1, 0), ({"a": [{"b": 1, "c": [2]}]}, 4, 3), ([[[]], {"x": {"y": {}}}], 4, 2),
])
def test_depth_and_key_count_of_a_parsed_document(value: object, depth: int, keys: int) -> None:
    assert json_scan.depth(value) == depth
    assert json_scan.key_count(value) == keys
    assert json.dumps(value, separators=(",", ":")).count(":") == keys  # what the hot path compares with


def test_data_that_does_not_parse_is_named_for_what_it_is() -> None:
    def code(data: bytes) -> str:
        try:
            json_scan.loads(data)
        except orjson.JSONDecodeError as exc:
            return json_scan.parse_error_finding(data, exc, POS, 64).code
        raise AssertionError("parsed")

    assert code(b"ping") == code(b" : keep-alive") == code(b"") == framing.KEEPALIVE_AS_DATA.code
    assert code(b"{'a': 1}") == framing.DATA_NOT_JSON.code
    assert code(b"[" * 2000 + b"]" * 2000) == framing.JSON_TOO_DEEP.code  # beyond orjson's own limit


def test_json_kind_and_clip() -> None:
    assert [json_scan.json_kind(v) for v in ([], "s", 1, 1.5, True, None)] == [
        "array", "string", "number", "number", "boolean", "null"]
    assert json_scan.clip(b"abc\xff", 10) == "abc\ufffd"
    assert json_scan.clip(b"x" * 70) == "x" * 60 + "…"


@pytest.mark.parametrize("data", [
    b'{"a": [1, 2.5], "t": "caf\xc3\xa9 \\u00e9"}', b'{"a": 1e400}', b'{"a": -1e400, "b": 1.5}',
    b'{"n": 123456789012345678901234567890}', b'{"k": 1, "x": {"k": 1, "k": 2}, "k": 3}',
    b'{"a": "\\ud83d\\ude00", "b": "lone \\ud800"}', b'[1, 2]', b'"text"', b'{"a": NaN}', b'{"a": 1',
    b'', b': keep-alive', b'{"a": "\xed\xa0\x80"}', b'\xef\xbb\xbf{"a": 1}', b'{"d": ' + b"[" * 70 + b"]" * 70 + b"}",
])
def test_a_huge_event_is_scanned_as_loads_then_hazards_scan_it(data: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    """scan_huge (the bytes freed once decoded) gives what loads() then hazards() give, whichever parser
    loads() would take; on an error the bytes are back in the box for the finding."""
    monkeypatch.setattr(json_scan, "BIG_JSON_BYTES", 0)
    box = [data]
    try:
        expected = json_scan.loads(data)
    except orjson.JSONDecodeError as exc:
        with pytest.raises(orjson.JSONDecodeError) as raised:
            json_scan.scan_huge(box, 64)
        assert str(raised.value) == str(exc) and box == [data]
        return
    obj, unusual = expected
    hazards = json_scan.hazards(data, obj, 64, unusual) if isinstance(obj, dict) else []
    assert json_scan.scan_huge(box, 64) == (obj, unusual, hazards) and box == []
