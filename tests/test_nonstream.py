"""Non-streamed answers through the dialect seam (checker.dialects.base.NonStreamed, checker.nonstream_checks):
each dialect's answer is judged by its own object, consistency rules and schema, and compared with the same
request's stream by digests; http_checks names no dialect (tests/live/test_adapters.py holds it to that)."""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from generators import assert_written, load_generator

from checker import dialects
from checker.http_checks import lint_exchange
from checker.nonstream_checks import stream_reference
from checker.synth.chat import ChatStreamBuilder, encode_chat
from checker.synth.messages import MessagesStreamBuilder
from checker.synth.messages import encode as encode_messages

ROOT = Path(__file__).resolve().parents[1]
CHAT_URL, MESSAGES_URL = "/v1/chat/completions", "/v1/messages"
CHAT_REQUEST = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": False}
MESSAGES_REQUEST = {"model": "m", "max_tokens": 100, "messages": [{"role": "user", "content": "hi"}],
                    "stream": False}


def record(path: str, request: Any, *, reference: Any = None, status: int = 200, expect: str = "nonstream",
           content_type: str = "application/json") -> dict[str, Any]:
    return {"meta_version": 1, "expect": expect, "url": f"http://127.0.0.1:8080{path}", "request": request,
            "status": status, "reason": "", "headers": [["content-type", content_type]],
            "ending": {"kind": "complete", "detail": ""}, "reference": reference}


def findings(meta: dict[str, Any], body: Any) -> list[tuple[str, str]]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return [(f.code, f.message) for f in lint_exchange(meta, [data]).findings]


def completion(*, content: str | None = "Hello", calls: Sequence[tuple[str, str, str]] = (), finish: str = "stop",
               usage: dict[str, Any] | None = None, reasoning: str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None}
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    if calls:
        message["tool_calls"] = [{"id": cid, "type": "function", "function": {"name": name, "arguments": args}}
                                 for cid, name, args in calls]
    body = {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}]}
    if usage is not None:
        body["usage"] = usage
    return body


# --- Chat Completions -------------------------------------------------------------------------------------------


def test_a_complete_chat_completion_is_clean() -> None:
    assert findings(record(CHAT_URL, CHAT_REQUEST), completion()) == []


def test_a_chat_completion_is_held_to_the_rules_of_the_message_a_stream_reconciles_to() -> None:
    meta = record(CHAT_URL, {**CHAT_REQUEST, "max_tokens": 10})
    calls = [("call_1", "get_weather", '{"city": "Paris"'), ("call_1", "get_time", "{}")]
    usage = {"prompt_tokens": 5, "completion_tokens": 10, "total_tokens": 12}
    found = dict(findings(meta, completion(content=None, calls=calls, finish="stop", usage=usage)))
    assert found == {
        "CHT009": "choice 0: finish_reason 'stop' after 2 tool call(s)",
        "CHT016": "choice 0: tool call 1 reuses the id 'call_1' of tool call 0",
        "CHT017": "choice 0: tool call 0 ('get_weather') arguments are not valid JSON at the finish: "
                  "Expecting ',' delimiter",
        "CHT022": "usage total_tokens 12 is not prompt_tokens 5 + completion_tokens 10",
        "CHT010": "choice 0: finish_reason 'stop' but the completion used the whole limit (10 of 10 tokens)",
    }, found
    # Cut by the limit, as finish_reason says: the cut arguments are no finding; tool_calls without a call is.
    cut = completion(content=None, calls=[("call_1", "get_weather", '{"ci')], finish="length")
    assert findings(meta, cut) == []
    assert [c for c, _ in findings(meta, completion(finish="tool_calls"))] == ["CHT009"]


def test_a_chat_completion_is_checked_against_its_schema() -> None:
    body = completion()
    del body["choices"][0]["logprobs"], body["created"]
    body["choices"][0]["message"]["content"] = 7
    assert sorted(findings(record(CHAT_URL, CHAT_REQUEST), body)) == [
        ("CHT002", "completion /: missing required property 'created'"),
        ("CHT002", "completion /choices/0/message/content: 7 is not of type string or null"),
        ("CHT002", "completion /choices/0: missing required property 'logprobs'"),
    ]


def _chat_stream(builder: ChatStreamBuilder) -> bytes:
    return encode_chat(builder.chunks())


def test_a_chat_completion_is_compared_with_its_stream() -> None:
    stream = _chat_stream(ChatStreamBuilder().reasoning(["Paris", " is nice"]).tool_call(
        "get_weather", ['{"city":', ' "Paris"}']))
    reference = stream_reference(stream, "reasoning_one_call")  # the dialect is told by the stream
    assert reference is not None and reference["terminal"] == "finish_reason tool_calls"
    assert [d["type"] for d in reference["output"]] == ["reasoning", "tool_call", "finish_reason tool_calls"]
    meta = record(CHAT_URL, CHAT_REQUEST, reference=reference)
    chunks = [json.loads(line[6:]) for line in stream.splitlines() if line.startswith(b"data: {")]
    call_id = next(c["choices"][0]["delta"]["tool_calls"][0]["id"] for c in chunks
                   if c["choices"] and "tool_calls" in c["choices"][0]["delta"])
    same = completion(content=None, reasoning="Paris is nice", finish="tool_calls",
                      calls=[(call_id, "get_weather", '{"city": "Paris"}')])  # other whitespace: the same call
    assert findings(meta, same) == []
    text = completion(content="It is sunny", reasoning="Paris is nice")
    assert findings(meta, text) == [
        ("HTP016", "the non-streaming output differs from the streamed completion (finish_reason tool_calls): "
                   "items reasoning, message, finish_reason stop vs streamed reasoning, tool_call, "
                   "finish_reason tool_calls")]
    other = copy.deepcopy(same)
    other["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = '{"city": "Rome"}'
    assert findings(meta, other) == [
        ("HTP017", "item 1 (tool_call) of the non-streaming output has other name or arguments than the streamed one")]


@pytest.mark.parametrize(("body", "detail"), [
    ({"output": []}, "no choices array"), ({"choices": [1]}, "choices[0] is a JSON number")])
def test_what_is_not_a_chat_completion(body: Any, detail: str) -> None:
    assert findings(record(CHAT_URL, CHAT_REQUEST), body) == [
        ("HTP018", f"the non-streaming answer is not a chat completion: {detail}")]


# --- Anthropic Messages --------------------------------------------------------------------------------------------


def message(*blocks: dict[str, Any], stop: str = "end_turn", mid: str = "msg_01",
            output_tokens: int = 5) -> dict[str, Any]:
    return {"id": mid, "type": "message", "role": "assistant", "model": "m", "content": list(blocks),
            "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": 3, "output_tokens": output_tokens}}


TEXT = {"type": "text", "text": "Hello"}
THINKING = {"type": "thinking", "thinking": "Hm", "signature": "sig"}


def tool(tid: str = "toolu_01", name: str = "get_weather", inputs: Any = None) -> dict[str, Any]:
    return {"type": "tool_use", "id": tid, "name": name, "input": {"city": "Paris"} if inputs is None else inputs}


def test_a_conforming_message_is_clean() -> None:
    meta = record(MESSAGES_URL, MESSAGES_REQUEST)
    assert findings(meta, message(THINKING, TEXT)) == []
    assert findings(meta, message(THINKING, tool(), stop="tool_use")) == []


def test_a_message_is_held_to_the_rules_of_the_message_a_stream_builds() -> None:
    meta = record(MESSAGES_URL, MESSAGES_REQUEST)
    body = message({**THINKING, "signature": ""}, {"type": "redacted_thinking", "data": ""},
                   tool("call_1"), tool("call_1"), stop="end_turn", mid="chatcmpl-1")
    assert findings(meta, body) == [
        ("ANT004", "message id 'chatcmpl-1' does not start with msg_"),
        ("ANT013", "thinking block 0 ends without a signature (it is empty)"),
        ("ANT014", "redacted_thinking block 1 has no data"),
        ("ANT015", "tool_use block 2 has id 'call_1', not toolu_…"),
        ("ANT015", "tool_use block 3 has id 'call_1', not toolu_…"),
        ("ANT016", "tool_use id 'call_1' of block 3 was used by block 2"),
        ("ANT021", "stop_reason 'end_turn', but content block 2 is a tool_use block"),
    ]
    assert findings(meta, message(TEXT, stop="tool_use")) == [
        ("ANT021", "stop_reason 'tool_use', but no tool_use block was sent")]
    assert findings(meta, message(TEXT, output_tokens=100)) == [
        ("ANT021", "stop_reason 'end_turn', but usage.output_tokens (100) reached the request's max_tokens (100)")]


def test_a_message_is_checked_against_the_sdks_message_type() -> None:
    body = message(tool(inputs="city=Paris"), stop="tool_use")
    del body["usage"]["output_tokens"]
    assert findings(record(MESSAGES_URL, MESSAGES_REQUEST), body) == [
        ("SCH001", "message /content/0/input: 'city=Paris' is not of type object"),
        ("SCH001", "message /usage: missing required property 'output_tokens'"),
    ]
    assert findings(record(MESSAGES_URL, MESSAGES_REQUEST), {"type": "message", "content": {}}) == [
        ("HTP018", "the non-streaming answer is not a Message object: content is not an array")]


def test_a_message_is_compared_with_its_stream() -> None:
    builder = MessagesStreamBuilder(name="pair").thinking(["Hm"]).tool_use("get_weather", ['{"city": ', '"Paris"}'])
    stream = encode_messages(builder.events())
    reference = stream_reference(stream, "messages/reasoning_one_call", "messages")
    assert reference is not None and reference["terminal"] == "stop_reason tool_use"
    meta = record(MESSAGES_URL, MESSAGES_REQUEST, reference=reference)
    same = message({**THINKING, "thinking": "Hm"}, tool(inputs={"city": "Paris"}), stop="tool_use")
    assert findings(meta, same) == []
    text = message({**THINKING, "thinking": "Hm"}, TEXT)
    assert findings(meta, text) == [
        ("HTP016", "the non-streaming output differs from the streamed message (stop_reason tool_use): items "
                   "thinking, text, stop_reason end_turn vs streamed thinking, tool_use, stop_reason tool_use")]
    other = message({**THINKING, "thinking": "Hm"}, tool(inputs={"city": "Rome"}), stop="tool_use")
    assert findings(meta, other) == [
        ("HTP017", "item 1 (tool_use) of the non-streaming output has other name or arguments than the streamed one")]


def test_every_real_llama_server_pair_agrees_but_a_call_cut_by_max_tokens() -> None:
    """The real llama-server's recorded pairs (captures/chat/llama.cpp, captures/messages/llama.cpp: X.sse and
    X.nonstream.json, the same request asked both ways) agree, but for one true difference: a tool call cut by
    max_tokens streams its cut input, while the non-streamed message gives it an empty object."""
    differing = {}
    for name in ("chat", "messages"):
        hook = dialects.get(name).nonstream()  # type: ignore[misc]
        for path in sorted((ROOT / "captures" / name / "llama.cpp").glob("*.sse")):
            reference = stream_reference(path.read_bytes(), path.stem, name)
            assert reference is not None, path
            meta = record(f"/v1/{'chat/completions' if name == 'chat' else 'messages'}", None, reference=reference)
            codes = [c for c, _ in findings(meta, path.with_name(path.stem + ".nonstream.json").read_bytes())
                     if c.startswith("HTP")]
            if codes:
                differing[f"{name}/{path.stem}"] = codes
        assert hook.call_types
    assert differing == {"messages/two_calls": ["HTP017"]}


# --- the Messages request schema ------------------------------------------------------------------------------------


def test_messages_requests_are_judged_by_message_create_params() -> None:
    invalid = {**MESSAGES_REQUEST, "messages": {"role": "user", "content": "hi"}, "stream": True}
    error = json.dumps({"type": "error", "error": {"type": "invalid_request_error",
                                                   "message": "messages: Input should be a valid list"}}).encode()
    assert findings(record(MESSAGES_URL, invalid, status=400, expect="stream"), error) == [
        ("HTP021", "invalid request refused with HTTP 400, as it should be: /messages: {…} is not of type array")]
    thinking = {**MESSAGES_REQUEST, "thinking": {"type": "enabled", "budget_tokens": 1024}, "stream": True}
    refused = json.dumps({"type": "error", "error": {"type": "invalid_request_error",
                                                     "message": "thinking is not supported by this server"}}).encode()
    assert findings(record(MESSAGES_URL, thinking, status=400, expect="stream"), refused) == [
        ("HTP022", "feature not supported: thinking (HTTP 400: thinking is not supported by this server)")]


def test_the_messages_pairs_are_what_their_generator_writes() -> None:
    """captures/messages/nonstream is written by captures/messages/make_nonstream_captures.py: no hand edits."""
    folder = ROOT / "captures" / "messages"
    files = load_generator(folder / "make_nonstream_captures.py").build()
    on_disk = [path for path in (folder / "nonstream").rglob("*") if path.is_file() and path.name != "README.md"]
    assert_written(files, folder, on_disk, "captures/messages/make_nonstream_captures.py")
