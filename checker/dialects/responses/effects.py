"""The Responses dialect's client matrix: per rule code and client, what a finding does to that client.

Read by the generic matrix machinery (checker/compat.py) through ``DIALECT.effects()``; nothing here runs a
client. A verdict here that the real client contradicts fails tests/test_client_oracles.py.

Where the facts come from
-------------------------
* openai-python 3.57.0: ``openai/lib/streaming/responses/_responses.py``
  (``ResponseStreamState``) and ``openai/_streaming.py`` (the SSE decoder,
  the APIError on a truthy top-level ``error``);
* openai-node 7.59.0: ``src/internal/responses/response-accumulator.ts``,
  ``src/lib/responses/ResponseStream.ts`` and ``src/core/streaming.ts``.
  Both SDKs are also *run* on every bundled capture by the oracle tests
  (tests/test_client_oracles.py): a verdict there that the real client
  contradicts fails the suite, so a client release that changes behaviour
  shows up;
* codex: ``codex-rs/codex-api/src/sse/responses.rs`` (events it cannot parse
  are skipped; the end of a stream without ``response.completed`` is "stream
  closed before response.completed"; ``output_item.done`` is the truth);
* openai-agents-python builds the turn from ``response.completed.response.output``
  over openai-python's decoder; the positional client and the Open Responses
  suite as docs/spec.md §1-§2 describe them.
"""

from __future__ import annotations

from checker.dialects.base import (
    add_column,
    rule_clients,
    ClientEffects, Condition, Effect, EndEffect, ItemSummary, Linted, Verdict, details, nothing_streamed,
)
from checker.dialects.responses import vercel_effects
from checker.dialects.responses.vocabulary import (
    COMPLETED, FAILED, INCOMPLETE, NORMAL_END, OUTPUT_ITEM_DONE, TERMINAL_TYPES,
)
from checker.findings import Finding


def _breaks(symptom: str, when: Condition | None = None) -> Effect:
    return Effect(Verdict.BREAKS, symptom, when)


def _degrades(symptom: str, when: Condition | None = None) -> Effect:
    return Effect(Verdict.DEGRADED, symptom, when)


# --- conditions on a finding and its stream -------------------------------------

_NODE_BAD_STRUCTURED = "OpenAIError: Error reading response: invalid structured output JSON."
_AGENTS_BAD_STRUCTURED = ("ModelBehaviorError: Invalid JSON when parsing the answer for the agent's output_type "
                          "(the run fails)")


def _json_schema(f: Finding, r: Linted) -> bool:
    # json_object answers are not parsed by the SDKs (isParseableResponseFormat is json_schema only), nor is
    # the text of an incomplete response (the end effects say what that does).
    return f.details.get("kind") == "json_schema" and not f.details.get("cut")


_PY_TEXT_EVENTS = ("response.output_text.delta", "response.output_text.done")


def _type_in(*types: str) -> Condition:
    return lambda f, r: details(f).get("type") in types


def _type_prefix(prefix: str) -> Condition:
    return lambda f, r: str(details(f).get("type", "")).startswith(prefix)


def _beyond_open_part(f: Finding, r: Linted) -> bool:
    """The index points past the parts that exist: the SDKs index a missing element."""
    got, expected = details(f).get("got"), details(f).get("expected")
    return type(got) is not int or type(expected) is not int or got > expected


def _node_part_missing(f: Finding, r: Linted) -> bool:
    """openai-node indexes a JavaScript array: past the parts, or at a negative index, there is no part (Python's
    negative index is the last part: openai-python finds one)."""
    got = details(f).get("got")
    return _beyond_open_part(f, r) or (type(got) is int and got < 0)


def _py_text_beyond(f: Finding, r: Linted) -> bool:
    return details(f).get("type") in _PY_TEXT_EVENTS and _beyond_open_part(f, r)


def _several_items(f: Finding, r: Linted) -> bool:
    # openai-python keys items by output_index: one item at index None works, the
    # second raises "Duplicate response output index None.".
    return len(r.items) >= 2


def _not_openai_event(f: Finding, r: Linted) -> bool:
    from checker.schemas import load_schema_set  # the openai set's events: what openai-node's types know

    return details(f).get("type") not in load_schema_set("openai").known_event_types()


def _without(code: str) -> Condition:
    return lambda f, r: all(other.code != code for other in r.findings)


# The item-scoped events openai-python looks up by output_index (ResponseStreamState.accumulate_event and
# handle_event call _get_output_item for these only).
_PY_PLACED = ("response.content_part.added", "response.output_text.delta", "response.output_text.done",
              "response.function_call_arguments.delta")


def _py_places(f: Finding, r: Linted) -> bool:
    return details(f).get("type") in _PY_PLACED


def _placed_at(f: Finding, r: Linted) -> ItemSummary | None:
    """The item the SDKs find at the event's output_index: both key their items by the exact wire index of an
    earlier output_item.added (openai-python's ``_output_items``, openai-node's ``#outputPositions``), whatever
    the index is (negative, past a gap, another item's) and whatever item_id the event names. An item known only
    from a later output_item.done, or added later, is not there; "added_at" is the added event's index."""
    index = details(f).get("index", details(f).get("item"))
    if type(index) is not int:
        return None
    at = f.position.event_index
    for it in r.items:  # in added order: a second item at the same index made the SDKs raise at its added
        if it.output_index == index and it.added_at is not None and (at is None or it.added_at < at):
            return it
    return None


def _index_not_added(f: Finding, r: Linted) -> bool:
    # openai-python places item events by output_index and ignores item_id: it fails unless an
    # output_item.added placed an item at that index before the event.
    return _placed_at(f, r) is None


# What openai-python's handle_event asserts of the item it found at the event's output_index (after
# accumulate_event skipped the event for an item of another type): "assert output.type == ...".
_PY_ASSERTED_TYPE = {"response.output_text.delta": "message", "response.output_text.done": "message",
                     "response.function_call_arguments.delta": "function_call"}


def _py_not_placed(f: Finding, r: Linted) -> bool:
    return _py_places(f, r) and _index_not_added(f, r)


def _py_placed_on_other_type(f: Finding, r: Linted) -> bool:
    wanted = _PY_ASSERTED_TYPE.get(str(details(f).get("type")))
    placed = _placed_at(f, r)
    return wanted is not None and placed is not None and placed.type != wanted


def _negative_index(f: Finding, r: Linted) -> bool:
    index = next((details(f).get(k) for k in ("index", "done") if k in f.details), None)
    return type(index) is int and index < 0


# openai-node's ResponseStream.#prepareOutputEvent rejects an output_index that is not a safe non-negative
# integer before it looks anything up: at such an event ITM014 says what it raises, and the lookups these rules
# describe never happen.
_ok_where_negative = Effect(Verdict.OK, "", _negative_index)


def _cut_between_events(f: Finding, r: Linted) -> bool:
    return str(f.details.get("where", "")).startswith("between events")


def _bom_before_data(f: Finding, r: Linted) -> bool:
    return details(f).get("first_field") == "data"


def _partial_json_cut(f: Finding, r: Linted) -> bool:
    return details(f).get("json_complete") is False


def _nul_in_data(f: Finding, r: Linted) -> bool:
    return details(f).get("where") == "data"


def _codex_may_lose_an_item(f: Finding, r: Linted) -> bool:
    # codex skips an event it cannot parse; its history is the output_item.done items and response.completed
    # its end. A skipped delta changes only the live text. The `event:` line tells which event it was; without
    # one, it may have been any.
    return f.position.event_type in (None, OUTPUT_ITEM_DONE, COMPLETED)


def _in_final_response(f: Finding, r: Linted) -> bool:
    return f.position.event_type in TERMINAL_TYPES


def _no_output_index(f: Finding, r: Linted) -> bool:
    return type(details(f).get("index")) is not int


def _unlisted_at_completed(f: Finding, r: Linted) -> bool:
    # Both SDKs accept an unfinished item at response.completed only when the
    # final output repeats it; incomplete/failed are not checked.
    if details(f).get("type") != COMPLETED:
        return False
    unlisted = details(f).get("unlisted")
    return True if unlisted is None else bool(unlisted)


def _not_a_call(f: Finding, r: Linted) -> bool:
    # openai-python's output identity leaves function calls' ids out (it uses call_id).
    ident = details(f).get("id")
    types = {it.type for it in r.items if it.id == ident}
    return not types <= {"function_call", "custom_tool_call"} or not types


def _field_is(name: str) -> Condition:
    return lambda f, r: details(f).get("field") == name


def _identity_field_or_moved_onto_another(f: Finding, r: Linted) -> bool:
    return details(f).get("field") != "output_index" or details(f).get("other") is not None


def _moved_nowhere(f: Finding, r: Linted) -> bool:
    return details(f).get("field") == "output_index" and details(f).get("other") is None


def _node_compares(f: Finding, r: Linted) -> bool:
    # openai-node compares call_id only on function, custom tool and shell calls (hasRoutedOutputCallIdentity).
    return details(f).get("field") in ("type", "id") or (details(f).get("field") == "call_id"
                                                        and bool(details(f).get("routed_call")))


_CODEX_USAGE_FIELDS = {"input_tokens", "output_tokens", "total_tokens", "cached_tokens", "reasoning_tokens"}


_CODEX_USAGE_OBJECTS = {"/response/usage", "/response/usage/input_tokens_details",
                        "/response/usage/output_tokens_details"}


def _codex_usage_parse_fails(f: Finding, r: Linted) -> bool:
    # codex parses usage only out of response.completed (ResponseCompleted), as an Option (null is None)
    # of i64 input/output/total tokens with optional *_details of i64 cached/reasoning tokens; any other
    # field is not read, and the opening snapshots' usage never is.
    if details(f).get("type") != COMPLETED:
        return False
    keyword, pointer = details(f).get("keyword"), str(details(f).get("pointer") or "")
    if keyword == "required":
        return bool(set(details(f).get("missing") or ()) & _CODEX_USAGE_FIELDS)
    if keyword is None:
        return False  # the arithmetic check (total != input + output): codex takes the counts as given
    if pointer == "/response/usage" and details(f).get("value_type") == "null":
        return False
    return pointer in _CODEX_USAGE_OBJECTS or pointer.rsplit("/", 1)[-1] in _CODEX_USAGE_FIELDS


# --- the table: rule code -> client -> effects, tried in order ------------------
# Each client named here with a non-ok effect must be in the rule's `clients`
# (tests/test_compat.py checks it both ways).

_PY_NO_COMPLETED = "RuntimeError: Didn't receive a `response.completed` event."
_PY_NOT_PLACED = "RuntimeError: Received a content event for output index {index} before receiving its output item"
_PY_OTHER_TYPE = "AssertionError (handle_event asserts the type of the item at output_index {index}: {type} is another's)"
_NODE_BAD_INDEX = "OpenAIError: Invalid response output index."
_CUT = "the connection ended after {bytes} bytes, {where}: {error}"
_LC_NO_CHUNKS = "ValueError: No generation chunks were returned"
_NODE_NO_EVENTS = "OpenAIError: request ended without sending any events"
_NODE_UNHANDLED = "OpenAIError: Unhandled response stream event: unknown"
_NODE_BAD_JSON = "OpenAIError: Error reading response: malformed server-sent event JSON."
_CODEX_CLOSED = "stream closed before response.completed"
_CODEX_SKIPS = "the event cannot be parsed and is skipped silently"
_SUITE = "the Open Responses compliance suite rejects the stream"
_AGENTS_NO_FINAL = "ModelBehaviorError: Model did not produce a final response!"

EFFECTS: dict[str, dict[str, tuple[Effect, ...]]] = {
    # -- framing ------------------------------------------------------------------
    "SSE001": {
        # _streaming.py SSEDecoder keeps the BOM: the first field name is '\ufeff…' and ignored. Harmless
        # before `event:`; before `data:` the first event (response.created) is lost. (The Agents SDK's pinned
        # openai 3.60.0 reads both variants: measured, its run is unchanged.)
        "openai-python": (_breaks("RuntimeError: Expected to have received `response.created` before …",
                                  when=_bom_before_data),),
        # Measured (codex-cli 0.169.0, tests/test_real_clients.py): with a BOM before `event:` or `data:`, the
        # turn fails as if nothing had come.
        "codex": (_breaks(f"the turn fails: {_CODEX_CLOSED}"),),
    },
    "SSE002": {
        "open-responses": (_breaks("the suite's sse-parser.ts splits on '\\n' only and sees no events"),),
        # Measured (codex-cli 0.169.0): a stream framed with lone CRs yields no event to codex.
        "codex": (_breaks(f"the turn fails: {_CODEX_CLOSED}"),),
    },
    "SSE004": {
        # openai-python, codex and the Agents SDK discard the unterminated event (a lost terminal is LIF006's
        # finding); openai-node's decoder flushes it at the end (src/core/streaming.ts) and parses its data.
        "openai-node": (_breaks(_NODE_BAD_JSON, when=_partial_json_cut),),
    },
    "SSE005": {
        "langchain": (_breaks("UnicodeDecodeError in openai-python's decoder"),),
        "openai-python": (_breaks("UnicodeDecodeError: 'utf-8' codec can't decode byte …"),),
        "openai-node": (_degrades("the bytes decode as U+FFFD: the text is corrupted"),),
        "codex": (_breaks("the event-stream decoder fails on invalid UTF-8 and the turn ends"),),
        "openai-agents": (_breaks("UnicodeDecodeError in openai-python's decoder"),),
    },
    "SSE006": {
        "langchain": (_breaks("json.JSONDecodeError on the event's data"),),
        "openai-python": (_breaks("json.JSONDecodeError on the event's data"),),
        "openai-node": (_breaks(_NODE_BAD_JSON),),
        "codex": (_degrades(_CODEX_SKIPS, when=_codex_may_lose_an_item),),
        "openai-agents": (_breaks("json.JSONDecodeError on the event's data"),),
    },
    "SSE007": {
        "langchain": (_breaks("AttributeError: 'NoneType' object has no attribute 'type'"),),
        "openai-python": (_breaks("the event cannot be built (AttributeError: … has no attribute 'type')"),),
        "openai-node": (_breaks("TypeError: Cannot read properties of … (reading 'type')"),),
        "codex": (_degrades(_CODEX_SKIPS, when=_codex_may_lose_an_item),),
    },
    "SSE010": {
        # openai-python yields later events but get_final_response() is response.completed's response.
        "codex": (_degrades("codex reads on until the connection closes and applies the later events"),),
        "openai-node": (_degrades("later events are still applied to the finished snapshot: {what}"),),
    },
    "SSE013": {
        "langchain": (_breaks("json.JSONDecodeError in openai-python's decoder"),),
        "openai-python": (_breaks("json.JSONDecodeError: Expecting value: line 1 column 1 (char 0) "
                                  "(the decoder dispatches the event with empty data)"),),
        "openai-node": (_breaks(_NODE_BAD_JSON),),
        "openai-agents": (_breaks("json.JSONDecodeError in openai-python's decoder"),),
    },
    "SSE015": {"open-responses": (_degrades("older suite parsers keep only the last `data:` line"),)},
    "SSE018": {
        "langchain": (_breaks("json.JSONDecodeError: the keepalive is parsed as JSON"),),
        "openai-python": (_breaks("json.JSONDecodeError: the keepalive is parsed as JSON"),),
        "openai-node": (_breaks(_NODE_BAD_JSON),),
        "openai-agents": (_breaks("json.JSONDecodeError: the keepalive is parsed as JSON"),),
    },
    "SSE019": {
        "langchain": (_breaks("json.JSONDecodeError in openai-python's decoder", when=_nul_in_data),),
        # A NUL in a comment or an id is ignored; in data it is a raw control character, which the JSON parsers
        # reject (json.loads, JSON.parse, serde_json).
        "openai-python": (_breaks("json.JSONDecodeError: Invalid control character …", when=_nul_in_data),),
        "openai-node": (_breaks(_NODE_BAD_JSON, when=_nul_in_data),),
        "codex": (_degrades(_CODEX_SKIPS, when=_nul_in_data),),
        "openai-agents": (_breaks("json.JSONDecodeError in openai-python's decoder", when=_nul_in_data),),
    },
    "SSE024": {"codex": (_degrades("serde rejects the event (duplicate field) and codex skips it",
                                   when=_codex_may_lose_an_item),)},
    "SSE025": {
        # The final response is the terminal event's (finalResponse()): a number rounded elsewhere is not in it.
        "openai-node": (_degrades("JSON.parse rounds the number silently: {number}", when=_in_final_response),),
        "codex": (_degrades("serde cannot parse the number and codex skips the event", when=_codex_may_lose_an_item),),
    },
    "SSE022": {
        "langchain": (_breaks(_LC_NO_CHUNKS),),
        "openai-python": (_breaks(_PY_NO_COMPLETED),),
        "openai-node": (_breaks(_NODE_NO_EVENTS),),
        "codex": (_breaks(_CODEX_CLOSED),),
        "openai-agents": (_breaks(_AGENTS_NO_FINAL),),
        "open-responses": (_breaks(_SUITE),),
    },
    "SSE023": {
        "langchain": (_breaks(_LC_NO_CHUNKS),),
        "openai-python": (_breaks(_PY_NO_COMPLETED),),
        "openai-node": (_breaks(_NODE_NO_EVENTS),),
        "codex": (_breaks(_CODEX_CLOSED),),
        "openai-agents": (_breaks(_AGENTS_NO_FINAL),),
        "open-responses": (_breaks(_SUITE),),
    },
    # -- the HTTP body cut off (an exchange rule; its row here for Responses streams) --------------------------
    "HTP012": {
        "openai-python": (_breaks(_CUT),),  # httpx raises on the incomplete body: APIConnectionError
        # openai-node's decoder reads a cut between events as the end of the stream (finalResponse() resolves
        # with the last snapshot: the gpt-oss stub's cut stream, captures/gpt-oss/stub); a cut inside an event
        # flushes its partial data, and the empty data of the rule's capture fails to parse.
        "openai-node": (_degrades("the cut reads as the stream's end: finalResponse() resolves with the last "
                                  "snapshot (status 'in_progress'); no error is raised", when=_cut_between_events),
                        _breaks(_NODE_BAD_JSON)),
        "codex": (_breaks(_CUT),),
        "openai-agents": (_breaks(_CUT),),
        "langchain": (_breaks(_CUT),),  # over openai-python: OpenAIConnectionError (captures/gpt-oss, both cuts)
    },
    # -- lifecycle ----------------------------------------------------------------
    "LIF001": {
        "openai-python": (_breaks("RuntimeError: Expected to have received `response.created` before `{type}`"),),
        "openai-node": (_breaks("OpenAIError: When snapshot hasn't been set yet, expected 'response.created' "
                                "event, got {type}"),),
    },
    "LIF006": {
        "openai-python": (_breaks(_PY_NO_COMPLETED),),
        "openai-node": (_degrades("finalResponse() resolves with the last snapshot (status 'in_progress'); "
                                  "no error is raised", when=_without("SSE004")),),
        "codex": (_breaks(_CODEX_CLOSED),),
        "openai-agents": (_breaks(_AGENTS_NO_FINAL),),
        "open-responses": (_breaks(_SUITE),),
        # LangChain returns what the deltas built without a terminal event; a stream with no event at all (an
        # undispatched `error:` line and [DONE]: captures/rules/SSE028-error-field-line.sse) gives it nothing.
        "langchain": (_breaks(_LC_NO_CHUNKS, when=nothing_streamed),),
    },
    "LIF007": {
        # openai-python: get_final_response() is response.completed's response, wherever it came.
        "openai-node": (_degrades("finalResponse() is the last terminal's snapshot ({type})"),),
        "codex": (_degrades("codex keeps a response.completed whichever terminal came first"),),
    },
    "LIF008": {
        "openai-python": (_breaks("RuntimeError: Cannot complete response with unfinished output items.",
                                  when=_unlisted_at_completed),
                          _degrades("the unfinished item is taken from the terminal response's output")),
        "openai-node": (_breaks("OpenAIError: Cannot complete response with unfinished output items.",
                                when=_unlisted_at_completed),
                        _degrades("the unfinished item is taken from the terminal response's output")),
        "codex": (_degrades("items without output_item.done never reach the history"),),
        "openai-agents": (_degrades("items not repeated in the final output are lost", when=_unlisted_at_completed),),
    },
    "LIF009": {
        "openai-agents": (_degrades("success is decided from the event type, the response says {status!r}"),),
        "codex": (_degrades("success is decided from the event type, the response says {status!r}"),),
    },
    "LIF012": {
        "openai-python": (_breaks("RuntimeError: Lifecycle response identity changed."),),
        "openai-node": (_breaks("OpenAIError: Lifecycle response identity changed."),),
    },
    "LIF013": {
        "langchain": (_breaks("APIError: {detail}", when=lambda f, r: bool(details(f).get("nested"))),
                      _breaks("ValueError: {detail} (raised when the error event comes)")),
        # A flat error event is yielded as an event, no exception: the stream's end decides (LIF006 or the end).
        "openai-python": (_breaks("APIError: {detail}", when=lambda f, r: bool(details(f).get("nested"))),),
        "openai-node": (_breaks("APIError: {detail}"),),
        "openai-agents": (_breaks("ModelBehaviorError: Responses stream ended with terminal event `error`. …"),),
    },
    "LIF014": {
        "langchain": (_breaks("APIError: {detail}"),),
        "openai-python": (_breaks("APIError: {detail}"),),
        "openai-node": (_breaks("APIError: {detail}"),),
        "openai-agents": (_breaks("APIError from openai-python's decoder"),),
    },
    "LIF015": {"open-responses": (_breaks("every event must carry sequence_number"),)},
    "LIF017": {
        "openai-agents": (_degrades("a cut-off answer is taken as final"),),
        "codex": (_degrades("a cut-off answer is taken as final"),),
    },
    "LIF018": {
        # codex reads usage only from response.completed, as Option<ResponseCompletedUsage> (null is None)
        # with i64 token counts: only a present, malformed usage there fails the parse.
        "codex": (_breaks("failed to parse ResponseCompleted: {message}", when=_codex_usage_parse_fails),),
    },
    # -- items --------------------------------------------------------------------
    "ITM001": {
        "openai-python": (_breaks("RuntimeError: Duplicate response output index None.", when=_several_items),),
        "openai-node": (_breaks("OpenAIError: missing output at index undefined"),),
    },
    "ITM003": {
        "openai-python": (_breaks("RuntimeError: Duplicate response output index {index}."),),
        "openai-node": (_breaks("OpenAIError: Duplicate response output index {index}."),),
        # openai-agents-python takes the turn from response.completed (run_loop.py), whatever the indexes were.
    },
    "ITM004": {
        # Only the events openai-python places (_get_output_item); it never reads hosted-tool, refusal or
        # reasoning events, so an unknown item there does not touch it.
        "openai-python": (_breaks(_PY_NOT_PLACED, when=_py_not_placed),
                          _breaks(_PY_OTHER_TYPE, when=_py_placed_on_other_type)),
        # ResponseStream.#prepareOutputEvent checks and maps the wire output_index first, then
        # validateOutputItemIdentity compares the item_id.
        "openai-node": (_breaks("OpenAIError: missing output at index undefined", when=_no_output_index),
                        _ok_where_negative,
                        _breaks("OpenAIError: missing output at index {index}", when=_index_not_added),
                        _breaks("OpenAIError: expected item_id '…', got '{item}'")),
    },
    "ITM005": {
        # openai-python places the event by its output_index and ignores item_id: where an earlier
        # output_item.added put an item of the right type at that index, its result is the stream's; where none
        # did (an index that moved on, a negative one, one past a gap), it raises (the gpt-oss reference server,
        # captures/gpt-oss: every *.done event one index past its item's added).
        "openai-python": (_breaks(_PY_NOT_PLACED, when=_py_not_placed),
                          _breaks(_PY_OTHER_TYPE, when=_py_placed_on_other_type)),
        "openai-node": (_ok_where_negative,
                        _breaks("OpenAIError: missing output at index {index}", when=_index_not_added),
                        _breaks("OpenAIError: expected item_id '…', got '{item_id}'")),
    },
    "ITM007": {
        # _output_identity + _compatible_output_id: type, id and call_id of every item type, against the item
        # added at the done's output_index (none there: nothing to compare).
        "openai-python": (_breaks("RuntimeError: Completed output item identity changed.",
                                  when=_identity_field_or_moved_onto_another),),
        # validateResponseOutputItemIdentity: type, id, and call_id only of routed calls; the done's
        # output_index must name an added item (#prepareOutputEvent).
        "openai-node": (_ok_where_negative,
                        _breaks("OpenAIError: missing output at index {done}", when=_moved_nowhere),
                        _breaks("OpenAIError: expected output item id '…', got '…' (the item at output_index "
                                "{done} is {other})", when=_field_is("output_index")),
                        _breaks("OpenAIError: expected output item {field} '{added}', got '{done}'",
                                when=_node_compares)),
    },
    "ITM014": {"openai-node": (_breaks(_NODE_BAD_INDEX),)},
    "ITM008": {
        "openai-node": (_breaks("OpenAIError: missing output at index …"),),
    },
    "ITM009": {
        "codex": (_degrades("the item is recorded twice in history"),),
    },
    "ITM010": {
        "openai-python": (_breaks("AssertionError (the output item is not a {item_type} message/function call)",
                                  when=_type_in(*_PY_TEXT_EVENTS, "response.function_call_arguments.delta")),),
        "openai-node": (_breaks("OpenAIError: expected output item type '…', got '{item_type}'"),),
    },
    "ITM011": {"positional": (_breaks("pairs each added with the next done: {earlier} gets {later}'s done"),)},
    # -- content parts ------------------------------------------------------------
    "CNT001": {
        "openai-python": (_breaks("TypeError: list indices must be integers or slices, not NoneType",
                                  when=_type_in(*_PY_TEXT_EVENTS)),),
        "openai-node": (_breaks("OpenAIError: missing content at index undefined"),),
    },
    "CNT002": {
        "openai-python": (_breaks("IndexError: list index out of range"),),
        "openai-node": (_breaks("OpenAIError: missing content at index {got}"),),
    },
    "CNT003": {
        # Misplaced within the parts that exist, the text moves in the streamed snapshot only: the final
        # response is response.completed's.
        "openai-python": (_breaks("IndexError: list index out of range", when=_py_text_beyond),),
        "openai-node": (_breaks("OpenAIError: missing content at index {got}", when=_node_part_missing),),
    },
    "CNT004": {
        "openai-python": (_breaks("IndexError: list index out of range", when=_type_in(*_PY_TEXT_EVENTS)),),
        "openai-node": (_breaks("OpenAIError: missing content at index 0"),),
    },
    "CNT006": {
        "openai-python": (_breaks("AssertionError (content.type == 'output_text')",
                                  when=_type_prefix("response.output_text.")),),
        "openai-node": (_breaks("OpenAIError: expected content to be '…', got {part_type}"),),
    },
    "CNT009": {"openai-node": (_breaks("OpenAIError: missing annotation at index {got}", when=_beyond_open_part),)},
    # -- reasoning summaries --------------------------------------------------------
    "RSN001": {"openai-node": (_breaks("OpenAIError: missing content at index … (no summary part to append to)"),)},
    "RSN002": {"openai-node": (_breaks("OpenAIError: missing content at index {got}"),)},
    "RSN003": {
        "openai-node": (_breaks("OpenAIError: missing content at index {got}", when=_beyond_open_part),),
    },
    # -- function calls -------------------------------------------------------------
    "FNC001": {
        # The turn goes on: codex answers the call itself ('failed to parse function arguments' for a tool of its
        # own, 'unsupported call: NAME' for any other) and asks the model again (measured, codex-cli 0.169.0).
        "codex": (_degrades("the tool call fails: codex answers it with a failure output and the turn goes on"),),
        "openai-agents": (_breaks("ModelBehaviorError: Invalid JSON input for tool {name}"),),
    },
    "FNC002": {
        "open-responses": (_breaks(_SUITE),),
    },
    # -- hosted tools (openai-node validates shell indexes; nothing else here breaks a client) --------
    "HST007": {"openai-node": (_breaks("OpenAIError: missing command at index {got}", when=_beyond_open_part),)},
    "HST008": {"openai-node": (_breaks("OpenAIError: missing command at index {got}"),)},
    "HST009": {"openai-node": (_breaks("OpenAIError: missing {kind} at index {got}"),)},
    # -- schema ---------------------------------------------------------------------
    "SCH003": {
        "codex": (_degrades("codex cannot parse the item and drops it from history"),),
        "openai-agents": (_degrades("the malformed item is replayed in the next request"),),
    },
    "SCH005": {
        # Under --profile open-responses, an event OpenAI's description defines (reasoning_text.*, hosted tools)
        # is unknown to that description only: openai-node handles it.
        "openai-node": (_breaks(_NODE_UNHANDLED, when=_not_openai_event),),
        "open-responses": (_breaks("not an event its description defines (a vendor's needs a slug: prefix)"),),
    },
    "SCH006": {
        # openai-python and codex ignore the alias: only the live text differs, the final items come from
        # output_item.done / response.completed.
        "openai-node": (_breaks(_NODE_UNHANDLED),),
    },
    "SCH007": {
        # codex cannot parse an event without `type` (SseEvent.kind) and skips it: an item it carried is lost.
        "codex": (_degrades(_CODEX_SKIPS, when=_codex_may_lose_an_item),),
        "openai-node": (_breaks(_NODE_UNHANDLED),),
    },
    "SCH009": {"openai-node": (_breaks(_NODE_UNHANDLED),)},
    "SCH010": {
        "langchain": (_breaks(_LC_NO_CHUNKS),),
        "openai-python": (_breaks("RuntimeError: Expected to have received `response.created` before …"),),
        "openai-node": (_breaks(_NODE_UNHANDLED),),
        "codex": (_breaks(_CODEX_CLOSED),),
        "openai-agents": (_breaks(_AGENTS_NO_FINAL),),
        "open-responses": (_breaks(_SUITE),),
    },
    # -- reconciliation -------------------------------------------------------------
    "REC003": {
        "codex": (_degrades("history keeps the done item, not what was streamed ({diff})"),),
        "openai-agents": (_degrades("the turn keeps the done item, not what was streamed ({diff})"),),
        "openai-python": (_degrades("the final response differs from the streamed snapshot ({diff})"),),
        "openai-node": (_degrades("finalResponse() keeps the done item, not what was streamed ({diff})"),),
    },
    "REC004": {
        "openai-agents": (_degrades("the turn is built from response.completed.response.output: {detail}"),),
        "openai-python": (_degrades("the final response is response.completed's output: {detail}"),),
        "openai-node": (_degrades("finalResponse() is response.completed's output: {detail}"),),
    },
    "REC005": {
        "openai-python": (_degrades("get_final_response().output is [] (output_text is '')"),),
        "openai-node": (_degrades("finalResponse().output is [] (output_text is '')"),),
    },
    "REC007": {
        "openai-python": (_degrades("get_final_response() lists {item} as {final!r}; its output_item.done said "
                                    "{done!r}"),),
        "openai-node": (_degrades("finalResponse() lists {item} as {final!r}; its output_item.done said {done!r}"),),
        "openai-agents": (_degrades("the turn, built from the terminal output, has {item} {final!r}; the stream "
                                    "finished it {done!r}"),),
    },
    "REC008": {"openai-node": (_degrades("{type} replaces the streamed {field} in the snapshot ({diff})"),)},
    "REC009": {"openai-node": (_degrades("finalResponse() keeps the done item's {field}, not what was streamed "
                                         "({diff})"),)},
    "REC010": {"openai-node": (_degrades("{where} replaces the annotations streamed into the snapshot ({detail})"),)},
    # -- ids --------------------------------------------------------------------------
    "IDS003": {
        "openai-node": (_breaks("OpenAIError: duplicate output item identity 'id:{id}'"),),
        "openai-python": (_breaks("RuntimeError: Response snapshot has conflicting output identities.",
                                  when=_not_a_call),),
    },
    "IDS004": {
        "openai-node": (_breaks("OpenAIError: duplicate output item identity 'call:function_call:{id}'"),),
        "openai-python": (_breaks("RuntimeError: Response snapshot has conflicting output identities."),),
        "codex": (_degrades("tool outputs are matched to the wrong call"),),
        # Measured (openai-agents 0.24.0): the run refuses the second call before any tool runs.
        "openai-agents": (_breaks("ModelBehaviorError: Model reused a tool call ID for a different invocation in one "
                                  "response. Use a unique call ID for each tool invocation."),),
    },
    "IDS005": {
        "openai-node": (_breaks("OpenAIError: expected a non-empty item id"),),
    },
    # -- structured output (the request's text.format): openai-node parses a json_schema answer's text at the end
    # (src/lib/ResponsesParser.ts parseResponse via src/lib/parser.ts parseResponseFormatContent); an Agents SDK
    # agent with an output_type validates it (src/agents/util/_json.py validate_json).
    "FMT001": {
        "openai-node": (_breaks(_NODE_BAD_STRUCTURED, when=_json_schema),),
        "openai-agents": (_breaks(_AGENTS_BAD_STRUCTURED, when=_json_schema),),
    },
    "FMT002": {
        "openai-agents": (_breaks(_AGENTS_BAD_STRUCTURED),),
    },
}


# --- the end of a stream ---------------------------------------------------------
# What a client's user-facing call does once the stream is read through, whatever the findings say. A
# conforming stream may end with response.incomplete (a max_output_tokens cut, a content filter) or
# response.failed; some clients' calls raise there. That is the client's contract, not a defect of the
# stream: the symptom says so, and no finding is made. Applied after every finding (these calls fail at the
# end of the stream), so a finding that breaks the client earlier decides its cell.


def _never_completed(result: Linted) -> bool:
    # Without any terminal, LIF006 speaks; with a response.completed anywhere, get_final_response() returns it.
    return bool(result.terminals) and COMPLETED not in result.terminals


def _ended_incomplete_or_failed(result: Linted) -> bool:
    return any(t in (INCOMPLETE, FAILED) for t in result.terminals)


def _incomplete_without_completed(result: Linted) -> bool:
    return INCOMPLETE in result.terminals and COMPLETED not in result.terminals


def _failed_without_completed(result: Linted) -> bool:
    return FAILED in result.terminals and COMPLETED not in result.terminals


# Output items an Agents SDK run executes itself (the SDK's run loop: shell, apply_patch, local shell, programmatic
# tool calling, custom tools, MCP approvals): with no such tool on the agent, the run fails when it meets one.
_AGENT_EXECUTED = ("shell_call", "apply_patch_call", "local_shell_call", "program", "program_output",
                   "custom_tool_call", "mcp_approval_request")


def _agent_must_run(result: Linted) -> bool:
    return any(item.type in _AGENT_EXECUTED for item in result.items)


def _refused(result: Linted) -> bool:
    return any("refusal" in item.parts for item in result.items)


_CONFORMING_END = "the stream ends with {terminal}, as a conforming stream may"
END_EFFECTS: dict[str, tuple[EndEffect, ...]] = {
    "openai-python": (
        EndEffect(Verdict.BREAKS, f"get_final_response() raises {_PY_NO_COMPLETED} ({_CONFORMING_END}; the call "
                                  "returns only a completed response)", _never_completed,
                  "openai-python src/openai/lib/streaming/responses/_responses.py (ResponseStream.get_final_response)"),
    ),
    "codex": (
        EndEffect(Verdict.BREAKS, f"the turn fails: {_CODEX_CLOSED} ({_CONFORMING_END}; codex does not handle "
                                  "response.incomplete)", _incomplete_without_completed,
                  "codex codex-rs/codex-api/src/sse/responses.rs (process_sse: no response.incomplete arm)"),
        EndEffect(Verdict.BREAKS, "the turn fails with the response's error ('response.failed event received' "
                                  f"or its message) ({_CONFORMING_END})", _failed_without_completed,
                  "codex codex-rs/codex-api/src/sse/responses.rs (process_sse: response.failed sets response_error)"),
    ),
    "open-responses": (
        EndEffect(Verdict.BREAKS, f"{_SUITE}: Expected status \"completed\" ({_CONFORMING_END})",
                  _ended_incomplete_or_failed,
                  "openresponses src/lib/compliance-tests.ts (completedStatus on the final response)"),
    ),
    "langchain": (
        EndEffect(Verdict.BREAKS, "ValueError: the response failed (ResponseError(…) or 'Response … failed.', "
                                  f"raised when response.failed comes) ({_CONFORMING_END})",
                  lambda r: FAILED in r.terminals,
                  "langchain-openai langchain_openai/chat_models/base.py (_convert_responses_chunk_to_generation_chunk: "
                  "response.failed raises; measured, tests/test_real_clients.py)"),
    ),
    "openai-agents": (
        EndEffect(Verdict.BREAKS, "ModelRefusalError: Model refused to produce output: … (the answer is a refusal, "
                                  "as a conforming stream may; the run raises it)", _refused,
                  "openai-agents-python src/agents/exceptions.py (ModelRefusalError, raised by the run for a refusal "
                  "part; measured, tests/test_real_clients.py)"),
        EndEffect(Verdict.BREAKS, "ModelBehaviorError: Model produced a … call without a … tool (the answer calls a "
                                  "tool the run executes itself, as a conforming stream may; an agent that declares "
                                  "that tool runs it, one that does not fails)", _agent_must_run,
                  "openai-agents-python src/agents/run_internal/turn_resolution.py ('Model produced … without "
                  "a … tool'; measured, tests/test_real_clients.py)"),
        EndEffect(Verdict.BREAKS, "ModelBehaviorError: Responses stream ended with terminal event `{terminal}`. "
                                  f"({_CONFORMING_END}; the run fails)", _ended_incomplete_or_failed,
                  "openai-agents-python src/agents/models/openai_responses.py (stream_response) and "
                  "src/agents/models/_response_terminal.py"),
    ),
}


# The Vercel AI SDK's column: its rows and its ends (checker/dialects/responses/vercel_effects.py).
add_column(EFFECTS, vercel_effects.EFFECTS, rule_clients)
END_EFFECTS[vercel_effects.VAI] = vercel_effects.END_EFFECTS


# Within one event, the order in which the clients check it: the framing and the JSON first, then whether the
# event type is known (openai-node's sanitizeResponseEvent), the lifecycle (response.created first), the item the
# event names (openai-python's _get_output_item, openai-node's getOutput/validateOutputItemIdentity), and only then
# its content part, summary part or arguments. A delta for an item never added fails on the item, not on its
# content_index: the first failure in stream order is what the user sees.
CHECK_ORDER = ("HTP", "SSE", "SCH", "LIF", "ITM", "IDS", "CNT", "RSN", "FNC", "REC", "RPL")

# The matrix's columns, in this order.
CLIENTS = ("openai-python", "openai-node", "codex", "openai-agents", "vercel-ai", "langchain", "positional",
           "open-responses")

CLIENT_EFFECTS = ClientEffects(clients=CLIENTS, by_rule=EFFECTS, at_end=END_EFFECTS, normal_end=NORMAL_END,
                               proven=("openai-python", "openai-node"),
                               check_order=CHECK_ORDER)
