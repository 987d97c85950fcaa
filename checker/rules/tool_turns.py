"""Tool-turn rules (TUR): multi-step tool use, a function call answered by a second request.

A client that runs tools sends the call's result back in a second request: a ``function_call_output`` item
(Responses), a ``tool`` message (Chat Completions), a ``tool_result`` block (Anthropic Messages), paired with
the call by its id. The probe's ``tool_turn`` flows (:mod:`checker.surface.turns`) make that round trip in each
dialect; the second answer is a stream checked like any scenario's, and the rules here judge the round trip
itself: whether the server takes the result and keeps the call ids apart. (A result for a call id that no
call has is sent as an invalid request: its acceptance is HTP005.) Their examples are flow records (``captures/surface/*.flow.json``).
"""

from checker.rules.registry import rule

RESPONSES_TOOLS = "OpenAI function calling guide: send function_call_output with the call_id of each call"
CHAT_TOOLS = "OpenAI Chat Completions reference: a tool message answers a preceding assistant tool_calls id"
ANTHROPIC_TOOLS = "Anthropic tool use: a tool_result block answers the tool_use block with its tool_use_id"
AGENTS = "openai-agents-python src/agents/items.py (ToolCallOutputItem: an output sent back by its call_id)"
CODEX = "codex codex-rs/protocol/src/models.rs (ResponseInputItem::FunctionCallOutput keyed by call_id)"
GOOD = "surface/good-tool-turn.flow.json"

TOOL_OUTPUT_REJECTED = rule(
    "TUR001", "tool-output-rejected", "error",
    "the {what} for call {call_id} was refused: HTTP {status} {message}",
    summary="Flags a server that answers an error to the request that carries a function call's result back "
            "(the second request of a tool turn, with the whole history: stateless).",
    why="Every agent loop sends tool results back: codex and the Agents SDK send a `function_call_output` after "
        "each call, chat clients a `tool` message; a server that refuses it can answer one question but never "
        "finish a task that uses a tool.",
    sources=(RESPONSES_TOOLS, CHAT_TOOLS, ANTHROPIC_TOOLS, AGENTS, CODEX),
    clients=("codex", "openai-agents"),
    bad="surface/TUR001-tool-output-rejected.flow.json",
    good=GOOD,
)
CALL_ID_REUSED = rule(
    "TUR002", "call-id-reused", "error",
    "call id {call_id} of the {where} was already used by an earlier call in this conversation",
    summary="Flags a function call whose call id repeats one of an earlier call in the same conversation "
            "(across the requests of a tool turn) or of the same answer.",
    why="Clients pair each result with its call by id: the Agents SDK and codex key outputs by `call_id`, chat "
        "clients by the tool call's `id`; two calls with one id get one result, or the first call's result is "
        "sent for the second, and the model reads an answer to a question it did not ask.",
    sources=(AGENTS, CODEX, CHAT_TOOLS),
    clients=("codex", "openai-agents"),
    bad="surface/TUR002-call-id-reused.flow.json",
    good=GOOD,
)
