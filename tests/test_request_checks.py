"""The request decides what an HTTP error is, and the endpoint what an answer must be (checker.request_checks,
checker.http_checks): a refused invalid request is right (HTP021), a refused feature is unsupported (HTP022),
a non-streamed chat answer is a chat completion, and a reader that leaves is not the server's fault (HTP020)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from checker import dialects
from checker.http_checks import lint_exchange
from checker.live import adapters
from checker.request_checks import error_fields, features, refused_feature
from checker.schemas import SchemaSet, load_schema_set

ROOT = Path(__file__).resolve().parents[1]
TEXT = (ROOT / "captures" / "conforming" / "text.sse").read_bytes()
VALID = {"model": "m", "input": "hi", "stream": True}
RESPONSES, CHAT = (dialects.get(name).requests for name in ("responses", "chat"))


def meta(request: Any, *, status: int = 400, path: str = "/v1/responses", expect: str = "stream",
         kind: str = "complete", detail: str = "", content_type: str = "application/json") -> dict[str, Any]:
    return {"meta_version": 1, "expect": expect, "url": f"http://127.0.0.1:8080{path}", "request": request,
            "status": status, "reason": "", "headers": [["content-type", content_type]],
            "ending": {"kind": kind, "detail": detail}}


def codes(record: dict[str, Any], body: bytes) -> list[str]:
    return sorted({f.code for f in lint_exchange(record, [body]).findings})


def error(message: str, param: str | None = None) -> bytes:
    return json.dumps({"error": {"message": message, "type": "invalid_request_error", "param": param,
                                 "code": None}}).encode()


# --- the request schemas -----------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["rust", "python"])
def test_request_schemas_read_a_request_as_a_server_does(backend: str) -> None:
    schemas = SchemaSet("openai", backend=backend, walk=False)  # type: ignore[arg-type]
    assert schemas.validate_request("responses", {"input": 1})[0].pointer == "/input"
    assert {v.pointer for v in schemas.validate_request("chat", {"messages": 1})} == {"/model", "/messages"}
    # A nullable property may be left out: openai-python sends function tools without `strict`.
    tools = [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]
    assert schemas.validate_request("responses", {**VALID, "tools": tools}) == []
    assert schemas.validate_request("chat", {"model": "m", "messages": [{"role": "user", "content": "hi"}]}) == []
    with pytest.raises(ValueError):
        schemas.validate_request("embeddings", {})


def test_every_request_the_captures_record_is_valid_except_the_probes_invalid_ones() -> None:
    schemas = load_schema_set("openai")
    for path in sorted(ROOT.glob("captures/**/*.meta.json")) + sorted(ROOT.glob("captures/**/*.request.json")):
        record = json.loads(path.read_text())
        request = record.get("request") if path.name.endswith(".meta.json") else record
        if not isinstance(request, dict) or (path.name.endswith(".meta.json") and record.get("expect") == "error"):
            continue
        if path.relative_to(ROOT / "captures").parts[0] == "cassettes":
            continue  # other projects' recorded requests, as their SDKs sent them (Writer's legacy tool form)
        # HTP021's probe sends an invalid request on purpose; the assistant_history input form sends an earlier
        # answer back as output_text parts without the output message's id and status, as codex does
        # (codex-rs ResponseItem::Message), which OpenAI's API takes and its published schema does not list.
        # hosted_web_search forces the GA `web_search` tool by type, which the API takes (its tools list has it)
        # and the published schema's tool_choice enum has not caught up with.
        # A tool turn's second request sends the first answer's items back as the server sent them (as the SDKs
        # send response.output back): vLLM's carry null where the schema has a string (a call's namespace);
        # transformers serve's message item carries an `annotations` member the item schema does not have.
        echoed = path.relative_to(ROOT / "captures").parts[0] in ("vllm", "transformers") \
            and path.name.startswith("tool_turn.") \
            and "/chat/" not in path.as_posix() and "/messages/" not in path.as_posix() and "call" not in path.name
        invalid = path.name.startswith(("HTP021", "assistant_history.", "hosted_web_search.")) or echoed
        endpoint = dialects.for_endpoint(urlsplit(str(record.get("url") or "")).path) \
            if path.name.endswith(".meta.json") and record.get("url") else None
        if endpoint is not None and endpoint.requests is not None:
            api = endpoint.requests.schema  # the endpoint the probe or the proxy recorded
        elif path.relative_to(ROOT / "captures").parts[0] == "messages" or \
                adapters.for_request(request).name == "messages":  # also the Messages live replay's set
            api = "messages"  # Anthropic's MessageCreateParams (schemas/anthropic/requests)
        else:
            api = "chat" if "messages" in request else "responses"
        assert bool(schemas.validate_request(api, request)) == invalid, path


# --- naming the refused feature ----------------------------------------------------------------------------


def test_the_error_param_names_the_feature_first() -> None:
    request = {**VALID, "tools": [{"type": "function", "name": "f"}, {"type": "web_search"}], "background": True}
    assert refused_feature(RESPONSES, request, {"param": "tools[1].type", "message": "bad"}) == \
        "tool type 'web_search'"
    assert refused_feature(RESPONSES, request, {"param": "background", "message": "no"}) == "background"


def test_the_message_names_a_value_before_a_field() -> None:
    request = {**VALID, "tools": [{"type": "web_search"}], "include": ["reasoning.encrypted_content"]}
    message = {"message": "Tool type 'web_search' is not supported by this server (tools)."}
    assert refused_feature(RESPONSES, request, message) == "tool type 'web_search'"
    assert refused_feature(RESPONSES, request, {"message": "include reasoning.encrypted_content: no"}) == \
        "include 'reasoning.encrypted_content'"
    item = {**VALID, "input": [{"type": "item_reference", "id": "msg_1"}]}
    assert refused_feature(RESPONSES, item, {"message": "item_reference is not supported"}) == \
        "input item type 'item_reference'"


def test_an_error_that_names_nothing_the_request_uses_names_no_feature() -> None:
    request = {**VALID, "previous_response_id": "resp_1"}
    assert refused_feature(RESPONSES, request, {"message": "The model 'm' does not exist", "param": "model"}) is None
    assert refused_feature(RESPONSES, request, {"message": "Something is not supported"}) is None
    assert refused_feature(RESPONSES, request, {}) is None
    # a word inside another one is no mention ("stored" is not "store")
    assert refused_feature(RESPONSES, {**VALID, "store": True}, {"message": "nothing stored"}) is None


def test_the_basic_fields_are_never_the_unsupported_feature() -> None:
    assert [f.label for f in features(CHAT, {"model": "m", "messages": [], "stream": True, "n": 2})] == ["n"]
    assert error_fields(b'{"error": {"message": "x", "param": null, "code": 400}}') == {"message": "x", "code": "400"}
    assert error_fields(b"<html>") == {} and error_fields(b'{"error": "plain"}') == {"message": "plain"}


# --- what the HTTP findings are ------------------------------------------------------------------------------


def test_a_refused_invalid_request_is_right_and_a_refused_feature_unsupported() -> None:
    assert codes(meta({"input": 1}), error("Invalid type for 'input'", "input")) == ["HTP021"]
    assert codes(meta({"messages": 1}, path="/v1/chat/completions", expect="nonstream"), error("bad")) == ["HTP021"]
    refused = error("llama.cpp does not support 'previous_response_id'.")
    assert codes(meta({**VALID, "previous_response_id": "resp_abc"}), refused) == ["HTP022"]
    assert codes(meta({**VALID, "background": True}, status=501), error("background mode: not implemented")) == \
        ["HTP022"]


def test_other_errors_stay_status_not_ok() -> None:
    # a valid request refused for a reason it does not name, a rate limit, authentication, a server fault
    assert codes(meta(VALID), error("The model 'm' does not exist", "model")) == ["HTP001"]
    # (a 429 without Retry-After is HTP023 too: this is about the request's fields, which it does not blame)
    assert codes(meta({**VALID, "previous_response_id": "r"}, status=429), error("previous_response_id: slow")) \
        == ["HTP001", "HTP023"]
    assert codes(meta({"input": 1}, status=401), error("no key")) == ["HTP001"]  # says nothing about the body
    assert codes(meta(VALID, status=500), error("boom")) == ["HTP001"]  # a valid request failed by the server
    # an invalid one failed with a 5xx instead of refused is HTP024 (tests/test_invalid_server_error.py)
    assert codes(meta({"input": 1}, status=500), error("boom")) == ["HTP024"]
    assert codes(meta(None), error("bad")) == ["HTP001"]  # no request recorded: nothing to judge it by


def test_an_invalid_request_answered_as_a_success_is_invalid_accepted() -> None:
    found = lint_exchange(meta({**VALID, "input": 1}, status=200, content_type="text/event-stream"), [TEXT]).findings
    (accepted,) = [f for f in found if f.code == "HTP005"]
    assert "/input: 1 is not of type string or array" in accepted.message
    assert "ended by response.completed" in accepted.message


def test_the_endpoint_decides_what_a_non_streamed_answer_must_be() -> None:
    chat = meta({"model": "m", "messages": [{"role": "user", "content": "hi"}]}, status=200,
                path="/v1/chat/completions", expect="nonstream")
    completion = {"id": "c", "object": "chat.completion", "created": 1, "model": "m", "choices": [
        {"index": 0, "finish_reason": "stop", "logprobs": None,
         "message": {"role": "assistant", "content": "hello", "refusal": None}}]}
    assert codes(chat, json.dumps(completion).encode()) == []
    # The completion is judged by CreateChatCompletionResponse (CHT002, as a chunk by its own schema).
    reduced = {**completion, "created": None, "choices": [{**completion["choices"][0], "logprobs": 0}]}
    found = [f.message for f in lint_exchange(chat, [json.dumps(reduced).encode()]).findings]
    assert sorted(found) == ["completion /choices/0/logprobs: 0 is not of type object or null",
                             "completion /created: null is not of type integer"], found
    for body, detail in [({"output": []}, "no choices array"), ({"choices": {}}, "choices is a JSON object"),
                         ({"choices": [{"index": 0}]}, "choices[0] has no message object")]:
        (finding,) = lint_exchange(chat, [json.dumps(body).encode()]).findings
        assert finding.code == "HTP018" and finding.message.endswith(f"not a chat completion: {detail}")
    responses = meta({**VALID, "stream": False}, status=200, expect="nonstream")
    (finding,) = lint_exchange(responses, [json.dumps(completion).encode()]).findings
    assert finding.message == "the non-streaming answer is not a Response object: no output array"
    other = meta({"x": 1}, status=200, path="/v1/embeddings", expect="nonstream")
    assert codes(other, b'{"data": []}') == []  # another endpoint's answer is not judged


def test_a_reader_that_leaves_before_the_end_is_not_a_missing_terminal_event() -> None:
    head = TEXT[: TEXT.index(b"\n\n", 2000) + 10]  # mid-event, no terminal event
    record = meta(VALID, status=200, kind="interrupted", detail="the client disconnected",
                  content_type="text/event-stream")
    found = lint_exchange(record, [head]).findings
    assert [f.code for f in found] == ["HTP020"]
    assert found[0].message == f"reading stopped after 0 bytes, before the terminal event: the client disconnected" \
        .replace("0 bytes", f"{len(head)} bytes")
    # the same cut by the transport is the server's (or the network's) failure
    cut = dict(record, ending={"kind": "disconnect", "detail": "reset"})
    assert {"HTP012", "LIF006"} <= set(codes(cut, head))
    # a client that stops once it has the terminal event (as codex does) has seen the whole stream: nothing to say
    assert codes(dict(record), TEXT) == []
    # left before any answer
    before = dict(record, status=None, headers=[])
    assert [f.message for f in lint_exchange(before, [b""]).findings] == [
        "reading stopped after 0 bytes, before the response headers: the client disconnected"]
    # a proxy or a probe stopped by its operator: the exchange to check did not finish, the stream's verdict stands
    stopped = dict(record, ending={"kind": "interrupted", "detail": "the proxy was stopped"})
    assert codes(stopped, head) == ["LIF006", "SSE004"]  # SSE004: the unfinished last event


def test_real_clients_requests_are_valid() -> None:
    # codex-style: typed message items (EasyInputMessage and InputMessage overlap: a oneOf would reject them),
    # reasoning items sent back, hosted and custom tools, include, store false, client fields the API ignores.
    codex = {"model": "gpt-5-codex", "instructions": "x", "stream": True, "store": False,
             "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
                       {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"},
                       {"type": "function_call", "call_id": "c", "name": "shell", "arguments": "{}"},
                       {"type": "function_call_output", "call_id": "c", "output": "ok"}],
             "tools": [{"type": "function", "name": "shell", "description": "d", "strict": False,
                        "parameters": {"type": "object", "properties": {}}},
                       {"type": "local_shell"}, {"type": "web_search"}],
             "tool_choice": "auto", "parallel_tool_calls": False, "reasoning": {"effort": "medium", "summary": "auto"},
             "include": ["reasoning.encrypted_content"], "prompt_cache_key": "k", "client_metadata": {"x": "y"}}
    chat = {"model": "m", "stream": True, "stream_options": {"include_usage": True}, "top_k": 40,
            "messages": [{"role": "system", "content": "x"}, {"role": "user", "content": "hi"},
                         {"role": "assistant", "content": None, "reasoning_content": "think",
                          "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
                         {"role": "tool", "tool_call_id": "c1", "content": "ok"}]}
    schemas = load_schema_set("openai")
    assert schemas.validate_request("responses", codex) == []
    assert schemas.validate_request("chat", chat) == []


def test_a_server_may_take_what_only_openais_policy_refuses() -> None:
    # max_output_tokens below OpenAI's minimum of 16: OpenAI refuses it (a refusal is right), llama-server takes
    # it (not an invalid request accepted); a wrong JSON type accepted is.
    small = {**VALID, "max_output_tokens": 5}
    assert codes(meta(small), error("Invalid 'max_output_tokens'", "max_output_tokens")) == ["HTP021"]
    assert codes(meta(small, status=200, content_type="text/event-stream"), TEXT) == []
    assert codes(meta({**VALID, "max_output_tokens": "5"}, status=200, content_type="text/event-stream"), TEXT) == \
        ["HTP005"]


def test_a_refusal_is_right_for_a_policy_bound_only_when_the_error_names_it() -> None:
    small = {**VALID, "max_output_tokens": 5}
    assert codes(meta(small), error("Expected a value >= 16", "max_output_tokens")) == ["HTP021"]
    assert codes(meta(small), error("integer below minimum value for 'max_output_tokens'")) == ["HTP021"]
    # the same request refused for something else: the bound is OpenAI's policy, not the reason here
    assert codes(meta(small), error("The model 'm' does not exist", "model")) == ["HTP001"]


def test_a_refused_content_part_is_the_feature() -> None:
    """An image in a message, to a model without image input: vLLM answers 400 "tiny-qwen3-scripted is not a
    multimodal model" (captures/vllm/image_input.answer), which names the part by its kind of input."""
    image = {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="}
    request = {**VALID, "input": [{"type": "message", "role": "user",
                                   "content": [{"type": "input_text", "text": "What is it?"}, image]}]}
    assert refused_feature(RESPONSES, request, {"message": "m is not a multimodal model"}) == \
        "content part type 'input_image'"
    assert refused_feature(RESPONSES, request, {"message": "input_image parts are not supported"}) == \
        "content part type 'input_image'"
    text_only = {**VALID, "input": [{"type": "message", "role": "user", "content": [{"type": "input_text",
                                                                                       "text": "Hi"}]}]}
    assert refused_feature(RESPONSES, text_only, {"message": "m is not a multimodal model"}) is None
