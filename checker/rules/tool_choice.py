"""Tool-choice rules (TCH): the tool a request forces by name, and the tools it offers, against the answer's calls.

A request may force one function by name (Responses ``tool_choice: {"type": "function", "name": …}``, Chat
Completions ``{"type": "function", "function": {"name": …}}``, Anthropic ``{"type": "tool", "name": …}``): the
answer must then be a call to that function. Any call must name a function the request offered. The probe's
``tool_choice`` flows (:mod:`checker.surface.tool_choice`) send such a request in each dialect and judge the
answer's calls with the rules here. Their examples are flow records (``captures/surface/*.flow.json``).
"""

from checker.rules.registry import rule

RESPONSES_REF = ("OpenAI API reference, Responses `tool_choice` (ToolChoiceFunction: `{type: function, name}` "
                 "forces the model to call that function; reference/openai-openapi.json)")
CHAT_REF = ("OpenAI API reference, Chat Completions `tool_choice` (ChatCompletionNamedToolChoice: forces the model "
            "to call that function)")
ANTHROPIC_REF = "Anthropic Messages API reference, `tool_choice` (`{type: tool, name}`: the model must use that tool)"
AGENTS_CHOICE = ("openai-agents-python src/agents/models/openai_responses.py (Converter.convert_tool_choice: "
                 "ModelSettings.tool_choice naming a tool is sent as `{type: function, name}`)")
AGENTS_LOOKUP = ("openai-agents-python src/agents/run_internal/turn_resolution.py (a call to a tool the agent does "
                 "not have raises ModelBehaviorError \"Tool … not found in agent …\")")
GOOD = "surface/good-tool-choice.flow.json"

FORCED_TOOL_NOT_CALLED = rule(
    "TCH001", "forced-tool-not-called", "error",
    "the request forced {forced} ({where}), but {instead}",
    summary="Flags an answer to a request that forces one function by name (`tool_choice`) that does not call it: "
            "it answers in text, or calls another function.",
    why="A client forces a tool to get that tool's arguments (an extraction, a required first step of an agent): "
        "it reads the call from the answer (`message.tool_calls[0]`, the first `function_call` item, the "
        "`tool_use` block). A text answer leaves nothing to read (`tool_calls[0]` on None raises), and the Agents "
        "SDK, whose ModelSettings.tool_choice sends exactly this request, takes the text as the agent's final "
        "output and never runs the tool.",
    sources=(RESPONSES_REF, CHAT_REF, ANTHROPIC_REF, AGENTS_CHOICE),
    clients=("openai-agents",),
    bad="surface/TCH001-forced-tool-not-called.flow.json",
    good=GOOD,
)
CALLED_TOOL_NOT_OFFERED = rule(
    "TCH002", "called-tool-not-offered", "error",
    "call {call_id} names {name}, which is not among the functions the request offered ({offered})",
    summary="Flags a function call that names a function the request did not offer in its `tools`.",
    why="A client runs a call by looking its name up among the tools it sent: the Agents SDK raises "
        "ModelBehaviorError (\"Tool … not found in agent …\") and ends the run; codex answers the model that the "
        "call is unsupported; a plain client dispatching on the name has no handler to call.",
    sources=(RESPONSES_REF, CHAT_REF, ANTHROPIC_REF, AGENTS_LOOKUP),
    clients=("openai-agents",),
    bad="surface/TCH002-called-tool-not-offered.flow.json",
    good=GOOD,
)
AGENTS_VALIDATE = ("openai-agents-python src/agents/tool.py (function_tool's _on_invoke_tool_impl: the arguments "
                   "go through the tool's pydantic model; a ValidationError raises ModelBehaviorError \"Invalid JSON "
                   "input for tool …\")")
STRICT_GUIDE = ("OpenAI function calling guide, strict mode: with `strict: true` the call's arguments follow the "
                "function's `parameters` schema exactly")
ARGUMENTS_OFF_SCHEMA = rule(
    "TCH003", "arguments-off-strict-schema", "error",
    "call {call_id} of {name}: the arguments do not match the parameters schema the request sent with strict: "
    "true: {detail}",
    summary="Flags a function call whose arguments (JSON) do not validate against the `parameters` schema of a "
            "tool the request declared with `strict: true` (chat `function.strict`, Responses and Anthropic "
            "`strict`).",
    why="Strict mode is a promise that the arguments follow the schema, and clients build on it: the Agents SDK "
        "validates them with the tool's pydantic model and ends the run with ModelBehaviorError (\"Invalid JSON "
        "input for tool …\"); openai-python's `pydantic_function_tool` with `.parse()` parses them into the "
        "model; code that reads `args[\"unit\"]` of a required member raises KeyError.",
    sources=(STRICT_GUIDE, RESPONSES_REF, CHAT_REF, AGENTS_VALIDATE),
    clients=("openai-agents",),
    bad="surface/TCH003-arguments-off-strict-schema.flow.json",
    good=GOOD,
)
