"""The case files: the reference passes every case; the runner and the diff in-process."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from checker.errors import UsageError
from checker.replay.cases import Case, PythonFunction, Reference, TargetError, load_case_file, parse_case_file, run_case, run_cases
from checker.replay.diff import compare, short, unified_diff

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "cases"
# sha256 of the case file as it was given to the project (the client rule of docs/spec.md §5): kept byte-exact.
REASONING_REPLAY_SHA256 = "85813b39c740a03ec7eb098a8aedba7c74401a10c29c5b407a2262d98dbc997a"
CASE_FILES = sorted(CASES.glob("*.json"))


def all_cases() -> list[Any]:
    return [pytest.param(case, id=f"{path.stem}-{case.number}") for path in CASE_FILES for case in load_case_file(path)]


def test_the_case_files_are_there() -> None:
    names = {p.name for p in CASE_FILES}
    assert {"reasoning-replay.json", "anthropic-thinking.json", "edge-cases.json"} <= names
    assert len(load_case_file(CASES / "reasoning-replay.json")) == 6


def test_given_case_file_kept_byte_exact() -> None:
    assert hashlib.sha256((CASES / "reasoning-replay.json").read_bytes()).hexdigest() == REASONING_REPLAY_SHA256


def test_every_case_has_an_about() -> None:
    for path in CASE_FILES:
        document = json.loads(path.read_text())
        assert document["about"], path
        assert all(case["about"] for case in document["cases"]), path


@pytest.mark.parametrize("case", all_cases())
def test_reference_passes(case: Case) -> None:
    result = run_case(case, Reference())
    assert result.status == "passed", "\n".join([result.error or "", *(d.text for d in result.differences), result.unified])


def test_declared_dialects() -> None:
    assert {c.dialect for c in load_case_file(CASES / "anthropic-thinking.json")} == {"anthropic"}
    assert {c.dialect for c in load_case_file(CASES / "reasoning-replay.json")} == {"openai-chat"}
    text = json.dumps({"dialect": "anthropic", "cases": [
        {"about": "a", "messages": [], "expect": []},
        {"about": "b", "dialect": "responses", "messages": [], "expect": []}]})
    assert [c.dialect for c in parse_case_file(text, "x.json")] == ["anthropic", "responses"]


@pytest.mark.parametrize(("text", "match"), [
    ("{", "x.json: not JSON"),
    ("[]", 'a case file is an object with a "cases" list'),
    ('{"cases": [1]}', "case 1: must be an object"),
    ('{"cases": [{"messages": []}]}', '"expect" must be a list'),
    ('{"dialect": "gemini", "cases": []}', "dialect must be one of"),
    ('{"cases": [{"messages": [{"role": "user", "turn": 0}], "expect": []}]}', r"case 1: messages: message 0 \(user\): turn"),
])
def test_malformed_case_files(text: str, match: str) -> None:
    with pytest.raises(UsageError, match=match):
        parse_case_file(text, "x.json")


def test_reference_with_a_fixed_dialect_skips_the_others() -> None:
    cases = load_case_file(CASES / "anthropic-thinking.json") + load_case_file(CASES / "edge-cases.json")
    results = run_cases(cases, Reference(dialect="anthropic"))
    assert {r.status for r in results if r.case.dialect == "anthropic"} == {"passed"}
    assert {r.status for r in results if r.case.dialect != "anthropic"} == {"skipped"}
    with pytest.raises(UsageError, match="pass --dialect anthropic"):
        run_cases(load_case_file(CASES / "anthropic-thinking.json"), Reference(dialect="responses"))


def test_reference_field_variant_fails_the_shared_file() -> None:
    results = run_cases(load_case_file(CASES / "reasoning-replay.json"), Reference(field="reasoning"))
    assert [r.status for r in results] == ["failed", "failed", "failed", "failed", "passed", "passed"]


def test_python_function_target() -> None:
    case = load_case_file(CASES / "reasoning-replay.json")[0]
    seen: list[Any] = []

    def mutating(messages: list[dict[str, Any]]) -> tuple[dict[str, Any], ...]:
        seen.append(messages)
        messages.clear()
        return ()

    target = PythonFunction(spec="t:mutating", function=mutating)
    result = run_case(case, target)
    assert result.status == "failed" and case.messages  # the case's own list untouched
    assert result.differences[0].text.startswith("message 0 (user): expected ")

    def raising(messages: Any) -> Any:
        raise KeyError("role")

    result = run_case(case, PythonFunction(spec="t:raising", function=raising))
    assert result.status == "failed" and result.error == "--impl raised KeyError: 'role'"
    with pytest.raises(TargetError, match="returned a JSON object, not a list"):
        PythonFunction(spec="t:f", function=lambda m: {}).build([], "openai-chat")
    with pytest.raises(TargetError, match="not JSON"):
        PythonFunction(spec="t:f", function=lambda m: [object()]).build([], "openai-chat")


def test_impl_spec_errors() -> None:
    for spec, match in [("nocolon", "expected package.module:function"), ("no_such_mod_xyz:f", "cannot import"),
                        ("json:nope", "json has no nope"), ("json:__doc__", "not callable")]:
        with pytest.raises(UsageError, match=match):
            PythonFunction.load(spec)


# --- the diff -------------------------------------------------------------------


def test_difference_texts() -> None:
    expected = [
        {"role": "user", "content": "Fix"},
        {"role": "assistant", "content": "", "reasoning_content": "Line 12 drops the last token."},
        {"role": "tool", "content": "x"},
    ]
    actual = [
        {"role": "user", "content": "Fix!"},
        {"role": "assistant", "content": "", "reasoning": "y"},
    ]
    texts = [d.text for d in compare(expected, actual)]
    assert texts == [
        "message 0 (user): content expected 'Fix' but got 'Fix!'",
        "message 1 (assistant): reasoning_content expected 'Line 12 drops the last token.' but missing",
        "message 1 (assistant): reasoning not expected but sent 'y'",
        'message 2 (tool): expected {"role": "tool", "content": "x"} but missing',
    ]
    assert [d.text for d in compare([], [{"role": "user", "content": "u"}])] == [
        'message 0 (user): not expected but sent {"role": "user", "content": "u"}']


def test_difference_paths_into_blocks() -> None:
    expected = [{"role": "assistant", "content": [{"type": "thinking", "thinking": "t", "signature": "s"}]}]
    actual = [{"role": "assistant", "content": [{"type": "thinking", "thinking": "t"}, {"type": "text", "text": "x"}]}]
    found = compare(expected, actual)
    assert [(d.path, d.kind) for d in found] == [("content[0].signature", "missing"), ("content[1]", "unexpected")]
    assert found[0].as_dict()["actual"] is None and found[0].as_dict()["expected"] == "s"


def test_types_matter_but_int_float_do_not() -> None:
    assert compare([{"a": 1}], [{"a": 1.0}]) == []
    assert [d.kind for d in compare([{"a": 1}], [{"a": True}])] == ["changed"]
    assert [d.text for d in compare([{"role": "user"}], ["user"])] == ["message 0 (user): expected {\"role\": \"user\"} but got 'user'"]


def test_short_cuts_long_values() -> None:
    assert short("x" * 100) == repr("x" * 39 + "…")
    assert short("Line 12") == "'Line 12'"
    assert len(short(list(range(100)))) == 60


def test_unified_diff_uses_expected_key_order() -> None:
    expected = [{"role": "assistant", "content": "", "reasoning_content": "r"}]
    actual = [{"reasoning_content": "r", "content": "", "role": "assistant", "extra": 1}]
    diff = unified_diff(expected, actual)
    assert diff.splitlines()[:2] == ["--- expected", "+++ actual"]
    assert [line for line in diff.splitlines() if line.startswith(("+ ", "- ", "+  ", "-  "))] == [
        '-    "reasoning_content": "r"', '+    "reasoning_content": "r",', '+    "extra": 1']
