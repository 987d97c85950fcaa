"""The live replay, pure part: the requests it sends and what their token usage says.

Theory of operation
-------------------
``sse-check replay --live URL`` (or ``sse-check probe URL --replay``) measures whether a server reuses
its prefix cache when a client sends the model's reasoning back statelessly (docs/spec.md §4-§5). It runs six
*pairs*. Each pair is **turn 1**, a reasoning + function-call request (:func:`turn1_body`, the request of
``captures/llama.cpp/replay-turn1``), then one **turn 2** built from that turn 1's output
(:func:`turn2_body`), in two families with three variants of the reasoning each:

* ``continue``: the agent loop goes on inside the turn: the original user message, turn 1's output,
  one tool result per call, no new user message. Here the exact replay must reuse the previous prompt
  plus the replayed reasoning (RPL101 when it reuses no more than the controls, RPL102 where it stopped);
* ``new_user``: the same plus a new user message. The case-file rule need not send the earlier turn's
  reasoning; equal reuse across the variants means the template drops it anyway, more for the exact
  one means it keeps it (RPL103).

Variants: ``exact`` (the reasoning as emitted), ``dropped`` (left out), ``altered`` (one word of its
text changed: :func:`alter_text`). Turn 1 is sent again before every turn 2 so that each turn 2 meets
the server's cache in the same state: a single-slot llama-server keeps only the last prompt.

Everything here is deterministic: the same turn-1 output always gives byte-identical turn-2 bodies,
which is what lets ``sse-check serve captures/replay/llama.cpp`` answer them by request body.

Each dialect's requests are built by its request adapter (:mod:`checker.live.adapters`), from the
conversation here (:func:`script`). The measurement (:class:`Measurement`, also the JSON fixtures of
``captures/replay/live``) holds, per pair, turn 1's and turn 2's :class:`Counts`; :func:`analyse` turns it
into rows and RPL1xx findings (both in :mod:`checker.replay.live_measure`). No I/O here: the requests are
sent by ``checker.replay.live_run`` through the probe's HTTP client.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from checker.live import adapters
from checker.live.adapters import ReplayScript
from checker.live.adapters import responses as responses_adapter
from checker.live.answer import Outcome
from checker.live.scenarios import TOOLS
from checker.replay.live_measure import (  # the measurement and its analysis, for the callers of this module
    FAMILIES,
    PAIRS,
    TEMPLATE_TEXT,
    VARIANTS,
    Analysis,
    Boundaries,
    Counts,
    Measurement,
    Pair,
    Row,
    Stop,
    analyse,
    boundaries,
    measurement_from_dict,
    where_stopped,
)
from checker.sse import SSEDecoder, SSEEvent

__all__ = ["FAMILIES", "FAMILY_ABOUT", "LIVE_DIALECTS", "PAIRS", "TEMPLATE_TEXT", "VARIANTS", "VARIANT_ABOUT",
           "Analysis", "Boundaries", "Counts", "Measurement", "Pair", "Row", "Stop", "StreamFacts",
           "after_reasoning", "alter_text", "altered_reasoning_item", "analyse", "boundaries", "counts_from_stream",
           "error_message", "has_reasoning", "is_live_dialect", "measurement_from_dict", "reasoning_of", "scan_stream", "script",
           "tool_output", "turn1_body", "turn1_fallback", "turn1_output", "turn2_body", "unbuilt", "where_stopped"]

# The dialects the live replay speaks, by the names the command line takes (request adapters' names or aliases;
# the adapters' own names, "chat" and "messages", are taken too: is_live_dialect).
LIVE_DIALECTS: tuple[str, ...] = ("responses", "openai-chat", "anthropic")
FAMILY_ABOUT = {
    "continue": "the agent loop goes on: turn 1's output and the tool results, no new user message",
    "new_user": "a new turn: the same plus a new user message",
}
VARIANT_ABOUT = {
    "exact": "the reasoning exactly as emitted",
    "dropped": "the reasoning left out",
    "altered": "one word of the reasoning changed",
}

# The conversation (the llama.cpp replay experiment's: captures/llama.cpp/replay-*.request.json).
PROMPT = "What is the weather in Paris?"
FOLLOW_UP = "Thanks. Which city is warmer?"
MAX_OUTPUT_TOKENS = 200
# The altered variant replaces the middle word of the reasoning with this one (or the second, if the
# middle word already is the first): a plain word that is one token in common vocabularies.
ALTERED_WORDS = ("cold", "warm")
_WORD = re.compile(r"[^\W\d_]+")


# --- the requests -------------------------------------------------------------------------------------


def is_live_dialect(name: str) -> bool:
    """Whether the live replay speaks ``name`` (a name of :data:`LIVE_DIALECTS`, or its adapter's name)."""
    try:
        adapter = adapters.get(name)
    except ValueError:
        return False
    return any(adapters.get(known) is adapter for known in LIVE_DIALECTS)


def script(thinking_budget: int | None = None) -> ReplayScript:
    """The conversation the request adapters build the two turns from (``thinking_budget``: Anthropic's
    budget_tokens, its smallest by default)."""
    extra = {} if thinking_budget is None else {"thinking_budget": thinking_budget}
    return ReplayScript(prompt=PROMPT, follow_up=FOLLOW_UP, max_tokens=MAX_OUTPUT_TOKENS, tools=TOOLS,
                        tool_output=tool_output, alter=alter_text, **extra)


def turn1_body(dialect: str, conversation: ReplayScript | None = None) -> dict[str, Any]:
    """Turn 1 without ``model`` and ``stream`` (the probe's scenario adds them): reasoning, then tool calls."""
    return adapters.get(dialect).turn1_body(conversation or script())


def turn1_fallback(dialect: str, conversation: ReplayScript | None = None) -> dict[str, Any] | None:
    """Turn 1 as the dialect's API allows when :func:`turn1_body` is refused (None: nothing else to try)."""
    return adapters.get(dialect).turn1_fallback(conversation or script())


def tool_output(name: str, arguments: Any) -> str:
    """The made-up result of a tool call: fixed per tool, so that turn 2 is deterministic."""
    try:
        args = json.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError:
        args = None
    args = args if isinstance(args, dict) else {}
    if name == "get_weather":
        return json.dumps({"temperature": 18, "unit": str(args.get("unit") or "celsius"), "condition": "cloudy"})
    if name == "get_time":
        return json.dumps({"time": "14:05"})
    return json.dumps({"ok": True})


def alter_text(text: str) -> str | None:
    """``text`` with its middle word replaced (:data:`ALTERED_WORDS`); None when it has no word."""
    words = list(_WORD.finditer(text))
    if not words:
        return None
    middle = words[len(words) // 2]
    new = ALTERED_WORDS[1] if middle.group().lower() == ALTERED_WORDS[0] else ALTERED_WORDS[0]
    return text[: middle.start()] + new + text[middle.end():]


def altered_reasoning_item(item: Mapping[str, Any]) -> dict[str, Any] | None:
    """A Responses reasoning item with one word of its text changed (content first, else the summary)."""
    return responses_adapter.altered_reasoning_item(item, alter_text)


def turn2_body(dialect: str, turn1: Mapping[str, Any], family: str, variant: str,
               conversation: ReplayScript | None = None) -> dict[str, Any] | None:
    """Turn 2 without ``model`` and ``stream``; None when the variant cannot be built (:func:`unbuilt`).

    ``turn1`` is turn 1's :func:`turn1_output`: ``{"items": [...]}`` (Responses), ``{"message": {...},
    "field": "reasoning_content"}`` (chat) or ``{"content": [blocks]}`` (Messages)."""
    if family not in FAMILIES or variant not in VARIANTS:
        raise ValueError(f"unknown pair {family}/{variant}")
    return adapters.get(dialect).turn2_body(conversation or script(), turn1, family, variant)


def unbuilt(dialect: str, turn1: Mapping[str, Any], family: str, variant: str) -> str:
    """Why :func:`turn2_body` gave no request for this pair."""
    if family == "continue" and "function_call" not in after_reasoning(dialect, turn1):
        return "turn 1 called no tool: a continuation has no tool results to send back"
    if variant == "altered":
        return "turn 1's reasoning has no text to alter (only encrypted content)"
    return "the request cannot be built from turn 1's output"


# --- turn 1's answer ----------------------------------------------------------------------------------


def turn1_output(dialect: str, output: Sequence[Mapping[str, Any]], field_name: str = "reasoning_content",
                 ) -> dict[str, Any]:
    """What turn 2 is built from: the Responses output items, or the chat message and its reasoning field."""
    adapter = adapters.get(dialect)
    return adapter.turn1_output(Outcome(api=adapter.name, output=[dict(o) for o in output],
                                        reasoning_field=field_name))


def reasoning_of(dialect: str, turn1: Mapping[str, Any]) -> str:
    """The reasoning text turn 1 emitted ('' for none; a reasoning item with only encrypted content: '')."""
    return adapters.get(dialect).reasoning_of(turn1)


def has_reasoning(dialect: str, turn1: Mapping[str, Any]) -> bool:
    return adapters.get(dialect).has_reasoning(turn1)


def after_reasoning(dialect: str, turn1: Mapping[str, Any]) -> tuple[str, ...]:
    """The kinds of output that follow the reasoning: ``function_call`` per call, ``message``."""
    return adapters.get(dialect).after_reasoning(turn1)


@dataclass(slots=True)
class StreamFacts:
    """What :func:`scan_stream` read from a streamed answer's events."""

    usage: Any = None
    timings: Any = None
    reasoning_deltas: int = 0


def scan_stream(dialect: str, body: bytes) -> StreamFacts:
    """Usage, llama.cpp ``timings`` and the number of reasoning deltas of a streamed answer."""
    adapter = adapters.get(dialect)
    facts = StreamFacts()
    decoder = SSEDecoder()
    for event in [*decoder.feed(body), *decoder.close()]:
        if not isinstance(event, SSEEvent) or event.data == b"[DONE]":
            continue
        try:
            obj = orjson.loads(event.data)
        except orjson.JSONDecodeError:
            continue
        if not isinstance(obj, dict):
            continue
        if obj.get("timings") is not None:
            facts.timings = obj["timings"]
        if adapter.is_reasoning_delta(obj):
            facts.reasoning_deltas += 1
        usage = adapter.stream_usage(obj)
        if isinstance(usage, Mapping) and isinstance(facts.usage, Mapping):
            # Split usage (Anthropic: the input counts in message_start, the output in message_delta) is one.
            facts.usage = {**facts.usage, **{k: v for k, v in usage.items() if v is not None}}
        elif usage is not None:
            facts.usage = usage
    return facts


def counts_from_stream(dialect: str, status: int | None, body: bytes, turn1: Mapping[str, Any] | None = None,
                       ) -> Counts:
    """:class:`Counts` of a 2xx streamed answer (``turn1``: its :func:`turn1_output`, for turn 1's facts)."""
    adapter = adapters.get(dialect)
    facts = scan_stream(dialect, body)
    from_usage = adapter.usage_counts(facts.usage)
    timings = facts.timings if isinstance(facts.timings, Mapping) else {}
    cache_n = timings.get("cache_n") if type(timings.get("cache_n")) is int else None
    prompt_n = timings.get("prompt_n") if type(timings.get("prompt_n")) is int else None
    prompt = from_usage.prompt if from_usage else None
    if prompt is None and cache_n is not None and prompt_n is not None:
        prompt = cache_n + prompt_n
    values: dict[str, Any] = {
        "status": status, "input_tokens": prompt, "output_tokens": from_usage.output if from_usage else None,
        "cached_tokens": from_usage.cached if from_usage else None, "cache_n": cache_n, "prompt_n": prompt_n,
        "cache_written": from_usage.written if from_usage else None,
    }
    if turn1 is not None:
        reported = adapter.usage_fields.reasoning_tokens(facts.usage)
        if reported is not None and reported > 0:
            values.update(reasoning_tokens=reported, reasoning_source="usage")
        elif facts.reasoning_deltas:
            values.update(reasoning_tokens=facts.reasoning_deltas, reasoning_source="deltas")
        values["after_reasoning"] = after_reasoning(dialect, turn1)
    return Counts(**values)


def error_message(body: bytes) -> str | None:
    """The message of a JSON error body (``{"error": {"message"}}`` or ``{"error": "..."}``), clipped."""
    try:
        obj = json.loads(body)
    except (UnicodeDecodeError, ValueError):
        text = body.decode("utf-8", "replace").strip()
        return (text[:160] + "…" if len(text) > 160 else text) or None
    error = obj.get("error") if isinstance(obj, dict) else None
    message = error.get("message") if isinstance(error, dict) else error
    if not isinstance(message, str):
        message = json.dumps(obj)[:160] if obj is not None else None
    if message is None:
        return None
    message = " ".join(message.split())
    return message[:160] + "…" if len(message) > 160 else message
