"""checker.schemas and the generated schemas/ (docs/spec.md §2, §3)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from checker.schemas import SCHEMA_SETS, SchemaSet, SchemaViolation, load_schema_set

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "schemas"
REFERENCE = ROOT / "reference" / "openai-openapi.json"
LLAMA = ROOT / "captures" / "llama.cpp"

OPENAI = load_schema_set("openai")
OPEN_RESPONSES = load_schema_set("open-responses")


# -- example events, built from the required lists of OpenAPI 2.3.0 --------------

RESP_ID = "resp_1"
MSG = {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
       "content": [{"type": "output_text", "text": "It is 10:00 in Tokyo.", "annotations": [], "logprobs": []}]}
REASONING = {"id": "rs_1", "type": "reasoning", "summary": [{"type": "summary_text", "text": "Look it up."}],
             "content": [{"type": "reasoning_text", "text": "The user wants the time."}],
             "encrypted_content": None, "status": "completed"}
CALL = {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "get_time",
        "arguments": "{\"city\":\"Tokyo\"}", "status": "completed"}
USAGE = {"input_tokens": 275, "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
         "output_tokens": 43, "output_tokens_details": {"reasoning_tokens": 9}, "total_tokens": 318}


def response(status: str = "completed", output: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    return {"id": RESP_ID, "object": "response", "created_at": 1796021258, "status": status, "error": None,
            "incomplete_details": None, "instructions": None, "model": "gpt-5", "tools": [], "output": output or [],
            "parallel_tool_calls": True, "metadata": {}, "tool_choice": "auto", "temperature": 1.0, "top_p": 1.0,
            **extra}


def or_response(status: str = "completed", output: list[dict[str, Any]] | None = None, **extra: Any
                ) -> dict[str, Any]:
    """A response snapshot with everything Open Responses' ResponseResource requires."""
    fields: dict[str, Any] = {
        "completed_at": 1796021260 if status == "completed" else None, "previous_response_id": None,
        "truncation": "disabled", "text": {"format": {"type": "text"}}, "presence_penalty": 0.0,
        "frequency_penalty": 0.0, "top_logprobs": 0, "reasoning": None, "user": None,
        "usage": USAGE if status == "completed" else None, "max_output_tokens": None, "max_tool_calls": None,
        "store": False, "background": False, "service_tier": "default", "safety_identifier": None,
        "prompt_cache_key": None}
    return response(status, output, **(fields | extra))


def in_progress(item: dict[str, Any]) -> dict[str, Any]:
    item = copy.deepcopy(item)
    item["status"] = "in_progress"
    if item["type"] == "message":
        item["content"] = []
    elif item["type"] == "function_call":
        item["arguments"] = ""
    return item


def stream(make_response=response) -> list[dict[str, Any]]:  # type: ignore[no-untyped-def]
    """A realistic stream: reasoning (text and summary), a message, a refusal, a function call."""
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": make_response("in_progress")},
        {"type": "response.queued", "response": make_response("queued")},
        {"type": "response.in_progress", "response": make_response("in_progress")},
        {"type": "response.output_item.added", "output_index": 0, "item": in_progress(REASONING) | {
            "summary": [], "content": []}},
        {"type": "response.content_part.added", "item_id": "rs_1", "output_index": 0, "content_index": 0,
         "part": {"type": "reasoning_text", "text": ""}},
        {"type": "response.reasoning_text.delta", "item_id": "rs_1", "output_index": 0, "content_index": 0,
         "delta": "The user wants the time."},
        {"type": "response.reasoning_text.done", "item_id": "rs_1", "output_index": 0, "content_index": 0,
         "text": "The user wants the time."},
        {"type": "response.content_part.done", "item_id": "rs_1", "output_index": 0, "content_index": 0,
         "part": {"type": "reasoning_text", "text": "The user wants the time."}},
        {"type": "response.reasoning_summary_part.added", "item_id": "rs_1", "output_index": 0,
         "summary_index": 0, "part": {"type": "summary_text", "text": ""}},
        {"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "output_index": 0,
         "summary_index": 0, "delta": "Look it up."},
        {"type": "response.reasoning_summary_text.done", "item_id": "rs_1", "output_index": 0,
         "summary_index": 0, "text": "Look it up."},
        {"type": "response.reasoning_summary_part.done", "item_id": "rs_1", "output_index": 0,
         "summary_index": 0, "part": {"type": "summary_text", "text": "Look it up."}},
        {"type": "response.output_item.done", "output_index": 0, "item": REASONING},
        {"type": "response.output_item.added", "output_index": 1, "item": in_progress(MSG)},
        {"type": "response.content_part.added", "item_id": "msg_1", "output_index": 1, "content_index": 0,
         "part": {"type": "output_text", "text": "", "annotations": [], "logprobs": []}},
        {"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 1, "content_index": 0,
         "delta": "It is 10:00 in Tokyo.", "logprobs": []},
        {"type": "response.output_text.done", "item_id": "msg_1", "output_index": 1, "content_index": 0,
         "text": "It is 10:00 in Tokyo.", "logprobs": []},
        {"type": "response.content_part.done", "item_id": "msg_1", "output_index": 1, "content_index": 0,
         "part": MSG["content"][0]},
        {"type": "response.content_part.added", "item_id": "msg_1", "output_index": 1, "content_index": 1,
         "part": {"type": "refusal", "refusal": ""}},
        {"type": "response.refusal.delta", "item_id": "msg_1", "output_index": 1, "content_index": 1,
         "delta": "No."},
        {"type": "response.refusal.done", "item_id": "msg_1", "output_index": 1, "content_index": 1,
         "refusal": "No."},
        {"type": "response.output_item.done", "output_index": 1, "item": MSG},
        {"type": "response.output_item.added", "output_index": 2, "item": in_progress(CALL)},
        {"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 2,
         "delta": CALL["arguments"]},
        {"type": "response.function_call_arguments.done", "item_id": "fc_1", "output_index": 2,
         "name": "get_time", "arguments": CALL["arguments"]},
        {"type": "response.output_item.done", "output_index": 2, "item": CALL},
        {"type": "response.completed", "response": make_response("completed", [REASONING, MSG, CALL],
                                                                 usage=USAGE)},
    ]
    return [{**event, "sequence_number": n} for n, event in enumerate(events, start=1)]


TERMINALS = [
    {"type": "response.failed", "sequence_number": 9,
     "response": response("failed", error={"code": "server_error", "message": "boom"})},
    {"type": "response.incomplete", "sequence_number": 9,
     "response": response("incomplete", incomplete_details={"reason": "max_output_tokens"})},
]
FLAT_ERROR = {"type": "error", "code": "server_error", "message": "boom", "param": None, "sequence_number": 3}
NESTED_ERROR = {"type": "error", "sequence_number": 3,
                "error": {"type": "server_error", "code": "server_error", "message": "boom", "param": None}}


def at(events: list[dict[str, Any]], etype: str) -> dict[str, Any]:
    return copy.deepcopy(next(e for e in events if e["type"] == etype))


def triples(violations: list[SchemaViolation]) -> set[tuple[str, str, str | None]]:
    return {(v.pointer, v.keyword, v.missing) for v in violations}


# -- the generated files ----------------------------------------------------------


def test_committed_schemas_equal_a_fresh_generation(tmp_path: Path) -> None:
    out = tmp_path / "schemas"
    subprocess.run([sys.executable, str(ROOT / "tools" / "gen_schemas.py"), "--reference", str(REFERENCE),
                    "--out", str(out)], check=True, capture_output=True)
    fresh = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    committed = {p.relative_to(SCHEMAS).as_posix(): p.read_bytes() for p in SCHEMAS.rglob("*") if p.is_file()
                 and p.relative_to(SCHEMAS).parts[0] not in OTHER_GENERATORS}
    assert sorted(fresh) == sorted(committed), "run: python tools/gen_schemas.py"
    changed = [rel for rel in fresh if fresh[rel] != committed[rel]]
    assert not changed, f"run: python tools/gen_schemas.py (differs: {changed[:5]})"


# Schema sets written by a generator of their own (folder -> the script).
OTHER_GENERATORS = {"anthropic": "tools/gen_anthropic_schemas.py"}


def test_committed_anthropic_schemas_equal_a_fresh_generation(tmp_path: Path) -> None:
    pytest.importorskip("anthropic")
    out = tmp_path / "anthropic"
    subprocess.run([sys.executable, str(ROOT / OTHER_GENERATORS["anthropic"]), "--out", str(out)], check=True,
                   capture_output=True)
    fresh = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    folder = SCHEMAS / "anthropic"
    committed = {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    assert sorted(fresh) == sorted(committed), "run: python tools/gen_anthropic_schemas.py"
    changed = [rel for rel in fresh if fresh[rel] != committed[rel]]
    assert not changed, f"run: python tools/gen_anthropic_schemas.py (differs: {changed[:5]})"


def test_the_anthropic_set_knows_the_messages_events() -> None:
    anthropic = load_schema_set("anthropic")
    assert anthropic.known_event_types() == {"message_start", "message_delta", "message_stop", "content_block_start",
                                             "content_block_delta", "content_block_stop", "ping", "error"}
    delta = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta"}}
    assert triples(anthropic.validate_event(delta)) == {("/delta/text", "required", "text")}
    start = {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
                                                  "content": [], "model": "m", "stop_reason": None,
                                                  "stop_sequence": None,
                                                  "usage": {"input_tokens": 3, "output_tokens": 1}}}
    assert anthropic.validate_event(start) == []
    # The SDK's models accept fields they do not declare: a server's extension is no violation.
    assert anthropic.validate_event({**start, "x_vendor": 1, "message": {**start["message"], "timings": {}}}) == []


def _all_documents() -> list[tuple[Path, dict[str, Any]]]:
    return [(p, json.loads(p.read_text(encoding="utf-8"))) for p in sorted(SCHEMAS.rglob("*.json"))]


def test_every_file_is_a_draft_2020_12_schema_with_its_own_id() -> None:
    import jsonschema

    docs = _all_documents()
    assert len(docs) > 100
    for path, doc in docs:
        jsonschema.Draft202012Validator.check_schema(doc)
        assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert doc["$id"] == "https://sse-check.dev/schemas/" + path.relative_to(SCHEMAS).as_posix()


def _keys(node: Any, in_properties: bool = False) -> set[str]:
    found: set[str] = set()
    if isinstance(node, dict):
        for key, sub in node.items():
            if not in_properties:
                found.add(key)
            if key not in ("enum", "const", "required", "default", "examples"):
                found |= _keys(sub, key in ("properties", "patternProperties", "$defs"))
    elif isinstance(node, list):
        for sub in node:
            found |= _keys(sub)
    return found


def test_openapi_only_keywords_are_translated_away() -> None:
    for path, doc in _all_documents():
        keys = _keys(doc)
        leftovers = {k for k in keys if k.startswith("x-")} | keys & {
            "nullable", "discriminator", "example", "$recursiveRef", "$recursiveAnchor"}
        assert not leftovers, f"{path}: {leftovers}"
        refs = json.dumps(doc)
        assert "#/components/" not in refs, path


def test_58_event_types_per_set_named_after_the_type() -> None:
    events = sorted(p.stem for p in (SCHEMAS / "openai" / "events").glob("*.json"))
    assert len(events) == 58
    assert OPENAI.known_event_types() == frozenset(events)
    for name in ("response.created", "response.output_text.delta", "response.function_call_arguments.done",
                 "response.reasoning_summary_part.added", "response.completed", "error"):
        assert name in OPENAI.known_event_types()
        doc = json.loads((SCHEMAS / "openai" / "events" / f"{name}.json").read_text())
        assert doc["properties"]["type"]["enum"] == [name]
    assert "x" not in OPENAI.known_event_types()


def test_the_open_responses_set_is_its_own_description() -> None:
    # The 24 members of the text/event-stream answer of POST /responses in the Open Responses description:
    # its own reasoning event names, none of OpenAI's hosted-tool, audio or reasoning_text events.
    spec = json.loads((ROOT / "reference" / "open-responses-openapi.json").read_text())
    members = spec["paths"]["/responses"]["post"]["responses"]["200"]["content"]["text/event-stream"]["schema"]
    assert len(OPEN_RESPONSES.known_event_types()) == len(members["oneOf"]) == 24
    assert {"response.reasoning.delta", "response.reasoning.done", "response.reasoning_summary_text.delta",
            "error"} <= OPEN_RESPONSES.known_event_types()
    assert not {"response.reasoning_text.delta", "response.web_search_call.searching", "response.audio.delta"} \
        & OPEN_RESPONSES.known_event_types()
    for etype in OPEN_RESPONSES.known_event_types():
        doc = json.loads((SCHEMAS / "open-responses" / "events" / f"{etype}.json").read_text())
        assert doc["properties"]["type"]["enum"] == [etype] and "openai" not in json.dumps(doc)
    assert OPEN_RESPONSES.known_object_names() == {p.stem for p in (SCHEMAS / "open-responses" / "objects").iterdir()}


def test_the_reference_additional_properties_are_kept_open() -> None:
    # Extension fields (llama.cpp's `timings`, fields OpenAI adds later) must not be violations.
    for rel in ["openai/objects/Response.json", "openai/objects/OutputMessage.json",
                "openai/objects/ReasoningItem.json", "openai/objects/FunctionToolCall.json",
                "openai/objects/OutputTextContent.json", "openai/objects/ResponseUsage.json",
                *(f"openai/events/{t}.json" for t in OPENAI.known_event_types())]:
        assert "additionalProperties" not in json.loads((SCHEMAS / rel).read_text()), rel


def test_every_event_schema_compiles_in_both_sets() -> None:
    for schema_set in (SchemaSet("openai"), SchemaSet("open-responses")):
        for etype in schema_set.known_event_types():
            assert isinstance(schema_set.validate_event({"type": etype}), list)


# -- the API --------------------------------------------------------------------


def test_load_schema_set_is_cached_and_rejects_unknown_names() -> None:
    assert load_schema_set("openai") is OPENAI
    assert set(SCHEMA_SETS) == {"openai", "open-responses", "chat", "anthropic"}
    with pytest.raises(ValueError, match="unknown schema set"):
        load_schema_set("codex")


def test_schema_violation_is_a_frozen_record() -> None:
    violation = SchemaViolation("/a", "type", "1 is not of type string", None)
    with pytest.raises(AttributeError):
        violation.pointer = "/b"  # type: ignore[misc]


@pytest.mark.parametrize("event", stream() + TERMINALS + [FLAT_ERROR], ids=lambda e: e["type"])
def test_valid_events_pass_under_openai(event: dict[str, Any]) -> None:
    assert OPENAI.validate_event(event) == []


def or_stream() -> list[dict[str, Any]]:
    """stream() as Open Responses names and shapes it: response.reasoning.* events, encrypted_content a string
    or absent (ReasoningBody does not take null), no obfuscation needed."""
    renamed = {"response.reasoning_text.delta": "response.reasoning.delta",
               "response.reasoning_text.done": "response.reasoning.done"}
    events = []
    for event in stream(or_response):
        event = json.loads(json.dumps(event).replace('"encrypted_content": null, ', ""))
        event["type"] = renamed.get(event["type"], event["type"])
        events.append(event)
    return events


@pytest.mark.parametrize("event", or_stream(), ids=lambda e: e["type"])
def test_valid_events_pass_under_open_responses(event: dict[str, Any]) -> None:
    assert OPEN_RESPONSES.validate_event(event) == []


def test_extension_fields_are_allowed() -> None:
    completed = at(stream(), "response.completed")
    completed["timings"] = {"cache_n": 1, "prompt_n": 274}
    completed["response"]["vendor_field"] = {"anything": True}
    completed["response"]["output"][1]["x-trace"] = "abc"
    assert OPENAI.validate_event(completed) == []


def test_missing_sequence_number() -> None:
    event = at(stream(), "response.output_text.delta")
    del event["sequence_number"]
    assert OPENAI.validate_event(event) == [
        SchemaViolation("/sequence_number", "required", "missing required property 'sequence_number'",
                        "sequence_number")]


def test_string_output_index() -> None:
    event = at(stream(), "response.output_text.delta")
    event["output_index"] = "1"
    assert OPENAI.validate_event(event) == [
        SchemaViolation("/output_index", "type", "'1' is not of type integer", None, "string")]


def test_usage_with_a_string_input_tokens() -> None:
    event = at(stream(), "response.completed")
    event["response"]["usage"]["input_tokens"] = "275"
    violations = OPENAI.validate_event(event)
    assert triples(violations) == {("/response/usage/input_tokens", "type", None)}
    assert violations[0].message == "'275' is not of type integer"


def test_function_call_item_without_call_id_reports_the_branch_not_the_union() -> None:
    event = at(stream(), "response.output_item.added")
    event["item"] = in_progress(CALL)
    del event["item"]["call_id"]
    assert OPENAI.validate_event(event) == [
        SchemaViolation("/item/call_id", "required", "missing required property 'call_id'", "call_id")]


def test_every_violation_is_reported_not_only_the_first() -> None:
    event = {"type": "response.function_call_arguments.done", "item_id": 7, "arguments": None}
    assert triples(OPENAI.validate_event(event)) == {
        ("/sequence_number", "required", "sequence_number"), ("/output_index", "required", "output_index"),
        ("/item_id", "type", None), ("/arguments", "type", None)}


def test_union_failures_name_the_field() -> None:
    added = at(stream(), "response.output_item.added")
    unknown = OPENAI.validate_event({**added, "item": {"type": "telepathy", "id": "x"}})
    assert triples(unknown) == {("/item/type", "enum", None)}
    assert unknown[0].message.startswith("unknown type 'telepathy'; expected one of 'message'")
    assert triples(OPENAI.validate_event({**added, "item": {"id": "x"}})) == {("/item/type", "required", "type")}
    assert OPENAI.validate_event({**added, "item": 5}) == [
        SchemaViolation("/item", "type", "5 is not of type object", None, "integer")]
    # Nested: an output_text part without annotations inside a message inside response.output.
    completed = at(stream(), "response.completed")
    del completed["response"]["output"][1]["content"][0]["annotations"]
    completed["response"]["output"][0]["summary"][0]["text"] = 3
    assert triples(OPENAI.validate_event(completed)) == {
        ("/response/output/1/content/0/annotations", "required", "annotations"),
        ("/response/output/0/summary/0/text", "type", None)}
    # A nullable union: the non-null branch's errors, or both types when neither fits.
    failed = copy.deepcopy(TERMINALS[0])
    failed["response"]["error"] = {"code": "server_error"}
    assert triples(OPENAI.validate_event(failed)) == {("/response/error/message", "required", "message")}
    failed["response"]["error"] = "boom"
    assert OPENAI.validate_event(failed) == [
        SchemaViolation("/response/error", "type", "'boom' is not of type object or null", None, "string")]


def test_enum_and_const_messages() -> None:
    added = at(stream(), "response.output_item.added")
    added["item"]["status"] = "thinking"
    violations = OPENAI.validate_event(added)
    assert triples(violations) == {("/item/status", "enum", None)}
    assert violations[0].message == "'thinking' is not one of 'in_progress', 'completed', 'incomplete'"


def test_unknown_or_missing_type_gives_no_violations() -> None:
    assert OPENAI.validate_event({"type": "x"}) == []
    assert OPENAI.validate_event({"type": "acme:thing", "anything": 1}) == []
    assert OPENAI.validate_event({"delta": "no type"}) == []
    assert OPENAI.validate_event({"type": ["response.completed"]}) == []
    assert OPENAI.validate_event({"type": None}) == []


def test_error_event_shapes_differ_between_the_sets() -> None:
    # openai: the description's flat form and the nested form api.openai.com really sends (the overlay in
    # tools/gen_schemas.py); each form complete on its own.
    assert OPENAI.validate_event(FLAT_ERROR) == []
    assert OPENAI.validate_event(NESTED_ERROR) == []
    assert triples(OPENAI.validate_event({"type": "error", "sequence_number": 3, "message": "boom"})) == {
        ("/code", "required", "code"), ("/param", "required", "param")}
    no_message = copy.deepcopy(NESTED_ERROR)
    del no_message["error"]["message"]
    assert triples(OPENAI.validate_event(no_message)) == {("/error/message", "required", "message")}
    assert OPEN_RESPONSES.validate_event(NESTED_ERROR) == []
    assert ("/error", "required", "error") in triples(OPEN_RESPONSES.validate_event(FLAT_ERROR))
    bad = copy.deepcopy(NESTED_ERROR)
    del bad["error"]["type"]
    assert triples(OPEN_RESPONSES.validate_event(bad)) == {("/error/type", "required", "type")}


def test_logprobs_required_by_openai_optional_in_open_responses() -> None:
    for etype in ("response.output_text.delta", "response.output_text.done"):
        event = at(stream(), etype)
        del event["logprobs"]
        assert triples(OPENAI.validate_event(event)) == {("/logprobs", "required", "logprobs")}
        assert OPEN_RESPONSES.validate_event(event) == []
        event["logprobs"] = "none"
        assert triples(OPEN_RESPONSES.validate_event(event)) == {("/logprobs", "type", None)}


def test_open_responses_requires_the_response_resource() -> None:
    created = at(stream(), "response.created")  # an OpenAI Response: valid there, too thin here
    assert OPENAI.validate_event(created) == []
    missing = {v.missing for v in OPEN_RESPONSES.validate_event(created)}
    assert {"completed_at", "presence_penalty", "frequency_penalty", "truncation", "store", "service_tier",
            "background", "top_logprobs", "usage"} <= missing
    assert "user" not in missing  # ResponseResource does not require it (issue 14)
    ok = at(stream(or_response), "response.created")
    assert OPEN_RESPONSES.validate_event(ok) == []
    ok["response"]["created_at"] = 1796021258.5
    assert triples(OPEN_RESPONSES.validate_event(ok)) == {("/response/created_at", "type", None)}


def test_validate_object() -> None:
    assert OPENAI.validate_object("Response", response()) == []
    assert OPENAI.validate_object("FunctionToolCall", CALL) == []
    assert OPENAI.validate_object("OutputMessage", MSG) == []
    assert OPENAI.validate_object("ResponseUsage", {"input_tokens": 1}) == [
        SchemaViolation(f"/{name}", "required", f"missing required property {name!r}", name)
        for name in ("input_tokens_details", "output_tokens", "output_tokens_details", "total_tokens")]
    assert triples(OPENAI.validate_object("OutputItem", {"type": "reasoning", "id": "rs_1"})) == {
        ("/summary", "required", "summary")}
    assert {"Response", "OutputItem", "ReasoningItem", "ResponseUsage"} <= OPENAI.known_object_names()
    # In open-responses, "Response" is the stricter ResponseResource.
    assert OPEN_RESPONSES.validate_object("Response", response())
    assert OPEN_RESPONSES.validate_object("Response", or_response()) == []
    with pytest.raises(ValueError, match="no object schema"):
        OPENAI.validate_object("Nope", {})


# -- backends and the memo ---------------------------------------------------------

INVALID = [
    {"type": "response.output_text.delta", "delta": " hi", "item_id": "msg_1"},
    {"type": "response.output_text.delta", "delta": 1, "item_id": "msg_1", "output_index": "0"},
    {"type": "response.output_text.delta", "delta": "x", "item_id": "msg_1", "output_index": 1.5,
     "content_index": True, "sequence_number": 2.0, "logprobs": [{"token": "x"}]},
    {"type": "response.output_item.added", "output_index": 0, "sequence_number": 1,
     "item": {"type": "function_call", "id": "fc_1", "name": "f", "arguments": ""}},
    {"type": "response.output_item.added", "output_index": 0, "sequence_number": 1, "item": {"type": "nope"}},
    {"type": "response.created", "response": {"id": "resp_1", "object": "response", "status": "in_progress"}},
    {"type": "response.failed", "sequence_number": 1, "response": response("failed", error="boom")},
    NESTED_ERROR,
]


@pytest.mark.parametrize("event", INVALID, ids=lambda e: e["type"])
def test_the_python_fallback_agrees_with_jsonschema_rs(event: dict[str, Any]) -> None:
    python = SchemaSet("openai", backend="python", walk=False)
    assert set(python.validate_event(event)) == set(OPENAI.validate_event(event))
    assert python.validate_event(at(stream() + TERMINALS + [FLAT_ERROR], event["type"])) == []


def test_memoised_violations_equal_fresh_ones() -> None:
    memo = SchemaSet("openai")
    plain = SchemaSet("openai")
    variants = [
        {"type": "response.output_text.delta", "delta": " hi", "item_id": "msg_1"},
        {"type": "response.output_text.delta", "delta": " ho", "item_id": "msg_2"},
        {"type": "response.output_text.delta", "delta": " hi", "item_id": "msg_1", "output_index": "0"},
        {"type": "response.output_text.delta", "delta": " hi", "item_id": "msg_1", "output_index": 0},
        {"type": "response.output_text.delta", "delta": " hi", "item_id": "msg_1", "output_index": 1.0},
        {"type": "response.output_text.delta", "delta": " hi", "item_id": "msg_1", "output_index": 1.5},
        {"type": "response.output_text.delta", "delta": " hi", "item_id": "msg_1", "output_index": True},
        {"type": "response.output_text.delta", "delta": " hi", "item_id": None, "timings": {"a": 1}},
        {"type": "response.output_text.delta", "delta": " hi", "item_id": "m", "logprobs": [{"token": 1}]},
    ]
    for _ in range(3):
        for event in variants:
            found = memo.validate_event(event)
            plain._plans.clear()  # no plan: always the full walk
            assert found == plain.validate_event(event), event
            found.append(SchemaViolation("", "x", "caller mutates its list"))  # must not reach the memo
    assert memo._memo  # the flat variants were memoised


# -- real captures -----------------------------------------------------------------


def _events(path: Path) -> list[dict[str, Any]]:
    out = []
    for line in path.read_bytes().splitlines():
        if line.startswith(b"data:") and line[5:].strip() != b"[DONE]":
            out.append(orjson.loads(line[5:]))
    return out


LLAMA_STREAMS = sorted(p for p in LLAMA.glob("*.sse") if (b"event: response." in p.read_bytes()))


def test_llama_cpp_captures_are_present() -> None:
    assert len(LLAMA_STREAMS) >= 8
    for path in LLAMA_STREAMS:
        for sidecar in (".request.json", ".headers.txt"):
            assert path.with_suffix(sidecar).is_file()
    assert (LLAMA / "README.md").is_file()


@pytest.mark.parametrize("path", LLAMA_STREAMS, ids=lambda p: p.stem)
def test_llama_cpp_documented_deviations(path: Path) -> None:
    """docs/spec.md §4 / captures README: what this build leaves out, seen through the openai schemas."""
    seen: dict[str, set[tuple[str, str, str | None]]] = {}
    for event in _events(path):
        violations = OPENAI.validate_event(event)
        found = triples(violations)
        seen.setdefault(event["type"], set()).update(found)
        assert ("/sequence_number", "required", "sequence_number") in found, event["type"]
        if event["type"].startswith("response.output_item."):
            assert ("/output_index", "required", "output_index") in found
        if event["type"] in ("response.output_text.delta", "response.reasoning_text.delta",
                             "response.content_part.added"):
            assert ("/output_index", "required", "output_index") in found
            assert ("/content_index", "required", "content_index") in found
        if event["type"] == "response.output_text.delta":
            assert ("/logprobs", "required", "logprobs") in found
        for v in violations:
            assert v.message and "\n" not in v.message
    created = seen["response.created"]
    for name in ("created_at", "output", "model", "tools"):
        assert (f"/response/{name}", "required", name) in created
    completed = seen["response.completed"]
    assert ("/response/output", "required", "output") not in completed  # the final response has output
    assert ("/response/tools", "required", "tools") in completed
    # The top-level `timings` extension is not a violation.
    assert not any(p.startswith("/timings") for p, _, _ in completed)


def test_llama_cpp_text_part_lacks_annotations() -> None:
    added = next(e for e in _events(LLAMA / "plain_text.sse") if e["type"] == "response.content_part.added")
    found = triples(OPENAI.validate_event(added))
    assert ("/part/annotations", "required", "annotations") in found
    # A part's logprobs is optional in both SDKs' types (the overlay in tools/gen_schemas.py).
    assert ("/part/logprobs", "required", "logprobs") not in found


# -- speed ------------------------------------------------------------------------


def test_a_valid_delta_is_cheap() -> None:
    """The engine validates every event: keep the valid path well under 5 µs (checked loosely here)."""
    event = at(stream(), "response.output_text.delta")
    OPENAI.validate_event(event)
    n = 20_000
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(n):
            OPENAI.validate_event(event)
        best = min(best, (time.perf_counter() - start) / n)
    assert best < 25e-6, f"{best * 1e6:.2f} µs per event"


# -- split validators: shared object schemas ---------------------------------------------


def _one_compiled_schema(schema_set: SchemaSet, event: dict[str, Any]) -> list[SchemaViolation]:
    """The violations of ``event`` under its whole event schema compiled as one (no shared parts)."""
    from checker.schema_errors import from_rust, violations
    from checker.schema_files import BASE_URI, compile_rust, document

    validator = compile_rust(document(f"{BASE_URI}{schema_set.name}/events/{event['type']}.json"))
    return [] if validator.is_valid(event) else violations(from_rust(validator.iter_errors(event)))


SPLIT_CASES = [
    *INVALID,
    *(event for path in LLAMA.glob("*.sse") for event in _events(path) if isinstance(event.get("type"), str)
      and event["type"].startswith("response.") and ("response" in event or "item" in event or "part" in event)),
    {"type": "response.created", "sequence_number": 0, "response": "resp_1"},
    {"type": "response.completed", "sequence_number": 9, "response": None},
    {"type": "response.output_item.done", "output_index": 0, "sequence_number": 1, "item": []},
    {"type": "response.output_item.done", "output_index": "0", "item": {"type": "function_call", "id": 3}},
    {"type": "response.content_part.added", "item_id": "m", "output_index": 0, "content_index": 0,
     "sequence_number": 1, "part": {"type": "output_text"}},
]


@pytest.mark.parametrize("name", SCHEMA_SETS)
def test_split_validators_report_exactly_what_one_compiled_schema_reports(name: str) -> None:
    schemas = SchemaSet(name, walk=False)  # every event compiled: the split validators are what is tested
    for event in SPLIT_CASES:
        if event["type"] not in schemas.known_event_types():
            continue
        expected = _one_compiled_schema(schemas, event)
        assert sorted(schemas.validate_event(event), key=repr) == sorted(expected, key=repr), event
        assert schemas._event_validators[event["type"]].is_valid(event) is (expected == []), event


def test_the_response_schema_is_compiled_once_for_every_event_that_carries_it() -> None:
    schemas = SchemaSet("openai", walk=False)
    for etype in ("response.created", "response.in_progress", "response.completed", "response.failed"):
        schemas.validate_event({"type": etype})
    shared = {id(dict(schemas._event_validators[t].parts)["response"]) for t in schemas._event_validators}
    assert len(shared) == 1
    assert schemas.validate_object("Response", {}) and len(schemas._shared) >= 1
    assert dict(schemas._event_validators["response.completed"].parts)["response"] is \
        schemas._object_validators["Response"]
