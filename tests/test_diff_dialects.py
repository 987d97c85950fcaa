"""``sse-check diff`` on Chat Completions and Anthropic Messages streams, and across dialects.

Each case is two builds of one server: a conforming stream and the same stream changed the way a new build
would change it (more or fewer fragments, a field renamed, a block dropped, a rule broken). What must hold: the
same answer streamed in other pieces is no change; a change is named per choice / tool call / content block,
with a run of fragments counted as one step; the findings that differ are listed; two dialects are one line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from checker.commands.diff import diff_pair
from checker.diff import Change, compare, shape_of
from checker.engine_options import EngineOptions
from checker.profiles import get_profile
from checker.synth.chat import ChatStreamBuilder, encode_chat
from checker.synth.messages import MessagesStreamBuilder
from checker.synth.messages import encode as encode_messages

ROOT = Path(__file__).resolve().parents[1]
CHAT = ROOT / "captures" / "chat"
MESSAGES = ROOT / "captures" / "messages"
OPTIONS = EngineOptions(profile=get_profile("openai"))


def texts(changes: list[Change], aspect: str | None = None) -> list[str]:
    return [c.text for c in changes if aspect is None or c.aspect == aspect]


def diff_files(old: Path, new: Path) -> list[Change]:
    return diff_pair("x", old, new, OPTIONS).changes


def chat(builder: ChatStreamBuilder, **kwargs: object) -> bytes:
    return encode_chat(builder.chunks(**kwargs))  # type: ignore[arg-type]


def messages(builder: MessagesStreamBuilder, **kwargs: object) -> bytes:
    return encode_messages(builder.events(**kwargs))  # type: ignore[arg-type]


# --- Anthropic Messages ---------------------------------------------------------------------------------------


def test_messages_same_answer_in_other_pieces_is_no_change() -> None:
    old = messages(MessagesStreamBuilder(name="a").thinking(["Let me", " think."]).text(["Hello", " there", "!"])
                   .tool_use("get_weather", ['{"city"', ': "Paris"}']))
    new = messages(MessagesStreamBuilder(name="b").thinking(["Hmm."]).text(["Hi!"])
                   .tool_use("get_weather", ['{"ci', 'ty": "Ro', 'me"}']))
    assert old != new
    assert compare(shape_of(old), shape_of(new)) == []


def test_messages_deltas_are_coalesced_per_block_and_named_by_their_type() -> None:
    shape = shape_of((MESSAGES / "conforming" / "thinking-tool-use.sse").read_bytes())
    assert shape.dialect == "messages"
    assert shape.lanes == {
        "response": ["message_start", "ping", "message_delta (tool_use)", "message_stop"],
        "thinking": ["content_block_start", "thinking_delta", "signature_delta", "content_block_stop"],
        "text": ["content_block_start", "text_delta", "content_block_stop"],
        "tool call": ["content_block_start", "input_json_delta", "content_block_stop"],
    }
    assert shape.terminal == "message_stop"


def test_messages_a_dropped_block_and_a_new_tool_call() -> None:
    old = messages(MessagesStreamBuilder().thinking(["a", "b"]).tool_use("f", ["{}"]))
    new = messages(MessagesStreamBuilder().tool_use("f", ["{", "}"]).tool_use("g", ["{}"]))
    assert texts(compare(shape_of(old), shape_of(new))) == [
        "the thinking block disappeared",
        "a new tool call #2 appears (`content_block_start`, `input_json_delta`, `content_block_stop`)",
    ]


def test_messages_rule_breaking_build_names_the_delta_and_the_finding() -> None:
    changes = diff_files(MESSAGES / "conforming" / "thinking-tool-use.sse",
                         MESSAGES / "rules" / "ANT009-delta-type-mismatch.sse")
    assert texts(changes, "grammar") == ["`text_delta` is new in the thinking block"]
    assert [(c.kind, c.details["code"]) for c in changes if c.aspect == "findings"] == [("new", "ANT009")]


def test_messages_stop_reason_change_and_a_block_started_before_the_last_one_stopped() -> None:
    old = MessagesStreamBuilder().text(["Let me check."]).tool_use("f", ["{}"])
    new_events = list(old.events(stop_reason="end_turn"))
    stop_text = next(i for i, e in enumerate(new_events) if e["type"] == "content_block_stop")
    start_tool = next(i for i, e in enumerate(new_events) if e.get("content_block", {}).get("type") == "tool_use")
    new_events.insert(start_tool, new_events.pop(stop_text))  # the text block now stops after the tool starts
    changes = compare(shape_of(messages(old)), shape_of(encode_messages(new_events)))
    assert texts(changes) == [
        "`message_delta (tool_use)` is now `message_delta (end_turn)` (in the message's lifecycle)",
        "the text block's `content_block_stop` now arrives after the tool call's `content_block_start`",
    ]


def test_messages_signature_missing_is_a_dropped_delta_and_a_finding() -> None:
    changes = diff_files(MESSAGES / "conforming" / "thinking-tool-use.sse",
                         MESSAGES / "rules" / "ANT013-thinking-signature-missing.sse")
    findings = [(c.kind, c.details["code"]) for c in changes if c.aspect == "findings"]
    assert findings == [("new", "ANT013")]


# --- Chat Completions -------------------------------------------------------------------------------------------


def test_chat_same_answer_in_other_fragments_is_no_change() -> None:
    old = chat(ChatStreamBuilder(completion_id="chatcmpl-A").reasoning(["Think", "ing"]).text(["Par", "is."])
               .tool_call("get_weather", ['{"city":', '"Paris"}']), usage=True)
    new = chat(ChatStreamBuilder(completion_id="chatcmpl-B").reasoning(["Thinking about it"]).text(["Paris", ".", "!"])
               .tool_call("get_weather", ['{"ci', 'ty":"Par', 'is"}']), usage=True)
    assert compare(shape_of(old), shape_of(new)) == []


def test_chat_lanes_are_choices_and_their_tool_calls_by_index() -> None:
    builder = ChatStreamBuilder().reasoning(["a", "b"]).text(["c"]).tool_call("f", ["{", "}"]).tool_call("g", ["{}"])
    builder.text(["x", "y"], choice=1)
    shape = shape_of(chat(builder, usage=True))
    assert shape.dialect == "chat"
    assert shape.lanes == {
        "choice 0": ["role", "reasoning_content", "content", "finish_reason tool_calls"],
        "choice 0 tool call 0": ["start", "arguments"],
        "choice 0 tool call 1": ["start", "arguments"],
        "choice 1": ["role", "content", "finish_reason stop"],
        "response": ["usage", "[DONE]"],
    }


def test_chat_vendor_reasoning_field_renamed() -> None:
    old = (CHAT / "llama.cpp" / "reasoning.sse").read_bytes()
    new = old.replace(b'"reasoning_content":', b'"reasoning":')
    assert texts(compare(shape_of(old), shape_of(new))) == [
        "`reasoning_content` is now `reasoning` (in choice 0)"]


def test_chat_a_second_tool_call_and_a_dropped_reasoning() -> None:
    old = chat(ChatStreamBuilder().reasoning(["hm"]).tool_call("f", ["{}"]))
    new = chat(ChatStreamBuilder().tool_call("f", ["{", "}"]).tool_call("g", ["{}"]))
    assert texts(compare(shape_of(old), shape_of(new))) == [
        "`reasoning_content` disappeared from choice 0",
        "choice 0 tool call 1 is new (`start`, `arguments`)",
    ]


def test_chat_interleaved_choices_are_a_reordering_not_new_events() -> None:
    builder = ChatStreamBuilder().text(["a", "b"]).text(["c", "d"], choice=1)
    chunks = list(builder.chunks())
    first, second = chunks[:4], chunks[4:]
    interleaved = [first[0], second[0], *first[1:], *second[1:]]  # choice 1 starts before choice 0 ends
    changes = compare(shape_of(encode_chat(chunks)), shape_of(encode_chat(interleaved)))
    assert texts(changes) == ["choice 0's `finish_reason stop` now arrives after choice 1's `role`"]


def test_chat_choices_packed_in_one_chunk_are_the_same_answer() -> None:
    """A server may send both choices' deltas in one chunk: the diff reads choices, not chunks."""
    builder = ChatStreamBuilder().text(["a", "b"]).text(["c", "d"], choice=1)
    interleaved = list(builder.chunks(interleave=True))
    packed = [{**one, "choices": one["choices"] + other["choices"]}
              for one, other in zip(interleaved[0::2], interleaved[1::2])]
    assert len(packed) == 4 and all(len(chunk["choices"]) == 2 for chunk in packed)
    assert compare(shape_of(encode_chat(interleaved)), shape_of(encode_chat(packed))) == []


def test_chat_usage_chunk_and_finish() -> None:
    old = chat(ChatStreamBuilder().text(["a"]), usage=True)
    new = chat(ChatStreamBuilder().text(["a"]), finish_reason="length")
    assert texts(compare(shape_of(old), shape_of(new))) == [
        "`usage` disappeared from the completion's lifecycle",
        "`finish_reason stop` is now `finish_reason length` (in choice 0)",
        "`usage` disappeared from `chat.completion.chunk`",
    ]


def test_chat_rule_breaking_build_names_the_change_and_the_finding() -> None:
    changes = diff_files(CHAT / "conforming" / "tool-call.sse",
                         CHAT / "rules" / "CHT014-tool-call-identity-changed.sse")
    assert "choice 0 tool call 0" in " ".join(texts(changes, "grammar"))
    assert [(c.kind, c.details["code"]) for c in changes if c.aspect == "findings"] == [("new", "CHT014")]


# --- across dialects and through the command --------------------------------------------------------------------


def test_two_dialects_are_one_line_then_the_findings() -> None:
    changes = diff_files(CHAT / "conforming" / "tool-call.sse", MESSAGES / "rules" / "ANT009-delta-type-mismatch.sse")
    assert [c.aspect for c in changes] == ["dialect", "findings"]
    assert changes[0].text == ("OLD is an OpenAI Chat Completions stream and NEW an Anthropic Messages stream: "
                               "their event grammars are not comparable, only their findings are")
    assert changes[0].details == {"old": "chat", "new": "messages"}
    assert changes[1].details["code"] == "ANT009"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "checker", "diff", *args], capture_output=True, text=True,
                          cwd=ROOT, check=False, env=env)


def test_cli_text_and_json_on_chat_and_messages_directories(tmp_path: Path) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    for side in (old, new):
        side.mkdir()
    (old / "chat.sse").write_bytes(chat(ChatStreamBuilder().text(["a", "b", "c"])))
    (new / "chat.sse").write_bytes(chat(ChatStreamBuilder().reasoning(["r"]).text(["abc"])))
    (old / "messages.sse").write_bytes(messages(MessagesStreamBuilder().text(["a", "b"])))
    (new / "messages.sse").write_bytes(messages(MessagesStreamBuilder().text(["a", "b", "c", "d"])))
    proc = run(str(old), str(new), "--color", "never")
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.splitlines() == [
        f"changed chat  ({old / 'chat.sse'} → {new / 'chat.sse'})",
        "  event grammar",
        "    - `reasoning_content` is new in choice 0",
        "  findings",
        "    - new finding CHT025 (warning): choice 0: reasoning streamed as 'reasoning_content', a vendor "
        "extension",
        f"same messages  ({old / 'messages.sse'} → {new / 'messages.sse'})",
        "2 scenario(s): 1 changed, 1 the same",
    ]
    proc = run(str(old), str(new), "--format", "json")
    document = json.loads(proc.stdout)
    assert [s["changed"] for s in document["scenarios"]] == [True, False]


def test_cli_dialect_forces_both_sides() -> None:
    proc = run(str(CHAT / "conforming" / "text.sse"), str(MESSAGES / "conforming" / "text.sse"),
               "--dialect", "messages", "--format", "json")
    changes = json.loads(proc.stdout)["scenarios"][0]["changes"]
    assert "dialect" not in [c["aspect"] for c in changes]
    assert any(c["aspect"] == "findings" and c["details"]["code"] == "SCH010" for c in changes)
