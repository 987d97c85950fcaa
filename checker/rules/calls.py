"""Function-call rules: arguments and names (docs/spec.md §2)."""

from checker.rules.registry import rule

OPENAPI = "OpenAI OpenAPI 2.3.0 ResponseStreamEvent"

ARGUMENTS_NOT_JSON = rule(
    "FNC001", "arguments-not-json", "warning",
    "function call {item!r} ({name}) has arguments that are not JSON: {error}",
    summary="Flags final function-call arguments that do not parse as JSON, however the call arrived (announced, "
            "only in output_item.done, only in the terminal response, or in a non-streaming answer). A call the "
            "server marks `incomplete` (cut by max_output_tokens) is left out: its arguments are a prefix by "
            "design and a client must not run it.",
    why="Clients call json.loads on the arguments (openai-python for strict tools, codex, every agent loop); "
        "cut-off arguments (llama.cpp reports truncation as completed) fail the tool call.",
    sources=(OPENAPI,
             "openai-python lib/_parsing/_responses.py",
             "codex",
             "codex codex-rs/core (function tools: 'failed to parse function arguments')",
             "openai-agents-python src/agents/agent.py ('Invalid JSON input for tool')",
             "vercel-ai packages/ai/src/generate-text/parse-tool-call.ts (AI_InvalidToolInputError; measured, tests/test_real_clients.py)"),
    clients=("codex", "openai-agents", "vercel-ai"),
    good="conforming/reasoning-function-call.sse",
)
ARGUMENTS_DONE_MISSING = rule(
    "FNC002", "arguments-done-missing", "warning",
    "function call {item!r} done without function_call_arguments.done",
    summary="Flags a function-call item completed without `response.function_call_arguments.done`.",
    why="Clients that dispatch the tool on arguments.done (the Agents SDK's stream events, UIs) never run it.",
    sources=(OPENAPI, "openresponses src/lib/compliance-tests.ts, src/lib/sse-parser.ts (the compliance suite)"),
    clients=("open-responses",),
    good="conforming/reasoning-function-call.sse",
)
NAME_MISMATCH = rule(
    "FNC003", "call-name-mismatch", "warning",
    "function_call_arguments.done names {done!r}, the item is {item_name!r}",
    summary="Flags arguments.done whose `name` differs from the function-call item's name.",
    why="Which tool runs depends on which event the client trusts.",
    sources=(OPENAPI,),
    good="conforming/reasoning-function-call.sse",
)
ARGUMENTS_AFTER_DONE = rule(
    "FNC004", "arguments-after-done", "warning",
    "{type} for function call {item!r} after function_call_arguments.done",
    summary="Flags argument deltas or a second arguments.done after arguments.done.",
    why="Arguments are final at arguments.done; clients that already ran the tool miss the rest.",
    sources=(OPENAPI,),
    good="conforming/reasoning-function-call.sse",
)
