"""Id rules: conventional prefixes and uniqueness (docs/spec.md §2)."""

from checker.rules.registry import rule

ID_PREFIX = rule(
    "IDS001", "id-prefix", "info",
    "{kind} id {id!r} does not start with {prefix!r}",
    summary="Flags ids without OpenAI's conventional prefix: resp_ (response), msg_ (message), rs_ (reasoning), "
            "fc_ (function-call item), call_ (call id).",
    why="Prefixes are convention, not norm; but clients and proxies that route or replay items by prefix (and "
        "OpenAI itself when the items are sent back) reject foreign ids.",
    sources=("OpenAI API reference (id formats)",),
    good="conforming/reasoning-function-call.sse",
)
FC_ID_IS_CALL_ID = rule(
    "IDS002", "item-id-equals-call-id", "warning",
    "function call item id equals its call_id {id!r}",
    summary="Flags a function-call item whose `id` is its `call_id`.",
    why="Item ids and call ids are different namespaces (fc_ vs call_); replaying such an item to OpenAI is "
        "rejected, and clients keyed by either confuse the two (llama.cpp PR #21174).",
    sources=("llama.cpp PR #21174",),
    good="conforming/reasoning-function-call.sse",
)
DUPLICATE_ITEM_ID = rule(
    "IDS003", "duplicate-item-id", "error",
    "item id {id!r} is used by two items (output_index {first} and {second})",
    summary="Flags two output items with the same id.",
    why="openai-node fails with \"duplicate output item identity\"; id-pairing clients merge the two items.",
    sources=("openai-node response-accumulator.ts",
             "openai-python src/openai/lib/streaming/responses/_responses.py (ResponseStreamState, get_final_response)"),
    clients=("openai-python", "openai-node"),
    good="conforming/parallel-function-calls.sse",
)
DUPLICATE_CALL_ID = rule(
    "IDS004", "duplicate-call-id", "error",
    "call_id {id!r} is used by two function calls",
    summary="Flags two function calls with the same call_id.",
    why="Tool outputs are matched to calls by call_id: one call gets both outputs and the other none, and the "
        "next request is rejected.",
    sources=("openai-node response-accumulator.ts",
             "OpenAI function calling guide",
             "openai-python src/openai/lib/streaming/responses/_responses.py (ResponseStreamState, get_final_response)",
             "codex codex-rs/codex-api/src/sse/responses.rs (process_sse)",
             "openai-agents-python src/agents/run_internal/run_loop.py (the turn from response.completed)"),
    clients=("openai-node", "openai-python", "codex", "openai-agents"),
    good="conforming/parallel-function-calls.sse",
)
ITEM_ID_MISSING = rule(
    "IDS005", "item-id-missing", "error",
    "output_item.added item has no id",
    summary="Flags an added output item without an `id`.",
    why="Every later event names its item by item_id; without an id nothing can be paired, and id-pairing clients "
        "(codex, openai-node) lose the item.",
    sources=("OpenAI OpenAPI 2.3.0 OutputItem", "openai-node src/internal/responses/response-accumulator.ts",
             "vercel-ai packages/openai/src/responses/openai-responses-api.ts (openaiResponsesChunkSchema: the field is required; measured, tests/test_real_clients.py)"),
    clients=("openai-node", "vercel-ai"),
    good="conforming/text.sse",
)
