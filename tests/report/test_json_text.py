"""The JSON report's text is the standard library's ``json.dumps(indent=2, ensure_ascii=False)``, whichever
encoder wrote it (checker.report.json_report.indented takes orjson where it writes the same)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from checker.report.json_report import _orjson_writes_the_same, indented

ROOT = Path(__file__).resolve().parents[2]

# Every character up to U+3000 but the surrogates: the escapes (control characters, quote, backslash) and
# the non-ASCII text both encoders write as they are.
_CHARS = "".join(chr(i) for i in range(0x3000) if not 0xD800 <= i < 0xE000)

VALUES: list[Any] = [
    {"text": _CHARS, "empty": [], "nothing": {}, "nested": [[], {"a": {}}, [1, [2, []]]]},
    {"numbers": [0, -1, 2**63 - 1, -(2**63), 0.0, -0.0, 0.1, 1.0, 1e16, 1e22, 5e-324, 1.7976931348623157e308]},
    {"small float": 1e-07},  # orjson writes 1e-7: the standard way
    {"nan": float("nan"), "inf": float("inf")},  # orjson writes null: the standard way
    {"big": 2**64, "bigger": -(2**70)},  # beyond orjson's 64 bits
    {"surrogate": "\ud800"},  # orjson refuses a lone surrogate
    {"tuple": (1, "two", (3,)), "bool": [True, False, None]},
    {1: "an integer key", "2": "a string key"},  # json writes the key as a string; orjson refuses it
    [{"a": 1}, "b", 3],
    "a string alone",
]


@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
def test_indented_is_the_standard_text(value: Any) -> None:
    assert indented(value) == json.dumps(value, indent=2, ensure_ascii=False)


def test_the_check_refuses_what_orjson_would_write_otherwise() -> None:
    """Guards the test above: the cases it holds equal go the standard way, not by luck."""
    assert _orjson_writes_the_same(VALUES[0]) and _orjson_writes_the_same(VALUES[1])
    assert not _orjson_writes_the_same(VALUES[2]) and not _orjson_writes_the_same(VALUES[3])
    assert not _orjson_writes_the_same(VALUES[7])


def test_a_report_of_real_captures_is_the_standard_text(tmp_path: Path) -> None:
    """The report of real recordings (findings with details, unicode, numbers) parses to the same document and
    is the same text as the standard library writes it."""
    from checker.cli import main

    captures = sorted((ROOT / "captures" / "real-openai").glob("*.sse"))[:12]
    out = tmp_path / "report.json"
    main(["lint", *map(str, captures), "-j", "1", "--format", "json", "-o", str(out), "--isolated"])
    document = json.loads(out.read_text(encoding="utf-8"))
    assert len(document["files"]) == len(captures)
    for entry in document["files"]:
        assert indented(entry) == json.dumps(entry, indent=2, ensure_ascii=False)
