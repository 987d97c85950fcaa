"""What an Anthropic Messages finding does to the Vercel AI SDK: ``streamText({model: createAnthropic(...)(MODEL)})``.

ai 7.0.173 with @ai-sdk/anthropic 4.0.105. A stream that goes wrong is an ``error`` part of ``fullStream`` (or,
where the provider's transform throws, ``NoOutputGeneratedError`` from the user's await), never the answer:

* ``packages/provider-utils/src/parse-json-event-stream.ts``: data that is not JSON (AI_JSONParseError), an
  event that fails ``anthropicMessagesChunkSchema`` (``packages/anthropic/src/anthropic-api.ts``: a union of
  the known event types with no fallback, so an unknown event type fails; ``message_start``'s and
  ``message_delta``'s ``usage`` are required objects; AI_TypeValidationError);
* ``packages/anthropic/src/anthropic-language-model.ts`` (``doStream``): an ``error`` event is an error part; a
  second ``message_start`` while one is open is AI_InvalidResponseDataError; blocks already in
  ``message_start``'s content are processed as pre-populated tool calls; a text or thinking block's deltas are
  ``text-delta`` / ``reasoning-delta`` parts under the block's index, opened at ``content_block_start`` and
  closed at ``content_block_stop``;
* ``packages/ai/src/generate-text/stream-text.ts``: a delta for a part that is not open is the error part
  "text part N not found"; ``packages/ai/src/generate-text/parse-tool-call.ts``: tool input that is not JSON
  is a tool-error part (AI_InvalidToolInputError).

Measured: tests/test_real_clients.py runs the real SDK on every bundled capture and holds this column to it.
"""

from __future__ import annotations

from checker.dialects.base import Condition, Effect, EndEffect, Linted, Verdict, details

VAI = "vercel-ai"

_BAD_INPUT = "a tool-error part: AI_InvalidToolInputError: … AI_JSONParseError (the tool input is not JSON)"
_NOT_OPEN = "an error part: 'text part {index} not found' (the delta names no open text part)"


def _breaks(symptom: str, when: Condition | None = None) -> Effect:
    return Effect(Verdict.BREAKS, symptom, when)


def _is(key: str, *values: object) -> Condition:
    return lambda f, r: details(f).get(key) in values  # any key: the values are the rule's own


def _event(*types: str) -> Condition:
    return lambda f, r: f.position.event_type in types


_DELTA = _event("content_block_delta")

EFFECTS: dict[str, dict[str, tuple[Effect, ...]]] = {
    "SSE006": {VAI: (_breaks("an error part: AI_JSONParseError: JSON parsing failed"),)},
    "ANT025": {VAI: (_breaks("an error part: AI_TypeValidationError: Type validation failed (the chunk schema has "
                             "no fallback for an unknown event type)"),)},
    "ANT006": {VAI: (_breaks("AI_TypeValidationError or NoOutputGeneratedError ({where}: the chunk schema requires "
                             "the usage object)", when=_is("detail", "no usage object")),)},
    "ANT003": {VAI: (_breaks("AI_InvalidResponseDataError: Received message_start for message … while message … is "
                             "still open."),)},
    "ANT005": {VAI: (_breaks("NoOutputGeneratedError: No output generated. Check the stream for errors. (the "
                             "message_start's content is read as pre-populated tool calls)"),)},
    "ANT023": {VAI: (_breaks("an error part: AI_StreamProviderError: {detail}"),)},
    "ANT009": {VAI: (_breaks("an error part: 'text part {index} not found' or 'reasoning part …' (the {delta} goes "
                             "to a part the {block} block did not open)", when=_is("delta", "text_delta",
                                                                                    "thinking_delta")),)},
    "ANT010": {VAI: (_breaks(_NOT_OPEN, when=_DELTA),)},
    "ANT011": {VAI: (_breaks(_NOT_OPEN + " (content_block_stop closed it)", when=_DELTA),)},
    "SSE010": {VAI: (_breaks(_NOT_OPEN + " (every block closed before message_stop)", when=_DELTA),)},
    "ANT017": {VAI: (_breaks(_BAD_INPUT + ": {error}", when=_is("kind", "invalid", "trailing", "cut")),)},
}


def _tool_input_cut(result: Linted) -> bool:
    # max_tokens ended the message inside a tool_use block: its input stops mid-JSON, and the SDK still parses it.
    return result.stop_reason == "max_tokens" and any(item.type == "tool_use" for item in result.items)


AT_END: tuple[EndEffect, ...] = (
    EndEffect(Verdict.BREAKS, _BAD_INPUT.replace("is not JSON", "was cut") + " (the message ends with stop_reason "
              "max_tokens inside a tool_use block, as a conforming stream may)", _tool_input_cut,
              "vercel-ai packages/anthropic/src/anthropic-language-model.ts (the tool call is emitted at "
              "content_block_stop) and packages/ai/src/generate-text/parse-tool-call.ts; measured, "
              "tests/test_real_clients.py"),
)
