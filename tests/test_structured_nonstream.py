"""Structured output on ``stream: false`` answers (rules FMT, docs/spec.md §8): the answer's texts against the
format the request asked for, judged as a stream's are, in the three dialects.

The captures are captures/structured-nonstream/<dialect>/ (captures/make_structured_nonstream.py: the cases of
the streamed structured captures, asked without streaming), each a JSON answer with the ``X.meta.json`` of its
exchange; ``sse-check lint`` judges them through the HTTP checks (``checker.http_checks``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from checker import dialects
from checker.captures import request_for
from checker.engine_options import EngineOptions
from checker.http_checks import ExchangeLinter
from checker.nonstream_checks import nonstream_findings
from checker.profiles import get_profile
from checker.rules import RULES
from tests.generators import assert_written, load_generator

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "captures" / "structured-nonstream"
CAPTURES = sorted(FOLDER.rglob("*.sse"))
FMT_RULES = sorted(code for code in RULES if code.startswith("FMT"))


def lint(path: Path) -> set[str]:
    meta = json.loads(path.with_name(path.name.removesuffix(".sse") + ".meta.json").read_text())
    linter = ExchangeLinter(meta, EngineOptions(profile=get_profile("openai")), request=request_for(path))
    linter.feed(path.read_bytes())
    return {f.code for f in linter.close().findings}


def declared(path: Path) -> set[str]:
    return set(json.loads(path.with_name(path.name.removesuffix(".sse") + ".expect.json").read_text())["openai"])


def test_the_generator_wrote_the_captures() -> None:
    generator = load_generator(ROOT / "captures" / "make_structured_nonstream.py")
    assert_written(generator.build(), FOLDER, (p for p in FOLDER.rglob("*") if p.is_file()),
                   "captures/make_structured_nonstream.py")


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.relative_to(FOLDER).as_posix())
def test_each_answer_gives_exactly_the_declared_codes(path: Path) -> None:
    assert lint(path) == declared(path)


@pytest.mark.parametrize("dialect", ["responses", "chat", "messages"])
def test_every_rule_s_bad_answer_fires_it_in_every_dialect_that_has_it(dialect: str) -> None:
    good = lint(FOLDER / dialect / "json-schema.sse")
    assert good == set()
    for code in FMT_RULES:
        bad = FOLDER / dialect / Path(RULES[code].bad).name
        if dialect == "messages" and code in ("FMT003", "FMT004"):
            assert not bad.exists()  # Anthropic has neither a loose schema nor JSON mode
            continue
        assert code in lint(bad), (dialect, code)


def _completion(content: Any, finish: str = "stop", refusal: str | None = None) -> bytes:
    return json.dumps({"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
                       "choices": [{"index": 0, "finish_reason": finish, "logprobs": None,
                                    "message": {"role": "assistant", "content": content, "refusal": refusal}}]}
                      ).encode()


CHAT_FORMAT = {"type": "json_schema", "json_schema": {"name": "n", "strict": True, "schema": {
    "type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"], "additionalProperties": False}}}


def _codes(body: bytes, request: dict[str, Any], dialect: str = "chat") -> list[str]:
    return [f.code for f in nonstream_findings(body, dialects.get(dialect), None, request=request)]


def test_a_request_without_a_format_judges_no_text() -> None:
    assert _codes(_completion("not JSON"), {"model": "m", "messages": []}) == []
    assert _codes(_completion("not JSON"), {"model": "m", "messages": [], "response_format": {"type": "text"}}) == []


def test_a_refusal_and_a_tool_call_finish_are_not_judged() -> None:
    request = {"model": "m", "messages": [], "response_format": CHAT_FORMAT}
    assert _codes(_completion(None, refusal="I can't help with that."), request) == []
    # (no call came with the finish: CHT009, the completion's own check; its text is not judged)
    assert _codes(_completion("Let me look it up.", finish="tool_calls"), request) == ["CHT009"]
    assert _codes(_completion('{"a": "x"}'), request) == ["FMT002"]
    assert _codes(_completion('{"a": 1'), request) == ["FMT001"]


def test_odd_answers_give_findings_never_a_traceback() -> None:
    request = {"model": "m", "input": "x", "text": {"format": {"type": "json_object"}}}
    odd = [{"id": "resp_1", "object": "response", "status": "completed", "output": "none"},
           {"id": "resp_1", "object": "response", "status": "completed", "output": [None, {"type": "message"}]},
           {"id": "resp_1", "object": "response", "status": "completed",
            "output": [{"type": "message", "content": [{"type": "output_text", "text": 7}]}]}]
    found = [_codes(json.dumps(answer).encode(), request, "responses") for answer in odd]
    # no output array: not a Response (HTP018); no text to judge; a text that is no string (its schema finding
    # says so): judged as the empty text it gives a parse
    assert found == [["HTP018"], [], ["FMT001"]]
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "stop_reason": "end_turn",
               "content": [{"type": "text", "text": "```json\n{}\n```"}, "junk"], "usage": {}}
    request_m = {"model": "m", "max_tokens": 9, "messages": [],
                 "output_config": {"format": {"type": "json_schema", "schema": {"type": "object"}}}}
    assert "FMT001" in _codes(json.dumps(message).encode(), request_m, "messages")
