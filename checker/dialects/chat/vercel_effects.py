"""What a Chat Completions finding does to the Vercel AI SDK: ``streamText({model: createOpenAI(...).chat(MODEL)})``.

ai 7.0.173 with @ai-sdk/openai 4.0.118. As on Responses (checker/dialects/responses/vercel_effects.py), a
stream that goes wrong is an ``error`` part of ``fullStream``, never a throw; "breaks" is that error part, or a
``tool-error`` part for a call it cannot use:

* ``packages/provider-utils/src/parse-json-event-stream.ts``: data that is not JSON (AI_JSONParseError), a
  chunk that fails ``openaiChatChunkSchema`` (``packages/openai/src/chat/openai-chat-api.ts``: a tool call's
  ``index`` is a required number, ``function.arguments`` a string; AI_TypeValidationError);
* ``packages/openai/src/chat/openai-chat-language-model.ts``: a chunk with an ``error`` object is an error part;
  tool-call deltas go to ``StreamingToolCallTracker`` (``packages/provider-utils/src/streaming-tool-call-tracker.ts``),
  which joins each call's arguments and finalises every call at the end of the stream;
* ``packages/ai/src/generate-text/parse-tool-call.ts``: arguments that are not JSON are a tool-error part
  (AI_InvalidToolInputError).

Measured: tests/test_real_clients.py runs the real SDK on every bundled capture and holds this column to it.
"""

from __future__ import annotations

from checker.dialects.base import Effect, EndEffect, Linted, Verdict
from checker.dialects.chat.vocabulary import FINISH_PREFIX
from checker.findings import Finding

VAI = "vercel-ai"

_BAD_ARGS = "a tool-error part: AI_InvalidToolInputError: … AI_JSONParseError (the call's arguments are not JSON)"
_INVALID = "an error part: AI_TypeValidationError: Type validation failed ({what})"


def _breaks(symptom: str) -> Effect:
    return Effect(Verdict.BREAKS, symptom, None)


def _not_shared(f: Finding, r: Linted) -> bool:
    key = (f.details.get("index"), f.details.get("call"))
    return not any(o.code == "CHT015" and (o.details.get("index"), o.details.get("call")) == key for o in r.findings)


BY_RULE: dict[str, dict[str, tuple[Effect, ...]]] = {
    "SSE006": {VAI: (_breaks("an error part: AI_JSONParseError: JSON parsing failed"),)},
    "CHT011": {VAI: (_breaks(_INVALID.format(what="a tool call's index is a required number")),)},
    "CHT018": {VAI: (_breaks(_INVALID.format(what="function.arguments must be a string")),)},
    "CHT024": {VAI: (_breaks("an error part: AI_StreamProviderError: the error's message"),)},
    # The tracker tells calls apart by id: where two ids share an index (CHT015) it keeps their arguments apart,
    # so the joined text sse-check judges is not what it parses.
    "CHT017": {VAI: (Effect(Verdict.BREAKS, _BAD_ARGS, _not_shared),)},
    "CHT019": {VAI: (_breaks(_BAD_ARGS + " (the arguments sent again in full are joined to the first)"),)},
    # A new id or name starts a new call in the tracker: the first call keeps the arguments it had so far.
    "CHT014": {VAI: (_breaks(_BAD_ARGS + " (the call's {field} changed: a new call starts, the first is cut)"),)},
}


def _call_cut_by_length(result: Linted) -> bool:
    # The token limit ended the answer while a choice streamed a tool call: its arguments stop mid-JSON.
    return FINISH_PREFIX + "length" in result.terminals and any("tool_calls" in item.parts for item in result.items)


AT_END: tuple[EndEffect, ...] = (
    EndEffect(Verdict.BREAKS, _BAD_ARGS.replace("are not JSON", "were cut") + " (a choice ends with {terminal} "
              "inside a tool call, as a conforming stream may; the tracker still finalises the call)",
              _call_cut_by_length,
              "vercel-ai packages/provider-utils/src/streaming-tool-call-tracker.ts (flush) and "
              "packages/ai/src/generate-text/parse-tool-call.ts; measured, tests/test_real_clients.py"),
)
