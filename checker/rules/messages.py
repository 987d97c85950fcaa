"""Anthropic Messages rules: the message, its content blocks and its end (docs/spec.md §7).

Raised by the Messages machine (checker/dialects/messages/machine.py). The client effects of each rule, as
the real SDKs show them, are in checker/dialects/messages/effects.py.
"""

from checker.rules.registry import rule

SPEC = "docs/spec.md §7"
PY = "anthropic-sdk-python src/anthropic/lib/streaming/_messages.py (accumulate_event)"
PY_FINAL = "anthropic-sdk-python src/anthropic/lib/streaming/_messages.py (MessageStream.get_final_message)"
PY_SSE = "anthropic-sdk-python src/anthropic/_streaming.py (Stream.__stream__)"
TS = "anthropic-sdk-typescript src/lib/MessageStream.ts (#accumulateMessage)"
TS_FINAL = "anthropic-sdk-typescript src/lib/MessageStream.ts (finalMessage, #endRequest)"
TS_SSE = "anthropic-sdk-typescript src/core/streaming.ts (Stream.fromSSEResponse)"
TYPES = "anthropic-sdk-python 2.15.0 src/anthropic/types (RawMessageStreamEvent, Message)"
BOTH = ("anthropic-python", "anthropic-ts")


def _bad(code: str, name: str) -> str:
    return f"messages/rules/{code}-{name}.sse"


TEXT = "messages/conforming/text.sse"
THINKING_TOOL = "messages/conforming/thinking-tool-use.sse"

# -- the message ------------------------------------------------------------------------------------------

START_NOT_FIRST = rule(
    "ANT001", "message-start-not-first", "error",
    "{type} before message_start",
    summary="Flags a message event (a content block event, message_delta, message_stop) before `message_start`; "
            "`ping` and `error` may come first.",
    why="Both SDKs build their message snapshot from message_start and drop every event before it "
        "(anthropic-python passes it through unaccumulated, @anthropic-ai/sdk ignores it): a block started "
        "there is lost, and the deltas that follow address a block the snapshot does not have.",
    sources=(SPEC, PY, TS),
    clients=BOTH,
    bad=_bad("ANT001", "message-start-not-first"),
    good=TEXT,
)
START_MISSING = rule(
    "ANT002", "message-start-missing", "error",
    "the stream has no message_start",
    summary="Flags a stream of message events that never sends `message_start`.",
    why="Without message_start there is no message: anthropic-python's get_final_message() fails its "
        "`assert self.__final_message_snapshot is not None`; @anthropic-ai/sdk's finalMessage() rejects with "
        "\"stream ended without producing a Message with role=assistant\".",
    sources=(SPEC, PY_FINAL, TS_FINAL,
             "claude-code measured: claude -p 2.1.197 over a loopback server (tests/test_real_clients.py; its bundled Messages stream reader)"),
    clients=(*BOTH, "claude-code"),
    bad=_bad("ANT002", "message-start-missing"),
    good=TEXT,
)
START_REPEATED = rule(
    "ANT003", "message-start-repeated", "error",
    "message_start sent again (first at event {first})",
    summary="Flags a second `message_start` in one stream.",
    why="One stream carries one message. @anthropic-ai/sdk throws \"Unexpected event order, got message_start "
        "before receiving \\\"message_stop\\\"\"; anthropic-python ignores it and keeps the first message's id.",
    sources=(SPEC, PY, TS,
             "vercel-ai packages/anthropic/src/anthropic-language-model.ts (doStream; measured, tests/test_real_clients.py)"),
    clients=("anthropic-ts", "vercel-ai"),
    bad=_bad("ANT003", "message-start-repeated"),
    good=TEXT,
)
MESSAGE_ID_PREFIX = rule(
    "ANT004", "message-id-prefix", "warning",
    "message id {id!r} does not start with msg_",
    summary="Flags a message id (in `message_start`) that is not a string starting with `msg_`.",
    why="Anthropic's message ids start with msg_; clients and gateways that route, log or deduplicate by id "
        "(or tell a Messages answer from a Chat Completions one by it) see another API's id: llama-server "
        "sends its chat completion ids (chatcmpl-…).",
    sources=(SPEC, TYPES),
    bad=_bad("ANT004", "message-id-prefix"),
    good=TEXT,
)
START_CONTENT = rule(
    "ANT005", "message-start-content-not-empty", "error",
    "message_start carries {count} content block(s); content must be empty",
    summary="Flags a `message_start` whose `message.content` is not an empty list.",
    why="Both SDKs take message_start's message as their snapshot and append each content_block_start to its "
        "content, so blocks sent in message_start shift every later block: a delta for index 0 lands in the "
        "pre-filled block and the final message has extra blocks.",
    sources=(SPEC, PY, TS,
             "vercel-ai packages/anthropic/src/anthropic-language-model.ts (doStream; measured, tests/test_real_clients.py)"),
    clients=(*BOTH, "vercel-ai"),
    bad=_bad("ANT005", "message-start-content-not-empty"),
    good=TEXT,
)
USAGE_MALFORMED = rule(
    "ANT006", "message-usage-malformed", "error",
    "{where}: {detail}",
    summary="Flags a `message_start` without a `usage` object holding integer `input_tokens` and `output_tokens`, "
            "or a `message_delta` without `usage.output_tokens`.",
    why="Both SDKs copy message_delta's usage.output_tokens into the snapshot's usage, which comes from "
        "message_start: without it anthropic-python fails (AttributeError: 'NoneType' object has no attribute "
        "'output_tokens') and @anthropic-ai/sdk throws a TypeError; billing and context accounting read them.",
    sources=(SPEC, TYPES, PY, TS,
             "vercel-ai packages/anthropic/src/anthropic-api.ts (the chunk schema; measured, tests/test_real_clients.py)"),
    clients=(*BOTH, "vercel-ai"),
    bad=_bad("ANT006", "message-usage-malformed"),
    good=TEXT,
)

# -- content blocks -----------------------------------------------------------------------------------------

BLOCK_ORDER = rule(
    "ANT007", "block-index-out-of-order", "error",
    "content_block_start has index {got}, expected {expected}",
    summary="Flags a `content_block_start` whose `index` is not the next one (0, 1, 2, … in order).",
    why="Both SDKs append each started block to the snapshot's content and then address blocks by the events' "
        "`index`: an index out of order writes deltas into another block (or, in anthropic-python, past the "
        "end: IndexError).",
    sources=(SPEC, PY, TS),
    clients=BOTH,
    bad=_bad("ANT007", "block-index-out-of-order"),
    good=THINKING_TOOL,
)
BLOCK_REPEATED = rule(
    "ANT008", "block-index-repeated", "error",
    "content block {index} started again (first at event {first})",
    summary="Flags a second `content_block_start` for an index that was already started.",
    why="Each index is one block. The SDKs append the second start as a new block, so the final message has "
        "a block more than the stream meant and the deltas go to the first one.",
    sources=(SPEC, PY, TS),
    clients=BOTH,
    bad=_bad("ANT008", "block-index-repeated"),
    good=THINKING_TOOL,
)
DELTA_MISMATCH = rule(
    "ANT009", "delta-type-mismatch", "error",
    "{delta} for content block {index}, a {block} block",
    summary="Flags a delta whose type does not fit its block: `text_delta`/`citations_delta` → text, "
            "`thinking_delta`/`signature_delta` → thinking, `input_json_delta` → tool_use/server_tool_use.",
    why="Both SDKs apply a delta only to a block of its type and drop it silently otherwise: the text, "
        "reasoning or tool input it carried is missing from the final message.",
    sources=(SPEC, PY, TS,
             "claude-code measured: claude -p 2.1.197 over a loopback server (tests/test_real_clients.py; its bundled Messages stream reader)",
             "vercel-ai packages/anthropic/src/anthropic-language-model.ts (text parts by block index) and packages/ai/src/generate-text/stream-text.ts ('text part … not found'; measured, tests/test_real_clients.py)"),
    clients=(*BOTH, "claude-code", "vercel-ai"),
    bad=_bad("ANT009", "delta-type-mismatch"),
    good=THINKING_TOOL,
)
BEFORE_START = rule(
    "ANT010", "block-event-before-start", "error",
    "{type} for content block {index}, which was not started",
    summary="Flags a `content_block_delta` or `content_block_stop` for an index with no `content_block_start`.",
    why="anthropic-python indexes its snapshot's content by the event's index (IndexError: list index out of "
        "range); @anthropic-ai/sdk finds no block there and drops the delta.",
    sources=(SPEC, PY, TS,
             "claude-code measured: claude -p 2.1.197 over a loopback server (tests/test_real_clients.py; its bundled Messages stream reader)",
             "vercel-ai packages/anthropic/src/anthropic-language-model.ts (text parts by block index) and packages/ai/src/generate-text/stream-text.ts ('text part … not found'; measured, tests/test_real_clients.py)"),
    clients=(*BOTH, "claude-code", "vercel-ai"),
    bad=_bad("ANT010", "block-event-before-start"),
    good=TEXT,
)
AFTER_STOP = rule(
    "ANT011", "block-event-after-stop", "warning",
    "{type} for content block {index} after its content_block_stop",
    summary="Flags a delta or a second `content_block_stop` for a block that was already stopped.",
    why="A stopped block is final: listeners that took it at content_block_stop (the SDKs' contentBlock "
        "event, UIs, tool dispatch) miss what comes later, while the SDKs' final message still appends it.",
    sources=(SPEC, PY, TS,
             "vercel-ai packages/anthropic/src/anthropic-language-model.ts (text parts by block index) and packages/ai/src/generate-text/stream-text.ts ('text part … not found'; measured, tests/test_real_clients.py)"),
    clients=("vercel-ai",),
    bad=_bad("ANT011", "block-event-after-stop"),
    good=TEXT,
)
NOT_STOPPED = rule(
    "ANT012", "block-not-stopped", "warning",
    "content block {index} ({block}) not stopped before {before}",
    summary="Flags a content block without `content_block_stop` before `message_delta` (or the end of the "
            "stream).",
    why="content_block_stop is where a block is final: the SDKs' contentBlock listeners, tool dispatch and "
        "@anthropic-ai/sdk's tool input (made final at the stop) wait for it.",
    sources=(SPEC, PY, TS),
    clients=(),
    bad=_bad("ANT012", "block-not-stopped"),
    good=THINKING_TOOL,
)
SIGNATURE_MISSING = rule(
    "ANT013", "thinking-signature-missing", "warning",
    "thinking block {index} ends without a signature{what}",
    summary="Flags a thinking block that ends with no non-empty `signature` (from its start or a "
            "`signature_delta`).",
    why="A thinking block goes back to the API with its signature in the next turn of a tool loop; Anthropic's "
        "API rejects a thinking block without a valid signature, so a client that replays the history fails "
        "(llama-server sends an empty signature_delta).",
    sources=(SPEC, TYPES),
    bad=_bad("ANT013", "thinking-signature-missing"),
    good=THINKING_TOOL,
)
REDACTED_DATA = rule(
    "ANT014", "redacted-thinking-data-missing", "warning",
    "redacted_thinking block {index} has no data",
    summary="Flags a `redacted_thinking` block whose `data` is missing or empty.",
    why="A redacted_thinking block carries its encrypted reasoning whole in content_block_start and streams no "
        "delta; it must go back to the API unchanged, which is impossible without its data.",
    sources=(SPEC, TYPES),
    bad=_bad("ANT014", "redacted-thinking-data-missing"),
    good="messages/conforming/redacted-thinking.sse",
)
TOOL_ID_PREFIX = rule(
    "ANT015", "tool-id-prefix", "warning",
    "{block} block {index} has id {id!r}, not {prefix}…",
    summary="Flags a tool_use id that does not start with `toolu_` (server_tool_use: `srvtoolu_`).",
    why="The id is echoed in the tool_result that answers the call; Anthropic's ids have these prefixes, and "
        "gateways that translate ids between APIs recognise them by it.",
    sources=(SPEC, TYPES),
    bad=_bad("ANT015", "tool-id-prefix"),
    good=THINKING_TOOL,
)
TOOL_ID_REPEATED = rule(
    "ANT016", "tool-id-repeated", "warning",
    "tool_use id {id!r} of block {index} was used by block {first}",
    summary="Flags two tool_use blocks of one message with the same `id`, or one without an id.",
    why="The client answers each call with a tool_result naming its id: two calls with one id cannot both be "
        "answered, and the next request is rejected.",
    sources=(SPEC, TYPES),
    bad=_bad("ANT016", "tool-id-repeated"),
    good=THINKING_TOOL,
)
TOOL_INPUT = rule(
    "ANT017", "tool-input-not-json", "error",
    "{block} block {index} ({name}): the joined partial_json is not {what}: {error}",
    summary="Flags a tool_use block whose joined `input_json_delta.partial_json` is not a JSON object at its "
            "content_block_stop.",
    why="anthropic-python parses the input as it streams (jiter, partial mode) and raises ValueError \"Unable "
        "to parse tool parameter JSON from model\" on text that cannot become JSON; a prefix cut short parses "
        "as a partial object, so both SDKs return a tool input with fields missing; @anthropic-ai/sdk parses "
        "it when `input` is read.",
    sources=(SPEC, PY, "anthropic-sdk-typescript src/internal/message-stream-utils.ts (withLazyInput)",
             "langchain-anthropic langchain_anthropic/chat_models.py (ChatAnthropic.stream over anthropic-python's Stream; measured, tests/test_real_clients.py)",
             "vercel-ai packages/ai/src/generate-text/parse-tool-call.ts (AI_InvalidToolInputError; measured, tests/test_real_clients.py)"),
    clients=(*BOTH, "langchain", "vercel-ai"),
    bad=_bad("ANT017", "tool-input-not-json"),
    good=THINKING_TOOL,
)

# -- the end of the message --------------------------------------------------------------------------------

DELTA_MISSING = rule(
    "ANT018", "message-delta-missing", "error",
    "no message_delta before {before}",
    summary="Flags a message that ends (message_stop, or the stream's end) without a `message_delta`.",
    why="message_delta carries stop_reason and the final usage: the SDKs' final message keeps message_start's "
        "stop_reason (null), so a client cannot tell a finished answer from a cut one or a tool call.",
    sources=(SPEC, PY, TS),
    clients=BOTH,
    bad=_bad("ANT018", "message-delta-missing"),
    good=TEXT,
)
STOP_REASON_CHANGED = rule(
    "ANT019", "stop-reason-changed", "warning",
    "message_delta {what} (the message_delta at event {first} said {before})",
    summary="Flags a later `message_delta` that changes the stop_reason an earlier one gave, or lowers "
            "`usage.output_tokens` (the counts are cumulative).",
    why="A stream may send several message_delta events, each a change to the final message; the SDKs keep the "
        "last. A stop_reason that changes after a client acted on it (ran the tools, showed the answer as "
        "finished), or a token count that goes down, is a contradiction no client can resolve.",
    sources=(SPEC, PY, TS),
    bad=_bad("ANT019", "stop-reason-changed"),
    good=TEXT,
)
STOP_REASON_MISSING = rule(
    "ANT020", "stop-reason-missing", "error",
    "message_delta has no stop_reason",
    summary="Flags a `message_delta` whose `delta.stop_reason` is missing or null.",
    why="stop_reason is how a client decides what to do next (run the tools on tool_use, continue on "
        "max_tokens or pause_turn, stop on end_turn); the SDKs' final message has stop_reason None.",
    sources=(SPEC, TYPES, PY, TS),
    clients=BOTH,
    bad=_bad("ANT020", "stop-reason-missing"),
    good=TEXT,
)
STOP_REASON_INCONSISTENT = rule(
    "ANT021", "stop-reason-inconsistent", "warning",
    "stop_reason {stop_reason!r}, but {why}",
    summary="Flags a stop_reason that contradicts the message: not `tool_use` although a tool_use block was "
            "sent, `tool_use` without one, or not `max_tokens` although the output reached the request's "
            "`max_tokens` (from the request sidecar).",
    why="Agent loops run the tools only on stop_reason tool_use and continue a cut answer only on max_tokens: "
        "a tool call reported as end_turn is never run, a cut answer is taken as final.",
    sources=(SPEC, TYPES),
    bad=_bad("ANT021", "stop-reason-inconsistent"),
    good=THINKING_TOOL,
)
STOP_MISSING = rule(
    "ANT022", "message-stop-missing", "error",
    "the stream ends without message_stop",
    summary="Flags a stream that ends without `message_stop`.",
    why="@anthropic-ai/sdk adds the message only at message_stop: finalMessage() rejects with \"stream ended "
        "without producing a Message with role=assistant\". anthropic-python returns its snapshot anyway, so "
        "a stream cut in the middle passes for a whole message there.",
    sources=(SPEC, PY_FINAL, TS_FINAL),
    clients=("anthropic-ts",),
    bad=_bad("ANT022", "message-stop-missing"),
    good=TEXT,
)
ERROR_EVENT = rule(
    "ANT023", "message-error-event", "error",
    "the server sent an error event: {detail}",
    summary="Reports an `error` event (Anthropic's mid-stream error, e.g. overloaded_error).",
    why="Both SDKs raise on `event: error` (anthropic-python an APIStatusError from the body, @anthropic-ai/sdk "
        "an APIError): the answer is lost. It is legal, but a probe or CI run should see it.",
    sources=(SPEC, PY_SSE, TS_SSE,
             "langchain-anthropic langchain_anthropic/chat_models.py (ChatAnthropic.stream over anthropic-python's Stream; measured, tests/test_real_clients.py)",
             "claude-code measured: claude -p 2.1.197 over a loopback server (tests/test_real_clients.py; its bundled Messages stream reader)",
             "vercel-ai packages/anthropic/src/anthropic-language-model.ts (doStream; measured, tests/test_real_clients.py)"),
    clients=(*BOTH, "langchain", "claude-code", "vercel-ai"),
    bad=_bad("ANT023", "message-error-event"),
    good=TEXT,
)
BLOCK_AFTER_DELTA = rule(
    "ANT024", "block-after-message-delta", "warning",
    "{type} after message_delta",
    summary="Flags a content block event after `message_delta`, which ends the message's content.",
    why="message_delta comes after the last block; clients that act on its stop_reason (run the tools, show "
        "the answer as finished) miss what comes later.",
    sources=(SPEC,),
    bad=_bad("ANT024", "block-after-message-delta"),
    good=TEXT,
)
INTERLEAVED = rule(
    "ANT026", "block-started-while-open", "warning",
    "content block {index} starts while block {open} is open",
    summary="Flags a `content_block_start` while an earlier block has not had its `content_block_stop`.",
    why="Anthropic streams its content blocks one after the other, each started, streamed and stopped before "
        "the next; @anthropic-ai/sdk's `contentBlock` event takes the last block of its snapshot at each "
        "content_block_stop, so a stop for an earlier block hands its listeners the wrong block (llama-server "
        "stops every block at the end of the message).",
    sources=(SPEC, "anthropic-sdk-typescript src/lib/MessageStream.ts (#addStreamEvent: content_block_stop)"),
    bad=_bad("ANT026", "block-started-while-open"),
    good=THINKING_TOOL,
)
UNKNOWN_EVENT = rule(
    "ANT025", "unknown-message-event", "info",
    "unknown event type {type!r}",
    summary="Reports an event type that is not one of the Messages stream's (message_*, content_block_*, ping, "
            "error).",
    why="Anthropic's versioning policy lets new event types appear and asks clients to ignore the unknown "
        "ones, which both SDKs do; a server's own event is worth knowing about, not an error.",
    sources=(SPEC, PY, TS,
             "vercel-ai packages/anthropic/src/anthropic-api.ts (the chunk schema; measured, tests/test_real_clients.py)"),
    bad=_bad("ANT025", "unknown-message-event"),
    good=TEXT,
    clients=("vercel-ai",),
)
STOP_REASON_REPEATED = rule(
    "ANT027", "stop-reason-repeated", "warning",
    "message_delta repeats stop_reason {reason!r} (the message_delta at event {first} gave it)",
    summary="Flags a later `message_delta` that sends the same stop_reason again.",
    why="A stream may send several message_delta events and both SDKs keep the last stop_reason, so their final "
        "message is right; LangChain's ChatAnthropic joins the stop_reason of each into its response metadata "
        "(\"end_turnend_turn\"), which no branch on the stop reason matches (measured: langchain-anthropic, "
        "tests/test_real_clients.py). Send the stop_reason once, in the first message_delta; a later one may "
        "carry the usage alone.",
    sources=(SPEC, PY, TS, "langchain-anthropic langchain_anthropic/chat_models.py (the stream's chunks merged; "
             "measured, tests/test_real_clients.py)"),
    clients=("langchain",),
    bad=_bad("ANT027", "stop-reason-repeated"),
    good=TEXT,
)
