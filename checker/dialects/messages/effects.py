"""What each Anthropic Messages finding does to the Anthropic SDKs: the dialect's client matrix.

Two clients, each the call its users make:

* ``anthropic-python`` 2.15.0: ``with client.messages.stream(...) as s`` then ``s.get_final_message()``.
  Its SSE layer (``src/anthropic/_streaming.py``) skips ``ping`` and events without an ``event:`` line by
  their *name*, raises on ``event: error`` and parses the rest whatever they are named; its accumulator
  (``lib/streaming/_messages.py`` ``accumulate_event``) passes events before ``message_start`` through
  unaccumulated, appends each started block, indexes blocks by the events' ``index`` (a missing one is an
  IndexError), drops a delta of the wrong type, parses tool input as it streams (jiter, partial mode), and
  never needs ``message_stop``: ``get_final_message()`` returns the snapshot at the end of the stream.
* ``anthropic-ts`` (@anthropic-ai/sdk 1.15.0): ``client.messages.stream()`` then ``finalMessage()``. The same
  SSE rules (``src/core/streaming.ts``); ``MessageStream`` (``src/lib/MessageStream.ts``) ignores events
  before ``message_start``, throws on a second one, finds blocks with ``content.at(index)`` (a missing one:
  the delta is dropped), reads tool input lazily with its partial JSON parser, and adds the message only at
  ``message_stop``: without it ``finalMessage()`` rejects.

Every verdict here is checked against the real SDKs on every capture of captures/messages by
tests/test_messages_oracles.py (a loopback server serves the capture; the SDK's own call path reads it).
"""

from __future__ import annotations

from checker.dialects.base import ClientEffects, add_column, rule_clients, Condition, Effect, EndEffect, Linted, Verdict, details, on_field
from checker.dialects.messages import vercel_effects
from checker.findings import Finding

PY, TS = "anthropic-python", "anthropic-ts"
LC, CC, VAI = "langchain", "claude-code", "vercel-ai"
CLIENTS = (PY, TS, CC, VAI, LC)

_TS_NO_MESSAGE = "AnthropicError: stream ended without producing a Message with role=assistant"
_TS_NO_CHUNKS = "AnthropicError: request ended without sending any chunks"
_PY_NO_SNAPSHOT = "AssertionError (get_final_message(): no message_start, no snapshot)"
_PY_INDEX = "IndexError: list index out of range (content[{index}] of a snapshot with {started} block(s))"


def _breaks(symptom: str, when: Condition | None = None) -> Effect:
    return Effect(Verdict.BREAKS, symptom, when)


def _degrades(symptom: str, when: Condition | None = None) -> Effect:
    return Effect(Verdict.DEGRADED, symptom, when)


# --- conditions --------------------------------------------------------------------------------------------


def _detail_is(name: str, *values: object) -> Condition:
    return lambda f, r: f.details.get(name) in values  # any key: the values are the rule's own


def _beyond_snapshot(f: Finding, r: Linted) -> bool:
    """The event's index is past the blocks the snapshot holds (anthropic-python: IndexError)."""
    facts = details(f)
    index, started = facts.get("got", facts.get("index")), facts.get("started")
    return type(index) is int and type(started) is int and index >= started


def _event_is(*types: str) -> Condition:
    return lambda f, r: f.position.event_type in types


def _early_block_start(f: Finding, r: Linted) -> bool:
    return details(f).get("type") == "content_block_start"


# An event the SSE layer drops by its name (SSE009: no `event:` line; SSE008 under `event: ping`).
def _dropped(f: Finding, r: Linted) -> bool:
    return f.code == "SSE009" or details(f).get("event") == "ping"


def _dropped_as(*types: str) -> Condition:
    return lambda f, r: _dropped(f, r) and f.position.event_type in types


def _named_error(f: Finding, r: Linted) -> bool:
    return f.code == "SSE008" and details(f).get("event") == "error"


_DROPPED_DELTA = "the SDK skips the event by its name: the {type} is lost from the final message"
_DROPPED_START = "the SDK skips message_start by its name: "

EFFECTS: dict[str, dict[str, tuple[Effect, ...]]] = {
    # -- the message ------------------------------------------------------------------------------------
    "ANT001": {
        PY: (_breaks("IndexError: list index out of range (the block started before message_start is not in the "
                     "snapshot)", when=_early_block_start),
             _degrades("the {type} before message_start is not accumulated")),
        TS: (_breaks("AnthropicError: Cannot read properties of undefined (reading 'type') (the block started "
                     "before message_start is not in the snapshot)", when=_early_block_start),
             _degrades("the {type} before message_start is not accumulated")),
    },
    "ANT002": {PY: (_breaks(_PY_NO_SNAPSHOT),), TS: (_breaks(_TS_NO_CHUNKS),),
               CC: (_breaks("API Error: Message not found"),)},
    "ANT003": {TS: (_breaks("AnthropicError: Unexpected event order, got message_start before receiving "
                            "\"message_stop\""),)},
    "ANT005": {
        PY: (_degrades("the final message keeps message_start's {count} block(s): every block is shifted and "
                       "block 0's deltas go into the first of them"),),
        TS: (_degrades("finalMessage() keeps message_start's {count} block(s): every block is shifted and "
                       "block 0's deltas go into the first of them"),),
    },
    "ANT006": {
        PY: (_breaks("AttributeError: 'NoneType' object has no attribute 'output_tokens'",
                     when=_detail_is("detail", "no usage object")),),
        TS: (_breaks("AnthropicError: Cannot set properties of undefined (setting 'output_tokens')",
                     when=lambda f, r: details(f).get("detail") == "no usage object"
                     and str(details(f).get("where")).startswith("message_start")),
             _breaks("AnthropicError: Cannot read properties of undefined (reading 'output_tokens')",
                     when=_detail_is("detail", "no usage object"))),
    },
    # -- content blocks -------------------------------------------------------------------------------------
    "ANT007": {
        PY: (_breaks(_PY_INDEX.replace("{index}", "{got}"), when=_beyond_snapshot),
             _degrades("the block's deltas go into another block (content[{got}])")),
        TS: (_degrades("content.at({got}) is another block or none: the block's deltas are dropped or misplaced"),),
    },
    "ANT008": {
        PY: (_degrades("the block is appended again: the final message has an extra empty block"),),
        TS: (_degrades("the block is appended again: finalMessage() has an extra empty block"),),
    },
    "ANT009": {
        PY: (_degrades("the {delta} is dropped: the {block} block misses it"),),
        TS: (_degrades("the {delta} is dropped: the {block} block misses it"),),
        CC: (_breaks("API Error: Content block is not a {block} block"),),
    },
    "ANT010": {
        PY: (_breaks(_PY_INDEX, when=_beyond_snapshot), _degrades("the {type} goes into another block")),
        CC: (_breaks("API Error: Content block not found"),),
        # With no block at all in the snapshot, MessageStream's event handler reads content.at(-1).type first.
        TS: (_breaks("AnthropicError: Cannot read properties of undefined (reading 'type') (content.at(-1) of a "
                     "message with no block)", when=lambda f, r: details(f).get("started") == 0),
             _degrades("content.at({index}) finds no block: the {type} is dropped"),),
    },
    "ANT017": {
        # A cut JSON string (kind cut-string): measured, anthropic-python 2.15.0 raises at its first delta (jiter's
        # partial mode completes a cut object or array, never a top-level string: "EOF while parsing a string")
        # and @anthropic-ai/sdk 1.15.0 raises "Unexpected end of JSON input"; LangChain 1.7 puts the call in
        # invalid_tool_calls (tests/test_real_clients.py); Claude Code returns.
        PY: (_breaks("ValueError: Unable to parse tool parameter JSON from model. … Error: {error}",
                     when=_detail_is("kind", "invalid")),
             _breaks("ValueError: Unable to parse tool parameter JSON from model. … Error: EOF while parsing a "
                     "string", when=_detail_is("kind", "cut-string")),
             _degrades("the tool input is the partial parse of the text ({error})", when=_detail_is("kind", "cut")),
             _degrades("the tool input is not an object", when=_detail_is("kind", "not-object"))),
        TS: (_breaks("AnthropicError: {error} (JSON.parse, when `input` is read)",
                     when=_detail_is("kind", "invalid", "trailing")),
             _breaks("AnthropicError: Unexpected end of JSON input", when=_detail_is("kind", "cut-string")),
             _degrades("the tool input is the partial parse of the text ({error})", when=_detail_is("kind", "cut")),
             _degrades("the tool input is not an object", when=_detail_is("kind", "not-object"))),
        # ChatAnthropic parses tool input with a partial-JSON parser: a cut input is repaired, text it cannot
        # parse lands in invalid_tool_calls (no tool call to run).
        LC: (_breaks("the call lands in invalid_tool_calls: {error}",
                     when=_detail_is("kind", "invalid", "trailing", "cut-string")),),
    },
    # -- the end of the message ---------------------------------------------------------------------------
    "ANT018": {
        PY: (_degrades("get_final_message().stop_reason is None (no message_delta)"),),
        TS: (_degrades("finalMessage().stop_reason is null (no message_delta)"),),
    },
    # LangChain's ChatAnthropic merges the chunks' response metadata as strings (measured, tests/test_real_clients.py
    # on captures/messages/rules/ANT027-stop-reason-repeated.sse): the stop reasons are joined.
    "ANT027": {LC: (_degrades("response_metadata['stop_reason'] is the reasons joined: {reason!r} twice"),)},
    "ANT020": {
        PY: (_degrades("get_final_message().stop_reason is None"),),
        TS: (_degrades("finalMessage().stop_reason is null"),),
    },
    "ANT022": {TS: (_breaks(_TS_NO_MESSAGE),)},
    "ANT023": {
        PY: (_breaks("APIStatusError: {detail}"),),
        TS: (_breaks("APIError: {detail}"),),
        LC: (_breaks("APIStatusError: {detail} (anthropic-python's Stream)"),),
        CC: (_breaks("API Error: {detail}"),),
    },
    # -- framing, as these SDKs read it ----------------------------------------------------------------------
    "SSE006": {PY: (_breaks("json.JSONDecodeError on the event's data"),),
               TS: (_breaks("SyntaxError: the event's data is not JSON (JSON.parse)"),),
               LC: (_breaks("json.JSONDecodeError on the event's data (anthropic-python's Stream)"),),
               CC: (_breaks("API Error: JSON Parse error: … (the result is_error)"),)},
    "SSE008": {
        PY: (_breaks("APIStatusError: the event is named `error`", when=_named_error),
             _breaks(_PY_NO_SNAPSHOT + " " + _DROPPED_START.strip(), when=_dropped_as("message_start")),
             _breaks(_PY_INDEX.replace("{index}", "…").replace("{started}", "…"),
                     when=_dropped_as("content_block_start")),
             _degrades(_DROPPED_DELTA, when=_dropped_as("content_block_delta", "message_delta"))),
        TS: (_breaks("APIError: the event is named `error`", when=_named_error),
             _breaks(_TS_NO_CHUNKS, when=_dropped_as("message_start")),
             _breaks(_TS_NO_MESSAGE, when=_dropped_as("message_stop")),
             _degrades(_DROPPED_DELTA, when=_dropped_as("content_block_start", "content_block_delta",
                                                        "message_delta"))),
    },
    "SSE010": {
        PY: (_degrades("the SDK reads on: the {what} after message_stop changes the final message",
                       when=_event_is("content_block_start", "content_block_delta", "message_delta")),),
        TS: (_breaks("AnthropicError: Unexpected event order, got message_start before receiving "
                     "\"message_stop\"", when=_event_is("message_start")),),
    },
    "SSE018": {PY: (_breaks("json.JSONDecodeError: the keepalive is parsed as JSON"),),
               TS: (_breaks("SyntaxError: the keepalive is parsed as JSON"),),
               LC: (_breaks("json.JSONDecodeError: the keepalive is parsed as JSON (anthropic-python's Stream)"),)},
}
# SCH001 on a field the accumulators dereference (anthropic-sdk-python src/anthropic/lib/streaming/_messages.py
# accumulate_event: message_start's message and its content list, each delta's `delta` and its `type`, the block
# list indexed by `index`, text and thinking joined with `+=`; anthropic-sdk-typescript src/lib/MessageStream.ts
# #accumulateMessage: the same objects read, `content.push`, `delta.type`, `delta.stop_reason`; its joins are
# JavaScript's `+`, which turns a number or null into text instead of failing). A schema finding on any other
# field is left to the fallback (its Rule.clients): these are the fields whose wrong shape raises.
_MESSAGE = ("message_start",)
_DELTA, _START, _MSG_DELTA = ("content_block_delta",), ("content_block_start",), ("message_delta",)
_BOTH_RAISE = (on_field(_MESSAGE, ("", "/message"), keywords=("type",), missing=("message", "content")),
               on_field(_MESSAGE, ("/message/content",)),
               on_field(_DELTA, ("", "/delta"), missing=("delta",)),
               on_field(_MSG_DELTA, ("", "/delta"), missing=("delta",)))
_BLOCK_STOP = ("content_block_stop",)
_PY_RAISES = (on_field(_DELTA, ("",), keywords=(), missing=("index",)),
              on_field(_BLOCK_STOP, ("", "/index"), missing=("index",)),
              on_field(_DELTA, ("/delta/partial_json",)),
              on_field(_MSG_DELTA, ("/usage",)), on_field(_MESSAGE, ("/message/usage",)),
              on_field(_DELTA, ("/delta",), keywords=(), missing=("text", "thinking")),
              on_field(_DELTA, ("/delta/text", "/delta/thinking")),
              on_field(_START, ("", "/content_block"), missing=("content_block", "text", "thinking")),
              on_field(_START, ("/content_block/text", "/content_block/thinking")))
_TS_JOINS = (on_field(_DELTA, ("/delta/text", "/delta/thinking")),
             on_field(_DELTA, ("/delta",), keywords=(), missing=("text", "thinking")))


def _any(conditions: tuple[Condition, ...]) -> Condition:
    return lambda f, r: any(c(f, r) for c in conditions)


EFFECTS["SCH001"] = {
    PY: (_breaks("AttributeError/TypeError: get_final_message()'s accumulator reads {pointer} of the {type} "
                 "(accumulate_event)", when=_any(_BOTH_RAISE + _PY_RAISES)),),
    TS: (_breaks("AnthropicError: Cannot read properties of … ({pointer} of the {type}: MessageStream)",
                 when=_any(_BOTH_RAISE)),
         _degrades("the {type}'s {pointer} is joined into the text as JavaScript's `+` makes it", when=_any(_TS_JOINS))),
}

# SSE009 (no `event:` line) has the same effects as an event named `ping`: both are skipped by name.
EFFECTS["SSE009"] = {client: tuple(e for e in effects if e.when is not _named_error)
                     for client, effects in EFFECTS["SSE008"].items()}


def _no_event_named(f: Finding, r: Linted) -> bool:
    # Every event of the stream came without its `event:` line: the SDK the client reads with skips them all.
    return f.code == "SSE009" and f.occurrences >= r.events


# Measured on captures/messages/rules/SSE009-no-event-lines.sse (tests/test_real_clients.py): Claude Code 2.x and
# LangChain's ChatAnthropic (over anthropic-python's Stream) see no event at all.
EFFECTS["SSE009"][CC] = (_breaks("API Error: Stream ended without receiving any events", when=_no_event_named),)
EFFECTS["SSE009"][LC] = (_breaks("ValueError: No generation chunks were returned", when=_no_event_named),)

# Which effects of anthropic-python happen in its SSE layer, before any accumulator: those also break the
# lower-level `client.messages.create(stream=True)` iteration (tests/test_messages_oracles.py checks it).
DECODER_LEVEL = frozenset({"ANT023", "SSE006", "SSE018"})

CHECK_ORDER = ("HTP", "SSE", "SCH", "ANT")


# What a client's call does once the message is read through, whatever the findings say (the client's contract,
# not a defect of the stream).
END_EFFECTS: dict[str, tuple[EndEffect, ...]] = {
    CC: (EndEffect(Verdict.BREAKS, "the result is_error: 'API Error: Claude Code is unable to respond to this "
                                   "request, which appears to violate our Usage Policy …' (the message ends with "
                                   "stop_reason refusal, as a conforming stream may)",
                   lambda r: r.stop_reason == "refusal",
                   "claude-code measured: claude -p 2.1.197 on captures/messages/structured/cases/refusal.sse "
                   "(tests/test_real_clients.py)"),),
}


# The Vercel AI SDK's column: its rows and its end (checker/dialects/messages/vercel_effects.py).
add_column(EFFECTS, vercel_effects.EFFECTS, rule_clients)
END_EFFECTS[VAI] = vercel_effects.AT_END


def effects() -> ClientEffects:
    return ClientEffects(clients=CLIENTS, by_rule=EFFECTS, at_end=END_EFFECTS, normal_end="message_stop",
                         proven=(PY, TS), legal=frozenset({"SSE015"}),
                         check_order=CHECK_ORDER)
