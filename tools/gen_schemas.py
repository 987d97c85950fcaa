#!/usr/bin/env python3
"""Generate the JSON Schemas in ``schemas/`` from OpenAI's OpenAPI description.

Dev-time only: the checker never reads the OpenAPI file; it ships the files
this script writes (``checker/schemas.py`` loads them as package data).

    python tools/gen_schemas.py                      # reference/*-openapi.json → schemas/
    python tools/gen_schemas.py --reference X --out DIR

Output (Draft 2020-12, one schema per file, pretty-printed with sorted keys so
that a re-run gives no diff; ``tests/test_schemas.py`` re-runs it and compares):

``schemas/openai/events/<event type>.json``
    One per member of ``components.schemas.ResponseStreamEvent`` (58 in OpenAPI
    2.3.0), named after the event's ``type`` (``response.output_text.delta``).
``schemas/openai/objects/<Component>.json``
    One per component those events reference, transitively (``Response``,
    ``OutputMessage``, ``ReasoningItem``, ``FunctionToolCall``,
    ``OutputTextContent``, annotations, ``ResponseUsage``, ``ResponseError``, …).
``schemas/openai/objects/ListModelsResponse.json``, ``schemas/openai/objects/Model.json``
    The answer of ``GET /v1/models`` (``ANSWER_ROOTS``) and the ``Model`` it lists, for the probe's models
    flow; ``Model`` is typed as an object (``TYPED_OBJECTS``: the description gives it properties but no type).
``schemas/openai/requests/<api>.json`` and ``schemas/openai/requests/<Component>.json``
    The request bodies of ``POST /v1/responses`` (``responses.json``: ``CreateResponse``) and
    ``POST /v1/chat/completions`` (``chat.json``: ``CreateChatCompletionRequest``), with their own copy of
    every component they reference, read as a server reads a request: a property that is required but
    nullable may be left out (OpenAI's description marks ``strict`` of a function tool, for one, required
    because the same component describes the response's echo; the API and the SDKs send requests
    without it), so ``required`` keeps only the properties that cannot be null; and a ``oneOf`` is an
    ``anyOf`` (its members overlap: a message input item matches two of them).
``schemas/chat/events/chat.completion.chunk.json`` and ``schemas/chat/objects/<Component>.json``
    The Chat Completions set: one event schema, the streamed chunk (``CreateChatCompletionStreamResponse``,
    named after its ``object``), and the components it and the non-streamed answer
    (``CreateChatCompletionResponse``) reference. The vendor reasoning fields ``reasoning_content`` and
    ``reasoning`` (llama.cpp, vLLM, DeepSeek) are declared on the delta and on the message as nullable
    strings (``CHAT_EXTENSIONS``): a wrong type is a schema finding, their presence a rule that profiles
    weigh (checker/dialects/chat/rules.py).
``schemas/open-responses/{events,objects,requests}/…``
    The Open Responses set, generated the same way from the Open Responses
    description (``reference/open-responses-openapi.json``) alone: one event
    file per member of the ``text/event-stream`` answer of ``POST /responses``
    (its own names, ``response.reasoning.delta`` among them), the components
    they reference (``ResponseResource``, with ``Response`` as its alias), and
    ``requests/responses.json`` (``CreateResponseBody``).

Translation of OpenAPI 3.x into JSON Schema 2020-12:
  * ``#/components/schemas/X`` refs become relative file refs (``X.json``,
    ``../objects/X.json``; a self reference becomes ``#``);
  * ``nullable: true`` (OpenAPI 3.0) adds ``null`` to ``type``/``enum``, or
    wraps the schema in ``anyOf [schema, {type: null}]`` when it has no type;
  * ``$recursiveRef: "#"`` (2019-09) becomes ``$ref: "#"``; ``$recursiveAnchor``
    is dropped;
  * ``example`` becomes ``examples: [example]``;
  * ``discriminator``, ``xml``, ``externalDocs`` and every ``x-*`` key are
    dropped; property *names* are never touched, even one starting with ``x-``;
  * ``additionalProperties`` is kept exactly as the reference has it (never
    added), so servers may carry extension fields (llama.cpp's ``timings``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DEFAULT_REFERENCE = REPO / "reference" / "openai-openapi.json"
DEFAULT_OR_REFERENCE = REPO / "reference" / "open-responses-openapi.json"
DEFAULT_OUT = REPO / "schemas"

BASE_URI = "https://sse-check.dev/schemas/"
DRAFT = "https://json-schema.org/draft/2020-12/schema"
UNION = "ResponseStreamEvent"
# Request bodies: (endpoint's API, component). Generated apart, under requests/, so that a recorded request
# can be judged (a 4xx to an invalid request is the right answer; see checker/http_checks.py).
REQUEST_ROOTS = (("responses", "CreateResponse"), ("chat", "CreateChatCompletionRequest"))
# Answers of endpoints that are no stream, generated into the openai set's objects beside the events' components:
# GET /v1/models (checker/surface/models.py judges its answer with ListModelsResponse).
ANSWER_ROOTS = ("ListModelsResponse",)
COMPONENT_PREFIX = "#/components/schemas/"
SETS = ("openai", "open-responses", "chat")

# OpenAPI-only keywords without a JSON Schema meaning (annotations or codegen hints).
DROPPED_KEYS = frozenset({"discriminator", "xml", "externalDocs", "$recursiveAnchor"})
# Keywords whose value is data, not a schema: copied verbatim.
VERBATIM_KEYS = frozenset({"enum", "const", "required", "default", "examples", "description", "title",
                           "format", "pattern", "$comment", "deprecated", "readOnly", "writeOnly"})
# Keywords whose value maps names to schemas (names are data, values are schemas).
SCHEMA_MAP_KEYS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})


class Translator:
    """Rewrites one OpenAPI component into a standalone JSON Schema document."""

    def __init__(self, files: Mapping[str, str], source: str = "OpenAI OpenAPI") -> None:
        # component name -> path relative to the set root ("objects/X.json", "events/t.json")
        self.files = files
        self.source = source  # named in each document's $comment

    def document(self, name: str, schema: Mapping[str, Any], rel_path: str, set_name: str = "openai") -> dict[str, Any]:
        doc = self.node(schema, here=rel_path, self_name=name)
        if not isinstance(doc, dict):  # a boolean schema at the top: wrap it
            doc = {"allOf": [doc]}
        doc["$schema"] = DRAFT
        doc["$id"] = f"{BASE_URI}{set_name}/{rel_path}"
        doc["$comment"] = (f"Generated by tools/gen_schemas.py from {self.source} components.schemas.{name}; "
                           "do not edit.")
        return doc

    def ref(self, target: str, here: str, self_name: str) -> str:
        if not target.startswith(COMPONENT_PREFIX):
            raise ValueError(f"unsupported $ref {target!r} (only {COMPONENT_PREFIX}… refs are expected)")
        name = target[len(COMPONENT_PREFIX):]
        if name == self_name:
            return "#"
        return relative(here, self.files[name])

    def node(self, value: Any, *, here: str, self_name: str) -> Any:
        if isinstance(value, list):
            return [self.node(v, here=here, self_name=self_name) for v in value]
        if not isinstance(value, dict):
            return value
        out: dict[str, Any] = {}
        for key, sub in value.items():
            if key.startswith("x-") or key in DROPPED_KEYS or key == "nullable":
                continue
            if key == "$ref":
                out["$ref"] = self.ref(sub, here, self_name)
            elif key == "$recursiveRef":
                if sub != "#":
                    raise ValueError(f"unsupported $recursiveRef {sub!r}")
                out["$ref"] = "#"
            elif key == "example":
                out["examples"] = [sub]
            elif key in VERBATIM_KEYS:
                out[key] = sub
            elif key in SCHEMA_MAP_KEYS:
                out[key] = {k: self.node(v, here=here, self_name=self_name) for k, v in sub.items()}
            else:
                out[key] = self.node(sub, here=here, self_name=self_name)
        if value.get("nullable") is True:
            out = nullable(out)
        return out


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """The JSON Schema spelling of OpenAPI 3.0's ``nullable: true``."""
    kind = schema.get("type")
    if isinstance(kind, str) or isinstance(kind, list):
        types = [kind] if isinstance(kind, str) else list(kind)
        if "null" not in types:
            types.append("null")
        schema = {**schema, "type": types}
        if "enum" in schema and None not in schema["enum"]:
            schema["enum"] = [*schema["enum"], None]
        return schema
    annotations: dict[str, Any] = {k: schema[k] for k in ("description", "title", "default") if k in schema}
    rest = {k: v for k, v in schema.items() if k not in annotations}
    return {**annotations, "anyOf": [rest, {"type": "null"}]}


def relative(here: str, target: str) -> str:
    """``target`` relative to the directory of ``here`` (both POSIX, relative to one root)."""
    here_parts = here.split("/")[:-1]
    target_parts = target.split("/")
    common = 0
    while common < min(len(here_parts), len(target_parts) - 1) and here_parts[common] == target_parts[common]:
        common += 1
    return "/".join([".."] * (len(here_parts) - common) + target_parts[common:])


def add_referenced(components: Mapping[str, Any], files: dict[str, str], queue: list[str], folder: str) -> None:
    """Add to ``files`` every component the ``queue``'s components reference, directly or not, as
    ``folder/NAME.json``; a reference to a component the description lacks is an error."""
    while queue:
        for ref in refs_in(components[queue.pop(0)]):
            if ref not in files:
                if ref not in components:
                    raise ValueError(f"dangling $ref to {ref!r}")
                files[ref] = f"{folder}/{ref}.json"
                queue.append(ref)


def refs_in(value: Any) -> list[str]:
    """Component names referenced anywhere in ``value`` (in document order)."""
    found: list[str] = []
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith(COMPONENT_PREFIX):
                found.append(ref[len(COMPONENT_PREFIX):])
            for key, sub in node.items():
                if key in ("enum", "const", "required", "default", "example", "examples") or key.startswith("x-"):
                    continue
                if key in SCHEMA_MAP_KEYS and isinstance(sub, dict):
                    stack.extend(sub.values())
                else:
                    stack.append(sub)
        elif isinstance(node, list):
            stack.extend(node)
    return found


def event_type_of(name: str, schema: Mapping[str, Any]) -> str:
    prop = schema.get("properties", {}).get("type", {})
    values = prop.get("enum") or ([prop["const"]] if "const" in prop else [])
    if len(values) != 1 or not isinstance(values[0], str):
        raise ValueError(f"{name}: cannot read the event type from properties.type")
    return values[0]


# -- overlays: where the real clients and OpenAI's own streams say the description is too strict ------------
#
# The 2.3.0 description is not the whole truth about what OpenAI sends and what its clients accept. Each
# overlay below loosens one field, decided from the clients' real types (openai-python 3.57.0
# src/openai/types/responses/, openai-node 7.59.0 src/resources/responses/responses.ts) *and* what
# api.openai.com really streams (captures/real-openai, recorded by public SDK test suites). A field is
# loosened only where the recordings show OpenAI doing it and openai-python's types accept it; where OpenAI
# departs from a type the clients declare strictly (an error code outside the enum, a web search source of
# type "api"), the schema stays strict and the `openai` profile reports a known deviation instead
# (checker/profiles.py). Applied to OpenAI's components before translation: the events and objects of the openai
# set; not its request schemas (a request is judged by the description) nor the Open Responses set (its own).

_PY = "openai-python 3.57.0 src/openai/types/responses/"
_NODE = "openai-node 7.59.0 src/resources/responses/responses.ts"
_REC = "captures/real-openai"


OVERLAYS: tuple[dict[str, Any], ...] = (
    {"component": "ModelResponseProperties", "field": "user", "change": "nullable",
     "source": f"{_PY}response.py `user: Optional[str]`; OpenAI sends \"user\": null in every snapshot ({_REC})"},
    {"component": "Response", "field": "usage", "change": "nullable",
     "source": f"{_PY}response.py `usage: Optional[ResponseUsage]`; codex reads usage as an Option, only from "
               f"response.completed; OpenAI sends \"usage\": null in response.created/in_progress ({_REC})"},
    {"component": "MCPTool", "field": "server_description", "change": "nullable",
     "source": f"{_PY}tool.py `server_description: Optional[str]`; OpenAI echoes null ({_REC})"},
    {"component": "ResponseFunctionCallArgumentsDoneEvent", "field": "name", "change": "optional",
     "source": f"neither {_PY}response_function_call_arguments_done_event.py nor {_NODE} "
               f"(ResponseFunctionCallArgumentsDoneEvent) has `name`; OpenAI never sends it ({_REC})"},
    {"component": "OutputTextContent", "field": "logprobs", "change": "optional",
     "source": f"{_PY}response_output_text.py `logprobs: Optional[List[Logprob]]`, {_NODE} `logprobs?:`; "
               f"OpenAI's streams of early 2025 have no logprobs ({_REC}/older-api/pydantic-openai-responses-stream-2.sse)"},
    {"component": "FunctionShellCall", "field": "environment", "change": "optional",
     "source": f"{_PY}response_function_shell_tool_call.py `environment: Optional[Environment]`; OpenAI's "
               f"shell calls of December 2025 have none ({_REC}/vercel-openai-shell-tool-1-stream1.sse)"},
)

# Fields of a hosted-tool item that only its finished form carries: at response.output_item.added (the item
# in progress) OpenAI leaves them out, the done item and the final output have them. The description says as
# much of reasoning items ("encrypted_content may be incomplete while the item is in progress"); the clients
# take the added item as a snapshot to be replaced by the done one (openai-python _responses.py
# accumulate_event, openai-node ResponseStream #accumulateResponse).
IN_PROGRESS_ONLY_AT_DONE: dict[str, dict[str, Any]] = {
    "WebSearchToolCall": {"fields": ["action"],
                          "source": f"{_REC}/pydantic-openai-responses-model-web-search-tool-stream.sse: the added "
                                    "web_search_call has no action, its done form has"},
    "ImageGenToolCall": {"fields": ["result"],
                         "source": f"{_PY}response_output_item.py `result: Optional[str]`; the added "
                                   f"image_generation_call has no result ({_REC}/edited/"
                                   "vercel-openai-image-generation-tool-1.sse)"},
}
IN_PROGRESS_SUFFIX = "InProgress"

# Components the description gives properties but no ``type``: without one a string or a number would match
# them (``properties`` and ``required`` apply to objects only). Each is an object in the clients' types.
TYPED_OBJECTS: dict[str, str] = {
    "Model": "openai-python 3.57.0 src/openai/types/model.py `class Model(BaseModel)`, openai-node 7.59.0 "
             "src/resources/models.ts `interface Model`; the description's own example is an object",
}


def apply_overlays(spec: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``spec`` with OVERLAYS and the in-progress item forms applied (see above)."""
    import copy

    spec = copy.deepcopy(spec)
    components: dict[str, Any] = spec["components"]["schemas"]
    for overlay in OVERLAYS:
        holder = _holder(components[overlay["component"]], overlay["field"], overlay["component"])
        note = f"\n(sse-check overlay, {overlay['change']}: {overlay['source']}.)"
        if overlay["change"] == "nullable":
            field = holder["properties"][overlay["field"]]
            holder["properties"][overlay["field"]] = {**field, "nullable": True,
                                                      "description": field.get("description", "") + note}
        elif overlay["change"] == "optional":
            holder["required"] = [r for r in holder["required"] if r != overlay["field"]]
            field = holder["properties"][overlay["field"]]
            holder["properties"][overlay["field"]] = {**field, "description": field.get("description", "") + note}
        else:
            raise ValueError(f"unknown overlay change {overlay['change']!r}")
    for name, source in TYPED_OBJECTS.items():
        if "type" in components[name]:
            raise ValueError(f"{name} has a type now: revisit TYPED_OBJECTS")
        components[name] = {**components[name], "type": "object",
                             "description": components[name].get("description", "")
                             + f"\n(sse-check overlay, typed as an object: {source}.)"}
    _nested_error_event(components["ResponseErrorEvent"])
    union = components["OutputItem"]
    key = "oneOf" if "oneOf" in union else "anyOf"
    members = []
    for member in union[key]:
        name = member["$ref"][len(COMPONENT_PREFIX):]
        if name in IN_PROGRESS_ONLY_AT_DONE:
            entry = IN_PROGRESS_ONLY_AT_DONE[name]
            form = copy.deepcopy(components[name])
            form["required"] = [r for r in form["required"] if r not in entry["fields"]]
            form["description"] = (form.get("description", "") + f"\n(sse-check: the in-progress form at "
                                   f"response.output_item.added, without {', '.join(entry['fields'])}, which only "
                                   f"the done form carries. Source: {entry['source']}.)")
            components[name + IN_PROGRESS_SUFFIX] = form
            member = {"$ref": COMPONENT_PREFIX + name + IN_PROGRESS_SUFFIX}
        members.append(member)
    components["OutputItem" + IN_PROGRESS_SUFFIX] = {
        **union, key: members,
        "description": "An output item as response.output_item.added carries it (sse-check: OutputItem with the "
                       "in-progress forms of hosted-tool items)."}
    added = components["ResponseOutputItemAddedEvent"]
    added["properties"]["item"] = {**added["properties"]["item"],
                                   "$ref": COMPONENT_PREFIX + "OutputItem" + IN_PROGRESS_SUFFIX}
    return spec


NESTED_ERROR_SOURCE = (
    f"what api.openai.com sends ({_REC}/vercel-openai-error-1.sse: {{\"type\": \"error\", \"error\": {{type, code, "
    "message, param}}, \"sequence_number\"}}); openai-python src/openai/_streaming.py raises APIError on an event whose "
    "data has an `error` object, openai-node src/core/streaming.ts likewise, which is what an error event is for")


def _nested_error_event(event: dict[str, Any]) -> None:
    """The error event in both forms: the description's flat {code, message, param} and OpenAI's nested one."""
    flat = list(event["required"])
    event["properties"]["error"] = {
        "type": "object",
        "description": f"The error, in OpenAI's nested wire form (sse-check overlay: {NESTED_ERROR_SOURCE}).",
        "properties": {
            "type": {"type": "string", "description": "The error type."},
            "code": {"type": "string", "nullable": True, "description": "The error code, if any."},
            "message": {"type": "string", "description": "A human-readable error message."},
            "param": {"type": "string", "nullable": True, "description": "The parameter at fault, if any."},
        },
        "required": ["message"],
    }
    del event["required"]
    event["if"] = {"required": ["error"]}
    event["then"] = {"required": ["type", "error", "sequence_number"]}
    event["else"] = {"required": flat}


def _holder(component: dict[str, Any], field: str, name: str) -> dict[str, Any]:
    """The object schema of ``component`` (itself or an allOf part) that declares ``field``."""
    for part in [component, *component.get("allOf", ())]:
        if field in part.get("properties", {}):
            return part
    raise ValueError(f"overlay: {name} has no property {field!r} (the description changed; revisit OVERLAYS)")


# -- the openai set -------------------------------------------------------------


def build_openai(spec: Mapping[str, Any]) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """Documents of the openai set keyed by path relative to ``schemas/openai``.

    Also returns event type → component name.
    """
    components: Mapping[str, Any] = spec["components"]["schemas"]
    members = components[UNION].get("anyOf") or components[UNION].get("oneOf")
    event_names = [m["$ref"][len(COMPONENT_PREFIX):] for m in members]
    event_types: dict[str, str] = {}
    for name in event_names:
        etype = event_type_of(name, components[name])
        if etype in event_types:
            raise ValueError(f"event type {etype!r} is defined twice ({event_types[etype]}, {name})")
        event_types[etype] = name
    files: dict[str, str] = {name: f"events/{etype}.json" for etype, name in event_types.items()}
    files.update({name: f"objects/{name}.json" for name in ANSWER_ROOTS})
    queue = [*event_names, *ANSWER_ROOTS]
    add_referenced(components, files, queue, "objects")
    translator = Translator(files)
    docs = {path: translator.document(name, components[name], path) for name, path in files.items()}
    return docs, event_types


# -- request bodies ---------------------------------------------------------------


def build_requests(spec: Mapping[str, Any], roots: tuple[tuple[str, str], ...] = REQUEST_ROOTS,
                   set_name: str = "openai", source: str = "OpenAI OpenAPI") -> dict[str, dict[str, Any]]:
    """Documents of the request schemas keyed by path relative to ``schemas/<set_name>``."""
    components: Mapping[str, Any] = spec["components"]["schemas"]
    files: dict[str, str] = {}
    queue = []
    for _, name in roots:
        if name not in components:
            raise ValueError(f"request schema {name!r} is missing from the reference")
        files[name] = f"requests/{name}.json"
        queue.append(name)
    add_referenced(components, files, queue, "requests")
    translator = Translator(files, source)
    docs = {path: absent_is_null(translator.document(name, components[name], path, set_name))
            for name, path in files.items()}
    for api, name in roots:
        rel = f"requests/{api}.json"
        docs[rel] = {"$schema": DRAFT, "$id": f"{BASE_URI}{set_name}/{rel}", "$ref": f"{name}.json",
                     "title": f"The request body of the {api} endpoint ({name})",
                     "$comment": "Generated by tools/gen_schemas.py; do not edit."}
    return docs


def absent_is_null(value: Any) -> Any:
    """``value`` read as a server reads a request: every nullable property dropped from the ``required`` lists
    (a request may omit it), and ``oneOf`` read as ``anyOf`` (the description's unions overlap: a message item
    ``{"type": "message", "role": "user", …}`` is both an EasyInputMessage and an InputMessage, and the API
    takes it)."""
    if isinstance(value, list):
        return [absent_is_null(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "oneOf" in value and "anyOf" in value:
        raise ValueError("a schema with both oneOf and anyOf: revisit absent_is_null()")
    out = {("anyOf" if k == "oneOf" else k): (v if k in VERBATIM_KEYS else absent_is_null(v))
           for k, v in value.items()}
    props = out.get("properties")
    if isinstance(out.get("required"), list) and isinstance(props, dict):
        out["required"] = [r for r in out["required"] if not (isinstance(props.get(r), dict) and accepts_null(props[r]))]
    return out


def accepts_null(schema: Mapping[str, Any]) -> bool:
    """Whether a (translated) property schema accepts ``null`` on its face (its own type or a null branch)."""
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    return any(isinstance(branch, dict) and accepts_null(branch)
               for key in ("anyOf", "oneOf") for branch in schema.get(key) or ())


# -- the open-responses set -----------------------------------------------------

OR_SOURCE = "Open Responses OpenAPI"
# The Open Responses description: its streaming events are the members of the text/event-stream answer of
# POST /responses, its request body CreateResponseBody (reference/README.md names the release and commit).
OR_STREAM = ("/responses", "post", "200", "text/event-stream")
OR_REQUEST_ROOTS = (("responses", "CreateResponseBody"),)
OR_RESPONSE = "ResponseResource"


def build_open_responses(spec: Mapping[str, Any]) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """Documents of the open-responses set keyed by path relative to ``schemas/open-responses``, generated
    from the Open Responses description alone; also event type → component name.

    What it requires is required and what it defines is legal: its own event names
    (``response.reasoning.delta``), its ``ResponseResource`` (no ``user``), its five item types. ``Response``
    is an alias of ``ResponseResource``, the name the checker asks for.
    """
    components: Mapping[str, Any] = spec["components"]["schemas"]
    path, method, status, media = OR_STREAM
    stream = spec["paths"][path][method]["responses"][status]["content"][media]["schema"]
    event_names = [m["$ref"][len(COMPONENT_PREFIX):] for m in stream.get("oneOf") or stream.get("anyOf")]
    event_types: dict[str, str] = {}
    for name in event_names:
        etype = event_type_of(name, components[name])
        if etype in event_types:
            raise ValueError(f"event type {etype!r} is defined twice ({event_types[etype]}, {name})")
        event_types[etype] = name
    files: dict[str, str] = {name: f"events/{etype}.json" for etype, name in event_types.items()}
    queue = [*event_names, OR_RESPONSE]
    files.setdefault(OR_RESPONSE, f"objects/{OR_RESPONSE}.json")
    add_referenced(components, files, queue, "objects")
    translator = Translator(files, OR_SOURCE)
    docs = {rel: translator.document(name, components[name], rel, "open-responses") for name, rel in files.items()}
    if "objects/Response.json" in docs:
        raise ValueError("the Open Responses description has a Response component: revisit the alias")
    docs["objects/Response.json"] = {
        "$schema": DRAFT, "$id": f"{BASE_URI}open-responses/objects/Response.json", "$ref": f"{OR_RESPONSE}.json",
        "title": "The response object",
        "description": f"Alias: in the open-responses set the response object is {OR_RESPONSE}.",
        "$comment": "Generated by tools/gen_schemas.py; do not edit."}
    docs.update(build_requests(spec, OR_REQUEST_ROOTS, "open-responses", OR_SOURCE))
    return docs, event_types


# -- the chat set -----------------------------------------------------------------

CHAT_SET = "chat"
# The streamed chunk and the non-streamed answer of POST /v1/chat/completions.
CHAT_ROOTS = ("CreateChatCompletionStreamResponse", "CreateChatCompletionResponse")
CHAT_EVENT = "chat.completion.chunk"
CHAT_REASONING_SOURCE = (
    "llama.cpp tools/server/server-common.cpp and vLLM's DeltaMessage send the reasoning as "
    "`reasoning_content` (vLLM >= 0.10 and Ollama's OpenAI layer as `reasoning`); openai-python 3.57.0 "
    "src/openai/types/chat/chat_completion_chunk.py ChoiceDelta keeps unknown fields (extra=allow), openai-node "
    "7.59.0 src/lib/ChatCompletionStream.ts copies them; docs/spec.md §6")
# (component, property): the vendor fields declared as nullable strings on the delta and the message.
CHAT_EXTENSIONS = tuple((component, field) for component in ("ChatCompletionStreamResponseDelta",
                                                             "ChatCompletionResponseMessage")
                        for field in ("reasoning_content", "reasoning"))


def apply_chat_extensions(spec: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``spec`` with CHAT_EXTENSIONS declared (the description has neither field)."""
    import copy

    spec = copy.deepcopy(spec)
    components: dict[str, Any] = spec["components"]["schemas"]
    for component, field in CHAT_EXTENSIONS:
        props = components[component]["properties"]
        if field in props:
            raise ValueError(f"{component} declares {field!r} itself: revisit CHAT_EXTENSIONS")
        props[field] = {"type": "string", "nullable": True,
                        "description": f"A vendor extension: the model's reasoning text (sse-check: "
                                       f"{CHAT_REASONING_SOURCE})."}
    return spec


def build_chat(spec: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Documents of the chat set keyed by path relative to ``schemas/chat``: the chunk as its one event
    schema and every component the two roots reference."""
    components: Mapping[str, Any] = apply_chat_extensions(dict(spec))["components"]["schemas"]
    files: dict[str, str] = {name: f"objects/{name}.json" for name in CHAT_ROOTS}
    add_referenced(components, files, list(CHAT_ROOTS), "objects")
    translator = Translator(files)
    docs = {rel: translator.document(name, components[name], rel, CHAT_SET) for name, rel in files.items()}
    rel = f"events/{CHAT_EVENT}.json"
    docs[rel] = {"$schema": DRAFT, "$id": f"{BASE_URI}{CHAT_SET}/{rel}",
                 "$ref": f"../objects/{CHAT_ROOTS[0]}.json",
                 "title": f"A streamed chunk ({CHAT_EVENT})",
                 "$comment": "Generated by tools/gen_schemas.py; do not edit."}
    return docs


# -- output ---------------------------------------------------------------------


def render(doc: Mapping[str, Any]) -> str:
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def readme(spec: Mapping[str, Any], event_types: Mapping[str, str], n_objects: int,
           or_spec: Mapping[str, Any], or_event_types: Mapping[str, str]) -> str:
    version = spec.get("info", {}).get("version", "?")
    or_version = or_spec.get("info", {}).get("version", "?")
    lines = [
        "# schemas/",
        "",
        "Generated by `tools/gen_schemas.py` from OpenAI's OpenAPI description "
        f"(version {version}) and the Open Responses OpenAPI description (release {or_version}), both in "
        "`reference/`; do not edit by hand, re-run the script.",
        "JSON Schema Draft 2020-12, one schema per file, `$id` under "
        f"`{BASE_URI}`, relative `$ref`s between files. Shipped in the wheel as `checker/_schemas` and "
        "loaded by `checker/schemas.py`.",
        "",
        f"- `openai/events/`: the {len(event_types)} members of `ResponseStreamEvent`, one file per event type.",
        f"- `openai/objects/`: the {n_objects} components they reference (items, parts, `Response`, …), and the "
        "answer of `GET /v1/models` (" + ", ".join(f"`{name}`" for name in ANSWER_ROOTS) + ", with the `Model` "
        "it lists), which `sse-check probe`'s models flow judges.",
        "- `openai/requests/`: the request bodies (`responses.json`: `CreateResponse`, `chat.json`: "
        "`CreateChatCompletionRequest`) with their own copy of what they reference, where a nullable property "
        "may be left out.",
        f"- `open-responses/`: the Open Responses set, from its description alone: `events/`, the "
        f"{len(or_event_types)} members of the `text/event-stream` answer of `POST /responses`; `objects/`, what "
        "they reference (`ResponseResource`, and `Response` as its alias); `requests/responses.json`, "
        "`CreateResponseBody`. The chat request schema is the openai set's.",
        f"- `chat/`: the Chat Completions set: `events/{CHAT_EVENT}.json`, the streamed chunk "
        f"(`{CHAT_ROOTS[0]}`), and `objects/`, what it and the non-streamed answer (`{CHAT_ROOTS[1]}`) "
        "reference, with the vendor reasoning fields declared: "
        + ", ".join(f"`{c}.{f}`" for c, f in CHAT_EXTENSIONS) + f" ({CHAT_REASONING_SOURCE}).",
        "",
        "Overlays (`OVERLAYS`, `IN_PROGRESS_ONLY_AT_DONE`, `TYPED_OBJECTS` and the nested error event in "
        "`tools/gen_schemas.py`): "
        "where the clients' real types and OpenAI's own streams show the description to be too strict, "
        "the field is loosened; where it is too loose to judge (a component without a type), it is typed as the "
        "clients type it; each with its source:",
        "",
    ]
    lines += [f"- `{o['component']}.{o['field']}` {o['change']}: {o['source']}." for o in OVERLAYS]
    lines += [f"- `{name}` at `response.output_item.added` without {', '.join(f'`{f}`' for f in e['fields'])}: "
              f"{e['source']}." for name, e in IN_PROGRESS_ONLY_AT_DONE.items()]
    lines += [f"- `{name}` typed as an object (the description gives it properties but no type): {source}."
              for name, source in TYPED_OBJECTS.items()]
    lines += [f"- the `error` event also in its nested form `{{type: error, error: {{…}}}}`: {NESTED_ERROR_SOURCE}.",
              "", "Event types (openai):", ""]
    lines += [f"- `{etype}` ({name})" for etype, name in sorted(event_types.items())]
    lines += ["", "Event types (open-responses):", ""]
    lines += [f"- `{etype}` ({name})" for etype, name in sorted(or_event_types.items())]
    return "\n".join(lines) + "\n"


def build(reference: Path, or_reference: Path = DEFAULT_OR_REFERENCE) -> dict[str, str]:
    """Every generated file: path relative to ``schemas/`` → text."""
    described = json.loads(reference.read_text(encoding="utf-8"))
    # The overlays say what the server sends and the clients accept; a request is judged by the description.
    spec = apply_overlays(described)
    or_spec = json.loads(or_reference.read_text(encoding="utf-8"))
    openai_docs, event_types = build_openai(spec)
    or_docs, or_event_types = build_open_responses(or_spec)
    out = {f"openai/{rel}": render(doc) for rel, doc in openai_docs.items()}
    out.update({f"openai/{rel}": render(doc) for rel, doc in build_requests(described).items()})
    out.update({f"open-responses/{rel}": render(doc) for rel, doc in or_docs.items()})
    out.update({f"{CHAT_SET}/{rel}": render(doc) for rel, doc in build_chat(described).items()})
    answers = {f"objects/{name}.json" for name in ANSWER_ROOTS} | {"objects/Model.json"}
    n_objects = sum(1 for rel in openai_docs if rel.startswith("objects/") and rel not in answers)
    out["README.md"] = readme(spec, event_types, n_objects, or_spec, or_event_types)
    return dict(sorted(out.items()))


def write(files: Mapping[str, str], out_dir: Path) -> None:
    """Write ``files`` under ``out_dir`` and delete stale generated files."""
    for set_name in SETS:
        root = out_dir / set_name
        if root.is_dir():
            for path in root.rglob("*.json"):
                if path.relative_to(out_dir).as_posix() not in files:
                    path.unlink()
    for rel, text in files.items():
        path = out_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8", newline="\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reference", type=Path, default=DEFAULT_REFERENCE,
                        help="OpenAI OpenAPI JSON (default: %(default)s)")
    parser.add_argument("--or-reference", type=Path, default=DEFAULT_OR_REFERENCE,
                        help="Open Responses OpenAPI JSON (default: %(default)s)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output directory (default: %(default)s)")
    args = parser.parse_args(argv)
    for reference in (args.reference, args.or_reference):
        if not reference.is_file():
            print(f"gen_schemas: reference not found: {reference}", file=sys.stderr)
            return 2
    files = build(args.reference, args.or_reference)
    write(files, args.out)
    print(f"gen_schemas: {len(files)} files in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
