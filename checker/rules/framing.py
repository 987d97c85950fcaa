"""SSE framing rules (WHATWG HTML "Parsing an event stream"; docs/spec.md §1)."""

from checker.rules.registry import rule

WHATWG = "WHATWG HTML Living Standard, §9.2.6 'Parsing an event stream'"

BOM = rule(
    "SSE001", "byte-order-mark", "warning",
    "stream starts with a UTF-8 byte order mark",
    summary="Flags a capture whose first bytes are the UTF-8 BOM (EF BB BF).",
    why="WHATWG strips one BOM, but openai-python and httpx-sse do not: the first field name becomes "
        "'\\ufeffevent' (or '\\ufeffdata') and is silently ignored, so the first event loses its type or its data; "
        "codex gets no event at all from such a stream (measured with codex-cli 0.169.0).",
    sources=(WHATWG,
             "openai-python src/openai/_streaming.py (SSEDecoder)",
             "httpx-sse _decoders.py",
             "codex codex-rs/codex-api/src/sse/responses.rs (process_sse over eventsource_stream; measured, "
             "tests/test_real_clients.py)"),
    clients=("openai-python", "codex"),
    good="conforming/text.sse",
)
LONE_CR = rule(
    "SSE002", "lone-cr-line-ending", "warning",
    "line {line} ends with a lone CR",
    summary="Flags lines terminated by a carriage return alone.",
    why="A lone CR is a legal line end for WHATWG, but parsers that split only on '\\n' (the Open Responses "
        "suite's sse-parser.ts, many ad-hoc clients) see one giant line and lose every event; so does codex "
        "(measured with codex-cli 0.169.0).",
    sources=(WHATWG, "openresponses src/lib/sse-parser.ts",
             "codex codex-rs/codex-api/src/sse/responses.rs (process_sse over eventsource_stream; measured, "
             "tests/test_real_clients.py)"),
    clients=("open-responses", "codex"),
    good="conforming/text.sse",
)
MIXED_EOL = rule(
    "SSE003", "mixed-line-endings", "warning",
    "line endings are mixed: {kinds}",
    summary="Flags a stream that uses more than one kind of line ending (CRLF, LF, CR).",
    why="Legal, but a classic source of parser bugs: clients that split on '\\r\\n\\r\\n' or '\\n\\n' miss "
        "event boundaries (EventSource/eventsource#326).",
    sources=(WHATWG, "EventSource/eventsource#326"),
    good="conforming/text.sse",
)
TRAILING_PARTIAL = rule(
    "SSE004", "trailing-partial-event", "warning",
    "stream ends inside an event (no blank line after it): the event is discarded",
    summary="Flags bytes after the last blank line: an event that was never dispatched.",
    why="WHATWG discards a pending event at end of input, and so does openai-python: whatever the server "
        "meant to say there (often the terminal event) never reaches the client. openai-node 7.x dispatches "
        "it anyway, and fails with \"malformed server-sent event JSON\" when the cut left it incomplete.",
    sources=(WHATWG,
             "openai-python src/openai/_streaming.py",
             "openai-node src/core/streaming.ts (the SSE decoder, JSON.parse of each event)"),
    clients=("openai-node",),
    good="conforming/text.sse",
)
INVALID_UTF8 = rule(
    "SSE005", "invalid-utf8", "error",
    "invalid UTF-8 at byte {offset}: {reason}",
    summary="Flags bytes that are not valid UTF-8.",
    why="An event stream is always UTF-8; decoders replace bad bytes with U+FFFD (or fail), so text and JSON "
        "arrive corrupted (openai-python raises UnicodeDecodeError).",
    sources=(WHATWG,
             "openai-python src/openai/_streaming.py (SSEDecoder, Stream.__stream__)",
             "openai-node src/core/streaming.ts (the SSE decoder, JSON.parse of each event)",
             "codex codex-rs/codex-api/src/sse/responses.rs (process_sse)",
             "openai-agents-python src/agents/models/openai_responses.py (stream_response over openai-python's Stream)",
             "langchain-openai langchain_openai/chat_models/base.py (ChatOpenAI.stream over openai-python's Stream; measured, tests/test_real_clients.py)"),
    clients=("openai-python", "openai-node", "codex", "openai-agents", "langchain"),
    good="conforming/text.sse",
)
DATA_NOT_JSON = rule(
    "SSE006", "data-not-json", "error",
    "data is not JSON: {error}",
    summary="Flags an event whose data is not a JSON document.",
    why="Every Responses event is one JSON object; clients call json.loads/JSON.parse on each data buffer and "
        "raise on anything else.",
    sources=("OpenAI OpenAPI 2.3.0 ResponseStreamEvent",
             "openai-python src/openai/_streaming.py",
             "openai-node src/core/streaming.ts (the SSE decoder, JSON.parse of each event)",
             "codex codex-rs/codex-api/src/sse/responses.rs (process_sse)",
             "openai-agents-python src/agents/models/openai_responses.py (stream_response over openai-python's Stream)",
             "langchain-openai langchain_openai/chat_models/base.py (ChatOpenAI.stream over openai-python's Stream; measured, tests/test_real_clients.py)",
             "vercel-ai packages/provider-utils/src/parse-json-event-stream.ts (each event JSON-parsed and validated; measured, tests/test_real_clients.py)"),
    clients=("openai-python", "openai-node", "codex", "openai-agents", "langchain", "vercel-ai"),
    good="conforming/text.sse",
)
DATA_NOT_OBJECT = rule(
    "SSE007", "data-not-object", "error",
    "data is a JSON {kind}, not an object",
    summary="Flags an event whose data is valid JSON but not an object.",
    why="Clients read `type` from the object to dispatch the event; an array, string or number has none.",
    sources=("OpenAI OpenAPI 2.3.0 ResponseStreamEvent",
             "openai-python src/openai/_streaming.py (SSEDecoder, Stream.__stream__)",
             "openai-node src/core/streaming.ts (the SSE decoder, JSON.parse of each event)",
             "codex codex-rs/codex-api/src/sse/responses.rs (process_sse)",
             "langchain-openai langchain_openai/chat_models/base.py (ChatOpenAI.stream over openai-python's Stream; measured, tests/test_real_clients.py)",
             "vercel-ai packages/provider-utils/src/parse-json-event-stream.ts (each event JSON-parsed and validated; measured, tests/test_real_clients.py)"),
    clients=("openai-python", "openai-node", "codex", "langchain", "vercel-ai"),
    good="conforming/text.sse",
)
EVENT_MISMATCH = rule(
    "SSE008", "event-type-mismatch", "warning",
    "`event: {event}` disagrees with the JSON type {type!r}",
    summary="Flags an `event:` field whose value differs from the JSON payload's `type`.",
    why="Clients that dispatch on the SSE event name (browsers' EventSource listeners, openai-python for "
        "`error`) and clients that dispatch on `type` then disagree about what happened.",
    sources=("Open Responses specification: the event field MUST equal type", "OpenAI streaming reference"),
    good="conforming/text.sse",
)
MISSING_EVENT_LINE = rule(
    "SSE009", "missing-event-field", "info",
    "event has no `event:` field",
    summary="Flags a data-only event (no `event:` line).",
    why="OpenAI sends `event:` on every event and Open Responses requires it; EventSource-based clients that "
        "listen by event name never see data-only events (pi #1983).",
    sources=("Open Responses specification", "pi #1983"),
    good="conforming/text.sse",
)
AFTER_TERMINAL = rule(
    "SSE010", "event-after-terminal", "error",
    "{what} after the terminal event {terminal}",
    summary="Flags anything but `[DONE]` that arrives after response.completed/incomplete/failed.",
    why="Clients stop reading at the terminal event (codex closes the stream; openai-python finishes the "
        "response): later events are lost, or a client that keeps reading (openai-node) applies them to a "
        "finished response.",
    sources=("OpenAI Responses streaming reference",
             "codex PR #9170",
             "openai-node src/core/streaming.ts (the SSE decoder, JSON.parse of each event)",
             "vercel-ai packages/openai/src/responses/openai-responses-language-model.ts (doStream) and packages/ai/src/generate-text/stream-text.ts ('text part … not found'; measured, tests/test_real_clients.py)"),
    clients=("openai-node", "codex", "vercel-ai"),
    good="conforming/text.sse",
)
DONE_SENT = rule(
    "SSE011", "done-sentinel-sent", "info",
    "`data: [DONE]` sent; the Responses API does not send it",
    summary="Flags a `[DONE]` sentinel under a profile that does not expect one.",
    why="OpenAI's Responses stream ends after the terminal event without `[DONE]` (that is Chat Completions). "
        "openai-python stops there, which is harmless; clients that parse every data buffer as JSON fail on it "
        "(copilot-api#338).",
    sources=("OpenAI Responses streaming reference", "copilot-api#338"),
    good="conforming/text.sse",
)
DONE_MISSING = rule(
    "SSE012", "done-sentinel-missing", "warning",
    "stream ends without `data: [DONE]`",
    summary="Under the open-responses profile, flags a stream whose last event is not `[DONE]`.",
    why="Open Responses requires `[DONE]` as the last event; its compliance suite waits for it.",
    sources=("Open Responses specification, streaming",),
    good="open-responses/text.sse",
)
EMPTY_DATA = rule(
    "SSE013", "event-without-data", "error",
    "event block without data (fields: {fields}) is not dispatched",
    summary="Flags a block of fields ended by a blank line that carries no `data`.",
    why="WHATWG drops such an event, but httpx-sse and openai-python's decoder dispatch it with empty data, "
        "so json.loads('') fails (openai-node: \"malformed server-sent event JSON\"). Keepalives belong in "
        "comment lines (`: ping`).",
    sources=(WHATWG,
             "httpx-sse _decoders.py",
             "openai-python src/openai/_streaming.py",
             "openai-node src/core/streaming.ts (the SSE decoder, JSON.parse of each event)",
             "openai-agents-python src/agents/models/openai_responses.py (stream_response over openai-python's Stream)",
             "langchain-openai langchain_openai/chat_models/base.py (ChatOpenAI.stream over openai-python's Stream; measured, tests/test_real_clients.py)"),
    clients=("openai-python", "openai-node", "openai-agents", "langchain"),
    good="conforming/text.sse",
)
BAD_RETRY = rule(
    "SSE014", "invalid-retry", "warning",
    "`retry: {value}` is not all ASCII digits and is ignored",
    summary="Flags a `retry` field that WHATWG ignores.",
    why="Browsers ignore it; httpx-sse parses it with int() and accepts '+5' or '-1', so clients disagree "
        "about the reconnection delay.",
    sources=(WHATWG, "httpx-sse _decoders.py"),
    good="conforming/text.sse",
)
MULTILINE_DATA = rule(
    "SSE015", "multi-line-data", "warning",
    "data spans {count} `data:` lines",
    summary="Flags an event whose data is split over several `data:` lines.",
    why="Legal (lines are joined with '\\n'), but the Open Responses suite's parser in older versions kept only "
        "the last line and ad-hoc clients parse each line as JSON.",
    sources=(WHATWG, "openresponses src/lib/sse-parser.ts"),
    clients=("open-responses",),
    good="conforming/text.sse",
)
UNKNOWN_FIELD = rule(
    "SSE016", "unknown-field", "info",
    "field {field!r} is not an SSE field and is ignored",
    summary="Flags field names other than event, data, id and retry.",
    why="WHATWG ignores them; they usually mean a typo ('Data:', 'evnet:') or a line that lost its 'data: ' "
        "prefix, and whatever they carried is lost.",
    sources=(WHATWG,),
    good="conforming/text.sse",
)
ID_NUL = rule(
    "SSE017", "id-contains-nul", "warning",
    "`id` contains NUL and is ignored",
    summary="Flags an `id` field containing U+0000.",
    why="WHATWG ignores such an id, so Last-Event-ID resumption silently uses an older id.",
    sources=(WHATWG,),
    good="conforming/text.sse",
)
KEEPALIVE_AS_DATA = rule(
    "SSE018", "keepalive-as-data", "error",
    "keepalive sent as data ({data!r}) instead of a comment line",
    summary="Flags data that looks like an SSE comment or ping (`data: : ping`, `data: ping`).",
    why="A keepalive must be a comment line (`: ping`); wrapped in `data:` it is dispatched as an event and every "
        "client's JSON parse fails (llm-gateway#2053).",
    sources=(WHATWG,
             "llm-gateway#2053",
             "openai-python src/openai/_streaming.py (SSEDecoder, Stream.__stream__)",
             "openai-node src/core/streaming.ts (the SSE decoder, JSON.parse of each event)",
             "openai-agents-python src/agents/models/openai_responses.py (stream_response over openai-python's Stream)",
             "langchain-openai langchain_openai/chat_models/base.py (ChatOpenAI.stream over openai-python's Stream; measured, tests/test_real_clients.py)",
             "vercel-ai packages/provider-utils/src/parse-json-event-stream.ts (each event JSON-parsed and validated; measured, tests/test_real_clients.py)"),
    clients=("openai-python", "openai-node", "openai-agents", "langchain", "vercel-ai"),
    good="conforming/text.sse",
)
NUL_BYTES = rule(
    "SSE019", "nul-byte", "warning",
    "NUL byte in the stream at byte {offset}",
    summary="Flags U+0000 anywhere in the stream.",
    why="NUL never belongs in an event stream of JSON text; it usually means binary garbage, a corrupted "
        "capture or a buffer overrun on the server.",
    sources=(WHATWG,
             "RFC 8259 §7",
             "openai-python src/openai/_streaming.py (SSEDecoder, Stream.__stream__)",
             "openai-node src/core/streaming.ts (the SSE decoder, JSON.parse of each event)",
             "codex codex-rs/codex-api/src/sse/responses.rs (process_sse)",
             "openai-agents-python src/agents/models/openai_responses.py (stream_response over openai-python's Stream)",
             "langchain-openai langchain_openai/chat_models/base.py (ChatOpenAI.stream over openai-python's Stream; measured, tests/test_real_clients.py)"),
    clients=("openai-python", "openai-node", "codex", "openai-agents", "langchain"),
    good="conforming/text.sse",
)
LINE_TOO_LONG = rule(
    "SSE020", "line-too-long", "warning",
    "line longer than the {limit}-byte limit; skipped to the next line end",
    summary="Flags a line longer than the line limit (`--max-line-bytes`, default 16 MiB).",
    why="No real event needs it, and a client buffering such a line can be exhausted; sse-check skips the rest "
        "of the line instead of holding it in memory.",
    sources=(WHATWG, "sse-check resource limits"),
    good="conforming/text.sse",
)
EVENT_TOO_LARGE = rule(
    "SSE021", "event-too-large", "warning",
    "event data larger than the {limit}-byte limit; the event is skipped",
    summary="Flags an event whose data exceeds the event limit (`--max-event-bytes`, default 64 MiB).",
    why="Clients buffer a whole event before parsing it; an unbounded event exhausts memory.",
    sources=(WHATWG, "sse-check resource limits"),
    good="conforming/text.sse",
)
NOT_AN_EVENT_STREAM = rule(
    "SSE022", "not-an-event-stream", "error",
    "the body is {kind}, not an event stream: {snippet}",
    summary="Flags a capture or response body that is not text/event-stream at all: a JSON document (typically an "
            "error response), an HTML page, or gzip-compressed bytes.",
    why="A streaming client expects events; it sees none, and the real message (an HTTP error body, a proxy's "
        "HTML page) is lost unless it reads the body as JSON.",
    sources=(WHATWG,
             "OpenAI error responses",
             "openai-python src/openai/_streaming.py (SSEDecoder, Stream.__stream__)",
             "openai-node src/core/streaming.ts (the SSE decoder, JSON.parse of each event)",
             "codex codex-rs/codex-api/src/sse/responses.rs (process_sse)",
             "openai-agents-python src/agents/models/openai_responses.py (stream_response over openai-python's Stream)",
             "openresponses src/lib/compliance-tests.ts, src/lib/sse-parser.ts (the compliance suite)",
             "langchain-openai langchain_openai/chat_models/base.py (ChatOpenAI.stream over openai-python's Stream; measured, tests/test_real_clients.py)"),
    clients=("openai-python", "openai-node", "codex", "openai-agents", "open-responses", "langchain"),
    good="conforming/text.sse",
)
EMPTY_STREAM = rule(
    "SSE023", "empty-stream", "error",
    "the stream is empty{what}",
    summary="Flags a capture or response body with no bytes, or only blank lines and comments.",
    why="The client waits for events that never come and ends with \"stream closed before response.completed\".",
    sources=(WHATWG,
             "codex codex-rs/codex-api/src/sse/responses.rs",
             "openai-python src/openai/_streaming.py (SSEDecoder, Stream.__stream__)",
             "openai-node src/core/streaming.ts (the SSE decoder, JSON.parse of each event)",
             "openai-agents-python src/agents/models/openai_responses.py (stream_response over openai-python's Stream)",
             "openresponses src/lib/compliance-tests.ts, src/lib/sse-parser.ts (the compliance suite)",
             "langchain-openai langchain_openai/chat_models/base.py (ChatOpenAI.stream over openai-python's Stream; measured, tests/test_real_clients.py)"),
    clients=("openai-python", "openai-node", "codex", "openai-agents", "open-responses", "langchain"),
    good="conforming/text.sse",
)
DUPLICATE_KEY = rule(
    "SSE024", "duplicate-json-key", "warning",
    "a JSON object in this event repeats the key {key!r}",
    summary="Flags an event whose JSON repeats a key in one object.",
    why="Parsers disagree: JSON.parse and Python's json keep the last value, serde-based clients (codex) reject "
        "the event with \"duplicate field\", and a proxy may keep the first.",
    sources=("RFC 8259 §4 (names SHOULD be unique)",
             "serde_json duplicate-field behaviour",
             "codex codex-rs/codex-api/src/sse/responses.rs (process_sse)"),
    clients=("codex",),
    good="conforming/text.sse",
)
NUMBER_RANGE = rule(
    "SSE025", "number-out-of-range", "warning",
    "number {number} cannot be represented exactly by a double or a 64-bit integer",
    summary="Flags integers beyond ±2^53 and numbers that overflow a double.",
    why="JavaScript clients (openai-node) silently round integers beyond 2^53; serde-based clients (codex) fail on "
        "integers beyond 64 bits; an overflowing number becomes Infinity or an error.",
    sources=("RFC 8259 §6 (interoperable numbers)",
             "openai-node src/core/streaming.ts (the SSE decoder, JSON.parse of each event)",
             "codex codex-rs/codex-api/src/sse/responses.rs (process_sse)"),
    clients=("openai-node", "codex"),
    good="conforming/text.sse",
)
JSON_TOO_DEEP = rule(
    "SSE026", "json-too-deep", "warning",
    "JSON nested deeper than {limit} levels; the event is skipped",
    summary="Flags an event whose JSON nesting exceeds the depth limit (`--max-json-depth`, default 64).",
    why="Real events nest less than a dozen levels; deeper documents exhaust recursive parsers (Python's json "
        "raises RecursionError near 1000 levels).",
    sources=("RFC 8259 §9 (implementations may limit nesting)", "sse-check resource limits"),
    good="conforming/text.sse",
)
STREAM_LIMIT = rule(
    "SSE027", "stream-limit-exceeded", "warning",
    "stream exceeds the {what} limit ({limit}); the rest ({rest}) is not checked",
    summary="Flags a stream longer than `--max-bytes` (default 2 GiB) or with more events than `--max-events` "
            "(default 10,000,000).",
    why="A response that never ends is a server bug (a generation loop, a lost stop condition); the limit keeps "
        "the check's time and output bounded.",
    sources=("sse-check resource limits",),
    good="conforming/text.sse",
)
ERROR_FIELD = rule(
    "SSE028", "error-field-line", "error",
    "an `error:` line is not an SSE field: the error {detail} is never dispatched, and the answer reads as a "
    "success",
    summary="Flags an event block that carries its JSON in an `error:` field instead of `data:` (llama.cpp's "
            "streamed errors, sent with HTTP 200 and followed by `data: [DONE]`).",
    why="WHATWG ignores a field it does not know, so a block of `error: {...}` alone is never dispatched: no "
        "client sees the error. On a stream without a chunk openai-python's get_final_completion() fails with a "
        "bare AssertionError and openai-node's finalChatCompletion() with \"request ended without sending any "
        "chunks\", neither with the server's message, and an iterating client gets an empty answer; sent with "
        "HTTP 200, nothing says the answer is an error. llama-server streamed an over-long prompt's error so "
        "(it answers HTTP 400 since PR #16486).",
    sources=(WHATWG, "llama.cpp #14566 (HTTP 200 with the error in the streamed body)",
             "llama.cpp PR #16486 (HTTP 400 when the prompt exceeds the context)",
             "openai-python 3.57.0 src/openai/_streaming.py (the SSE decoder dispatches data and event only)",
             "openai-node 7.59.0 src/core/streaming.ts (the SSE decoder)"),
    clients=("openai-python", "openai-node"),
    good="conforming/text.sse",
)
CHECKER_ERROR = rule(
    "SSE099", "checker-error", "error",
    "sse-check could not check this event ({error}); the rest of the stream is still checked",
    summary="Reports an internal error of sse-check on one event, instead of crashing.",
    why="A conformance checker meets broken input by design; a bug in it must cost one event's verdict, never "
        "the run, and must be visible. Please report it with the capture.",
    sources=("sse-check robustness policy (docs/robustness.md)",),
    good="conforming/text.sse",
    example=False,
)
