"""Chat Completions rules: chunks, choices, deltas, tool-call fragments, finish, usage (docs/spec.md §6).

The machine that applies them is checker/dialects/chat/machine.py. What each client does with a
deviation is in checker/dialects/chat/effects.py, verified by running the real SDKs on every capture
of captures/chat (tests/test_chat_oracles.py).
"""

from typing import Any

from checker.rules.registry import Rule
from checker.rules.registry import rule as _register


def rule(code: str, name: str, severity: str, message: str, **fields: Any) -> Rule:
    """A CHT rule: its bad example is captures/chat/rules/<code>-<name>.sse."""
    return _register(code, name, severity, message, bad=f"chat/rules/{code}-{name}.sse", **fields)

SPEC = "docs/spec.md §6"
OPENAPI = "OpenAI OpenAPI 2.3.0 CreateChatCompletionStreamResponse"
PY_STATE = "openai-python 3.57.0 src/openai/lib/streaming/chat/_completions.py (ChatCompletionStreamState)"
PY_DELTAS = "openai-python 3.57.0 src/openai/lib/streaming/_deltas.py (accumulate_delta)"
PY_STREAM = "openai-python 3.57.0 src/openai/_streaming.py (Stream.__stream__)"
NODE_STREAM = "openai-node 7.59.0 src/lib/ChatCompletionStream.ts"
NODE_CORE = "openai-node 7.59.0 src/core/streaming.ts"
CLIENTS = ("openai-python", "openai-node")

IDENTITY_CHANGED = rule(
    "CHT001", "chunk-identity-changed", "error",
    "chunk {field} {after!r} differs from the first chunk's {before!r} ({count} chunk(s))",
    summary="Flags a chunk whose id, object, model or system_fingerprint differs from the first chunk's (created: "
            "CHT027).",
    why="Every chunk of one completion carries the same id and timestamp (the description: \"Each chunk has the "
        "same ID\"). The clients disagree on which value wins: openai-python keeps the first chunk's id, model "
        "and created, the last chunk's system_fingerprint, and its stream() helper skips a chunk whose object "
        "is not chat.completion.chunk; openai-node copies every chunk's fields over its snapshot, so its final "
        "completion has the last chunk's. A changed id is also how openai-node's "
        "ChatCompletionStream.fromReadableStream tells a new completion apart. Reported once per field at the "
        "first chunk that differs.",
    sources=(OPENAPI, SPEC, PY_STATE, NODE_STREAM),
    clients=CLIENTS,
    good="chat/conforming/text.sse",
)
CHUNK_SCHEMA = rule(
    "CHT002", "chunk-schema-violation", "warning",
    "{what} {where}: {detail}",
    summary="Flags a chunk field that violates the CreateChatCompletionStreamResponse schema (a choice without "
            "finish_reason or delta, a content that is not a string, an unknown finish_reason), and a field of a "
            "`stream: false` completion that violates CreateChatCompletionResponse.",
    why="The SDKs construct chunks without validating them, so a wrong shape reaches the user's code as a wrong "
        "type; typed clients in other languages fail to deserialise the chunk. The fields the SDKs' accumulators "
        "dereference (choices, a choice, its delta and logprobs, a tool-call entry and its function; openai-node "
        "also the role and the call's type) raise when they have the wrong shape; a text field of the wrong "
        "type is carried into the final message as it came. Any other field is read by no client.",
    sources=(OPENAPI, SPEC, PY_STATE, PY_DELTAS, NODE_STREAM),
    clients=("openai-python", "openai-node"),
    good="chat/conforming/text.sse",
)
ROLE_MISSING = rule(
    "CHT003", "role-missing", "error",
    "choice {index}'s first delta has no role",
    summary="Flags a choice whose first delta does not carry `role`.",
    why="The role is sent once, in a choice's first delta. openai-node's finalChatCompletion() throws "
        "\"missing role for choice N\" when no delta of the choice ever carried one; openai-python returns a "
        "message whose role is None.",
    sources=(SPEC, NODE_STREAM, PY_STATE),
    clients=("openai-node",),
    good="chat/conforming/text.sse",
)
ROLE_REPEATED = rule(
    "CHT004", "role-repeated", "error",
    "choice {index}: role {role!r} again after its first delta{change}",
    summary="Flags a `role` in a later delta of a choice (repeated, or changed).",
    why="openai-python's accumulate_delta concatenates every string field of the delta, so a repeated role "
        "becomes \"assistantassistant\" in get_final_completion(); openai-node keeps the last role.",
    sources=(SPEC, PY_DELTAS, NODE_STREAM),
    clients=CLIENTS,
    good="chat/conforming/text.sse",
)
CHOICE_INDEX = rule(
    "CHT005", "choice-index-invalid", "error",
    "choice index {choice!r}: {problem}",
    summary="Flags a choice whose index is not an integer, is negative, skips an index or is not below the "
            "request's n.",
    why="Choices are numbered 0..n-1 and each chunk names its choice by index. openai-node throws \"Chat "
        "completion stream contains an invalid choice index\" outside that range; openai-python looks the "
        "choice snapshot up by index and fails on a gap (IndexError).",
    sources=(OPENAPI, SPEC, PY_STATE, NODE_STREAM),
    clients=CLIENTS,
    good="chat/conforming/two-choices.sse",
)
AFTER_FINISH = rule(
    "CHT006", "delta-after-finish", "error",
    "choice {index}: {what} after its finish_reason {finish!r}",
    summary="Flags content, a refusal, reasoning or a tool-call fragment for a choice after the chunk that "
            "finished it.",
    why="finish_reason closes a choice: openai-python fires content.done and tool_calls.function.arguments.done "
        "at the finish, so listeners have already been told the final text; both SDKs still append the late "
        "delta to the snapshot, so the final message and the done events disagree.",
    sources=(SPEC, PY_STATE, NODE_STREAM),
    clients=CLIENTS,
    good="chat/conforming/text.sse",
)
FINISH_REPEATED = rule(
    "CHT007", "finish-reason-repeated", "warning",
    "choice {index}: finish_reason {finish!r} again (first {first!r})",
    summary="Flags a second non-null finish_reason for one choice.",
    why="A choice finishes once. Both SDKs overwrite the finish reason with the last one, so a changed value "
        "changes the final completion; openai-python's get_final_completion() raises when that last one is "
        "length or content_filter.",
    sources=(SPEC, PY_STATE, NODE_STREAM),
    clients=CLIENTS,
    good="chat/conforming/text.sse",
)
FINISH_MISSING = rule(
    "CHT008", "finish-reason-missing", "error",
    "choice {index} never got a finish_reason",
    summary="Flags a choice that the stream ended without finishing (no chunk with a non-null finish_reason).",
    why="openai-node's finalChatCompletion() throws \"missing finish_reason for choice N\"; openai-python "
        "returns a completion whose choice has finish_reason None, which its types do not allow.",
    sources=(SPEC, NODE_STREAM, PY_STATE),
    clients=("openai-node",),
    good="chat/conforming/text.sse",
)
FINISH_NOT_TOOL_CALLS = rule(
    "CHT009", "finish-reason-tool-calls-mismatch", "warning",
    "choice {index}: finish_reason {finish!r} {problem}",
    summary="Flags a choice that sent tool calls but finished with stop, or finished with tool_calls without "
            "any call.",
    why="Agent loops decide whether to run tools from finish_reason == \"tool_calls\" (openai-agents-python "
        "and most chat loops): calls under \"stop\" are never run, and \"tool_calls\" without calls runs "
        "nothing and loops.",
    sources=(OPENAPI, SPEC),
    good="chat/conforming/tool-call.sse",
)
FINISH_LENGTH = rule(
    "CHT010", "finish-reason-length-mismatch", "warning",
    "choice {index}: finish_reason {finish!r} but {problem}",
    summary="Flags a finish_reason that contradicts the request's token limit (max_completion_tokens or "
            "max_tokens, from the request sidecar) and the usage: a completion that used the whole limit but "
            "says stop, or says length below the limit.",
    why="finish_reason \"length\" is how a client learns that the answer was cut (openai-python's "
        "LengthFinishReasonError, a retry with a larger limit); a cut reported as stop passes a truncated "
        "answer off as complete.",
    sources=(OPENAPI, SPEC, PY_STATE),
    good="chat/conforming/length.sse",
)
TOOL_INDEX_MISSING = rule(
    "CHT011", "tool-call-index-missing", "error",
    "choice {index}: a tool_calls fragment has no integer index ({value})",
    summary="Flags a tool-call fragment without an integer `index`.",
    why="Fragments are joined by index. openai-python's accumulate_delta raises \"Expected list delta entry to "
        "have an `index` key\"; openai-node throws \"Chat completion stream contains an invalid tool call "
        "index\".",
    sources=(OPENAPI, SPEC, PY_DELTAS, NODE_STREAM,
             "openai-agents-python src/agents/models/chatcmpl_stream_handler.py (the tool calls assembled from the chunks, then run; measured, tests/test_real_clients.py)",
             "vercel-ai packages/openai/src/chat/openai-chat-api.ts (openaiChatChunkSchema; measured, tests/test_real_clients.py)"),
    clients=(*CLIENTS, "openai-agents", "vercel-ai"),
    good="chat/conforming/tool-call.sse",
)
TOOL_START_INCOMPLETE = rule(
    "CHT012", "tool-call-start-incomplete", "error",
    "choice {index}: the first fragment of tool call {call} has no {missing}",
    summary="Flags the first fragment of a tool call that lacks `id`, `type` or `function.name`.",
    why="The first fragment names the call; later ones only carry argument pieces. openai-node throws "
        "\"missing choices[N].tool_calls[M].type\" (or function.name) at the end and invents an id "
        "(call_<uuid>) when none came, so the tool result cannot be matched to anything the server knows; "
        "openai-python keeps None.",
    sources=(OPENAPI, SPEC, NODE_STREAM, PY_STATE,
             "openai-agents-python src/agents/models/chatcmpl_stream_handler.py (the tool calls assembled from the chunks, then run; measured, tests/test_real_clients.py)"),
    clients=("openai-node", "openai-agents"),
    good="chat/conforming/tool-call.sse",
)
TOOL_IDENTITY_REPEATED = rule(
    "CHT013", "tool-call-identity-repeated", "error",
    "choice {index}: tool call {call} repeats its {field} {value!r} in a later fragment",
    summary="Flags a later fragment of a tool call that carries the call's id, type or function.name again.",
    why="openai-python's accumulate_delta concatenates strings, so a repeated id becomes \"call_1call_1\" and "
        "a repeated name \"get_weatherget_weather\" in get_final_completion(): the tool is not found. "
        "openai-node assigns the value again, which is harmless.",
    sources=(SPEC, PY_DELTAS, NODE_STREAM),
    clients=("openai-python",),
    good="chat/conforming/tool-call.sse",
)
TOOL_IDENTITY_CHANGED = rule(
    "CHT014", "tool-call-identity-changed", "error",
    "choice {index}: tool call {call} changes its {field} from {before!r} to {after!r}",
    summary="Flags a later fragment of a tool call whose id, type or function.name differs from the first "
            "fragment's.",
    why="A call's identity is fixed by its first fragment. openai-python concatenates the two values, "
        "openai-node keeps the last one (and throws \"changed tool call identity\" for a strict tool): neither "
        "final call is what the server meant.",
    sources=(SPEC, PY_DELTAS, NODE_STREAM,
             "vercel-ai packages/provider-utils/src/streaming-tool-call-tracker.ts and packages/ai/src/generate-text/parse-tool-call.ts (measured, tests/test_real_clients.py)"),
    clients=(*CLIENTS, "vercel-ai"),
    good="chat/conforming/parallel-tool-calls.sse",
)
TOOL_INDEX_SHARED = rule(
    "CHT015", "tool-call-index-shared", "error",
    "choice {index}: a new tool call {name!r} (id {id!r}) starts at index {call}, which {other!r} already holds",
    summary="Flags a second call (a new id and name) started at a tool-call index that another call holds.",
    why="Each call has its own index; both SDKs merge every fragment of an index into one call, so the two "
        "calls become one with a mixed identity and concatenated arguments, and one call is lost.",
    sources=(SPEC, PY_DELTAS, NODE_STREAM,
             "openai-agents-python src/agents/models/chatcmpl_stream_handler.py (the tool calls assembled from the chunks, then run; measured, tests/test_real_clients.py)"),
    clients=(*CLIENTS, "openai-agents"),
    good="chat/conforming/parallel-tool-calls.sse",
)
TOOL_ID_DUPLICATE = rule(
    "CHT016", "tool-call-id-duplicate", "warning",
    "choice {index}: tool call {call} reuses the id {id!r} of tool call {first_call}",
    summary="Flags two tool calls of a choice with the same id.",
    why="The client answers each call with a tool message naming its id; two calls with one id cannot both be "
        "answered, and the next request is rejected or pairs the wrong result.",
    sources=(SPEC, OPENAPI,
             "openai-agents-python src/agents/models/chatcmpl_stream_handler.py (the tool calls assembled from the chunks, then run; measured, tests/test_real_clients.py)"),
    good="chat/conforming/parallel-tool-calls.sse",
    clients=("openai-agents",),
)
ARGUMENTS_INVALID = rule(
    "CHT017", "tool-arguments-invalid-json", "warning",
    "choice {index}: tool call {call} ({name!r}) arguments are not valid JSON at the finish: {error}",
    summary="Flags a tool call whose joined argument fragments do not parse as JSON when its choice finishes "
            "(or the stream ends), unless the choice finished with \"length\": the token limit cut it, and the "
            "finish_reason says so.",
    why="The application parses the joined arguments to run the tool (json.loads, JSON.parse); openai-python's "
        "parsed_arguments for a strict tool is built from them. Neither SDK checks them for a plain tool, so "
        "the failure surfaces in the user's code.",
    sources=(SPEC, PY_STATE,
             "openai-agents-python src/agents/models/chatcmpl_stream_handler.py (the tool calls assembled from the chunks, then run; measured, tests/test_real_clients.py)",
             "vercel-ai packages/ai/src/generate-text/parse-tool-call.ts (AI_InvalidToolInputError; measured, tests/test_real_clients.py)"),
    good="chat/conforming/tool-call.sse",
    clients=("openai-agents", "vercel-ai"),
)
ARGUMENTS_NOT_STRING = rule(
    "CHT018", "tool-arguments-not-a-string", "error",
    "choice {index}: tool call {call} arguments are {kind}, not a string fragment",
    summary="Flags a tool-call fragment whose function.arguments is an object or any other non-string.",
    why="Arguments stream as pieces of one JSON text. openai-node appends the value to a string "
        "(\"[object Object]\"); openai-python's accumulate_delta cannot join an object to a string and keeps "
        "the string, so the object is lost from the final call.",
    sources=(OPENAPI, SPEC, PY_DELTAS, NODE_STREAM,
             "langchain-openai langchain_openai/chat_models/base.py (ChatOpenAI.stream over openai-python's Stream; measured, tests/test_real_clients.py)",
             "openai-agents-python src/agents/models/chatcmpl_stream_handler.py (the tool calls assembled from the chunks, then run; measured, tests/test_real_clients.py)",
             "vercel-ai packages/openai/src/chat/openai-chat-api.ts (openaiChatChunkSchema; measured, tests/test_real_clients.py)"),
    clients=(*CLIENTS, "langchain", "openai-agents", "vercel-ai"),
    good="chat/conforming/tool-call.sse",
)
ARGUMENTS_REPEATED = rule(
    "CHT019", "tool-arguments-repeated-in-full", "warning",
    "choice {index}: tool call {call} resends its whole arguments so far in a later fragment",
    summary="Flags an arguments fragment that starts with everything the call's arguments already hold (a "
            "server that streams the running total instead of the new piece).",
    why="Both SDKs append every fragment, so running totals join into the arguments repeated "
        "(\"{\\\"a\\\"{\\\"a\\\": 1}\"), which no longer parse.",
    sources=(SPEC, PY_DELTAS, NODE_STREAM,
             "openai-agents-python src/agents/models/chatcmpl_stream_handler.py (the tool calls assembled from the chunks, then run; measured, tests/test_real_clients.py)",
             "vercel-ai packages/provider-utils/src/streaming-tool-call-tracker.ts and packages/ai/src/generate-text/parse-tool-call.ts (measured, tests/test_real_clients.py)"),
    good="chat/conforming/tool-call.sse",
    clients=("openai-agents", "vercel-ai"),
)
USAGE_NOT_LAST = rule(
    "CHT020", "usage-chunk-not-last", "error",
    "a chunk after the usage chunk{what}",
    summary="Flags chunks after the one that carried usage (stream_options.include_usage: the usage chunk is "
            "the last before [DONE]).",
    why="Both SDKs set the completion's usage from the chunks (openai-python: completion_snapshot.usage = "
        "chunk.usage, from every chunk; openai-node copies the fields a chunk carries), so a later chunk with "
        "usage null erases it from the final completion (openai-python also when the later chunk has no usage "
        "at all). An error where an SDK's final usage differs from the streamed one; a warning where every later "
        "chunk repeats the usage (Groq, Hugging Face), which both SDKs end with.",
    sources=(OPENAPI, SPEC, PY_STATE, NODE_STREAM),
    clients=CLIENTS,
    good="chat/conforming/usage.sse",
)
USAGE_WITH_CHOICES = rule(
    "CHT021", "usage-chunk-has-choices", "warning",
    "the usage chunk carries {count} choice(s); OpenAI sends it with choices: []",
    summary="Flags a usage chunk whose choices list is not empty.",
    why="The description: the usage chunk \"contains the token usage statistics for the entire request, and the "
        "choices field will always be an empty array\"; clients that treat it as the end of the content (it is "
        "the last chunk) miss a delta it carries.",
    sources=(OPENAPI, SPEC),
    good="chat/conforming/usage.sse",
)
USAGE_TOTALS = rule(
    "CHT022", "usage-totals-inconsistent", "warning",
    "usage {problem}",
    summary="Flags usage whose total_tokens is not prompt_tokens + completion_tokens, or whose details exceed "
            "their total (reasoning_tokens above completion_tokens, cached_tokens above prompt_tokens).",
    why="Billing and context-window accounting add these up; a total that disagrees with its parts is a server "
        "that counted twice or forgot a part.",
    sources=(OPENAPI, SPEC),
    good="chat/conforming/usage.sse",
)
USAGE_MISSING = rule(
    "CHT023", "usage-chunk-missing", "warning",
    "the request asked for usage (stream_options.include_usage) and no chunk carried it",
    summary="Flags a stream whose request set stream_options.include_usage but that ended without a usage chunk.",
    why="Clients that asked for usage read it from the final completion (openai-python "
        "get_final_completion().usage); without the chunk it is None.",
    sources=(OPENAPI, SPEC, PY_STATE),
    good="chat/conforming/usage.sse",
)
ERROR_OBJECT = rule(
    "CHT024", "error-in-stream", "error",
    "an error object mid-stream: {detail}",
    summary="Flags a data event that carries an `error` (how OpenAI and gateways report a failure after the "
            "200 status).",
    why="Both SDKs raise APIError on a data object with a truthy `error` (openai-python's Stream.__stream__, "
        "openai-node's Stream in legacy mode): the turn fails with the server's message.",
    sources=(SPEC, PY_STREAM, NODE_CORE,
             "langchain-openai langchain_openai/chat_models/base.py (ChatOpenAI.stream over openai-python's Stream; measured, tests/test_real_clients.py)",
             "openai-agents-python src/agents/models/chatcmpl_stream_handler.py (the tool calls assembled from the chunks, then run; measured, tests/test_real_clients.py)",
             "vercel-ai packages/openai/src/chat/openai-chat-language-model.ts (an error chunk is an error part; measured, tests/test_real_clients.py)"),
    clients=(*CLIENTS, "langchain", "openai-agents", "vercel-ai"),
    good="chat/conforming/text.sse",
)
VENDOR_REASONING = rule(
    "CHT025", "vendor-reasoning-field", "warning",
    "choice {index}: reasoning streamed as {field!r}, a vendor extension",
    summary="Flags reasoning streamed as `reasoning_content` or `reasoning` on the delta (llama.cpp, vLLM, "
            "DeepSeek, Ollama): not in OpenAI's description; the llama.cpp profile documents it.",
    why="The SDKs keep unknown delta fields in different ways: openai-python concatenates them like content, "
        "openai-node assigns each fragment over the last, so its final message's reasoning_content is the last "
        "fragment only.",
    sources=(SPEC, PY_DELTAS, NODE_STREAM),
    clients=("openai-node",),
    good="chat/conforming/text.sse",
)
EMPTY_CHUNK = rule(
    "CHT026", "chunk-without-choices", "warning",
    "a chunk with choices: [] that is not the usage chunk",
    summary="Flags a chunk whose choices list is empty while it carries no usage.",
    why="Only the usage chunk has an empty choices list; other empty chunks (Azure's prompt filter results, a "
        "keepalive sent as a chunk) are skipped by the SDKs but break clients that read choices[0].",
    sources=(OPENAPI, SPEC),
    good="chat/conforming/usage.sse",
)
CREATED_CHANGED = rule(
    "CHT027", "chunk-created-changed", "warning",
    "chunk created {after!r} differs from the first chunk's {before!r} ({count} chunk(s))",
    summary="Flags chunks whose `created` timestamp differs from the first chunk's (a server that stamps each "
            "chunk with the time it was sent).",
    why="The description: each chunk has the same timestamp, the completion's creation time. openai-python keeps "
        "the first chunk's; openai-node copies every chunk's fields over its snapshot, so its final completion "
        "says it was created when the last chunk was sent. llama-server does this (captures/chat/llama.cpp).",
    sources=(OPENAPI, SPEC, PY_STATE, NODE_STREAM),
    clients=("openai-node",),
    good="chat/conforming/text.sse",
)
WRITER = ("Writer api.writer.com palmyra-x4, recorded by traceloop/openllmetry's Writer instrumentation tests "
          "(captures/cassettes/openllmetry)")
TOOL_TYPE_NULL = rule(
    "CHT028", "tool-call-type-null", "error",
    "choice {index}: a later fragment of tool call {call} sets its type to null",
    summary="Flags a tool-call fragment after the call's first one that carries `\"type\": null`.",
    why="Only the first fragment names a call; later ones omit type. openai-python's accumulate_delta replaces "
        "`type` instead of joining it (it is a union's discriminator), so the call's type becomes None and the "
        "next snapshot fails `assert new_tool.type == \"function\"`: chat.completions.stream() raises "
        "AssertionError, as it does on Writer's streams, which send every later fragment so. openai-node skips "
        "a fragment's null type and finishes.",
    sources=(SPEC, PY_DELTAS, PY_STATE, WRITER),
    clients=("openai-python",),
    good="chat/conforming/tool-call.sse",
)
CHOICE_MESSAGE = rule(
    "CHT029", "choice-message-in-chunk", "error",
    "choice {index} carries a message object in {count} streamed chunk(s){what}",
    summary="Flags a streamed choice that carries `message` (the field of a `stream: false` answer) beside its "
            "`delta`.",
    why="openai-node copies every field of a chunk's choice but the delta onto its snapshot of the choice "
        "(assignOwnProperties), so the chunk's message replaces the message the deltas built: a last message with "
        "`tool_calls: null` fails finalChatCompletion() with \"Chat completion stream contains an unsafe snapshot "
        "tool-call collection\", one that replaces streamed tool calls with \"no tool call snapshot\", and "
        "otherwise what was streamed before it is lost. Writer sends one in every chunk. openai-python reads "
        "only the delta.",
    sources=(SPEC, NODE_STREAM, WRITER),
    clients=("openai-node",),
    good="chat/conforming/text.sse",
)
TOOL_IDENTITY_RESENT = rule(
    "CHT030", "tool-call-identity-resent", "warning",
    "choice {index}: a later fragment of tool call {call} carries {fields}",
    summary="Flags a tool-call fragment after the call's first one that carries an empty id or function.name, or "
            "the call's type again.",
    why="Only a call's first fragment names it. LM Studio sends `\"name\": \"\"` in every later fragment. Both "
        "SDKs skip an empty string and replace the type, so their final calls are right (both run on the "
        "capture); clients that take each fragment's name (rig, gptel) lose the call.",
    sources=(SPEC, "LM Studio lmstudio-bug-tracker #649 (later fragments with an empty function name)",
             "rig PR #423 (LM Studio's Some(\"\") name in argument chunks)", PY_DELTAS, NODE_STREAM),
    good="chat/conforming/tool-call.sse",
)
