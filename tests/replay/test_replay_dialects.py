"""The reference dialect builders: the turn rule, and each dialect's shape."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from checker.replay.dialects import (
    DIALECTS,
    HistoryError,
    build,
    current_turn_start,
    replay_indices,
    starts_turn,
    to_anthropic,
    to_openai_chat,
    to_responses,
    validate_history,
)

USER = {"role": "user", "content": "Fix it."}
NOTE = {"role": "user", "content": "[job done]", "turn": False}


def call(call_id: str, name: str = "read", arguments: str = '{"path":"a.ts"}') -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def reply(reasoning: str | None = None, content: str = "", **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content, **extra}
    if reasoning is not None:
        message["reasoning"] = reasoning
    return message


# --- the turn rule ------------------------------------------------------------


def test_turn_flag() -> None:
    assert starts_turn(USER) and starts_turn({**USER, "turn": True})
    assert not starts_turn(NOTE)
    assert not starts_turn({"role": "assistant", "content": ""})
    assert not starts_turn({"role": "system", "content": "x"})


def test_current_turn_start() -> None:
    assert current_turn_start([]) == -1
    assert current_turn_start([reply("r")]) == -1
    assert current_turn_start([NOTE, reply("r")]) == -1
    assert current_turn_start([USER, reply("r"), NOTE, reply("s")]) == 0
    assert current_turn_start([USER, reply("r"), USER, reply("s")]) == 2
    assert current_turn_start([USER, reply("r"), USER]) == 2


def test_replay_indices_are_the_current_turns_assistants() -> None:
    history = [USER, reply("a"), {"role": "tool", "content": "t"}, USER, reply("b"), NOTE, reply("c")]
    assert replay_indices(history) == {4, 6}
    assert replay_indices([*history, USER]) == set()
    assert replay_indices([reply("a"), NOTE, reply("b")]) == {0, 2}


# --- openai-chat ---------------------------------------------------------------


def test_openai_chat_current_turn_only_and_non_empty_only() -> None:
    history = [USER, reply("old"), USER, reply("new"), {"role": "tool", "content": "t"}, reply(""), reply()]
    assert to_openai_chat(history) == [
        USER,
        {"role": "assistant", "content": ""},
        USER,
        {"role": "assistant", "content": "", "reasoning_content": "new"},
        {"role": "tool", "content": "t"},
        {"role": "assistant", "content": ""},
        {"role": "assistant", "content": ""},
    ]


def test_openai_chat_variant_field() -> None:
    out = to_openai_chat([USER, reply("why")], field="reasoning")
    assert out[1] == {"role": "assistant", "content": "", "reasoning": "why"}
    assert to_openai_chat([USER, reply("why"), USER], field="reasoning")[1] == {"role": "assistant", "content": ""}
    with pytest.raises(HistoryError, match="unknown reasoning field"):
        to_openai_chat([USER], field="thoughts")


def test_openai_chat_turn_flag_never_sent() -> None:
    out = to_openai_chat([{**USER, "turn": True}, NOTE, reply("r")])
    assert all("turn" not in m for m in out)
    assert out[2]["reasoning_content"] == "r"


def test_openai_chat_tool_calls_and_ids_pass_unchanged() -> None:
    calls = [call("call_1"), call("call_2", "grep", '{"q": "x"}')]
    history = [USER, reply("r", tool_calls=calls, content=None),
               {"role": "tool", "tool_call_id": "call_1", "content": "a", "name": "read"}]
    out = to_openai_chat(history)
    assert out[1] == {"role": "assistant", "content": None, "reasoning_content": "r", "tool_calls": calls}
    assert list(out[1]) == ["role", "content", "reasoning_content", "tool_calls"]  # reasoning right after content
    assert out[2] == history[2]
    out[1]["tool_calls"][0]["id"] = "changed"
    assert calls[0]["id"] == "call_1"  # a copy, never the input


def test_openai_chat_history_only_keys_are_dropped() -> None:
    stored = reply("r", thinking=[{"type": "thinking", "thinking": "t", "signature": "s"}],
                   reasoning_items=[{"type": "reasoning", "id": "rs_1", "summary": []}])
    assert to_openai_chat([USER, stored, USER]) == [USER, {"role": "assistant", "content": ""}, USER]


def test_openai_chat_reads_reasoning_content_as_an_alias() -> None:
    stored = {"role": "assistant", "content": "", "reasoning_content": "as received"}
    assert to_openai_chat([USER, stored])[1]["reasoning_content"] == "as received"
    assert to_openai_chat([USER, stored, USER])[1] == {"role": "assistant", "content": ""}
    both = {"role": "assistant", "content": "", "reasoning": "r", "reasoning_content": "ignored"}
    assert to_openai_chat([USER, both])[1]["reasoning_content"] == "r"


def test_no_input_is_mutated() -> None:
    history = [USER, reply("r", tool_calls=[call("c1")]), {"role": "tool", "tool_call_id": "c1", "content": "x"},
               reply("s", thinking=[{"type": "thinking", "thinking": "s", "signature": "sig"}])]
    before = copy.deepcopy(history)
    for dialect in DIALECTS:
        build(dialect, history)
    assert history == before


@st.composite
def histories(draw: st.DrawFn) -> list[dict[str, Any]]:
    messages = []
    for _ in range(draw(st.integers(0, 12))):
        kind = draw(st.sampled_from(["user", "note", "assistant", "tool"]))
        if kind == "user":
            messages.append({"role": "user", "content": "u", **draw(st.sampled_from([{}, {"turn": True}]))})
        elif kind == "note":
            messages.append({"role": "user", "content": "n", "turn": False})
        elif kind == "tool":
            messages.append({"role": "tool", "content": "t"})
        else:
            messages.append(reply(draw(st.sampled_from([None, "", "r", "why"]))))
    return messages


@given(histories())
def test_openai_chat_property(history: list[dict[str, Any]]) -> None:
    out = to_openai_chat(history)
    assert len(out) == len(history)
    turn_start = max((i for i, m in enumerate(history) if m["role"] == "user" and m.get("turn", True)), default=-1)
    for index, (sent, stored) in enumerate(zip(out, history)):
        assert sent["role"] == stored["role"] and sent["content"] == stored["content"]
        assert "turn" not in sent and "reasoning" not in sent
        should = stored["role"] == "assistant" and index > turn_start and bool(stored.get("reasoning"))
        assert ("reasoning_content" in sent) == should
        if should:
            assert sent["reasoning_content"] == stored["reasoning"]


# --- anthropic ----------------------------------------------------------------

SIGNED = {"type": "thinking", "thinking": "Look first.", "signature": "sig-1"}
EMPTY_SIGNED = {"type": "thinking", "thinking": "", "signature": "sig-2"}
REDACTED = {"type": "redacted_thinking", "data": "ZW5j"}


def test_anthropic_thinking_first_signature_kept() -> None:
    history = [USER, reply(content="Done.", thinking=[SIGNED, REDACTED, EMPTY_SIGNED], tool_calls=[call("toolu_1")])]
    assert to_anthropic(history)[1] == {"role": "assistant", "content": [
        SIGNED, REDACTED, EMPTY_SIGNED,
        {"type": "text", "text": "Done."},
        {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a.ts"}},
    ]}


def test_anthropic_earlier_turns_lose_every_kind_of_thinking() -> None:
    history = [USER, reply(content="A.", thinking=[SIGNED, REDACTED, EMPTY_SIGNED]), USER, reply(content="B.", thinking=[SIGNED])]
    out = to_anthropic(history)
    assert out[1] == {"role": "assistant", "content": [{"type": "text", "text": "A."}]}
    assert out[3]["content"][0] == SIGNED


def test_anthropic_unsigned_empty_thinking_is_dropped() -> None:
    nothing = {"type": "thinking", "thinking": ""}
    out = to_anthropic([USER, reply(content="x", thinking=[nothing, SIGNED])])
    assert out[1]["content"] == [SIGNED, {"type": "text", "text": "x"}]


def test_anthropic_falls_back_to_reasoning_text_unsigned() -> None:
    out = to_anthropic([USER, reply("plain", content="x")])
    assert out[1]["content"] == [{"type": "thinking", "thinking": "plain"}, {"type": "text", "text": "x"}]
    assert to_anthropic([USER, reply("", content="x")])[1]["content"] == [{"type": "text", "text": "x"}]
    # a thinking list wins over the reasoning text
    assert to_anthropic([USER, reply("plain", content="", thinking=[SIGNED])])[1]["content"] == [SIGNED]


def test_anthropic_tool_results_grouped_and_turn_dropped() -> None:
    history = [
        USER,
        reply(thinking=[SIGNED], tool_calls=[call("toolu_1"), call("toolu_2", "ls", "")]),
        {"role": "tool", "tool_call_id": "toolu_1", "content": "a"},
        {"role": "tool", "tool_call_id": "toolu_2", "content": "b"},
        NOTE,
    ]
    out = to_anthropic(history)
    assert out[1]["content"][2] == {"type": "tool_use", "id": "toolu_2", "name": "ls", "input": {}}
    assert out[2:] == [
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a"},
            {"type": "tool_result", "tool_use_id": "toolu_2", "content": "b"},
        ]},
        {"role": "user", "content": "[job done]"},
    ]
    assert out[1]["content"][0] == SIGNED  # the note did not start a turn


def test_anthropic_arguments_as_object_accepted() -> None:
    tool_call = {"id": "t", "type": "function", "function": {"name": "f", "arguments": {"a": 1}}}
    assert to_anthropic([USER, reply(tool_calls=[tool_call])])[1]["content"] == [
        {"type": "tool_use", "id": "t", "name": "f", "input": {"a": 1}}]


@pytest.mark.parametrize(("history", "match"), [
    ([USER, reply(tool_calls=[call("t", arguments="{oops")])], r"message 1 \(assistant\): tool_calls\[0\].*not JSON"),
    ([USER, reply(tool_calls=[call("t", arguments="[1]")])], "must be a JSON object"),
    ([USER, reply(tool_calls=[{"id": "t"}])], "needs"),
    ([USER, {"role": "tool", "content": "x"}], r"message 1 \(tool\): a tool message needs its tool_call_id"),
    ([{"role": "system", "content": "x"}, USER], "system prompt outside"),
])
def test_anthropic_errors_name_the_message(history: list[dict[str, Any]], match: str) -> None:
    with pytest.raises(HistoryError, match=match):
        to_anthropic(history)


# --- responses ----------------------------------------------------------------

ITEM = {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "S"}],
        "content": [{"type": "reasoning_text", "text": "R"}], "encrypted_content": "gAAA"}


def test_responses_items_verbatim_in_current_turn() -> None:
    history = [USER, reply(content="", reasoning_items=[ITEM], tool_calls=[call("call_1")]),
               {"role": "tool", "tool_call_id": "call_1", "content": "out"}, reply(content="Done.")]
    assert to_responses(history) == [
        {"type": "message", "role": "user", "content": "Fix it."},
        ITEM,
        {"type": "function_call", "call_id": "call_1", "name": "read", "arguments": '{"path":"a.ts"}'},
        {"type": "function_call_output", "call_id": "call_1", "output": "out"},
        {"type": "message", "role": "assistant", "content": "Done."},
    ]


def test_responses_earlier_turns_dropped_and_fallback() -> None:
    history = [USER, reply(content="A", reasoning_items=[ITEM]), USER, reply("text only", content="B"), NOTE]
    out = to_responses(history)
    assert ITEM not in out
    assert out[3] == {"type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": "text only"}]}
    assert out[5] == {"type": "message", "role": "user", "content": "[job done]"}
    assert to_responses([USER, reply("", content="B")])[1:] == [{"type": "message", "role": "assistant", "content": "B"}]


def test_responses_object_arguments_serialised() -> None:
    tool_call = {"id": "c", "type": "function", "function": {"name": "f", "arguments": {"a": "é"}}}
    assert to_responses([USER, reply(tool_calls=[tool_call])])[1]["arguments"] == '{"a":"é"}'


# --- validation -----------------------------------------------------------------


@pytest.mark.parametrize(("history", "match"), [
    ({"role": "user"}, "must be a list"),
    (["hi"], "message 0 must be an object"),
    ([{"role": "bot", "content": ""}], "message 0 .*role must be one of"),
    ([{"role": "user", "content": "", "turn": "no"}], r"message 0 \(user\): turn must be true or false"),
    ([USER, {"role": "assistant", "content": "", "reasoning": 3}], r"message 1 \(assistant\): reasoning must be a string"),
    ([USER, reply(thinking=[{"type": "text", "text": "x"}])], r"thinking\[0\] must be a thinking or redacted_thinking"),
    ([USER, reply(thinking=[{"type": "redacted_thinking"}])], r"thinking\[0\].data"),
    ([USER, reply(reasoning_items=[{"id": "rs"}])], r"reasoning_items\[0\]"),
    ([USER, reply(tool_calls={"id": "x"})], "tool_calls must be a list"),
])
def test_validation_errors(history: Any, match: str) -> None:
    with pytest.raises(HistoryError, match=match):
        validate_history(history)


def test_build_unknown_dialect() -> None:
    with pytest.raises(HistoryError, match="unknown dialect"):
        build("gemini", [])
    assert build("openai-chat", [USER, reply("r")], field="reasoning")[1]["reasoning"] == "r"
