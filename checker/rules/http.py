"""HTTP rules: the exchange around a stream (status, content type, error bodies, timeouts, the close).

These findings are not about the bytes of the body but about how they arrived. ``sse-check probe``
sees them live; it records what it saw in ``X.meta.json`` next to the capture, and ``sse-check lint``
reproduces the same findings from that sidecar. Both go through ``checker.http_checks``, which holds
the logic; this module only declares the rules. Example captures live in ``captures/http/`` (each
with the ``X.meta.json`` that carries the recorded status, headers, timings and ending).
"""

from checker.rules.registry import rule

GOOD = "conforming/text.sse"
SSE_SPEC = "WHATWG HTML Living Standard, §9.2 'Server-sent events' (text/event-stream)"
OPENAI_ERRORS = "OpenAI API reference, 'Error codes' (JSON error objects with HTTP 4xx/5xx)"
OPENAI_PY = "openai-python src/openai/_base_client.py (APIStatusError, _make_status_error)"

STATUS_NOT_OK = rule(
    "HTP001", "status-not-ok", "error",
    "HTTP {status} {reason} for {what}, expected 200{extra}",
    summary="Flags a non-200 final status for a request that should have succeeded.",
    why="openai-python and openai-node raise an APIStatusError (RateLimitError, InternalServerError, …) "
        "instead of reading a stream, and codex retries or gives up; none of the stream is seen.",
    sources=(OPENAI_ERRORS,
             OPENAI_PY,
             "openai-node src/core/error.ts (APIError.generate, APIConnectionError)",
             "codex codex-rs/codex-client (TransportError)"),
    clients=("openai-python", "openai-node", "codex"),
    bad="http/HTP001-status-not-ok.sse",
    good=GOOD,
)
WRONG_CONTENT_TYPE = rule(
    "HTP002", "wrong-content-type", "warning",
    "Content-Type {value} for {what}, expected {expected}",
    summary="Flags a stream not sent as `text/event-stream` (or a JSON answer not sent as `application/json`).",
    why="EventSource refuses any other type, proxies and CDNs buffer what they do not know to be a stream "
        "(so events arrive in one burst at the end), and clients that dispatch on the content type parse the "
        "body as one JSON document.",
    sources=(SSE_SPEC, "OpenAI Responses streaming reference"),
    bad="http/HTP002-wrong-content-type.sse",
    good=GOOD,
)
ERROR_NOT_JSON = rule(
    "HTP003", "error-body-not-json", "error",
    "error response (HTTP {status}) is not a JSON error object: {detail}",
    summary="Flags an HTTP error whose body is not `{\"error\": {...}}` JSON.",
    why="SDKs build the exception from the JSON error's message, type and code; an HTML page or plain text "
        "becomes an opaque error with the raw body as its message, and retry logic keyed on `code` fails.",
    sources=(OPENAI_ERRORS,
             OPENAI_PY,
             "openai-node src/core/error.ts (APIError.generate, APIConnectionError)",
             "codex codex-rs/codex-client (TransportError)"),
    clients=("openai-python", "openai-node", "codex"),
    bad="http/HTP003-error-body-not-json.sse",
    good=GOOD,
)
ERROR_WITHOUT_ERROR_OBJECT = rule(
    "HTP026", "error-body-without-error-object", "warning",
    "error response (HTTP {status}) is JSON without the `error` object the SDKs read: {detail}",
    summary="Flags an HTTP error whose body is a JSON object without an `error` member (FastAPI's "
            "`{\"detail\": [...]}`, a framework's own shape) instead of `{\"error\": {...}}`.",
    why="The request fails as with any error status: openai-python and openai-node raise the same status error "
        "(UnprocessableEntityError for a 422, found against the gpt-oss reference server: captures/gpt-oss), "
        "but with no error object to read, openai-python's message is only 'Error code: 422' and `code`, `type` "
        "and `param` are None (the reason is left in `.body`), so what the user sees and retry logic keyed on "
        "`code` lose it. No client breaks beyond the refusal itself: a warning (an HTML or text body is "
        "HTP003's).",
    sources=(OPENAI_ERRORS, OPENAI_PY, "openai-node src/core/error.ts (APIError.generate)",
             "FastAPI fastapi/exception_handlers.py (request_validation_exception_handler)"),
    bad="http/HTP026-error-body-without-error-object.sse",
    good=GOOD,
)
ERROR_WITH_OK_STATUS = rule(
    "HTP004", "error-with-ok-status", "error",
    "HTTP {status} carries an error body: {detail}",
    summary="Flags an error reported as a JSON error object with a 2xx status.",
    why="Clients decide success on the status: a 200 with an error body is read as a stream or a response "
        "and fails later with a parse error, or worse, is taken as an empty success.",
    sources=(OPENAI_ERRORS,
             OPENAI_PY,
             "openai-node src/core/error.ts (APIError.generate, APIConnectionError)",
             "codex codex-rs/codex-client (TransportError)"),
    clients=("openai-python", "openai-node", "codex"),
    bad="http/HTP004-error-with-ok-status.sse",
    good=GOOD,
)
INVALID_ACCEPTED = rule(
    "HTP005", "invalid-request-accepted", "warning",
    "the invalid request ({what}) was accepted: {outcome}",
    summary="Flags an invalid request (unknown model, malformed input) answered as a success.",
    why="An invalid request must fail with an HTTP error and a JSON body, or end in `response.failed`; a "
        "server that answers it anyway hides configuration mistakes (a typo in the model name silently "
        "uses another model).",
    sources=(OPENAI_ERRORS, "OpenAI Responses streaming reference (response.failed)"),
    bad="http/HTP005-invalid-request-accepted.sse",
    good=GOOD,
)
KEPT_OPEN = rule(
    "HTP006", "kept-open-after-terminal", "warning",
    "the connection stayed open {timeout} s after the terminal event {terminal}",
    summary="Flags a body that does not end promptly after `response.completed`/`incomplete`/`failed`.",
    why="A client that reads until the end of the body waits for nothing: codex hung on such servers until "
        "it learned to stop at the terminal event (codex PR #9170); others still hang or time out.",
    sources=("codex PR #9170", "OpenAI Responses streaming reference",
             "langchain-openai langchain_openai/chat_models/base.py (ChatOpenAI.stream reads to the end of the body, over openai-python's httpx transport; measured, tests/test_real_clients.py)",
             "openai-agents-python src/agents/models/openai_responses.py (stream_response over openai-python's Stream, which reads to the end of the body; measured, tests/test_real_clients.py)"),
    clients=("codex", "langchain", "openai-agents"),
    bad="http/HTP006-kept-open-after-terminal.sse",
    good=GOOD,
)
CONNECT_FAILED = rule(
    "HTP007", "connect-failed", "error",
    "cannot connect to {host}: {error}",
    summary="Flags a server that cannot be reached (refused, unknown host, connect timeout).",
    why="Nothing can be checked; every client fails the same way.",
    sources=("RFC 9110 §9.3.6 (connection establishment is the client's first step)",
             "openai-python src/openai/_base_client.py (APIStatusError, APIConnectionError, APITimeoutError)",
             "openai-node src/core/error.ts (APIError.generate, APIConnectionError)",
             "codex codex-rs/codex-client (TransportError)",
             "openai-agents-python src/agents/models/openai_responses.py (stream_response over openai-python's Stream)"),
    clients=("openai-python", "openai-node", "codex", "openai-agents"),
    bad="http/HTP007-connect-failed.sse",
    good=GOOD,
)
TLS_ERROR = rule(
    "HTP008", "tls-error", "error",
    "TLS with {host} failed: {error}",
    summary="Flags a TLS handshake or certificate failure.",
    why="Clients verify certificates by default: a self-signed or expired certificate, or a name mismatch, "
        "fails every request (`--insecure` skips the check for probing only).",
    sources=("RFC 8446 (TLS 1.3)",
             "RFC 6125 (service identity)",
             "openai-python src/openai/_base_client.py (APIStatusError, APIConnectionError, APITimeoutError)",
             "openai-node src/core/error.ts (APIError.generate, APIConnectionError)",
             "codex codex-rs/codex-client (TransportError)",
             "openai-agents-python src/agents/models/openai_responses.py (stream_response over openai-python's Stream)"),
    clients=("openai-python", "openai-node", "codex", "openai-agents"),
    bad="http/HTP008-tls-error.sse",
    good=GOOD,
)
FIRST_BYTE_TIMEOUT = rule(
    "HTP009", "first-byte-timeout", "error",
    "no {what} within the first-byte timeout of {timeout} s",
    summary="Flags a server that sends no response headers, or no body byte, within the first-byte timeout.",
    why="Clients give up after their read timeout (openai-python's default is 600 s, many agents use far "
        "less); a server that holds the status line until generation ends also defeats streaming.",
    sources=("openai-python src/openai/_constants.py (DEFAULT_TIMEOUT)",
             "openai-node src/core/error.ts (APIError.generate, APIConnectionError)",
             "codex codex-rs/codex-client (TransportError)"),
    clients=("openai-python", "openai-node", "codex"),
    bad="http/HTP009-first-byte-timeout.sse",
    good=GOOD,
)
STALLED = rule(
    "HTP010", "stalled", "error",
    "the stream stalled: no bytes for {timeout} s after byte {offset} (idle timeout)",
    summary="Flags a stream that stops sending with the connection still open.",
    why="A stalled stream looks alive to the client until its read timeout fires; agents hang for minutes. "
        "Servers that need time should send SSE comment keepalives (`: ping`).",
    sources=(SSE_SPEC,
             "codex codex-rs/codex-api/src/sse/responses.rs (idle timeout)",
             "openai-python src/openai/_base_client.py (APIStatusError, APIConnectionError, APITimeoutError)",
             "openai-node src/core/error.ts (APIError.generate, APIConnectionError)",
             "openai-agents-python src/agents/models/openai_responses.py (stream_response over openai-python's Stream)",
             "langchain-openai langchain_openai/chat_models/base.py (ChatOpenAI.stream reads to the end of the body, over openai-python's httpx transport; measured, tests/test_real_clients.py)"),
    clients=("openai-python", "openai-node", "codex", "openai-agents", "langchain"),
    bad="http/HTP010-stalled.sse",
    good=GOOD,
)
TOTAL_TIMEOUT = rule(
    "HTP011", "total-timeout", "error",
    "the exchange was still running after the total timeout of {timeout} s (at byte {offset})",
    summary="Flags an exchange that does not finish within the total timeout.",
    why="A stream that never ends (a runaway generation, a server looping on keepalives) ties up the client "
        "and the server alike; probes and CI need an upper bound.",
    sources=("openai-python src/openai/_constants.py (DEFAULT_TIMEOUT)",
             "codex codex-rs/codex-client (TransportError)",
             "langchain-openai langchain_openai/chat_models/base.py (ChatOpenAI.stream reads to the end of the body, over openai-python's httpx transport; measured, tests/test_real_clients.py)"),
    clients=("openai-python", "codex", "langchain"),
    bad="http/HTP011-total-timeout.sse",
    good=GOOD,
)
CUT_OFF = rule(
    "HTP012", "body-cut-off", "error",
    "the connection ended after {bytes} bytes, {where}: {error}",
    summary="Flags a response whose body the transport cut short (an incomplete chunked body, a reset, a "
            "disconnect before the headers).",
    why="httpx raises RemoteProtocolError ('incomplete chunked read'); the SDKs surface it as a connection "
        "error, and whatever the server meant to send after the cut (often the terminal event) is lost.",
    sources=("RFC 9112 §7.1 (chunked transfer coding)",
             "httpx _transports (RemoteProtocolError)",
             "openai-python src/openai/_base_client.py (APIStatusError, APIConnectionError, APITimeoutError)",
             "openai-node src/core/error.ts (APIError.generate, APIConnectionError)",
             "codex codex-rs/codex-client (TransportError)",
             "openai-agents-python src/agents/models/openai_responses.py (stream_response over openai-python's Stream)",
             "langchain-openai langchain_openai/chat_models/base.py (ChatOpenAI.stream reads to the end of the body, over openai-python's httpx transport; measured, tests/test_real_clients.py)"),
    clients=("openai-python", "openai-node", "codex", "openai-agents", "langchain"),
    bad="http/HTP012-body-cut-off.sse",
    good=GOOD,
)
BODY_CAP = rule(
    "HTP013", "body-cap-reached", "warning",
    "stopped reading the {what} at the byte cap of {limit} bytes (received {bytes})",
    summary="Flags an error or non-streaming body larger than the byte cap (`--max-bytes`); a stream over the "
            "cap is SSE027.",
    why="A JSON answer of this size is a runaway generation or the wrong endpoint, and clients that read it "
        "whole run out of memory.",
    sources=("sse-check resource limits (--max-bytes)",),
    bad="http/HTP013-body-cap-reached.sse",
    good=GOOD,
)
REDIRECT = rule(
    "HTP014", "redirect-followed", "info",
    "the request was redirected: {chain}",
    summary="Notes that the endpoint answered with a redirect that the probe followed.",
    why="Clients follow 307/308 for POST, but not all of them resend the body, and a redirect to another "
        "host drops the Authorization header: point clients at the final URL.",
    sources=("RFC 9110 §15.4 (redirection 3xx)", "httpx redirects (Authorization stripped across origins)"),
    bad="http/HTP014-redirect-followed.sse",
    good=GOOD,
)
NONSTREAM_ORDER = rule(
    "HTP015", "nonstream-output-order", "warning",
    "non-streaming output order is {order}; expected reasoning, then the message, then function calls",
    summary="Flags a `stream: false` result whose output items are not reasoning → message → function calls.",
    why="Agents replay the output items in order as the next turn's input, and chat templates render a "
        "reasoning item after the message (or a call before its reasoning) differently from what the model "
        "generated; llama-server builds its final result in this order (llama.cpp PR #18486).",
    sources=("llama.cpp PR #18486",
             "OpenAI Responses API reference, Response.output",
             "openai-agents-python src/agents/models/openai_responses.py (stream_response over openai-python's Stream)"),
    clients=("openai-agents",),
    bad="http/HTP015-nonstream-output-order.sse",
    good=GOOD,
)
NONSTREAM_PARITY = rule(
    "HTP016", "nonstream-parity", "warning",
    "the non-streaming output differs from the streamed {streamed}: {detail}",
    summary="Flags a `stream: false` result whose items (types, order, id prefixes; a chat choice's or a "
            "message's finish or stop reason) differ from the same request's streamed final output.",
    why="Clients switch between streaming and non-streaming freely (the Agents SDK does per model setting); "
        "the two must describe the same items, or code that works one way breaks the other.",
    sources=("OpenAI Responses API reference (stream parameter)", "openai-agents-python models/openai_responses.py"),
    clients=("openai-agents",),
    bad="http/HTP016-nonstream-parity.sse",
    good=GOOD,
)
NONSTREAM_TEXT = rule(
    "HTP017", "nonstream-text-differs", "info",
    "item {index} ({type}) of the non-streaming output has other {what} than the streamed one",
    summary="Notes that the text or arguments of a `stream: false` result differ from the streamed result.",
    why="Expected from a sampling model; with a deterministic server (fixed seed, greedy decoding) it means "
        "one of the two paths builds its text differently.",
    sources=("OpenAI Responses API reference (stream parameter)",),
    bad="http/HTP017-nonstream-text-differs.sse",
    good=GOOD,
)
NONSTREAM_NOT_RESPONSE = rule(
    "HTP018", "nonstream-not-a-response", "error",
    "the non-streaming answer is not a {what}: {detail}",
    summary="Flags a `stream: false` answer that is not what its endpoint returns: a JSON Response object with "
            "an `output` array (`/v1/responses`), a chat completion with `choices[].message` "
            "(`/v1/chat/completions`), a message with a `content` array (`/v1/messages`).",
    why="SDKs parse the body as the endpoint's object (openai-python's Response, ChatCompletion, "
        "anthropic-python's Message); anything else (an event stream sent anyway, a bare list, an object without "
        "`output`, `choices` or `content`) fails to parse or yields an empty result. The answer of another "
        "endpoint is not judged.",
    sources=("OpenAI Responses API reference, Response object",
             "OpenAI Chat Completions API reference, chat completion object",
             "openai-python src/openai/types/chat/chat_completion.py",
             "anthropic-sdk-python src/anthropic/types/message.py",
             "openai-node src/resources/responses/responses.ts (Response), src/resources/chat/completions",
             "openai-agents-python src/agents/models/openai_responses.py (get_response)"),
    clients=("openai-python", "openai-node", "openai-agents"),
    bad="http/HTP018-nonstream-not-a-response.sse",
    good=GOOD,
)
CLOSED_UNANNOUNCED = rule(
    "HTP019", "connection-closed-unannounced", "warning",
    "the server {what} without `Connection: close`{announced}",
    summary="Flags a server that closes a persistent HTTP/1.1 connection after a complete response without "
            "announcing it, or drops a kept-alive connection under the next request.",
    why="Without `Connection: close` an HTTP/1.1 connection persists, so clients put it back in their pool "
        "and send the next request on it. If the server closes it unannounced, that request meets a closed "
        "socket (\"Server disconnected without sending a response\") whenever it is sent before the close "
        "arrives: a race. POST is not idempotent, so generic clients (httpx, requests, fetch) do not resend "
        "it and fail; openai-python and openai-node resend it only after a back-off (0.5 s and up), and only "
        "while retries are enabled. llama-server does this after every streamed response.",
    sources=("RFC 9112 §9.3 (persistence) and §9.6 (tear-down: a server that closes should send close)",
             "RFC 9112 §9.3.1 (non-idempotent requests are not retried automatically)",
             "openai-python src/openai/_base_client.py (APIConnectionError retried)"),
    bad="http/HTP019-connection-closed-unannounced.sse",
    good=GOOD,
)
READING_STOPPED = rule(
    "HTP020", "client-disconnected", "info",
    "reading stopped after {bytes} bytes, {where}: {detail}",
    summary="Notes that the client, not the server, ended the exchange before the terminal event (it "
            "disconnected from `sse-check proxy`).",
    why="A stream the client abandoned has no terminal event through no fault of the server, so the checks of "
        "the stream's end (LIF006, the [DONE] sentinel, an unfinished last event) are not run; what arrived "
        "was checked as usual. A client that leaves mid-stream is often a user cancelling, or a client timeout "
        "shorter than the generation (then look at the timings): worth knowing, not a server defect. A probe "
        "or proxy stopped by its operator is not this: the exchange it was to check did not finish.",
    sources=(SSE_SPEC, "ASGI HTTP connection scope ('http.disconnect')"),
    bad="http/HTP020-client-disconnected.sse",
    good=GOOD,
)
INVALID_REQUEST_REFUSED = rule(
    "HTP021", "invalid-request-refused", "info",
    "invalid request refused with HTTP {status}, as it should be: {detail}",
    summary="Notes that an HTTP 4xx answered a request that does not match the request schema "
            "(`CreateResponse`, `CreateChatCompletionRequest`, Anthropic's `MessageCreateParams`): a correct "
            "refusal, reported instead of HTP001.",
    why="A server must refuse an invalid request with a 4xx and a JSON error, and this one did; the defect "
        "is in the client that sent it (the SDKs validate nothing before sending, so a wrong type reaches the "
        "server as is).",
    sources=(OPENAI_ERRORS, "OpenAI OpenAPI description 2.3.0, components.schemas.CreateResponse and "
             "CreateChatCompletionRequest",
             "anthropic-sdk-python 2.15.0 src/anthropic/types/message_create_params.py (MessageCreateParams)"),
    bad="http/HTP021-invalid-request-refused.sse",
    good=GOOD,
)
UNSUPPORTED_FEATURE = rule(
    "HTP022", "unsupported-feature", "warning",
    "feature not supported: {feature} (HTTP {status}: {message})",
    summary="Flags a valid request refused with an HTTP error that names a feature it uses "
            "(`previous_response_id`, `background`, a tool type, an input item type, …): unsupported here.",
    why="Refusing with a 4xx and a JSON error that names the feature is the right way to decline, so this is "
        "not HTP001's malfunction; but every client that relies on the feature gets that error instead of a "
        "response (openai-python and openai-node raise BadRequestError), and a gateway in front of the server "
        "inherits the gap. A warning, not info: it answers 'will real clients work with this server?' with no "
        "for the clients that use the feature, and the fix is the server's (implement it, or document it). "
        "Open Responses says servers SHOULD support previous_response_id.",
    sources=(OPENAI_ERRORS, OPENAI_PY,
             "Open Responses specification, https://www.openresponses.org/specification "
             "('Stateful Conversations')",
             "openai-node src/core/error.ts (APIError.generate)"),
    clients=("openai-python", "openai-node"),
    bad="http/HTP022-unsupported-feature.sse",
    good=GOOD,
)
RATE_LIMITED_BLIND = rule(
    "HTP023", "rate-limited-without-retry-after", "warning",
    "HTTP 429 without Retry-After or retry-after-ms: clients cannot tell when to try again",
    summary="Flags a 429 Too Many Requests answered without a `Retry-After` (or `retry-after-ms`) header.",
    why="openai-python retries a 429 (twice by default) after the delay the server asks for in `retry-after-ms` "
        "or `Retry-After` (up to a cap); without either it falls back to its own exponential backoff "
        "(0.5 s, 1 s, … with jitter), which knows nothing of the server's window, so it retries too early and "
        "gives up with a RateLimitError while the limit still holds, and a fleet of clients retries in step. "
        "RFC 6585 says a 429 MAY carry Retry-After; the OpenAI API sends rate-limit headers with every 429.",
    sources=("RFC 6585 §4 (429 Too Many Requests, Retry-After)", "RFC 9110 §10.2.3 (Retry-After)",
             "openai-python src/openai/_base_client.py (_parse_retry_after_header: retry-after-ms, then "
             "Retry-After; _calculate_retry_timeout: the server's delay, else exponential backoff; _should_retry)",
             "openai-node src/client.ts (shouldRetry, retryRequest: retry-after-ms, retry-after)"),
    clients=("openai-python", "openai-node"),
    bad="http/HTP023-rate-limited-without-retry-after.sse",
    good=GOOD,
)
INVALID_SERVER_ERROR = rule(
    "HTP024", "invalid-request-server-error", "warning",
    "the invalid request ({what}) failed with HTTP {status}: a server error, not a refusal",
    summary="Flags an invalid request (a wrong JSON type, a missing required field) answered with a 5xx.",
    why="A request no server may take must be refused with a 4xx: openai-python and openai-node retry a 5xx "
        "(twice by default, with backoff), so the same bad request is sent three times and the caller waits "
        "for nothing, then get an InternalServerError where a BadRequestError names the bad parameter; code that "
        "handles BadRequestError (or the anthropic SDKs' BadRequestError) to fix its request never sees one. "
        "A 5xx also tells monitoring the server broke when the client did.",
    sources=(OPENAI_ERRORS, "RFC 9110 §15.5 (4xx: the client's error) and §15.6 (5xx: the server's)",
             "openai-python src/openai/_base_client.py (_should_retry: every status >= 500; _make_status_error: "
             "400 BadRequestError, >= 500 InternalServerError)",
             "openai-node src/client.ts (shouldRetry) and src/core/error.ts (APIError.generate)",
             "anthropic-sdk-python src/anthropic/_base_client.py (_should_retry)"),
    clients=("openai-python", "openai-node"),
    bad="http/HTP024-invalid-request-server-error.sse",
    good=GOOD,
)
STATUS_RETRIED = rule(
    "HTP025", "status-retried", "info",
    "HTTP {status} {reason} for {what}, retried as {client} does ({basis})",
    summary="Notes an error status that the client's SDK retries by itself (408, 409, 429, 5xx, or any status "
            "with `x-should-retry: true`): retried by the probe as the SDK does, or, through `sse-check proxy`, "
            "sent by an SDK that has retries left (its `x-stainless-retry-count`). Not a breakage on its own.",
    why="openai-python, openai-node and the anthropic SDKs send such a request again (twice by default, after the "
        "server's Retry-After or their backoff) and raise only when the retries run out, so the caller never "
        "sees this answer: reporting HTP001 for it would predict a failure the SDK absorbs. The probe retries "
        "as the SDK of the dialect does (`--retries`) and judges the answer after the last retry as any other "
        "(HTP001 if it still fails). The proxy cannot see the future, so it counts on the SDK's default of two "
        "retries, from the retry count every SDK request carries; a request without one (curl, another client) "
        "is not assumed to retry and gets HTP001. A 429 without a delay to wait is HTP023 all the same.",
    sources=("openai-python src/openai/_base_client.py (_should_retry: x-should-retry, 408, 409, 429, >= 500; "
             "_retry_request; _build_headers: x-stainless-retry-count) and src/openai/_constants.py "
             "(DEFAULT_MAX_RETRIES = 2)",
             "openai-node src/client.ts (shouldRetry, retryRequest)",
             "anthropic-sdk-python src/anthropic/_base_client.py (_should_retry)"),
    bad="http/HTP025-status-retried.sse",
    good=GOOD,
)
