"""The Anthropic Messages dialect: its machine on built, broken and mangled streams (checker/dialects/messages).

The corpus (captures/messages, tests/test_corpus.py) holds one broken stream per rule to its findings and
tests/test_messages_oracles.py holds the client matrix to the real SDKs; these tests check what a corpus
cannot: that any mangling of a stream gives findings and never an internal error, that the hot path and the
full path agree on it, and the pieces (recognition, the builder, the machine's summary) on their own.
"""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest
from generators import assert_written, load_generator

from checker import dialects
from checker.dialects.messages import DIALECT, vocabulary
from checker.synth.messages import MessagesStreamBuilder, encode
from checker.engine import LintResult, StreamLinter
from checker.profiles import get_profile

ROOT = Path(__file__).resolve().parents[1]
MESSAGES = ROOT / "captures" / "messages"


def lint(data: bytes, *, trace: bool = False, request: dict[str, Any] | None = None) -> LintResult:
    linter = StreamLinter(profile=get_profile("openai"), request=request, trace=trace, keep_texts=True)
    for start in range(0, len(data), 997):
        linter.feed(data[start:start + 997])
    return linter.close()


def full_stream() -> list[dict[str, Any]]:
    builder = (MessagesStreamBuilder(name="full").thinking(["Let me", " think."]).text(["Hello", " there."])
               .redacted_thinking().tool_use("get_weather", ['{"city": ', '"Paris"}']).tool_use("get_time", []))
    return list(builder.events())


# --- the pieces -----------------------------------------------------------------------------------------------


def test_the_dialect_is_registered_with_its_endpoint_and_schema_set() -> None:
    assert dialects.get("messages") is DIALECT
    assert dialects.for_endpoint("/v1/messages") is DIALECT
    assert DIALECT.schema_set == "anthropic" and DIALECT.event_names
    assert DIALECT.terminal_types == {"message_stop"}


@pytest.mark.parametrize("etype", sorted(vocabulary.RECOGNISED_FIRST))
def test_a_first_message_event_or_ping_recognises_the_dialect(etype: str) -> None:
    found, evidence = dialects.recognise({"type": etype})
    assert found is DIALECT and evidence == f"type {etype!r}"


def test_an_error_event_alone_is_not_evidence() -> None:
    # OpenAI's streams have an `error` event too.
    assert DIALECT.recognise({"type": "error", "error": {"type": "overloaded_error", "message": "x"}}) is None
    assert DIALECT.recognise({"type": ["not", "hashable"]}) is None


def test_lanes_are_content_blocks() -> None:
    assert DIALECT.lane({"type": "content_block_delta", "index": 2, "delta": {}}) == "#2"
    assert DIALECT.lane({"type": "message_delta", "index": 2}) == "response"
    assert DIALECT.lane({"type": "ping"}) == "response"


def test_the_builder_writes_a_conforming_stream_and_the_summary_says_what_it_built() -> None:
    result = lint(encode(full_stream()))
    assert result.findings == []
    assert result.terminal == "message_stop" and result.response_id.startswith("msg_")
    assert [(i.type, i.output_index, i.done) for i in result.items] == [
        ("thinking", 0, True), ("text", 1, True), ("redacted_thinking", 2, True), ("tool_use", 3, True),
        ("tool_use", 4, True)]
    texts = result.texts or []
    assert texts[0]["text"] == "Let me think." and texts[0]["signature"]
    assert texts[1]["text"] == "Hello there."
    assert json.loads(texts[3]["input"]) == {"city": "Paris"} and texts[3]["id"].startswith("toolu_")
    assert texts[4]["input"] is None and texts[4]["initial_input"] == {}


def test_a_message_cut_by_max_tokens_inside_a_tool_input_announces_it() -> None:
    events = list(MessagesStreamBuilder(name="cut").tool_use("f", ['{"a": "b', 'c']).events(stop_reason="max_tokens"))
    assert lint(encode(events), request={"max_tokens": 1}).codes() == []
    events[-2]["delta"]["stop_reason"] = "tool_use"
    assert lint(encode(events)).codes() == ["ANT017"]


def test_a_tool_input_cut_inside_a_json_string_breaks_both_sdks_even_under_max_tokens() -> None:
    """vLLM's forced tool under max_tokens (captures/vllm/messages/tool_choice.forced): the input is a JSON string
    cut short. No partial parse makes an object of it: the real anthropic-python and @anthropic-ai/sdk raise
    and LangChain lands the call in invalid_tool_calls (tests/test_vllm_captures.py, tests/test_real_clients.py
    run them on that capture), so it is ANT017 whatever cut it."""
    from checker.compat import matrix

    events = list(MessagesStreamBuilder(name="cut").tool_use("f", ['"<tool_call>', '<tool_call>'])
                  .events(stop_reason="max_tokens"))
    result = lint(encode(events), request={"max_tokens": 1})
    assert result.codes() == ["ANT017"] and result.findings[0].details["kind"] == "cut-string"
    cells = matrix(result)
    assert cells["anthropic-python"].verdict.name == cells["anthropic-ts"].verdict.name == "BREAKS"
    assert cells["langchain"].verdict.name == "BREAKS" and cells["claude-code"].verdict.name == "OK"


def test_several_message_deltas_that_agree_are_only_langchains_concern() -> None:
    events = list(MessagesStreamBuilder(name="two").text(["Hi"]).events())
    second = copy.deepcopy(events[-2])
    second["usage"]["output_tokens"] += 1
    events.insert(-1, second)
    # The stop_reason sent again: both SDKs keep the last, LangChain joins them (ANT027, a warning).
    result = lint(encode(events))
    assert result.codes() == ["ANT027"] and result.findings[0].clients == ("langchain",)
    second["delta"]["stop_reason"] = None  # a later message_delta with the usage alone: no finding
    assert lint(encode(events)).codes() == []
    second["delta"]["stop_reason"] = "end_turn"
    second["usage"]["output_tokens"] = 0
    assert lint(encode(events)).codes() == ["ANT019", "ANT027"]


def test_ping_anywhere_even_after_message_stop() -> None:
    events = full_stream()
    for at in (0, 5, len(events)):
        events.insert(at, {"type": "ping"})
    assert lint(encode(events)).codes() == []


# --- mangled streams ------------------------------------------------------------------------------------------

_VALUES: list[Any] = [None, 0, -1, 7, "", "x", [], {}, True, 1.5, "msg_x", {"type": "text"}]


def _mangle(events: list[dict[str, Any]], rng: random.Random) -> list[dict[str, Any]]:
    events = copy.deepcopy(events)
    for _ in range(rng.randint(1, 3)):
        n = rng.randrange(len(events))
        action = rng.choice(("drop", "repeat", "swap", "field", "nested", "type"))
        if action == "drop":
            del events[n]
        elif action == "repeat":
            events.insert(n, copy.deepcopy(events[n]))
        elif action == "swap" and n + 1 < len(events):
            events[n], events[n + 1] = events[n + 1], events[n]
        elif action == "field":
            key = rng.choice(sorted(events[n]))
            events[n][key] = rng.choice(_VALUES)
        elif action == "nested":
            inner = next((v for v in events[n].values() if isinstance(v, dict) and v), None)
            if inner is not None:
                inner[rng.choice(sorted(inner))] = rng.choice(_VALUES)
        else:
            events[n]["type"] = rng.choice(sorted(vocabulary.EVENT_TYPES) + ["message_metadata"])
    return events


def _frame(events: list[dict[str, Any]]) -> bytes:
    # encode() names each event after its type; a mangled type may not be a string.
    return b"".join(f"event: {e.get('type')}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


@pytest.mark.parametrize("seed", range(40))
def test_a_mangled_stream_gives_findings_never_an_internal_error(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(10):
        data = _frame(_mangle(full_stream(), rng))
        result = lint(data)
        assert "SSE099" not in result.codes(), [f.message for f in result.findings if f.code == "SSE099"]


@pytest.mark.parametrize("seed", range(20))
def test_the_hot_path_and_the_full_path_agree_on_mangled_streams(seed: int) -> None:
    rng = random.Random(1000 + seed)
    for _ in range(10):
        data = _frame(_mangle(full_stream(), rng))
        fast, full = lint(data), lint(data, trace=True)
        assert [(f.code, f.message, f.position, f.occurrences) for f in fast.findings] == \
            [(f.code, f.message, f.position, f.occurrences) for f in full.findings]
        assert (fast.texts, fast.items, fast.terminals) == (full.texts, full.items, full.terminals)


@pytest.mark.parametrize("path", sorted(MESSAGES.rglob("*.sse")), ids=lambda p: p.relative_to(MESSAGES).as_posix())
def test_the_hot_path_and_the_full_path_agree_on_the_corpus(path: Path) -> None:
    data = path.read_bytes()
    fast, full = lint(data), lint(data, trace=True)
    assert [(f.code, f.message, f.position) for f in fast.findings] == \
        [(f.code, f.message, f.position) for f in full.findings]
    assert fast.texts == full.texts


# --- the client matrix's table ----------------------------------------------------------------------------------


def test_the_effects_table_names_rules_and_this_dialects_clients() -> None:
    from checker.compat import Verdict
    from checker.dialects.messages.effects import CLIENTS, EFFECTS
    from checker.rules import RULES

    assert DIALECT.effects().clients == CLIENTS == ("anthropic-python", "anthropic-ts", "claude-code", "vercel-ai",
                                                    "langchain")
    for code, table in EFFECTS.items():
        assert code in RULES and set(table) <= set(CLIENTS), code
        affected = {c for c, effects in table.items() if any(e.verdict > Verdict.OK for e in effects)}
        if code.startswith("ANT"):  # the family's own rules: Rule.clients is exactly who breaks or degrades
            assert affected == set(RULES[code].clients), code
    for code, rule in RULES.items():
        if code.startswith("ANT") and rule.clients:
            assert code in EFFECTS, f"{code} names clients but has no row: they would all break by default"


def test_an_anthropic_stream_checked_as_responses_is_the_wrong_api() -> None:
    """Where the endpoint (a probe's meta) or --dialect says Responses, an Anthropic stream is SCH010, once."""
    data = encode(full_stream())
    result = StreamLinter(profile=get_profile("openai"), dialect="responses")
    result.feed(data)
    found = result.close()
    assert found.dialect == "responses" and found.codes() == ["SCH010"]
    assert "an Anthropic Messages stream" in found.findings[0].message


def test_the_synthetic_captures_are_what_the_generator_writes() -> None:
    """captures/messages/make_captures.py writes conforming/ and rules/: no hand edits, no stale files."""
    files = load_generator(MESSAGES / "make_captures.py").build()
    on_disk = [path for folder in ("conforming", "rules") for path in (MESSAGES / folder).iterdir()]
    assert_written(files, MESSAGES, on_disk, "captures/messages/make_captures.py")
