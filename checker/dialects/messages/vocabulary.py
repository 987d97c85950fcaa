"""The Anthropic Messages stream's vocabulary: event types, content blocks, deltas (docs/spec.md §7).

One place for the names the machine, the rules, the recogniser and the reports share. The sets are the
official SDKs' (anthropic-sdk-python 2.15.0 ``anthropic.types.RawMessageStreamEvent``, its content block and
delta unions; @anthropic-ai/sdk 1.15.0 ``src/resources/messages/messages.ts``), plus ``ping`` and ``error``,
which both SDKs handle by the SSE event name before any event type is built.
"""

from __future__ import annotations

MESSAGE_START = "message_start"
MESSAGE_DELTA = "message_delta"
MESSAGE_STOP = "message_stop"
BLOCK_START = "content_block_start"
BLOCK_DELTA = "content_block_delta"
BLOCK_STOP = "content_block_stop"
PING = "ping"
ERROR = "error"

# The events of a message, in the order a message sends them (RawMessageStreamEvent's members).
MESSAGE_EVENTS = frozenset({MESSAGE_START, MESSAGE_DELTA, MESSAGE_STOP, BLOCK_START, BLOCK_DELTA, BLOCK_STOP})
EVENT_TYPES = MESSAGE_EVENTS | {PING, ERROR}
# The event that ends a message; nothing may follow it.
TERMINAL_TYPES = frozenset({MESSAGE_STOP})
# The events that are evidence of an Anthropic stream when they come first: the message events, and ``ping``,
# which Anthropic's API may send before message_start and no OpenAI stream has. Not ``error``: OpenAI's
# streams have an ``error`` event as well.
RECOGNISED_FIRST = MESSAGE_EVENTS | {PING}

# Content block types the SDKs know (ContentBlock's members). Blocks that stream a body, by delta type.
TEXT, THINKING, REDACTED_THINKING, TOOL_USE, SERVER_TOOL_USE = (
    "text", "thinking", "redacted_thinking", "tool_use", "server_tool_use")
BLOCK_TYPES = frozenset({
    TEXT, THINKING, REDACTED_THINKING, TOOL_USE, SERVER_TOOL_USE,
    "web_search_tool_result", "web_fetch_tool_result", "code_execution_tool_result",
    "bash_code_execution_tool_result", "text_editor_code_execution_tool_result", "tool_search_tool_result",
    "container_upload",
})
# delta type -> the block types it may write into (both SDKs apply a delta only to a block of these types and
# drop it silently otherwise: anthropic-python lib/streaming/_messages.py accumulate_event, @anthropic-ai/sdk
# src/lib/MessageStream.ts #accumulateMessage).
DELTA_BLOCKS: dict[str, frozenset[str]] = {
    "text_delta": frozenset({TEXT}),
    "citations_delta": frozenset({TEXT}),
    "thinking_delta": frozenset({THINKING}),
    "signature_delta": frozenset({THINKING}),
    "input_json_delta": frozenset({TOOL_USE, SERVER_TOOL_USE}),
}
# The field of each delta that carries its piece.
DELTA_FIELD = {"text_delta": "text", "thinking_delta": "thinking", "signature_delta": "signature",
               "input_json_delta": "partial_json", "citations_delta": "citation"}
# Blocks whose input is streamed as JSON pieces.
TOOL_BLOCKS = frozenset({TOOL_USE, SERVER_TOOL_USE})

# stop_reason values (Message.stop_reason's enum in the SDK types).
STOP_REASONS = frozenset({"end_turn", "max_tokens", "stop_sequence", "tool_use", "pause_turn", "refusal",
                          "model_context_window_exceeded"})

# Id prefixes of Anthropic's API (docs/spec.md §7.3).
MESSAGE_ID_PREFIX = "msg_"
TOOL_ID_PREFIXES = {TOOL_USE: "toolu_", SERVER_TOOL_USE: "srvtoolu_"}


def event_type(event: dict[str, object]) -> str | None:
    """The type an event object names (its ``type`` member), or None."""
    etype = event.get("type")
    return etype if isinstance(etype, str) else None


def recognise(event: dict[str, object]) -> str | None:
    """Evidence that a stream whose first event object is ``event`` is an Anthropic Messages stream."""
    etype = event.get("type")
    if isinstance(etype, str) and etype in RECOGNISED_FIRST:
        return f"type {etype!r}"
    return None


def lane(event: dict[str, object]) -> str:
    """The report lane of an event: its content block by index (``#0``, the timelines label it with the block's
    type), or ``response``, the lane of the message's own events (labelled "message")."""
    index = event.get("index")
    if type(index) is int and event.get("type") in (BLOCK_START, BLOCK_DELTA, BLOCK_STOP):
        return f"#{index}"
    return "response"
