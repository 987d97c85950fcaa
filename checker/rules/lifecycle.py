"""Lifecycle rules: created → in_progress → … → exactly one terminal event (docs/spec.md §2)."""

from checker.rules.registry import rule

OPENAPI = "OpenAI OpenAPI 2.3.0 ResponseStreamEvent"

FIRST_NOT_CREATED = rule(
    "LIF001", "first-event-not-created", "error",
    "first event is {type!r}, not response.created",
    summary="Flags a stream whose first Responses event is not `response.created`.",
    why="openai-python raises RuntimeError \"Expected to have received `response.created` before …\" and "
        "openai-node builds its snapshot from it: nothing else can be accumulated.",
    sources=(OPENAPI, "openai-python lib/streaming/responses/_responses.py", "openai-node response-accumulator.ts"),
    clients=("openai-python", "openai-node"),
    good="conforming/text.sse",
)
DUPLICATE_CREATED = rule(
    "LIF002", "duplicate-created", "warning",
    "response.created sent again (first at event {first})",
    summary="Flags a second `response.created` in one stream.",
    why="The grammar has one response.created; openai-python 3.57 and openai-node 7.59 keep their snapshot, "
        "but a client that resets on it loses the output accumulated so far, or treats it as a second response "
        "on the same stream.",
    sources=(OPENAPI, "openai-node response-accumulator.ts"),
    clients=(),
    good="conforming/text.sse",
)
IN_PROGRESS_MISSING = rule(
    "LIF003", "in-progress-missing", "warning",
    "no response.in_progress before {type}",
    summary="Flags output events that arrive before any `response.in_progress`.",
    why="The stream grammar is created → [queued] → in_progress → items; UIs that show progress on "
        "in_progress, and the Open Responses suite, expect it.",
    sources=(OPENAPI, "Open Responses specification"),
    good="conforming/text.sse",
)
LIFECYCLE_ORDER = rule(
    "LIF004", "lifecycle-out-of-order", "warning",
    "{type} arrives after {after}",
    summary="Flags response.queued / response.in_progress after output has started, or queued after in_progress.",
    why="Lifecycle events carry a response snapshot; a late one can overwrite the client's view of the response "
        "(openai-python replaces completed items from its output) or move its status backwards.",
    sources=(OPENAPI, "openai-python lib/streaming/responses/_responses.py"),
    good="conforming/text.sse",
)
REPEATED_IN_PROGRESS = rule(
    "LIF005", "repeated-in-progress", "info",
    "response.in_progress sent again (first at event {first})",
    summary="Flags a repeated `response.in_progress` (llama.cpp's source emitted it twice, the second with "
            "`prompt_progress`).",
    why="Harmless for the SDKs, but strict validators of the grammar reject it and it doubles progress UIs.",
    sources=(OPENAPI, "llama.cpp PR #18486"),
    good="conforming/text.sse",
)
MISSING_TERMINAL = rule(
    "LIF006", "missing-terminal-event", "error",
    "stream ended without response.completed, response.incomplete or response.failed",
    summary="Flags a stream that ends without a terminal event.",
    why="codex fails with \"stream closed before response.completed\"; openai-python raises "
        "\"Didn't receive a `response.completed` event.\"; the turn is lost.",
    sources=(OPENAPI,
             "codex codex-rs/codex-api/src/sse/responses.rs",
             "openai-python _responses.py",
             "openai-node src/lib/responses/ResponseStream.ts (#prepareEvent, #assertComplete, finalResponse)",
             "openai-agents-python src/agents/run_internal/run_loop.py (the turn from response.completed)",
             "openresponses src/lib/compliance-tests.ts, src/lib/sse-parser.ts (the compliance suite)",
             "langchain-openai langchain_openai/chat_models/base.py (no chunk from a stream without events: "
             "\"No generation chunks were returned\"; measured, tests/test_real_clients.py)"),
    clients=("openai-python", "openai-node", "codex", "openai-agents", "open-responses", "langchain"),
    good="conforming/text.sse",
)
MULTIPLE_TERMINAL = rule(
    "LIF007", "multiple-terminal-events", "error",
    "second terminal event {type} (first {first} at event {first_index})",
    summary="Flags more than one terminal event.",
    why="Exactly one of completed/incomplete/failed ends a response; a client finishes on the first and the "
        "second contradicts it (openai-python keeps the first, openai-node the last).",
    sources=(OPENAPI,
             "Open Responses specification",
             "openai-node src/lib/responses/ResponseStream.ts (#prepareEvent, #assertComplete, finalResponse)",
             "codex codex-rs/codex-api/src/sse/responses.rs (process_sse)"),
    clients=("openai-node", "codex"),
    good="conforming/text.sse",
)
UNFINISHED_ITEMS = rule(
    "LIF008", "unfinished-items-at-terminal", "error",
    "{type} while item(s) {items} have no output_item.done",
    summary="Flags a terminal event that arrives while output items are still open: an error at "
            "`response.completed` when its output does not list them, else a warning.",
    why="At `response.completed` openai-python and openai-node raise \"Cannot complete response with unfinished "
        "output items.\" unless the final output repeats them; at `response.failed` or `response.incomplete` "
        "they keep the partial items. openai-agents and codex take only done items, so the open ones vanish.",
    sources=(OPENAPI,
             "openai-python _responses.py",
             "openai-node src/lib/responses/ResponseStream.ts (#prepareEvent, #assertComplete, finalResponse)",
             "codex codex-rs/codex-api/src/sse/responses.rs (process_sse)",
             "openai-agents-python src/agents/run_internal/run_loop.py (the turn from response.completed)"),
    clients=("openai-python", "openai-node", "codex", "openai-agents"),
    good="conforming/text.sse",
)
STATUS_MISMATCH = rule(
    "LIF009", "terminal-status-mismatch", "warning",
    "{type} carries response.status {status!r} (expected {expected!r})",
    summary="Flags a terminal event whose response.status does not match its type.",
    why="Clients decide success from one or the other; agents retry or report success wrongly.",
    sources=(OPENAPI,
             "openai-agents-python src/agents/run_internal/run_loop.py (the turn from response.completed)",
             "codex codex-rs/codex-api/src/sse/responses.rs (process_sse)"),
    clients=("openai-agents", "codex"),
    good="conforming/incomplete.sse",
)
FAILED_WITHOUT_ERROR = rule(
    "LIF010", "failed-without-error", "warning",
    "response.failed carries no response.error",
    summary="Flags `response.failed` without an error object.",
    why="The client has nothing to show or retry on; codex and the SDKs surface an empty error.",
    sources=(OPENAPI,),
    good="conforming/failed.sse",
)
INCOMPLETE_WITHOUT_REASON = rule(
    "LIF011", "incomplete-without-reason", "warning",
    "response.incomplete carries no incomplete_details.reason",
    summary="Flags `response.incomplete` without `incomplete_details.reason`.",
    why="Clients decide whether to continue (max_output_tokens) or stop (content_filter) from the reason.",
    sources=(OPENAPI,),
    good="conforming/incomplete.sse",
)
RESPONSE_ID_CHANGED = rule(
    "LIF012", "response-id-changed", "error",
    "{type} carries response id {id!r}, the stream began with {first!r}",
    summary="Flags lifecycle events whose response.id differs from the first one.",
    why="openai-python and openai-node raise \"Lifecycle response identity changed.\"; stateful clients chain "
        "the wrong id as previous_response_id.",
    sources=("openai-python _responses.py",
             "openai-node src/lib/responses/ResponseStream.ts (#prepareEvent, #assertComplete, finalResponse)"),
    clients=("openai-python", "openai-node"),
    good="conforming/text.sse",
)
ERROR_EVENT = rule(
    "LIF013", "error-event", "error",
    "the server sent an error event: {detail}",
    summary="Reports an `error` event in the stream.",
    why="An error event ends the turn: openai-node throws APIError on it; openai-python raises APIError on "
        "OpenAI's nested wire form ({type: error, error: {…}}, what api.openai.com sends) and yields the flat "
        "form of the description as an event; codex ignores it, so the stream's end decides. It is legal, but a "
        "probe or CI run should see it.",
    sources=(OPENAPI,
             "openai-python src/openai/_streaming.py (APIError on an event whose data has an `error` object)",
             "openai-python src/openai/lib/streaming/responses/_responses.py (ResponseStreamState, get_final_response)",
             "openai-node src/lib/responses/ResponseStream.ts (#prepareEvent, #assertComplete, finalResponse)",
             "openai-agents-python src/agents/run_internal/run_loop.py (the turn from response.completed)",
             "captures/real-openai/vercel-openai-error-1.sse",
             "langchain-openai langchain_openai/chat_models/base.py (ChatOpenAI.stream over openai-python's Stream; measured, tests/test_real_clients.py)",
             "vercel-ai packages/openai/src/responses/openai-responses-language-model.ts (an error event is an error part; measured, tests/test_real_clients.py)"),
    clients=("openai-python", "openai-node", "openai-agents", "langchain", "vercel-ai"),
    good="conforming/failed.sse",
)
TOP_LEVEL_ERROR = rule(
    "LIF014", "top-level-error-field", "error",
    "event {type!r} has a top-level `error` field: {detail}",
    summary="Flags an event other than `error` whose JSON has a truthy top-level `error` key (e.g. llama.cpp's "
            "mid-stream `data: {\"error\": …}` without a type).",
    why="openai-python raises APIError on such an event whatever its type, and clients that dispatch on `type` "
        "drop an event without one: the error is either fatal or invisible.",
    sources=("openai-python src/openai/_streaming.py",
             "llama.cpp PR #18486",
             "openai-node src/core/streaming.ts (the SSE decoder, JSON.parse of each event)",
             "openai-agents-python src/agents/models/openai_responses.py (stream_response over openai-python's Stream)",
             "langchain-openai langchain_openai/chat_models/base.py (ChatOpenAI.stream over openai-python's Stream; measured, tests/test_real_clients.py)",
             "vercel-ai packages/provider-utils/src/parse-json-event-stream.ts (each event JSON-parsed and validated; measured, tests/test_real_clients.py)"),
    clients=("openai-python", "openai-node", "openai-agents", "langchain", "vercel-ai"),
    good="conforming/failed.sse",
)
SEQUENCE_MISSING = rule(
    "LIF015", "sequence-number-missing", "warning",
    "{type} has no sequence_number",
    summary="Flags events without `sequence_number`.",
    why="OpenAI 2.3.0 requires it on every event; clients use it to order and de-duplicate events after a "
        "reconnect (Grok CLI fails without it, sub2api #7129).",
    sources=(OPENAPI,
             "sub2api #7129",
             "LiteLLM PR #28899",
             "openresponses src/lib/compliance-tests.ts, src/lib/sse-parser.ts (the compliance suite)"),
    clients=("open-responses",),
    good="conforming/text.sse",
)
SEQUENCE_ORDER = rule(
    "LIF016", "sequence-number-not-increasing", "warning",
    "sequence_number {got} after {previous}: not strictly increasing",
    summary="Flags a `sequence_number` that is not greater than the previous one.",
    why="Reconnecting clients skip events whose number they think they have seen; two counters (llama.cpp PR "
        "#24957) or a default of 0 (LiteLLM PR #28899) make them drop real events.",
    sources=(OPENAPI, "llama.cpp PR #24957", "LiteLLM PR #28899"),
    good="conforming/text.sse",
)
TRUNCATED_AS_COMPLETED = rule(
    "LIF017", "truncation-reported-completed", "warning",
    "response.completed although output_tokens {output_tokens} reached max_output_tokens {max_output_tokens}",
    summary="Flags a response cut by max_output_tokens but reported as `completed`.",
    why="A truncated answer must end with response.incomplete and reason max_output_tokens; reported as "
        "completed, agents take a cut-off answer (or cut-off tool arguments) as final.",
    sources=(OPENAPI,
             "llama.cpp captures README (max_output_tokens truncation)",
             "openai-agents-python src/agents/run_internal/run_loop.py (the turn from response.completed)",
             "codex codex-rs/codex-api/src/sse/responses.rs (process_sse)"),
    clients=("openai-agents", "codex"),
    good="conforming/incomplete.sse",
)
USAGE_MALFORMED = rule(
    "LIF018", "usage-malformed", "warning",
    "usage: {detail}",
    summary="Flags a `usage` object missing token counts or carrying non-integers.",
    why="codex parses usage only out of response.completed, as an optional object (null is no usage) of integer "
        "input/output/total tokens, with cached_tokens/reasoning_tokens inside *_details when those are present; "
        "a missing or string field there fails the turn with \"failed to parse ResponseCompleted\" (llama.cpp "
        "#22659). The opening snapshots' usage is never read.",
    sources=(OPENAPI, "codex codex-rs/codex-api", "llama.cpp #22659"),
    clients=("codex",),
    good="conforming/text.sse",
)
SNAPSHOT_FIELD_CHANGED = rule(
    "LIF019", "snapshot-field-changed", "warning",
    "{type} changes response.{field}: {before} in {first}, now {after}",
    summary="Flags a field of the response that changes between its snapshots (`response.created`, "
            "`response.queued`, `response.in_progress`, the terminal event) although it describes the request "
            "or the response's identity: `object`, `created_at`, `model`, `instructions`, `tools`, "
            "`tool_choice`, `parallel_tool_calls`, `temperature`, `top_p`, `top_logprobs`, `max_output_tokens`, "
            "`max_tool_calls`, `previous_response_id`, `conversation`, `prompt`, `prompt_cache_key`, "
            "`prompt_cache_retention`, `safety_identifier`, `user`, `store`, `background`, `text`, "
            "`truncation`, `metadata`. Compared only where both snapshots carry the field (a missing field is "
            "the schema's finding); `model: \"\"` then a name counts as a change.",
    why="Each snapshot is the same Response object at another moment: the API reference describes these "
        "fields as the request's parameters and the response's identity (the model used, when it was "
        "created), and only status, output, usage, error, incomplete_details and completed_at move as it "
        "runs. service_tier and reasoning are left out: OpenAI resolves the request's `auto`/defaults into "
        "what it used. A client that shows or logs the model and settings from response.created (openai-node's "
        "snapshot is each lifecycle event's response in turn) disagrees with one that reads the terminal "
        "response; a gateway that rewrites them mid-stream hides which model or tools really answered.",
    sources=("OpenAI Responses API reference, The response object "
             "(https://platform.openai.com/docs/api-reference/responses/object)",
             "openai-node src/internal/responses/response-accumulator.ts"),
    clients=(),
    good="conforming/text.sse",
)
CHECK_NOT_RUN = rule(
    "LIF020", "check-not-run", "info",
    "{check} not checked: {reason}",
    summary="Says that a check could not run on this stream because what it needs is missing (a terminal "
            "response without `usage` while a `max_output_tokens` limit applied, a terminal response without an "
            "`output` list after items were done), instead of passing silently.",
    why="A clean report must mean \"checked and fine\", not \"could not look\": a server that reports a cut "
        "answer as completed with `usage: null` would otherwise pass the truncation check (LIF017) unseen.",
    sources=("OpenAI Responses API reference, Response.usage and Response.output "
             "(https://platform.openai.com/docs/api-reference/responses/object)",),
    clients=(),
    good="conforming/incomplete.sse",
)
