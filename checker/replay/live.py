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

The measurement (:class:`Measurement`, also the JSON fixtures of ``captures/replay/live``) holds, per
pair, turn 1's and turn 2's :class:`Counts`; :func:`analyse` turns it into rows (reuse against the
boundaries *previous prompt*, *+ reasoning*, *+ whole output*) and RPL1xx findings. No I/O here: the
requests are sent by ``checker.replay.live_run`` through the probe's HTTP client.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

import orjson

from checker.dialects.responses.vocabulary import TERMINAL_TYPES
from checker.findings import Finding, Position
from checker.live.history import CacheRow
from checker.live.outcome import Api, usage_of
from checker.live.scenarios import TOOLS
from checker.replay.dialects import to_openai_chat
from checker.rules import replay as rules
from checker.sse import SSEDecoder, SSEEvent

LIVE_DIALECTS: tuple[str, ...] = ("responses", "openai-chat")
FAMILIES: tuple[str, ...] = ("continue", "new_user")
VARIANTS: tuple[str, ...] = ("exact", "dropped", "altered")
PAIRS: tuple[tuple[str, str], ...] = tuple((f, v) for f in FAMILIES for v in VARIANTS)
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
CHAT_TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {k: tool[k] for k in ("name", "description", "parameters")}} for tool in TOOLS
]
# The altered variant replaces the middle word of the reasoning with this one (or the second, if the
# middle word already is the first): a plain word that is one token in common vocabularies.
ALTERED_WORDS = ("cold", "warm")
_WORD = re.compile(r"[^\W\d_]+")
# Where a reuse count "reaches" a boundary: a template writes the end of a prompt a little differently
# once the reply is in the history (Qwen3 opens its generation prompt with "<think>\n", 2 tokens, which
# is rendered again only when the reasoning is), and the end of an output (an end-of-turn token).
SLACK_TOKENS = 8
_START = Position(line=1, byte=0)


# --- the requests -------------------------------------------------------------------------------------


def turn1_body(dialect: str) -> dict[str, Any]:
    """Turn 1 without ``model`` and ``stream`` (the probe's scenario adds them): reasoning, then tool calls."""
    if dialect == "openai-chat":
        return {"max_tokens": MAX_OUTPUT_TOKENS, "messages": [{"role": "user", "content": PROMPT}],
                "tools": copy.deepcopy(CHAT_TOOLS), "tool_choice": "required",
                "stream_options": {"include_usage": True}}
    return {"max_output_tokens": MAX_OUTPUT_TOKENS, "input": PROMPT, "tools": copy.deepcopy(TOOLS),
            "tool_choice": "required"}


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
    out = copy.deepcopy(dict(item))
    for key in ("content", "summary"):
        parts = out.get(key)
        if not isinstance(parts, list):
            continue
        for part in parts:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                changed = alter_text(part["text"])
                if changed is not None:
                    part["text"] = changed
                    return out
    return None


def turn2_body(dialect: str, turn1: Mapping[str, Any], family: str, variant: str) -> dict[str, Any] | None:
    """Turn 2 without ``model`` and ``stream``; None when the variant cannot be built (no text to alter).

    ``turn1`` is turn 1's :func:`turn1_output`: ``{"items": [...]}`` (Responses) or ``{"message": {...},
    "field": "reasoning_content"}`` (chat)."""
    if family not in FAMILIES or variant not in VARIANTS:
        raise ValueError(f"unknown pair {family}/{variant}")
    if dialect == "openai-chat":
        return _chat_turn2(turn1, family, variant)
    items: list[dict[str, Any]] = []
    altered = False
    for item in turn1.get("items") or []:
        if item.get("type") == "reasoning":
            if variant == "dropped":
                continue
            if variant == "altered" and not altered:
                changed = altered_reasoning_item(item)
                if changed is not None:
                    item, altered = changed, True
        items.append(copy.deepcopy(dict(item)))
    if variant == "altered" and not altered:
        return None
    outputs = [{"type": "function_call_output", "call_id": item.get("call_id"),
                "output": tool_output(str(item.get("name")), item.get("arguments"))}
               for item in turn1.get("items") or [] if item.get("type") == "function_call"]
    given: list[dict[str, Any]] = [{"role": "user", "content": PROMPT}, *items, *outputs]
    if family == "new_user":
        given.append({"role": "user", "content": FOLLOW_UP})
    return {"max_output_tokens": MAX_OUTPUT_TOKENS, "tools": copy.deepcopy(TOOLS), "tool_choice": "auto",
            "input": given}


def _chat_turn2(turn1: Mapping[str, Any], family: str, variant: str) -> dict[str, Any] | None:
    message = turn1.get("message") or {}
    name = str(turn1.get("field") or "reasoning_content")
    reasoning = message.get(name) if isinstance(message.get(name), str) else ""
    if variant == "dropped":
        reasoning = ""
    elif variant == "altered":
        reasoning = alter_text(reasoning) if reasoning else None
        if reasoning is None:
            return None
    calls = [copy.deepcopy(call) for call in message.get("tool_calls") or [] if isinstance(call, dict)]
    assistant: dict[str, Any] = {"role": "assistant", "content": message.get("content") or ""}
    if calls:
        assistant["tool_calls"] = calls
    if reasoning:
        assistant["reasoning"] = reasoning
    history: list[dict[str, Any]] = [{"role": "user", "content": PROMPT}, assistant]
    for call in calls:
        function = call.get("function") or {}
        history.append({"role": "tool", "tool_call_id": str(call.get("id") or ""),
                        "content": tool_output(str(function.get("name")), function.get("arguments"))})
    # The case-file rule: the reasoning goes back on the current turn's reply (the continue family) ...
    messages = to_openai_chat(history, field=name)
    if family == "new_user":
        # ... and a new user message ends that turn: the rule would now leave the reasoning out, but the
        # point is to see whether the template keeps it, so the messages stay as they are.
        messages.append({"role": "user", "content": FOLLOW_UP})
    return {"max_tokens": MAX_OUTPUT_TOKENS, "messages": messages, "tools": copy.deepcopy(CHAT_TOOLS),
            "tool_choice": "auto", "stream_options": {"include_usage": True}}


# --- the measurement ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Counts:
    """What one answer reported: HTTP status, token usage, and (turn 1) what its output held."""

    status: int | None = None
    error: str | None = None  # an HTTP error's message, or why the exchange gave no answer
    skipped: str | None = None  # why this request was not sent (or not answered by a replay server)
    input_tokens: int | None = None  # usage input_tokens / prompt_tokens (else cache_n + prompt_n)
    output_tokens: int | None = None
    cached_tokens: int | None = None  # usage.input_tokens_details / prompt_tokens_details .cached_tokens
    cache_n: int | None = None  # llama.cpp's timings.cache_n
    prompt_n: int | None = None  # llama.cpp's timings.prompt_n
    reasoning_tokens: int | None = None  # turn 1: the reasoning's length in tokens
    reasoning_source: str | None = None  # "usage" (reasoning_tokens reported) or "deltas" (one per delta)
    after_reasoning: tuple[str, ...] = ()  # turn 1: the kinds of the output items after the reasoning

    @property
    def ok(self) -> bool:
        return self.skipped is None and self.status is not None and 200 <= self.status < 300

    @property
    def rejected(self) -> bool:
        return self.skipped is None and self.status is not None and self.status >= 400

    @property
    def reused(self) -> int | None:
        """The prompt tokens served from the cache: ``cached_tokens``, else ``cache_n``."""
        return self.cached_tokens if self.cached_tokens is not None else self.cache_n

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None or value == ():
                continue
            out[f.name] = list(value) if isinstance(value, tuple) else value
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Counts:
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown keys {sorted(unknown)} (known: {sorted(known)})")
        values = dict(data)
        if "after_reasoning" in values:
            values["after_reasoning"] = tuple(values["after_reasoning"])
        return cls(**values)


@dataclass(frozen=True, slots=True, kw_only=True)
class Pair:
    family: str
    variant: str
    turn1: Counts
    turn2: Counts


@dataclass(frozen=True, slots=True, kw_only=True)
class Measurement:
    dialect: str
    pairs: tuple[Pair, ...]
    unmeasured: str | None = None  # why no turn 2 was sent at all (turn 1 failed, had no reasoning)

    def pair(self, family: str, variant: str) -> Pair | None:
        return next((p for p in self.pairs if p.family == family and p.variant == variant), None)

    def as_dict(self) -> dict[str, Any]:
        return {"dialect": self.dialect, "unmeasured": self.unmeasured,
                "pairs": [{"family": p.family, "variant": p.variant, "turn1": p.turn1.as_dict(),
                           "turn2": p.turn2.as_dict()} for p in self.pairs]}


def measurement_from_dict(data: Mapping[str, Any]) -> Measurement:
    """A measurement from JSON (a fixture in ``captures/replay/live``, or a report's ``measurement``).

    A top-level ``turn1`` is every pair's turn 1 unless the pair has its own."""
    default = data.get("turn1")
    pairs = []
    for n, entry in enumerate(data.get("pairs") or []):
        try:
            family, variant = entry["family"], entry["variant"]
            if (family, variant) not in PAIRS:
                raise ValueError(f"unknown pair {family}/{variant}")
            turn1 = entry.get("turn1", default)
            if not isinstance(turn1, Mapping):
                raise ValueError("no turn1")
            pairs.append(Pair(family=family, variant=variant, turn1=Counts.from_dict(turn1),
                              turn2=Counts.from_dict(entry.get("turn2") or {})))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"pairs[{n}]: {exc}") from None
    return Measurement(dialect=str(data.get("dialect") or "responses"), pairs=tuple(pairs),
                       unmeasured=data.get("unmeasured"))


# --- the analysis -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Boundaries:
    """Where turn 2's prompt could stop matching the cache: after the previous prompt, after the replayed
    reasoning (previous prompt + reasoning tokens), after the whole previous output."""

    previous_prompt: int
    reasoning_end: int | None
    output_end: int | None

    def as_dict(self) -> dict[str, Any]:
        return {"previous_prompt": self.previous_prompt, "reasoning_end": self.reasoning_end,
                "output_end": self.output_end}


def boundaries(turn1: Counts) -> Boundaries | None:
    prompt = turn1.input_tokens
    if prompt is None:
        return None
    reasoning = prompt + turn1.reasoning_tokens if turn1.reasoning_tokens is not None else None
    output = prompt + turn1.output_tokens if turn1.output_tokens is not None else None
    return Boundaries(prompt, reasoning, output)


def _after(turn1: Counts) -> str:
    kinds = set(turn1.after_reasoning)
    if kinds == {"function_call"}:
        return "the tool calls"
    if kinds == {"message"}:
        return "the message"
    return "the rest of the output"


@dataclass(frozen=True, slots=True)
class Stop:
    at: str  # none, prompt-partial, prompt, reasoning-partial, reasoning, output
    text: str


def where_stopped(reused: int, bounds: Boundaries, turn1: Counts) -> Stop:
    """Where the reuse of ``reused`` cached tokens stopped, against turn 1's boundaries."""
    prompt = bounds.previous_prompt
    if reused <= 0:
        return Stop("none", "nothing reused")
    if reused < prompt - SLACK_TOKENS:
        return Stop("prompt-partial", f"inside the previous prompt ({reused} of {prompt})")
    if reused <= prompt:
        return Stop("prompt", "at the end of the previous prompt")
    if bounds.output_end is not None and reused >= bounds.output_end - SLACK_TOKENS:
        return Stop("output", "after the whole previous output")
    if bounds.reasoning_end is not None and reused < bounds.reasoning_end:
        return Stop("reasoning-partial", f"inside the reasoning (≈{reused - prompt} of "
                                         f"{turn1.reasoning_tokens} reasoning tokens)")
    if bounds.reasoning_end is not None:
        return Stop("reasoning", f"after the reasoning, before {_after(turn1)}")
    return Stop("reasoning-partial", f"{reused - prompt} tokens into the previous output")


@dataclass(frozen=True, slots=True, kw_only=True)
class Row:
    """One pair as the report shows it."""

    family: str
    variant: str
    turn1: Counts
    turn2: Counts
    bounds: Boundaries | None
    stop: Stop | None
    reuse: float | None  # cached / previous prompt (history.CacheRow.reuse)

    def as_dict(self) -> dict[str, Any]:
        t2 = self.turn2
        return {
            "family": self.family, "variant": self.variant, "status": t2.status, "error": t2.error,
            "skipped": t2.skipped, "input_tokens": t2.input_tokens, "cached_tokens": t2.cached_tokens,
            "cache_n": t2.cache_n, "prompt_n": t2.prompt_n, "reused": t2.reused,
            "reuse_vs_previous_prompt": round(self.reuse, 4) if self.reuse is not None else None,
            "boundaries": self.bounds.as_dict() if self.bounds else None,
            "stopped": {"at": self.stop.at, "text": self.stop.text} if self.stop else None,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Analysis:
    rows: tuple[Row, ...]
    findings: tuple[Finding, ...]
    template: str | None  # new_user family: "keeps", "drops" or "unclear"; None when not measured
    unmeasured: str | None = None

    def row(self, family: str, variant: str) -> Row | None:
        return next((r for r in self.rows if r.family == family and r.variant == variant), None)


def _row(pair: Pair) -> Row:
    bounds = boundaries(pair.turn1)
    reused = pair.turn2.reused if pair.turn2.ok else None
    stop = where_stopped(reused, bounds, pair.turn1) if reused is not None and bounds is not None else None
    reuse = None
    if reused is not None and bounds is not None:
        reuse = CacheRow(number=0, conversation=pair.family, step=2, prompt=pair.turn2.input_tokens, cached=reused,
                         previous_prompt=bounds.previous_prompt, source="").reuse
    return Row(family=pair.family, variant=pair.variant, turn1=pair.turn1, turn2=pair.turn2, bounds=bounds,
               stop=stop, reuse=reuse)


def _shown(row: Row | None) -> str:
    if row is None or row.turn2.skipped:
        return "not sent"
    if not row.turn2.ok:
        return f"HTTP {row.turn2.status}" if row.turn2.status is not None else "no answer"
    return str(row.turn2.reused) if row.turn2.reused is not None else "not reported"


def _error_text(counts: Counts) -> str:
    return f" ({counts.error})" if counts.error else ""


def analyse(measurement: Measurement) -> Analysis:
    """The rows of the cache table and the RPL1xx findings of a measurement."""
    rows = tuple(_row(p) for p in measurement.pairs)
    by = {(r.family, r.variant): r for r in rows}
    found: list[Finding] = []

    for row in rows:
        if not row.turn2.rejected:
            continue
        details = {"family": row.family, "variant": row.variant, "status": row.turn2.status,
                   "error": row.turn2.error}
        if row.variant == "exact":
            control = by.get((row.family, "dropped"))
            if control is not None and control.turn2.ok:
                said = "; the same request without the reasoning was accepted"
            elif control is not None and control.turn2.rejected:
                said = "; without the reasoning it was rejected too: the server refuses the replayed history itself"
            else:
                said = ""
            found.append(rules.REPLAYED_REASONING_REJECTED.finding(
                _START, details=details, family=row.family, status=row.turn2.status,
                error=_error_text(row.turn2), control=said))
        else:
            found.append(rules.REPLAY_CONTROL_REJECTED.finding(
                _START, details=details, family=row.family, variant=row.variant, status=row.turn2.status,
                error=_error_text(row.turn2)))

    unmeasured = measurement.unmeasured
    answered = [r for r in rows if r.turn2.ok]
    counted = [r for r in answered if r.turn2.reused is not None]
    if unmeasured is None and answered and not counted:
        unmeasured = ("the server reported no cached tokens (neither usage cached_tokens nor llama.cpp's "
                      "timings.cache_n)")
    elif unmeasured is None and counted and all(r.turn2.reused == 0 for r in counted):
        unmeasured = ("the server reported 0 cached tokens on every request (no prefix cache, or prompts below "
                      "its caching minimum: 1024 tokens at OpenAI)")
    if unmeasured is not None:
        found.append(rules.REPLAY_CACHE_UNMEASURED.finding(_START, reason=unmeasured))
        return Analysis(rows=rows, findings=tuple(found), template=None, unmeasured=unmeasured)

    def reused(family: str, variant: str) -> int | None:
        row = by.get((family, variant))
        return row.turn2.reused if row is not None and row.turn2.ok else None

    exact = reused("continue", "exact")
    controls = [c for c in (reused("continue", "dropped"), reused("continue", "altered")) if c is not None]
    shown = {v: _shown(by.get(("continue", v))) for v in VARIANTS}
    exact_row = by.get(("continue", "exact"))
    if exact is not None and controls and exact <= max(controls):
        found.append(rules.REPLAYED_REASONING_CACHE_LOST.finding(
            _START, family="continue", exact=shown["exact"], dropped=shown["dropped"], altered=shown["altered"],
            details={"family": "continue", **{v: reused("continue", v) for v in VARIANTS}}))
    elif exact is not None and exact_row is not None and exact_row.bounds is not None \
            and exact_row.stop is not None and exact_row.stop.at != "output":
        b = exact_row.bounds
        found.append(rules.REPLAY_REUSE_STOPPED.finding(
            _START, family="continue", where=exact_row.stop.text, cached=exact,
            input=exact_row.turn2.input_tokens if exact_row.turn2.input_tokens is not None else "?",
            previous=b.previous_prompt, reasoning_end=_num(b.reasoning_end), output_end=_num(b.output_end),
            details={"family": "continue", "variant": "exact", "stopped": exact_row.stop.at, "cached": exact,
                     "input_tokens": exact_row.turn2.input_tokens, **b.as_dict()}))

    template = None
    new = {v: reused("new_user", v) for v in VARIANTS}
    if new["exact"] is not None and new["dropped"] is not None:
        if new["exact"] > new["dropped"]:
            template = "keeps"
            shown = {v: _shown(by.get(("new_user", v))) for v in VARIANTS}
            found.append(rules.NEW_TURN_KEEPS_REASONING.finding(
                _START, exact=shown["exact"], dropped=shown["dropped"], altered=shown["altered"],
                details={"family": "new_user", **new}))
        elif new["exact"] == new["dropped"] and new["altered"] in (None, new["exact"]):
            template = "drops"
        else:
            template = "unclear"
    return Analysis(rows=rows, findings=tuple(found), template=template)


def _num(value: int | None) -> str:
    return str(value) if value is not None else "?"


TEMPLATE_TEXT = {
    "drops": "the template drops the earlier turn's reasoning at a new user message "
             "(equal reuse with exact, dropped and altered reasoning)",
    "keeps": "the template keeps the earlier turn's reasoning at a new user message (more reuse when it is sent)",
    "unclear": "the reuse differs between the variants without favouring the exact reasoning: "
               "the template's handling of earlier reasoning is unclear",
}


# --- turn 1's answer ----------------------------------------------------------------------------------


def turn1_output(dialect: str, output: Sequence[Mapping[str, Any]], field_name: str = "reasoning_content",
                 ) -> dict[str, Any]:
    """What turn 2 is built from: the Responses output items, or the chat message and its reasoning field."""
    if dialect == "openai-chat":
        message = dict(output[0]) if output else {}
        return {"message": message, "field": field_name}
    return {"items": [dict(item) for item in output]}


def reasoning_of(dialect: str, turn1: Mapping[str, Any]) -> str:
    """The reasoning text turn 1 emitted ('' for none; a reasoning item with only encrypted content: '')."""
    if dialect == "openai-chat":
        message = turn1.get("message") or {}
        value = message.get(turn1.get("field") or "reasoning_content")
        return value if isinstance(value, str) else ""
    texts = []
    for item in turn1.get("items") or []:
        if item.get("type") != "reasoning":
            continue
        for key in ("content", "summary"):
            for part in item.get(key) or []:
                if isinstance(part, Mapping) and isinstance(part.get("text"), str):
                    texts.append(part["text"])
    return "".join(texts)


def has_reasoning(dialect: str, turn1: Mapping[str, Any]) -> bool:
    if dialect == "openai-chat":
        return bool(reasoning_of(dialect, turn1))
    return any(item.get("type") == "reasoning" for item in turn1.get("items") or [])


def after_reasoning(dialect: str, turn1: Mapping[str, Any]) -> tuple[str, ...]:
    """The kinds of output that follow the reasoning: ``function_call`` per call, ``message``."""
    if dialect == "openai-chat":
        message = turn1.get("message") or {}
        kinds = ["message"] if message.get("content") else []
        return (*kinds, *["function_call"] * len(message.get("tool_calls") or []))
    items = list(turn1.get("items") or [])
    last = max((i for i, item in enumerate(items) if item.get("type") == "reasoning"), default=-1)
    return tuple(str(item.get("type")) for item in items[last + 1:])


@dataclass(slots=True)
class StreamFacts:
    """What :func:`scan_stream` read from a streamed answer's events."""

    usage: Any = None
    timings: Any = None
    reasoning_deltas: int = 0


def scan_stream(dialect: str, body: bytes) -> StreamFacts:
    """Usage, llama.cpp ``timings`` and the number of reasoning deltas of a streamed answer."""
    facts = StreamFacts()
    decoder = SSEDecoder()
    events = [*decoder.feed(body), *decoder.close()]
    for event in events:
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
        if dialect == "openai-chat":
            if obj.get("usage") is not None:
                facts.usage = obj["usage"]
            choices = obj.get("choices")
            delta = choices[0].get("delta") if isinstance(choices, list) and choices and isinstance(
                choices[0], dict) else None
            if isinstance(delta, dict) and any(isinstance(delta.get(k), str) and delta[k]
                                               for k in ("reasoning_content", "reasoning")):
                facts.reasoning_deltas += 1
            continue
        kind = obj.get("type")
        if kind in ("response.reasoning_text.delta", "response.reasoning_summary_text.delta"):
            facts.reasoning_deltas += 1
        response = obj.get("response")
        if isinstance(response, dict) and response.get("usage") is not None and kind in TERMINAL_TYPES:
            facts.usage = response["usage"]
    return facts


def counts_from_stream(dialect: str, status: int | None, body: bytes, turn1: Mapping[str, Any] | None = None,
                       ) -> Counts:
    """:class:`Counts` of a 2xx streamed answer (``turn1``: its :func:`turn1_output`, for turn 1's facts)."""
    api: Api = "chat" if dialect == "openai-chat" else "responses"
    facts = scan_stream(dialect, body)
    from_usage = usage_of(api, facts.usage, None)
    timings = facts.timings if isinstance(facts.timings, Mapping) else {}
    cache_n = timings.get("cache_n") if type(timings.get("cache_n")) is int else None
    prompt_n = timings.get("prompt_n") if type(timings.get("prompt_n")) is int else None
    prompt = from_usage.prompt if from_usage else None
    if prompt is None and cache_n is not None and prompt_n is not None:
        prompt = cache_n + prompt_n
    values: dict[str, Any] = {
        "status": status, "input_tokens": prompt, "output_tokens": from_usage.output if from_usage else None,
        "cached_tokens": from_usage.cached if from_usage else None, "cache_n": cache_n, "prompt_n": prompt_n,
    }
    if turn1 is not None:
        usage = facts.usage if isinstance(facts.usage, Mapping) else {}
        details = usage.get("output_tokens_details" if api == "responses" else "completion_tokens_details")
        reported = details.get("reasoning_tokens") if isinstance(details, Mapping) else None
        if type(reported) is int and reported > 0:
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
