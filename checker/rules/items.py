"""Output item rules: output_index, added/done pairing, item scope (docs/spec.md §2)."""

from checker.rules.registry import rule

OPENAPI = "OpenAI OpenAPI 2.3.0 ResponseStreamEvent"
NODE = "openai-node src/internal/responses/response-accumulator.ts"
PY = "openai-python src/openai/lib/streaming/responses/_responses.py"
NODE_STREAM = "openai-node src/lib/responses/ResponseStream.ts (#prepareOutputEvent)"

OUTPUT_INDEX_MISSING = rule(
    "ITM001", "output-index-missing", "error",
    "{type} has no output_index",
    summary="Flags item-scoped events without `output_index`.",
    why="openai-python and openai-node index their snapshot by output_index: openai-python 3.57 raises "
        "\"Duplicate response output index None.\" on a second item, and fails on text deltas it cannot place.",
    sources=(OPENAPI, PY, NODE,
             "vercel-ai packages/openai/src/responses/openai-responses-api.ts (openaiResponsesChunkSchema: the field is required; measured, tests/test_real_clients.py)"),
    clients=("openai-python", "openai-node", "vercel-ai"),
    good="conforming/reasoning-function-call.sse",
)
OUTPUT_INDEX_NOT_APPENDED = rule(
    "ITM002", "output-index-not-appended", "warning",
    "output_item.added at output_index {got}, expected {expected}",
    summary="Flags an added item whose output_index is not the number of items added so far.",
    why="Items are appended in order from 0 (Open Responses: MUST). openai-python 3.57 keys items by index "
        "and openai-node 7.59 maps wire indexes to positions, so both tolerate a gap (a negative index is "
        "ITM014's); clients that index an array by output_index misplace every later event.",
    sources=(OPENAPI, NODE, PY),
    good="conforming/parallel-function-calls.sse",
)
OUTPUT_INDEX_REUSED = rule(
    "ITM003", "output-index-reused", "error",
    "output_index {index} already belongs to item {other!r}",
    summary="Flags an output_index used by two items.",
    why="openai-python and openai-node raise \"Duplicate response output index N.\". openai-agents-python once "
        "merged two such items into one (openai-agents-python #5041, LiteLLM #36375); its Responses path now "
        "takes the turn from response.completed, whatever the indexes were.",
    sources=(PY,
             "openai-agents-python #5041",
             "LiteLLM #36375",
             "openai-node src/internal/responses/response-accumulator.ts"),
    clients=("openai-python", "openai-node"),
    good="conforming/parallel-function-calls.sse",
)
UNKNOWN_ITEM = rule(
    "ITM004", "event-for-unknown-item", "error",
    "{type} targets item {item!r}, which was never added",
    summary="Flags an item-scoped event whose item_id/output_index names no added item.",
    why="openai-python raises \"Received a content event for output index N before receiving its output "
        "item\"; openai-node fails \"expected item_id\".",
    sources=(PY, NODE,
             "vercel-ai packages/openai/src/responses/openai-responses-language-model.ts (doStream) and packages/ai/src/generate-text/stream-text.ts ('text part … not found'; measured, tests/test_real_clients.py)"),
    clients=("openai-python", "openai-node", "vercel-ai"),
    good="conforming/text.sse",
)
ITEM_ID_MISMATCH = rule(
    "ITM005", "item-id-mismatch", "error",
    "{type}: item_id {item_id!r} but output_index {index} is {holder}",
    summary="Flags an event whose item_id and output_index name different items.",
    why="Clients that place by index (openai-python) and clients that check the id (openai-node fails "
        "\"expected item_id\") disagree about the delta's item. Both look the index up first: where no "
        "output_item.added put an item at it, openai-python raises \"Received a content event for output index N "
        "before receiving its output item\" on text and argument events (the gpt-oss reference server sends "
        "every *.done one index past its item's added: captures/gpt-oss) and openai-node \"missing output at index "
        "N\".",
    sources=(NODE, NODE_STREAM, PY),
    clients=("openai-python", "openai-node"),
    good="conforming/reasoning-function-call.sse",
)
AFTER_ITEM_DONE = rule(
    "ITM006", "event-after-item-done", "warning",
    "{type} for item {item!r} after its output_item.done",
    summary="Flags an event for an item that is already done.",
    why="The done item is final (codex records it at output_item.done); later deltas are lost for some clients "
        "and applied for others.",
    sources=(OPENAPI, "codex codex-rs/codex-api/src/sse/responses.rs",
             "vercel-ai packages/openai/src/responses/openai-responses-language-model.ts (doStream) and packages/ai/src/generate-text/stream-text.ts ('text part … not found'; measured, tests/test_real_clients.py)"),
    good="conforming/text.sse",
    clients=("vercel-ai",),
)
DONE_IDENTITY = rule(
    "ITM007", "done-identity-changed", "error",
    "output_item.done changes {field}: {added!r} at added, {done!r} at done",
    summary="Flags an output_item.done whose item id, type, call_id or output_index differ from its added, "
            "on every item type, compared as the SDKs compare them.",
    why="openai-python compares the type, id and call_id of every item type (a tool_search_call whose call_id "
        "changes raises \"Completed output item identity changed.\"); openai-node compares the type, the id and "
        "the call_id of function, custom tool and shell calls (\"expected output item call_id …\"). A function or "
        "custom tool call added without an id may gain one at done in both.",
    sources=(PY, NODE),
    clients=("openai-python", "openai-node"),
    good="conforming/reasoning-function-call.sse",
)
DONE_WITHOUT_ADDED = rule(
    "ITM008", "done-without-added", "error",
    "output_item.done for item {item!r}, which was never added",
    summary="Flags an output_item.done for an item that no output_item.added announced.",
    why="Accumulating clients have nothing to complete (openai-node fails); codex accepts it, so clients "
        "disagree about the output.",
    sources=(OPENAPI, NODE),
    clients=("openai-node",),
    good="conforming/text.sse",
)
DUPLICATE_DONE = rule(
    "ITM009", "duplicate-item-done", "warning",
    "second output_item.done for item {item!r}",
    summary="Flags an item completed twice.",
    why="codex appends every done item to the turn, so the item appears twice in history.",
    sources=(OPENAPI, "codex codex-rs/codex-api/src/sse/responses.rs",
             "vercel-ai packages/openai/src/responses/openai-responses-language-model.ts (doStream) and packages/ai/src/generate-text/stream-text.ts ('text part … not found'; measured, tests/test_real_clients.py)"),
    clients=("codex", "vercel-ai"),
    good="conforming/text.sse",
)
FAMILY_MISMATCH = rule(
    "ITM010", "event-family-mismatch", "error",
    "{type} targets a {item_type} item ({item!r})",
    summary="Flags text, refusal, reasoning or argument events aimed at an item of the wrong type.",
    why="Text and refusal events belong to messages, arguments to function calls, reasoning text and summaries to "
        "reasoning items; openai-python asserts on the part type and others drop the delta.",
    sources=(OPENAPI, PY, "openai-node src/internal/responses/response-accumulator.ts",
             "vercel-ai packages/openai/src/responses/openai-responses-language-model.ts (doStream) and packages/ai/src/generate-text/stream-text.ts ('text part … not found'; measured, tests/test_real_clients.py)"),
    clients=("openai-python", "openai-node", "vercel-ai"),
    good="conforming/reasoning-text.sse",
)
INTERLEAVED = rule(
    "ITM011", "interleaved-items", "warning",
    "{later_type} item {later!r} added while {earlier_type} item {earlier!r} is not done",
    summary="Flags an item added before the previous item's output_item.done (e.g. llama.cpp's delayed "
            "reasoning done).",
    why="The SDKs and codex pair by id and accept it, but a client that pairs each added with the next done "
        "mis-orders the items, and vLLM's stack validator rejects it (llama.cpp PR #18486, LocalAI #9658).",
    sources=("llama.cpp PR #18486", "LocalAI #9658"),
    clients=("positional",),
    good="conforming/reasoning-function-call.sse",
)
ADDED_STATUS = rule(
    "ITM012", "added-status-not-in-progress", "warning",
    "output_item.added item status is {status!r}, expected 'in_progress'",
    summary="Flags an added item whose status is not in_progress.",
    why="An added item is still being generated; a client that trusts a 'completed' status stops accumulating.",
    sources=(OPENAPI,),
    good="conforming/text.sse",
)
DONE_STATUS = rule(
    "ITM013", "done-status-not-final", "warning",
    "output_item.done item status is {status!r}, expected 'completed' or 'incomplete'",
    summary="Flags a done item whose status is missing or still in_progress.",
    why="Agents and UIs read the item's status to decide whether it finished; a missing or in_progress status at "
        "done leaves it looking unfinished in history.",
    sources=(OPENAPI,),
    good="conforming/text.sse",
)
NEGATIVE_OUTPUT_INDEX = rule(
    "ITM014", "output-index-negative", "error",
    "{type} at output_index {index}: an output_index is never negative",
    summary="Flags an item-scoped event whose output_index is a negative integer.",
    why="output_index is the item's position in the response's output, from 0. openai-node 7.59 checks it on "
        "every event before anything else and raises \"Invalid response output index.\" (the gpt-oss reference "
        "server adds its first item at -1: captures/gpt-oss); openai-python 3.57 keys -1 like any other index, "
        "so its fate is decided by where the item's other events go (ITM004, ITM005).",
    sources=(OPENAPI, NODE_STREAM, PY),
    clients=("openai-node",),
    bad="rules/ITM014-output-index-negative.sse",
    good="conforming/reasoning-text.sse",
)
