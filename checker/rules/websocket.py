"""WebSocket rules: the Responses API's WebSocket mode (``wss://…/v1/responses``), around the events.

In WebSocket mode the client sends ``{"type": "response.create", …request fields}`` as one JSON text
message and the server answers with the same events as the SSE stream, one JSON event per message,
several responses one after the other on one connection (docs/websocket.md). Each response's events are
checked by the same machine as an SSE stream (the SSE framing rules do not apply: there is no framing
text); these rules are about the messages that carry them and the connection: frame types, one event per
message, the close, the ``error`` event, responses kept apart, a continuation by ``previous_response_id``.

``sse-check probe --transport websocket`` records the exchange as a ``X.ws.jsonl`` transcript and
``sse-check lint`` of that transcript gives the same findings; both go through ``checker.ws_checks``,
which holds the logic. Example transcripts live in ``captures/ws/``.
"""

from checker.rules.registry import rule

GOOD = "ws/conforming.ws.jsonl"
OPENAI_GUIDE = "OpenAI API guide 'WebSocket mode' (Responses API: response.create, one event per message)"
OPENAI_EVENTS = "OpenAI API reference, Responses 'WebSocket events' (response.create, error)"
RFC_FRAMES = "RFC 6455 §5.6 (text and binary data frames)"
RFC_CLOSE = "RFC 6455 §7.1.5, §7.4 (close codes: 1000 normal, 1006 no close frame, 1011 server error)"
PY_RECV = ("openai-python src/openai/resources/responses/responses.py (ResponsesConnection.recv, parse_event: "
           "json.loads of each message)")
PY_CLOSE = ("openai-python src/openai/_websocket_connection.py (_iter_events: a close with 1000/1001 ends the "
            "iteration quietly, any other raises)")
PY_ERROR = "openai-python src/openai/types/responses/responses_server_event.py (ResponseWsError, ResponseWsErrorError)"
NODE_RECV = ("openai-node src/resources/responses/ws-base.ts (#onMessage: a binary frame or a message JSON.parse "
             "rejects is emitted as 'raw', never as an event)")
CODEX_WS = ("codex codex-rs/codex-api/src/endpoint/responses_websocket.rs (run_websocket_response_stream: "
            "reads until response.completed)")

BINARY_FRAME = rule(
    "WSK001", "binary-frame", "error",
    "message {message} is a binary frame ({size} bytes): events are JSON text frames",
    summary="Flags an event sent in a binary WebSocket frame instead of a text frame.",
    why="The Responses WebSocket mode sends every event as a JSON text message. codex fails the turn "
        "(\"unexpected binary websocket event\"); openai-node emits the frame as 'raw' and no event "
        "listener sees it, so the event is silently lost; openai-python alone parses the bytes.",
    sources=(OPENAI_GUIDE, RFC_FRAMES, CODEX_WS, NODE_RECV, PY_RECV),
    clients=("openai-node", "codex"),
    bad="ws/WSK001-binary-frame.ws.jsonl",
    good=GOOD,
)
SEVERAL_EVENTS = rule(
    "WSK002", "several-events-in-one-message", "error",
    "message {message} holds {count} JSON values: one event per message",
    summary="Flags a WebSocket message that carries more than one event (JSON values one after another).",
    why="Each message is parsed as one JSON document: openai-python's json.loads raises \"Extra data\" and "
        "ends the caller's loop; openai-node's JSON.parse fails and the message becomes 'raw' (every event in "
        "it lost); codex logs a parse error and skips the message, so its events silently never happen.",
    sources=(OPENAI_GUIDE, PY_RECV, NODE_RECV, CODEX_WS),
    clients=("openai-python", "openai-node", "codex"),
    bad="ws/WSK002-several-events-in-one-message.ws.jsonl",
    good=GOOD,
)
NOT_ONE_EVENT = rule(
    "WSK003", "message-not-an-event", "error",
    "message {message} is not a JSON event object: {reason}",
    summary="Flags a text message that is not one complete JSON object (a partial event, a `[DONE]`, an array).",
    why="A message cut in two, or text that is not JSON, cannot be parsed: openai-python raises "
        "JSONDecodeError, openai-node drops it as 'raw' (or reports an invalid event), codex skips it; "
        "whatever event it was meant to carry is lost.",
    sources=(OPENAI_GUIDE, PY_RECV, NODE_RECV, CODEX_WS),
    clients=("openai-python", "openai-node", "codex"),
    bad="ws/WSK003-message-not-an-event.ws.jsonl",
    good=GOOD,
)
CLOSED_MID_RESPONSE = rule(
    "WSK004", "closed-mid-response", "error",
    "the connection closed ({close}) before response {response} {what}",
    summary="Flags a connection closed while a response was still streaming (no terminal event yet), or before "
            "a response asked for was answered.",
    why="With close code 1000 or 1001 openai-python's event iterator simply ends: the caller gets a response "
        "without its terminal event and no error, a silent truncation. codex fails the turn (\"websocket "
        "closed by server before response.completed\").",
    sources=(OPENAI_GUIDE, RFC_CLOSE, PY_CLOSE, CODEX_WS),
    clients=("openai-python", "codex"),
    bad="ws/WSK004-closed-mid-response.ws.jsonl",
    good=GOOD,
)
ABNORMAL_CLOSE = rule(
    "WSK005", "abnormal-close", "warning",
    "the connection ended abnormally: {close}",
    summary="Flags a WebSocket connection that did not end with a normal close (1000), or with none at all.",
    why="A close code other than 1000/1001 (or a TCP drop without a close frame, 1006) makes openai-python's "
        "iterator raise ConnectionClosedError, or reconnect when the code is a recoverable one; a server "
        "should end an idle connection with 1000 and answer the client's close with the same.",
    sources=(RFC_CLOSE, PY_CLOSE),
    clients=("openai-python",),
    bad="ws/WSK005-abnormal-close.ws.jsonl",
    good=GOOD,
)
ERROR_SHAPE = rule(
    "WSK006", "error-event-shape", "error",
    "error event {problem}",
    summary="Flags an `error` event that is not shaped as the WebSocket mode's error: "
            "`{type: error, status, error: {type, code, message, param}}`.",
    why="openai-python types the event as ResponseWsError, whose `error` object carries the required `type` "
        "and `message`: a flat SSE-style error (`code`/`message` at the top) leaves `event.error` missing and "
        "the caller's error handling raises AttributeError. codex maps only an error with a `status` and an "
        "`error` object to an HTTP error (retry, auth refresh); any other shape is not recognised as one.",
    sources=(OPENAI_EVENTS, PY_ERROR, CODEX_WS),
    clients=("openai-python", "codex"),
    bad="ws/WSK006-error-event-shape.ws.jsonl",
    good=GOOD,
)
INTERLEAVED = rule(
    "WSK007", "interleaved-response", "error",
    "event {event} {what}",
    summary="Flags events of another response arriving while one is in flight, or events when none was asked for.",
    why="Without a `stream_id` the connection carries one response at a time: clients read events until the "
        "terminal one and attribute every event in between to the response they asked for. codex and a "
        "caller iterating openai-python's connection would merge a second response's text and items into "
        "the first.",
    sources=(OPENAI_GUIDE, OPENAI_EVENTS, CODEX_WS, PY_RECV),
    clients=("openai-python", "codex"),
    bad="ws/WSK007-interleaved-response.ws.jsonl",
    good=GOOD,
)
CONTINUATION_REFUSED = rule(
    "WSK008", "continuation-refused", "error",
    "response.create with previous_response_id {previous} (a response of this connection) was refused: {error}",
    summary="Flags a server that refuses to continue a response made earlier on the same connection.",
    why="Continuing by `previous_response_id` with only the new input is what the WebSocket mode is for: the "
        "server keeps the connection's last response (even with store=false). A server that answers "
        "previous_response_not_found forces clients to resend the whole history (codex falls back), or fails "
        "the turn.",
    sources=(OPENAI_GUIDE, CODEX_WS),
    clients=("codex",),
    bad="ws/WSK008-continuation-refused.ws.jsonl",
    good=GOOD,
)
NO_ANSWER = rule(
    "WSK009", "no-answer", "error",
    "no {what} within {timeout:g} s",
    summary="Flags a response.create that gets no event, or a response that stalls, within the probe's timeouts.",
    why="codex gives up on a WebSocket turn after its idle timeout (\"idle timeout waiting for websocket\"); "
        "openai-python waits forever on recv(), so a stalled response hangs the caller.",
    sources=(CODEX_WS, PY_RECV),
    clients=("openai-python", "codex"),
    bad="ws/WSK009-no-answer.ws.jsonl",
    good=GOOD,
)
RESPONSE_ERROR = rule(
    "WSK010", "response-error", "error",
    "response.create {scenario} was answered with an error event: {error}",
    summary="Flags a response.create answered with an `error` event instead of a response.",
    why="The WebSocket mode reports a refused request as an `error` event, the counterpart of an HTTP 4xx/5xx: "
        "openai-python's dispatch_events raises OpenAIError, codex fails the turn with the mapped HTTP error.",
    sources=(OPENAI_EVENTS, "openai-python src/openai/resources/responses/responses.py (dispatch_events)", CODEX_WS),
    clients=("openai-python", "codex"),
    bad="ws/WSK010-response-error.ws.jsonl",
    good=GOOD,
)
