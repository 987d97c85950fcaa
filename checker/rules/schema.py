"""Schema rules: event and object shapes against schemas/ (docs/spec.md §2, §3).

Shapes come from the JSON Schemas, never from hand-written checks: a violation
is classified by where it sits (the response object, an item, a part, usage)
and by field (a missing sequence_number, output_index or content_index has a
rule of its own in its family), otherwise it is SCH001.
"""

from checker.rules.registry import rule

OPENAPI = "OpenAI OpenAPI 2.3.0 ResponseStreamEvent"

EVENT_SCHEMA = rule(
    "SCH001", "event-schema-violation", "warning",
    "{type} {where}: {detail}",
    summary="Flags an event field that violates the event's JSON Schema.",
    why="Typed clients (openai-python's pydantic models, openai-node's types, codex's serde structs) read these "
        "fields; a missing or mistyped one fails deserialisation or surfaces as undefined.",
    sources=(OPENAPI, "Open Responses specification",
             "vercel-ai packages/openai/src/responses/openai-responses-api.ts (openaiResponsesChunkSchema: the field is required; measured, tests/test_real_clients.py)"),
    good="conforming/text.sse",
    clients=("vercel-ai",),
)
RESPONSE_SCHEMA = rule(
    "SCH002", "response-object-violation", "warning",
    "{type} response object {where}: {detail}",
    summary="Flags a response object (in created, in_progress, completed, …) that violates the Response schema.",
    why="Typed clients read model, status, output and usage from these objects. No client's final result "
        "changes with it: openai-python constructs them unchecked, openai-node 7.59 and the Agents SDK pass the "
        "terminal's response through as sent, so the matrix names none.",
    sources=(OPENAPI, "openai-node response-accumulator.ts",
             "vercel-ai packages/openai/src/responses/openai-responses-api.ts (openaiResponsesChunkSchema: the field is required; measured, tests/test_real_clients.py)"),
    good="conforming/text.sse",
    clients=("vercel-ai",),
)
ITEM_SCHEMA = rule(
    "SCH003", "item-schema-violation", "warning",
    "{type} item {where}: {detail}",
    summary="Flags an output item (in output_item.added/done or a response's output) that violates its schema.",
    why="Items are replayed as the next request's input; a malformed item breaks the next turn as well as this "
        "one (codex deserialises each done item).",
    sources=(OPENAPI,
             "codex codex-rs/codex-api/src/sse/responses.rs",
             "openai-agents-python src/agents/run_internal/run_loop.py (the turn from response.completed)",
             "vercel-ai packages/openai/src/responses/openai-responses-api.ts (openaiResponsesChunkSchema: the field is required; measured, tests/test_real_clients.py)"),
    clients=("codex", "openai-agents", "vercel-ai"),
    good="conforming/reasoning-function-call.sse",
)
PART_SCHEMA = rule(
    "SCH004", "part-schema-violation", "warning",
    "{type} part {where}: {detail}",
    summary="Flags a content or summary part that violates its schema (e.g. an output_text part without "
            "annotations).",
    why="Clients copy the part into the message's content list and later read its fields.",
    sources=(OPENAPI,),
    good="conforming/text.sse",
)
UNKNOWN_EVENT = rule(
    "SCH005", "unknown-event-type", "error",
    "unknown event type {type!r}",
    summary="Flags an event type that is in neither the OpenAI event union nor a vendor namespace.",
    why="openai-node throws \"Unhandled response stream event\" on any type outside its list, OpenAI's own newer "
        "events included (response.apply_patch_call_operation_diff.delta/done, which the apply_patch tool sends "
        "and no published description has; sse-check still follows their call, docs/spec.md §2.1); Open "
        "Responses requires vendor events to be prefixed with a slug (`acme:thing`).",
    sources=(OPENAPI, "Open Responses specification: extension events",
             "openai-node 7.59 src/internal/responses/response-accumulator.ts (supportedResponseEventTypes)",
             "openresponses src/lib/sse-parser.ts (streamingEventSchema: a union of the events it defines)"),
    clients=("openai-node", "open-responses"),
    good="conforming/text.sse",
)
ALIAS_EVENT = rule(
    "SCH006", "alias-event-type", "error",
    "{type!r} is a non-canonical alias of {canonical!r}",
    summary="Flags vLLM-style aliases such as response.reasoning_part.added or response.reasoning.delta.",
    why="No client handles the aliases: openai-node throws on them and the SDKs drop the reasoning text.",
    sources=(OPENAPI, "vLLM reasoning streaming", "openai-node src/internal/responses/response-accumulator.ts"),
    clients=("openai-node",),
    good="conforming/reasoning-text.sse",
)
MISSING_TYPE = rule(
    "SCH007", "missing-type", "error",
    "event has no string `type` field",
    summary="Flags an event object without a `type`.",
    why="Clients dispatch on `type`; codex drops events without one, the SDKs fail to parse them.",
    sources=(OPENAPI,
             "codex codex-rs/codex-api/src/sse/responses.rs",
             "openai-node src/internal/responses/response-accumulator.ts",
             "vercel-ai packages/provider-utils/src/parse-json-event-stream.ts (each event JSON-parsed and validated; measured, tests/test_real_clients.py)"),
    clients=("openai-node", "codex", "vercel-ai"),
    good="conforming/text.sse",
)
LOGPROBS_MISSING = rule(
    "SCH008", "logprobs-missing", "warning",
    "{type} has no logprobs",
    summary="Flags output_text delta/done events without `logprobs` (required by OpenAI 2.3.0, optional in "
            "Open Responses).",
    why="Typed clients generated from the OpenAPI description treat logprobs as always present.",
    sources=(OPENAPI,),
    good="conforming/text.sse",
)
VENDOR_EVENT = rule(
    "SCH009", "vendor-event", "error",
    "vendor event {type!r} (not part of the OpenAI stream)",
    summary="Reports a namespaced vendor event (`slug:name`), allowed by Open Responses.",
    why="Clients that only know OpenAI's events ignore or reject it; it is legal under Open Responses.",
    sources=("Open Responses specification: extension events",
             "openai-node src/internal/responses/response-accumulator.ts"),
    clients=("openai-node",),
    good="conforming/text.sse",
)
WRONG_API = rule(
    "SCH010", "wrong-api", "error",
    "this stream looks like {api}, not {expected} ({evidence})",
    summary="Recognises streams of another API (Chat Completions chunks, Anthropic Messages events, legacy "
            "Completions) and says which.",
    why="A Responses client reads none of these events; the usual cause is a server or gateway that answered "
        "/v1/responses with another endpoint's stream, or a capture of the wrong endpoint.",
    sources=("OpenAI Chat Completions streaming",
             "Anthropic Messages streaming",
             "openai-python src/openai/lib/streaming/responses/_responses.py (ResponseStreamState, get_final_response)",
             "openai-node src/internal/responses/response-accumulator.ts",
             "codex codex-rs/codex-api/src/sse/responses.rs (process_sse)",
             "openai-agents-python src/agents/run_internal/run_loop.py (the turn from response.completed)",
             "openresponses src/lib/compliance-tests.ts, src/lib/sse-parser.ts (the compliance suite)",
             "langchain-openai langchain_openai/chat_models/base.py (ChatOpenAI.stream over openai-python's Stream; measured, tests/test_real_clients.py)",
             "vercel-ai packages/openai/src/responses/openai-responses-language-model.ts (isOpenAIChatCompletionChunk: a Chat Completions chunk is an AI_APICallError; measured, tests/test_real_clients.py)"),
    clients=("openai-python", "openai-node", "codex", "openai-agents", "open-responses", "langchain", "vercel-ai"),
    good="conforming/text.sse",
)
