"""Generate schemas/ from OpenAI's OpenAPI description 2.3.0 (a dev-time tool).

    python tools/gen_schemas.py [REFERENCE] [OUT]

defaults: ../shared/reference/openai-openapi.json and schemas/. The reference is
never loaded at run time; the generated files are committed and a test checks
that re-running this script changes nothing.

Layout (Draft 2020-12, every file with an $id under https://sse-check.dev/schemas/):
  openai/events/<event type>.json     one per member of ResponseStreamEvent (58)
  openai/objects/<Name>.json          one per component they reference, transitively
                                      (Response, OutputItem, OutputMessage, ReasoningItem,
                                      FunctionToolCall, parts, annotations, usage, ...)
  open-responses/...                  where Open Responses differs (SPEC §3): the nested
                                      error event, logprobs optional on text events, and the
                                      stricter ResponseResource on lifecycle events; every
                                      other event is the openai one.

OpenAPI specifics are translated: `nullable` becomes anyOf with null, `x-*`,
`discriminator`, `example` and `deprecated` are dropped, component refs become
relative file refs. `additionalProperties` is kept exactly as the reference has
it: servers add extension fields (llama.cpp's `timings`) and OpenAI adds fields
over time.
"""
from __future__ import annotations
import json, sys
from pathlib import Path

BASE = "https://sse-check.dev/schemas"
DROP = {"discriminator", "example", "examples", "x-oaiMeta", "x-oaiTypeLabel", "x-stainless-const", "deprecated"}


def translate(node, ref_prefix):
    if isinstance(node, list):
        return [translate(v, ref_prefix) for v in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for k, v in node.items():
        if k in DROP or k.startswith("x-"):
            continue
        if k == "$ref":
            out[k] = ref_prefix + v.split("/")[-1] + ".json"
        elif k in ("properties", "$defs", "patternProperties"):
            out[k] = {name: translate(sub, ref_prefix) for name, sub in v.items()}
        else:
            out[k] = translate(v, ref_prefix)
    if out.pop("nullable", False):
        out = {"anyOf": [out, {"type": "null"}]}
    return out


def refs(node, acc):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "$ref":
                acc.add(v.split("/")[-1])
            else:
                refs(v, acc)
    elif isinstance(node, list):
        for v in node:
            refs(v, acc)


SCHEMA = "https://json-schema.org/draft/2020-12/schema"
# Fields the Open Responses ResponseResource carries beyond OpenAI's required list,
# as its compliance suite's example response shows them.
RESOURCE_EXTRA = ["completed_at", "presence_penalty", "frequency_penalty", "top_logprobs", "truncation", "store",
                  "background", "service_tier", "text", "reasoning", "max_output_tokens", "max_tool_calls",
                  "previous_response_id"]
LIFECYCLE = ["response.created", "response.queued", "response.in_progress", "response.completed",
             "response.failed", "response.incomplete"]


def open_responses(openai_files: dict) -> dict:
    out = {}
    ev = f"{BASE}/open-responses/events/"
    out["open-responses/objects/ResponseResource.json"] = {
        "$schema": SCHEMA, "$id": f"{BASE}/open-responses/objects/ResponseResource.json",
        "title": "ResponseResource",
        "description": "Open Responses' response object: OpenAI's Response plus the fields Open Responses always "
                       "sends (from its compliance suite's example). Where unsure, the field is as OpenAI has it.",
        "allOf": [{"$ref": "../../openai/objects/Response.json"}, {"type": "object", "required": RESOURCE_EXTRA,
                  "properties": {"completed_at": {"type": ["integer", "null"]},
                                 "presence_penalty": {"type": "number"}, "frequency_penalty": {"type": "number"},
                                 "top_logprobs": {"type": "integer"}}}],
    }
    for etype in LIFECYCLE:
        base = openai_files[f"openai/events/{etype}.json"]
        body = json.loads(json.dumps(base))
        body["$id"] = ev + etype + ".json"
        body["properties"]["response"] = {"$ref": "../objects/ResponseResource.json"}
        out[f"open-responses/events/{etype}.json"] = body
    for etype in ("response.output_text.delta", "response.output_text.done"):
        body = json.loads(json.dumps(openai_files[f"openai/events/{etype}.json"]))
        body["$id"] = ev + etype + ".json"
        body["required"] = [r for r in body["required"] if r != "logprobs"]
        body["properties"]["logprobs"]["$ref"] = "../../openai/objects/ResponseLogProb.json"
        body["properties"]["logprobs"].get("items", {}).update({"$ref": "../../openai/objects/ResponseLogProb.json"})
        out[f"open-responses/events/{etype}.json"] = body
    out["open-responses/events/error.json"] = {
        "$schema": SCHEMA, "$id": ev + "error.json", "title": "ErrorStreamingEvent",
        "description": "Open Responses' error event: the error nested under `error`.",
        "type": "object", "required": ["type", "sequence_number", "error"],
        "properties": {
            "type": {"const": "error"}, "sequence_number": {"type": "integer"},
            "error": {"type": "object", "required": ["type", "code", "message", "param"],
                      "properties": {"type": {"type": "string"}, "code": {"type": ["string", "null"]},
                                     "message": {"type": "string"}, "param": {"type": ["string", "null"]}}},
        },
    }
    return out


def main(reference: Path, out: Path):
    spec = json.loads(reference.read_text())
    schemas = spec["components"]["schemas"]
    events = [x["$ref"].split("/")[-1] for x in schemas["ResponseStreamEvent"]["anyOf"]]
    seen, todo = set(), list(events)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        acc = set(); refs(schemas[name], acc); todo += sorted(acc - seen)
    files = {}
    for name in sorted(seen - set(events)):
        body = translate(schemas[name], "")
        body = {"$schema": SCHEMA, "$id": f"{BASE}/openai/objects/{name}.json", "title": name, **body}
        files[f"openai/objects/{name}.json"] = body
    for name in events:
        etype = schemas[name]["properties"]["type"]["enum"][0]
        body = translate(schemas[name], "../objects/")
        body = {"$schema": SCHEMA, "$id": f"{BASE}/openai/events/{etype}.json", "title": name, **body}
        files[f"openai/events/{etype}.json"] = body
    files.update(open_responses(files))
    for rel, body in files.items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(body, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    print(f"wrote {len(files)} schema files to {out}")

if __name__ == "__main__":
    root = Path(__file__).resolve().parents[1]
    args = sys.argv[1:]
    main(Path(args[0]) if args else root.parent / "shared" / "reference" / "openai-openapi.json",
         Path(args[1]) if len(args) > 1 else root / "schemas")
