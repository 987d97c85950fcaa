"""Reconciliation rules: deltas → done → part → item → completed output (docs/spec.md §2)."""

from checker.rules.registry import rule

OPENAPI = "OpenAI OpenAPI 2.3.0 ResponseStreamEvent"

TEXT_DONE_MISMATCH = rule(
    "REC001", "done-text-mismatch", "warning",
    "{type} text differs from the concatenated deltas ({diff})",
    summary="Flags a text `.done` event whose text is not the concatenation of its deltas.",
    why="Clients that stream deltas and clients that read the done text show different answers "
        "(opencode-llm-proxy #48; llama.cpp's own test checks this).",
    sources=(OPENAPI, "opencode-llm-proxy #48", "llama.cpp tests/test_responses"),
    good="conforming/text.sse",
)
PART_DONE_MISMATCH = rule(
    "REC002", "part-done-mismatch", "warning",
    "content_part.done text differs from the part's streamed text ({diff})",
    summary="Flags a content_part.done whose part text is not what was streamed into the part.",
    why="The part at done replaces the accumulated one in openai-node's snapshot.",
    sources=(OPENAPI,),
    good="conforming/text.sse",
)
ITEM_DONE_MISMATCH = rule(
    "REC003", "item-done-mismatch", "error",
    "output_item.done {what} differs from what was streamed ({diff})",
    summary="Flags an output_item.done whose content text, summary or arguments differ from the streamed ones.",
    why="codex and openai-agents keep the done item and ignore the deltas, and the SDKs' final responses are "
        "the done items: the user saw one text, the history keeps another.",
    sources=(OPENAPI,
             "codex codex-rs/codex-api/src/sse/responses.rs",
             "openai-agents-python src/agents/run_internal/run_loop.py (the turn from response.completed)",
             "openai-python src/openai/lib/streaming/responses/_responses.py (ResponseStreamState, get_final_response)",
             "openai-node src/lib/responses/ResponseStream.ts (#prepareEvent, #assertComplete, finalResponse)"),
    clients=("codex", "openai-agents", "openai-python", "openai-node"),
    good="conforming/reasoning-function-call.sse",
)
COMPLETED_OUTPUT_MISMATCH = rule(
    "REC004", "final-output-mismatch", "error",
    "{type} output differs from the done items: {detail}",
    summary="Flags a terminal response whose `output` does not list the done items, in order, with the same ids "
            "and text.",
    why="openai-agents-python builds the turn only from response.completed.response.output (vLLM PR #38227), "
        "and so do the SDKs' final responses: what was streamed is not what the caller gets (openai-python "
        "raises \"Completed response output identity changed.\" when a call's id changes).",
    sources=(OPENAPI,
             "vLLM PR #38227",
             "openai-python _responses.py",
             "openai-agents-python src/agents/run_internal/run_loop.py (the turn from response.completed)",
             "openai-node src/lib/responses/ResponseStream.ts (#prepareEvent, #assertComplete, finalResponse)"),
    clients=("openai-agents", "openai-python", "openai-node"),
    good="conforming/reasoning-function-call.sse",
)
COMPLETED_OUTPUT_EMPTY = rule(
    "REC005", "final-output-empty", "error",
    "{type} has an empty output although {count} item(s) were done",
    summary="Flags a terminal response with `output: []` after items were streamed.",
    why="openai-agents-python reads only this list and sees an empty turn, and the SDKs' final response has no "
        "output; OpenAI's own codex backend does this with store:false, which codex tolerates (codex profile).",
    sources=(OPENAPI,
             "openai-agents-python",
             "codex",
             "openai-python src/openai/lib/streaming/responses/_responses.py (ResponseStreamState, get_final_response)",
             "openai-node src/lib/responses/ResponseStream.ts (#prepareEvent, #assertComplete, finalResponse)"),
    clients=("openai-python", "openai-node"),
    good="conforming/text.sse",
)
ARGUMENTS_DONE_MISMATCH = rule(
    "REC006", "arguments-done-mismatch", "warning",
    "function_call_arguments.done arguments differ from the concatenated deltas ({diff})",
    summary="Flags arguments.done whose arguments are not the concatenation of the argument deltas.",
    why="A client that streams arguments and one that reads arguments.done call the tool with different input.",
    sources=(OPENAPI,),
    good="conforming/reasoning-function-call.sse",
)
ITEM_STATUS_CONTRADICTION = rule(
    "REC007", "item-status-contradiction", "error",
    "{type} lists item {item!r} as {final!r}, its output_item.done said {done!r}",
    summary="Flags an item whose status in the terminal response contradicts the status its "
            "`output_item.done` gave it (done `completed`, listed `incomplete`, or any other pair).",
    why="codex keeps the done item (codex-rs/codex-api/src/sse/responses.rs), while openai-python's "
        "get_final_response(), openai-node's finalResponse() and openai-agents take the terminal response's "
        "output: one client sees a finished message, another a cut one, and an agent that retries or "
        "continues incomplete items decides differently from the stream it showed.",
    sources=("OpenAI Responses API reference, Response.output[].status "
             "(https://platform.openai.com/docs/api-reference/responses/object)",
             "openai-python src/openai/lib/streaming/responses/_responses.py",
             "codex codex-rs/codex-api/src/sse/responses.rs", "openai-node src/lib/responses/ResponseStream.ts (#prepareEvent, #assertComplete, finalResponse)", "openai-agents-python src/agents/run_internal/run_loop.py (the turn from response.completed)"),
    clients=("openai-python", "openai-node", "openai-agents"),
    good="conforming/incomplete.sse",
)
TOOL_DONE_MISMATCH = rule(
    "REC008", "tool-done-mismatch", "error",
    "{type} {field} differs from the concatenated deltas ({diff})",
    summary="Flags a hosted-tool `.done` event (code, MCP arguments, custom tool input, shell command or output, "
            "patch diff) whose value is not the concatenation of its deltas.",
    why="openai-node appends the deltas to its snapshot and replaces them with the `.done` value "
        "(output.code = event.code, output.arguments = event.arguments, output.input = event.input, the command "
        "at command_index): what was shown streaming is not what the tool runs with.",
    sources=(OPENAPI, "openai-node 7.59 src/internal/responses/response-accumulator.ts"),
    clients=("openai-node",),
    good="conforming/code-interpreter.sse",
)
TOOL_ITEM_DONE_MISMATCH = rule(
    "REC009", "tool-item-done-mismatch", "error",
    "output_item.done {item_type} {field} differs from what was streamed ({diff})",
    summary="Flags a hosted-tool item whose code, arguments, input, shell commands or outputs, or patch diff at "
            "output_item.done differ from what its events streamed.",
    why="openai-node replaces its streamed item with the done item, and finalResponse() and the next turn keep "
        "the done one: the input shown while streaming is not the input in the response.",
    sources=(OPENAPI, "openai-node 7.59 src/internal/responses/response-accumulator.ts"),
    clients=("openai-node",),
    good="conforming/code-interpreter.sse",
)
ANNOTATIONS_MISMATCH = rule(
    "REC010", "annotations-mismatch", "error",
    "{where} annotations of content part {index} of item {item!r} differ from the annotations added ({detail})",
    summary="Flags a text part whose annotations (url, file or container citations) at content_part.done or "
            "output_item.done are not the ones its output_text.annotation.added events streamed.",
    why="OpenAI repeats exactly the annotations it streamed in the done part, the done item and the final "
        "response. openai-node accumulates the events into its snapshot and replaces the part at "
        "content_part.done and the item at output_item.done, so citations shown while streaming are not the "
        "response's; consumers that build their sources from the events (vercel/ai's source parts) miss or "
        "keep the wrong ones.",
    sources=(OPENAPI, "openai-node 7.59 src/internal/responses/response-accumulator.ts",
             "OpenAI streams recorded by vercel/ai packages/openai/src/responses/__fixtures__"),
    clients=("openai-node",),
    good="conforming/web-search.sse",
)
