"""What a Responses finding does to the Vercel AI SDK: ``streamText({model: createOpenAI(...).responses(MODEL)})``.

The Vercel AI SDK (ai 7.0.173 with @ai-sdk/openai 4.0.118) never throws from a stream that goes wrong: each
event is parsed (``parseJsonEventStream``: JSON.parse, then the zod ``openaiResponsesChunkSchema``) and a
failure becomes an ``error`` part of ``fullStream``; the user's ``result.text`` still resolves, without what
failed. So "breaks" here is: the user gets an error part (or a ``tool-error`` part) instead of the answer.

* ``packages/provider-utils/src/parse-json-event-stream.ts``: an event whose data is not JSON is an
  AI_JSONParseError part; one that fails the chunk schema is an AI_TypeValidationError part.
* ``packages/openai/src/responses/openai-responses-api.ts`` (``openaiResponsesChunkSchema``): a union of the
  event types it models (``openaiResponsesModeledChunkTypes``), each with its required fields (``item_id``,
  ``output_index``, ``delta``, ``summary_index``, an item's ``id``, ``response.created``'s ``id``,
  ``created_at`` and ``model``), and a fallback for any other type that still needs a string ``type``.
* ``packages/openai/src/responses/openai-responses-language-model.ts`` (``doStream``): ``text-start`` at a
  message's ``output_item.added``, ``text-delta`` per ``output_text.delta`` under the event's ``item_id``,
  ``text-end`` at its ``output_item.done``; reasoning the same under ``item_id:summary_index``; an ``error``
  event, a ``response.failed`` with an error and a Chat Completions chunk (``isOpenAIChatCompletionChunk``)
  are error parts.
* ``packages/ai/src/generate-text/stream-text.ts``: a text or reasoning delta (or end) for a part that is not
  open is the error part "text part ID not found" / "reasoning part ID not found".
* ``packages/ai/src/generate-text/parse-tool-call.ts``: a call's arguments are parsed when the call is done;
  text that is not JSON is a tool-error part (AI_InvalidToolInputError), a call to a tool the user did not
  declare is AI_NoSuchToolError.

Measured: tests/test_real_clients.py runs the real SDK on every bundled capture and holds this column to it.
"""

from __future__ import annotations

from checker.dialects.base import Condition, Effect, EndEffect, Linted, Verdict, details, on_field
from checker.dialects.responses.vocabulary import FAILED, INCOMPLETE
from checker.findings import Finding

VAI = "vercel-ai"

_INVALID = "an error part: AI_TypeValidationError: Type validation failed (the {type} fails the chunk schema)"
_NOT_JSON = "an error part: AI_JSONParseError: JSON parsing failed"
_NO_PART = "an error part: '{part} part … not found' (the {type} names no open {part} part)"
_BAD_ARGS = "a tool-error part: AI_InvalidToolInputError: … AI_JSONParseError (the call's arguments are not JSON)"


def _breaks(symptom: str, when: Condition | None = None) -> Effect:
    return Effect(Verdict.BREAKS, symptom, when)


# The events whose deltas go into an open text or reasoning part (openai-responses-language-model.ts).
_TEXT_DELTAS = ("response.output_text.delta",)
_REASONING_DELTAS = ("response.reasoning_summary_text.delta",)


def _event(*types: str) -> Condition:
    return lambda f, r: (details(f).get("type") or f.position.event_type) in types


def _any(*conditions: Condition) -> Condition:
    return lambda f, r: any(c(f, r) for c in conditions)


def _item_type(f: Finding, r: Linted) -> str | None:
    item = details(f).get("item")
    return next((i.type for i in r.items if i.id is not None and i.id == item), None)


# The fields openaiResponsesChunkSchema requires, per modeled event (a schema finding on any other field passes:
# its objects are not strict, and events it does not model take the fallback).
_ITEM_EVENTS = ("response.output_item.added", "response.output_item.done")
_CALL_EVENTS = ("response.function_call_arguments.delta", "response.function_call_arguments.done",
                "response.custom_tool_call_input.delta")
_SUMMARY_EVENTS = ("response.reasoning_summary_part.added", "response.reasoning_summary_part.done",
                   "response.reasoning_summary_text.delta")
_STARTS = ("response.created", "response.in_progress")
_REQUIRED = _any(
    on_field(_STARTS, ("/response",), missing=("id", "created_at", "model")),
    on_field(_STARTS, ("/response/id", "/response/created_at", "/response/model")),
    on_field(_ITEM_EVENTS, ("",), missing=("item", "output_index")),
    on_field(_ITEM_EVENTS, ("/item",), missing=("id", "call_id", "name", "arguments")),
    on_field(_ITEM_EVENTS, ("/output_index", "/item/id", "/item/call_id", "/item/name", "/item/arguments")),
    on_field(_CALL_EVENTS, ("",), missing=("item_id", "output_index", "delta", "arguments")),
    on_field(_CALL_EVENTS, ("/item_id", "/output_index", "/delta", "/arguments")),
    on_field(_TEXT_DELTAS, ("",), missing=("item_id", "delta")),
    on_field(_TEXT_DELTAS, ("/item_id", "/delta")),
    on_field(_SUMMARY_EVENTS, ("",), missing=("item_id", "summary_index", "delta")),
    on_field(_SUMMARY_EVENTS, ("/item_id", "/summary_index", "/delta")),
)
# ITM001 (output_index missing): required by the item events and the call events' schemas.
_INDEX_REQUIRED = _event(*_ITEM_EVENTS, *_CALL_EVENTS)

_NOT_OPEN = _NO_PART.replace("{part}", "text")
_REASONING_NOT_OPEN = _NO_PART.replace("{part}", "reasoning")


def _not_open(f: Finding, r: Linted) -> bool:
    return _event(*_TEXT_DELTAS, *_REASONING_DELTAS)(f, r)


EFFECTS: dict[str, dict[str, tuple[Effect, ...]]] = {
    # -- framing: parseJsonEventStream ------------------------------------------------------------------
    "SSE006": {VAI: (_breaks(_NOT_JSON),)},
    "SSE018": {VAI: (_breaks(_NOT_JSON + " (the keepalive is parsed as JSON)"),)},
    "SSE007": {VAI: (_breaks("an error part: AI_TypeValidationError: Type validation failed (the data is not an "
                             "object)"),)},
    "SCH007": {VAI: (_breaks("an error part: AI_TypeValidationError: Type validation failed (an event without a "
                             "string type matches no chunk, not even the fallback)"),)},
    "SCH010": {VAI: (_breaks("an error part: AI_APICallError: Received a Chat Completions stream while using the "
                             "OpenAI Responses API"),)},
    # -- the chunk schema's required fields --------------------------------------------------------------
    "SCH001": {VAI: (_breaks(_INVALID, when=_REQUIRED),)},
    "SCH002": {VAI: (_breaks(_INVALID, when=_REQUIRED),)},
    "SCH003": {VAI: (_breaks(_INVALID, when=_REQUIRED),)},
    "ITM001": {VAI: (_breaks(_INVALID + " (output_index is required)", when=_INDEX_REQUIRED),)},
    "IDS005": {VAI: (_breaks(_INVALID + " (the item's id is required)", when=_event(*_ITEM_EVENTS)),)},
    # -- errors the stream reports ---------------------------------------------------------------------------
    "LIF013": {VAI: (_breaks("an error part: AI_StreamProviderError: {message}"),)},
    "LIF014": {VAI: (_breaks("an error part: AI_TypeValidationError (an object without type matches no chunk)"),)},
    # -- deltas for a part that is not open (stream-text.ts) -------------------------------------------------
    "ITM004": {VAI: (_breaks(_NOT_OPEN, when=_event(*_TEXT_DELTAS)),
                     _breaks(_REASONING_NOT_OPEN, when=_event(*_REASONING_DELTAS)))},
    "ITM006": {VAI: (_breaks(_NOT_OPEN, when=_event(*_TEXT_DELTAS)),
                     _breaks(_REASONING_NOT_OPEN, when=_event(*_REASONING_DELTAS)))},
    "ITM010": {VAI: (_breaks(_NOT_OPEN + " (text-start is only sent for a message)", when=_event(*_TEXT_DELTAS)),)},
    "SSE010": {VAI: (_breaks(_NOT_OPEN + " (its message ended at output_item.done)", when=_event(*_TEXT_DELTAS)),
                     _breaks("an error part with the response's error (the response.failed after the end)",
                             when=_event(FAILED)))},
    "ITM009": {VAI: (_breaks("an error part: 'text part … not found' (the second output_item.done ends the text "
                             "part again)", when=lambda f, r: _item_type(f, r) == "message"),)},
    # Summary part 0 is opened with the reasoning item (output_item.added); any other only by its part's event.
    "RSN001": {VAI: (_breaks(_REASONING_NOT_OPEN + " (summary part {index} was never added)",
                             when=lambda f, r: _event(*_REASONING_DELTAS)(f, r) and details(f).get("index") != 0),)},
    # -- tool calls (parse-tool-call.ts) ---------------------------------------------------------------------
    "FNC001": {VAI: (_breaks(_BAD_ARGS),)},
}


# Items whose call the SDK hands to a tool the user must declare (openai.tools.shell(), applyPatch(),
# localShell(), a custom tool, a tool search the client executes): the oracle declares only the functions the
# stream calls. A hosted tool search (execution "server") is the provider's own.
_USER_TOOLS = ("shell_call", "apply_patch_call", "local_shell_call", "custom_tool_call")


def _user_tool(result: Linted) -> bool:
    return any(item.type in _USER_TOOLS or (item.type == "tool_search_call" and item.execution == "client")
               for item in result.items)


def _cut_call(result: Linted) -> bool:
    """An incomplete response with a function call: its arguments were cut (the call is still emitted)."""
    return INCOMPLETE in result.terminals and any(item.type == "function_call" for item in result.items)


def _failed_with_error(result: Linted) -> bool:
    """A response.failed that carries its error (LIF010 flags one without: no error part, the text stands)."""
    return FAILED in result.terminals and not any(f.code == "LIF010" for f in result.findings)


_CONFORMING_END = "the stream ends with {terminal}, as a conforming stream may"
END_EFFECTS: tuple[EndEffect, ...] = (
    EndEffect(Verdict.BREAKS, f"an error part: AI_StreamProviderError with the response's error ({_CONFORMING_END})",
              _failed_with_error,
              "vercel-ai packages/openai/src/responses/openai-responses-language-model.ts (response.failed with an "
              "error is an error part; measured, tests/test_real_clients.py)"),
    EndEffect(Verdict.BREAKS, "a tool-error part: AI_NoSuchToolError: Model tried to call unavailable tool '…' (the "
                              "answer calls a tool the user must declare, as a conforming stream may; declared, it "
                              "runs)", _user_tool,
              "vercel-ai packages/ai/src/generate-text/parse-tool-call.ts (NoSuchToolError; measured, "
              "tests/test_real_clients.py)"),
    EndEffect(Verdict.BREAKS, f"{_BAD_ARGS.replace('are not JSON', 'were cut')} ({_CONFORMING_END})", _cut_call,
              "vercel-ai packages/ai/src/generate-text/parse-tool-call.ts (the cut arguments fail JSON.parse; "
              "measured, tests/test_real_clients.py)"),
)
