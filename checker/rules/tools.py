"""Hosted-tool rules: progress-event order, streamed input, command and partial-image indexes (docs/spec.md §2.1).

The order each family must follow is the one OpenAI sends (recorded streams of
web search, file search, code interpreter, image generation, MCP, shell and
apply_patch calls; see checker/dialects/responses/hosted.py). The SDK accumulators set the item's
status from each progress event and end with output_item.done's item, so an
order defect misleads progress displays without changing a final response;
index defects are where openai-node throws.
"""

from checker.rules.registry import rule

OPENAPI = "OpenAI OpenAPI 2.3.0 ResponseStreamEvent"
NODE = "openai-node 7.59 src/internal/responses/response-accumulator.ts"
RECORDED = "OpenAI streams recorded by vercel/ai packages/openai/src/responses/__fixtures__"

PROGRESS_MISSING = rule(
    "HST001", "tool-progress-missing", "warning",
    "{item_type} {item!r} reached {reached} without {missing}",
    summary="Flags a hosted-tool call that skips a progress event of its family (web_search_call.searching, "
            "code_interpreter_call.interpreting, image_generation_call.generating, mcp_call.completed, …).",
    why="Each family reports its stages in a fixed order (web and file search in_progress → searching → "
        "completed; code interpreter in_progress → code → interpreting → completed; image generation "
        "in_progress → generating → partial images → completed; MCP in_progress → arguments → completed or "
        "failed). openai-node sets the item's status from each event and both SDKs end with output_item.done's "
        "item, so no final response changes; a progress display never shows the skipped stage.",
    sources=(OPENAPI, NODE, RECORDED),
    clients=(),
    good="conforming/web-search.sse",
)
PROGRESS_REPEATED = rule(
    "HST002", "tool-progress-repeated", "warning",
    "{type} again for {item_type} {item!r}",
    summary="Flags a hosted-tool progress event sent twice for one call (mcp_call.in_progress excepted: OpenAI "
            "repeats it while the arguments stream).",
    why="A stage happens once per call; a repeated one is a server that restarted the call or duplicated an "
        "event. openai-node sets the same status again, so only progress displays and event counters notice.",
    sources=(OPENAPI, NODE, RECORDED),
    clients=(),
    good="conforming/code-interpreter.sse",
)
PROGRESS_ORDER = rule(
    "HST003", "tool-progress-out-of-order", "warning",
    "{type} after {after} for {item_type} {item!r}",
    summary="Flags a hosted-tool event that goes back to an earlier stage (searching after completed, code after "
            "interpreting, a partial image after completed).",
    why="openai-node moves the item's streamed status back (output.status = 'searching' after 'completed') until "
        "output_item.done replaces the item; a progress display shows the call running again.",
    sources=(OPENAPI, NODE, RECORDED),
    clients=(),
    good="conforming/image-generation.sse",
)
INPUT_DONE_MISSING = rule(
    "HST004", "tool-input-done-missing", "warning",
    "{item_type} {item!r} done without {done_type}",
    summary="Flags a hosted-tool call that streamed its input (code, MCP arguments, custom tool input, a shell "
            "command, a patch diff) and completed without the matching `.done` event (a call cut short, "
            "incomplete or failed, owes none).",
    why="Consumers that act on the `.done` event (running or showing the final code or command) never get it; "
        "the SDK snapshots keep the streamed value and output_item.done's item, so their results do not change.",
    sources=(OPENAPI, NODE),
    clients=(),
    good="conforming/mcp-call.sse",
)
INPUT_AFTER_DONE = rule(
    "HST005", "tool-input-after-done", "warning",
    "{type} for {item_type} {item!r} after {done_type}",
    summary="Flags an input delta or a second `.done` after the input's `.done` event (code, MCP arguments, "
            "custom tool input, a shell command or its output).",
    why="The input is final at its `.done` event: the tool ran, or will run, with that value; openai-node "
        "appends the late delta to its snapshot, so the streamed input no longer is the one that ran.",
    sources=(OPENAPI, NODE),
    clients=(),
    good="conforming/shell.sse",
)
PARTIAL_IMAGE_INDEX = rule(
    "HST006", "partial-image-index-not-appended", "warning",
    "image_generation_call.partial_image {item!r} at partial_image_index {got}, expected {expected}",
    summary="Flags partial images whose partial_image_index does not go 0, 1, 2, … per image generation call.",
    why="Partial images are numbered from 0 in the order they are sent; a viewer that keys frames by index shows "
        "a stale frame on a repeat and waits for the missing one on a gap. Both SDKs ignore the event "
        "(openai-node lists it among the ignored events), so no final response changes.",
    sources=(OPENAPI, NODE, RECORDED),
    clients=(),
    good="conforming/image-generation.sse",
)
COMMAND_INDEX_NOT_APPENDED = rule(
    "HST007", "shell-command-index-not-appended", "error",
    "shell_call_command.added for {item!r} at command_index {got}, expected {expected}",
    summary="Flags a shell command added at a command_index other than the number of commands the call has.",
    why="openai-node appends at command_index and throws \"missing command at index N\" past the end "
        "(validateArrayIndex with append); an index already used overwrites that command in the snapshot.",
    sources=(OPENAPI, NODE),
    clients=("openai-node",),
    good="conforming/shell.sse",
)
COMMAND_INDEX_UNKNOWN = rule(
    "HST008", "shell-command-index-unknown", "error",
    "{type} for {item!r} at command_index {got}, but the call has {count} command(s)",
    summary="Flags a shell command delta or done whose command_index names no command of the call.",
    why="openai-node looks the command up by command_index and throws \"missing command at index N\".",
    sources=(OPENAPI, NODE),
    clients=("openai-node",),
    good="conforming/shell.sse",
)
OUTPUT_INDEX_UNKNOWN = rule(
    "HST009", "shell-output-index-unknown", "error",
    "{type} for {item!r} at command_index {got}: {target}",
    summary="Flags shell output for a command_index that its shell call (same call_id) does not have, or, "
            "without that call in the stream, past the outputs streamed so far.",
    why="openai-node finds the shell_call with the output's call_id and throws \"missing command at index N\" "
        "when it has no such command (\"missing content at index N\" past the outputs when there is no call).",
    sources=(OPENAPI, NODE),
    clients=("openai-node",),
    good="conforming/shell.sse",
)
