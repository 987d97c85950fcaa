"""The OpenAI Responses API's requests and answers (``POST …/responses``).

The history is the ``input`` items (a string input is one user message), an earlier answer can be named by
``previous_response_id``, reasoning comes as ``reasoning`` items (their ``content``, else ``summary``), and
the usage counts are ``input_tokens`` / ``output_tokens`` with their ``*_details``. An answer's output is the
terminal event's ``response.output``, or, when that list is empty (codex's backend with ``store: false``),
the items of the ``response.output_item.done`` events in order.

The RPL checks of what a client sends back (rules in ``checker/rules/replay.py``): every reasoning item in
``input`` must equal, as a JSON value (null and absent alike), the item of the same id the server emitted in
this conversation (RPL001); in a conversation the proxy has seen answered, an id it never emitted is RPL002;
and a stateless request (no ``previous_response_id``) that sends back the function calls or message of the
current turn (no user message after them) must send the reasoning item emitted with them too (RPL003).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from checker.dialects.responses.vocabulary import OUTPUT_ITEM_DONE, TERMINAL_TYPES
from checker.findings import Finding
from checker.live.adapters.base import Ask, START, Accumulator, ReplayScript, RequestAdapter, response_number
from checker.live.answer import Outcome, UsageFields, usage_from
from checker.live.conversation import Conversation, EmittedReasoning, Exchange, Key, text_of
from checker.rules import replay as rules

REASONING_DELTAS = frozenset({"response.reasoning_text.delta", "response.reasoning_summary_text.delta"})
USAGE = UsageFields(prompt="input_tokens", output="output_tokens", prompt_details="input_tokens_details",
                    output_details="output_tokens_details")


# --- items -------------------------------------------------------------------------------------------


def reasoning_text(item: Mapping[str, Any]) -> str:
    """The text a Responses reasoning item carries (content, else summary)."""
    return text_of(item.get("content")) or text_of(item.get("summary"))


def fingerprint(item: Mapping[str, Any]) -> Key | None:
    """What identifies a Responses input/output item in a history; None for reasoning items.

    Messages by role and text (an output message and the same message sent back as an input message
    agree), tool calls and their outputs by call id, other items by their id.
    """
    kind = item.get("type")
    if kind == "reasoning":
        return None
    if kind == "message" or (kind is None and "role" in item):
        return ("msg", str(item.get("role")), text_of(item.get("content")))
    call_id = item.get("call_id")
    if isinstance(kind, str) and kind.endswith("_output"):
        return ("out", str(call_id))
    if isinstance(kind, str) and kind.endswith("_call"):
        return ("call", str(call_id if call_id is not None else item.get("id")))
    ident = item.get("id") or call_id
    return (str(kind), str(ident) if ident is not None else json.dumps(item, sort_keys=True, default=str))


def responses_input(request: Mapping[str, Any]) -> list[tuple[int | None, Mapping[str, Any]]]:
    """(index in ``input``, item) pairs; a string input is one user message (index None)."""
    value = request.get("input")
    if isinstance(value, str):
        return [(None, {"type": "message", "role": "user", "content": value})]
    if isinstance(value, list):
        return [(i, item) for i, item in enumerate(value) if isinstance(item, Mapping)]
    return []


# --- answers -----------------------------------------------------------------------------------------


class _Answer(Accumulator):
    def __init__(self) -> None:
        self.id: str | None = None
        self.final: list[dict[str, Any]] | None = None
        self.done: list[dict[str, Any]] = []
        self.usage: Any = None
        self.timings: Any = None

    def event(self, obj: dict[str, Any]) -> None:
        kind = obj.get("type")
        response = obj.get("response")
        if isinstance(response, dict) and isinstance(response.get("id"), str):
            self.id = response["id"]
        if kind == OUTPUT_ITEM_DONE and isinstance(obj.get("item"), dict):
            self.done.append(obj["item"])
        elif isinstance(kind, str) and kind in TERMINAL_TYPES and isinstance(response, dict):  # any JSON: [] too
            output = response.get("output")
            if isinstance(output, list):
                self.final = [item for item in output if isinstance(item, dict)]
            self.usage = response.get("usage")
            self.timings = obj.get("timings")  # llama.cpp puts it beside the response

    def close(self) -> Outcome:
        return Outcome(api=ResponsesAdapter.name, response_id=self.id, output=self.final if self.final else self.done,
                       usage=usage_from(USAGE, self.usage, self.timings))


# --- the RPL checks ----------------------------------------------------------------------------------


def _plain(value: Any) -> Any:
    """A JSON value with null members dropped (null and absent are the same to a server)."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def differing_fields(emitted: Mapping[str, Any], sent: Mapping[str, Any]) -> list[str]:
    a, b = _plain(emitted), _plain(sent)
    return sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))


def _pointer(index: int | None) -> str:
    return "/input" if index is None else f"/input/{index}"


def _nowhere(ident: str) -> EmittedReasoning | None:
    return None


def responses_findings(request: Mapping[str, Any], conversation: Conversation,
                       elsewhere: Callable[[str], EmittedReasoning | None] = _nowhere) -> list[Finding]:
    """RPL001-RPL003 for one Responses request in its conversation (as known before it is answered).

    ``elsewhere(id)`` finds a reasoning item emitted in another conversation: such an item is compared
    with what was emitted (RPL001), not reported as unknown."""
    items = responses_input(request)
    found, sent_ids, sent_texts = _sent_reasoning(items, conversation, elsewhere)
    if isinstance(request.get("previous_response_id"), str):
        return found  # the server keeps the earlier items: nothing of them has to be sent
    return found + _missing_reasoning(items, conversation, sent_ids, sent_texts)


def _sent_reasoning(items: list[tuple[int | None, Mapping[str, Any]]], conversation: Conversation,
                    elsewhere: Callable[[str], EmittedReasoning | None],
                    ) -> tuple[list[Finding], set[str], set[str]]:
    """RPL001 and RPL002 for the reasoning items sent; the ids and texts sent."""
    found: list[Finding] = []
    emitted = conversation.reasoning
    by_text: dict[str, EmittedReasoning] = {}
    for entry in emitted.values():
        by_text.setdefault(reasoning_text(entry.item), entry)
    sent_ids: set[str] = set()
    sent_texts: set[str] = set()
    for index, item in items:
        if item.get("type") != "reasoning":
            continue
        ident = item.get("id") if isinstance(item.get("id"), str) and item.get("id") else None
        text = reasoning_text(item)
        sent_texts.add(text)
        match = (emitted.get(ident) or elsewhere(ident)) if ident else (by_text.get(text) if text else None)
        if match is not None:
            sent_ids.add(str(match.item.get("id")))
            fields = differing_fields(match.item, item)
            if fields:
                shown = ident or str(match.item.get("id") or "(no id)")
                found.append(rules.REASONING_ITEM_ALTERED.finding(
                    START, pointer=_pointer(index), id=shown, fields=", ".join(fields),
                    response=response_number(match.number),
                    details={"id": shown, "fields": fields, "response": match.number}))
        elif conversation.answered:
            twin = by_text.get(text) if text else None
            hint = (f" (the server emitted the same text as {twin.item.get('id')} in response "
                    f"{response_number(twin.number)})" if twin is not None else "")
            shown = ident or "(no id)"
            found.append(rules.REASONING_ITEM_UNKNOWN.finding(
                START, pointer=_pointer(index), id=shown, hint=hint,
                details={"id": shown, "same_text_as": twin.item.get("id") if twin else None}))
    return found, sent_ids, sent_texts


def _missing_reasoning(items: list[tuple[int | None, Mapping[str, Any]]], conversation: Conversation,
                       sent_ids: set[str], sent_texts: set[str]) -> list[Finding]:
    """RPL003: reasoning emitted with calls or a message of the current turn that are sent back without it."""
    found: list[Finding] = []
    last_user = max((i if i is not None else -1 for i, item in items
                     if fingerprint(item) is not None and item.get("role") == "user"), default=-1)
    current = {fingerprint(item) for i, item in items if i is not None and i > last_user}
    for entry in conversation.reasoning.values():
        ident = entry.item.get("id")
        if not entry.companions or not (reasoning_text(entry.item) or entry.item.get("encrypted_content")):
            continue
        if (isinstance(ident, str) and ident in sent_ids) or reasoning_text(entry.item) in sent_texts:
            continue
        if any(companion in current for companion in entry.companions):
            found.append(rules.REASONING_ITEM_MISSING.finding(
                START, pointer="/input", id=ident or "(no id)", response=response_number(entry.number),
                companions=_describe(entry.companions),
                details={"id": ident, "response": entry.number,
                         "companions": [list(c[:2]) for c in entry.companions]}))
    return found


def _describe(keys: Sequence[Key]) -> str:
    calls = [k[1] for k in keys if k[0] == "call"]
    messages = [k for k in keys if k[0] == "msg"]
    parts = []
    if calls:
        parts.append(f"call{'s' if len(calls) > 1 else ''} {', '.join(calls)}")
    if messages:
        parts.append("its message")
    others = len(keys) - len(calls) - len(messages)
    if others:
        parts.append(f"{others} other item(s)")
    return " and ".join(parts) or "other items"


def remember_reasoning(conversation: Conversation, number: int, output: Sequence[Mapping[str, Any]]) -> None:
    """Keep each reasoning item of an answer with the items emitted after it (up to the next reasoning)."""
    for index, item in enumerate(output):
        if item.get("type") != "reasoning":
            continue
        companions: list[Key] = []
        for later in output[index + 1:]:
            if later.get("type") == "reasoning":
                break
            if (companion := fingerprint(later)) is not None:
                companions.append(companion)
        ident = item.get("id")
        key = ident if isinstance(ident, str) and ident else f"text:{reasoning_text(item)}"
        conversation.reasoning[key] = EmittedReasoning(item=item, number=number, companions=tuple(companions))


# --- the live replay ---------------------------------------------------------------------------------


def altered_reasoning_item(item: Mapping[str, Any], alter: Callable[[str], str | None]) -> dict[str, Any] | None:
    """A Responses reasoning item with one word of its text changed (content first, else the summary)."""
    out = copy.deepcopy(dict(item))
    for key in ("content", "summary"):
        parts = out.get(key)
        if not isinstance(parts, list):
            continue
        for part in parts:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                changed = alter(part["text"])
                if changed is not None:
                    part["text"] = changed
                    return out
    return None


def _replayed_items(turn1: Mapping[str, Any], variant: str,
                    alter: Callable[[str], str | None]) -> list[dict[str, Any]] | None:
    """Turn 1's output items as sent back: the reasoning exact, dropped or altered (None: nothing to alter)."""
    items: list[dict[str, Any]] = []
    altered = False
    for item in turn1.get("items") or []:
        if item.get("type") == "reasoning":
            if variant == "dropped":
                continue
            if variant == "altered" and not altered:
                changed = altered_reasoning_item(item, alter)
                if changed is not None:
                    item, altered = changed, True
        items.append(copy.deepcopy(dict(item)))
    return None if variant == "altered" and not altered else items


# --- the adapter -------------------------------------------------------------------------------------


class ResponsesAdapter(RequestAdapter):
    name = "responses"
    endpoint = "/responses"
    usage_fields = USAGE
    reasoning_where = "reasoning item"
    words = {"limit": "max_output_tokens", "cut": "response.incomplete (max_output_tokens)",
             "failed": "response.failed", "entries": "items", "history": "input", "no_reasoning": "reasoning effort none",
             "one_call": 'tool_choice "required", parallel_tool_calls false', "format": "text.format"}

    def scenario_body(self, ask: Ask) -> dict[str, Any]:
        body: dict[str, Any] = {} if ask.model is None else {"model": ask.model}
        body["input"] = {"role": "user", "content": 42} if ask.malformed else ask.prompt
        if ask.tools:
            body["tools"] = copy.deepcopy(list(ask.tools))
        if ask.require_tool:
            body["tool_choice"] = "required"
        if ask.parallel is not None:
            body["parallel_tool_calls"] = ask.parallel
        if ask.reasoning is not None:
            body["reasoning"] = {"effort": ask.reasoning}
        if ask.answer_schema is not None:
            body["text"] = {"format": {"type": "json_schema", "name": "answer", "strict": True,
                                       "schema": copy.deepcopy(dict(ask.answer_schema))}}
        body["max_output_tokens"] = ask.max_tokens
        return body

    def is_request(self, request: Mapping[str, Any]) -> bool:
        return "input" in request or "messages" not in request

    def calls_in(self, output: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
        return [(str(item.get("call_id")), str(item.get("name"))) for item in output
                if item.get("type") == "function_call"]

    def with_tool_results(self, body: Mapping[str, Any], output: Sequence[Mapping[str, Any]],
                          results: Sequence[tuple[str, str]]) -> dict[str, Any]:
        given = [dict(item) for _, item in responses_input(body)]
        outputs = [{"type": "function_call_output", "call_id": call_id, "output": text} for call_id, text in results]
        return {**copy.deepcopy(dict(body)), "input": [*given, *copy.deepcopy(list(output)), *outputs],
                "tool_choice": "auto"}

    def is_stream(self, head: bytes) -> bool:
        return b'"response.' in head

    def accumulator(self) -> Accumulator:
        return _Answer()

    def answer(self, obj: Mapping[str, Any]) -> Outcome | None:
        output = obj.get("output")
        if not isinstance(output, list):
            return None
        rid = obj.get("id") if isinstance(obj.get("id"), str) else None
        return Outcome(api=self.name, response_id=rid, output=[i for i in output if isinstance(i, dict)],
                       usage=usage_from(USAGE, obj.get("usage"), obj.get("timings")))

    def previous_response(self, request: Mapping[str, Any]) -> str | None:
        previous = request.get("previous_response_id")
        return previous if isinstance(previous, str) else None

    def input_keys(self, request: Mapping[str, Any]) -> tuple[Key, ...]:
        keys: list[Key] = []
        if isinstance(request.get("instructions"), str):
            keys.append(("instructions", request["instructions"]))
        keys.extend(k for _, item in responses_input(request) if (k := fingerprint(item)) is not None)
        return tuple(keys)

    def output_keys(self, outcome: Outcome) -> tuple[Key, ...]:
        return tuple(k for item in outcome.output if (k := fingerprint(item)) is not None)

    def history_findings(self, request: Mapping[str, Any], conversation: Conversation,
                         elsewhere: Callable[[str], EmittedReasoning | None]) -> list[Finding]:
        return responses_findings(request, conversation, elsewhere)

    def remember(self, conversation: Conversation, exchange: Exchange, outcome: Outcome) -> None:
        remember_reasoning(conversation, exchange.number, outcome.output)

    def turn1_body(self, script: ReplayScript) -> dict[str, Any]:
        return {"max_output_tokens": script.max_tokens, "input": script.prompt, "tools": copy.deepcopy(script.tools),
                "tool_choice": "required"}

    def turn1_output(self, outcome: Outcome) -> dict[str, Any]:
        return {"items": [dict(item) for item in outcome.output]}

    def turn2_body(self, script: ReplayScript, turn1: Mapping[str, Any], family: str,
                   variant: str) -> dict[str, Any] | None:
        items = _replayed_items(turn1, variant, script.alter)
        if items is None:
            return None
        outputs = [{"type": "function_call_output", "call_id": item.get("call_id"),
                    "output": script.tool_output(str(item.get("name")), item.get("arguments"))}
                   for item in turn1.get("items") or [] if item.get("type") == "function_call"]
        given: list[dict[str, Any]] = [{"role": "user", "content": script.prompt}, *items, *outputs]
        if family == "new_user":
            given.append({"role": "user", "content": script.follow_up})
        return {"max_output_tokens": script.max_tokens, "tools": copy.deepcopy(script.tools),
                "tool_choice": "auto", "input": given}

    def reasoning_of(self, turn1: Mapping[str, Any]) -> str:
        texts = []
        for item in turn1.get("items") or []:
            if item.get("type") != "reasoning":
                continue
            for key in ("content", "summary"):
                for part in item.get(key) or []:
                    if isinstance(part, Mapping) and isinstance(part.get("text"), str):
                        texts.append(part["text"])
        return "".join(texts)

    def has_reasoning(self, turn1: Mapping[str, Any]) -> bool:
        return any(item.get("type") == "reasoning" for item in turn1.get("items") or [])

    def after_reasoning(self, turn1: Mapping[str, Any]) -> tuple[str, ...]:
        items = list(turn1.get("items") or [])
        last = max((i for i, item in enumerate(items) if item.get("type") == "reasoning"), default=-1)
        return tuple(str(item.get("type")) for item in items[last + 1:])

    def is_reasoning_delta(self, obj: Mapping[str, Any]) -> bool:
        return obj.get("type") in REASONING_DELTAS

    def stream_usage(self, obj: Mapping[str, Any]) -> Any:
        response = obj.get("response")
        if isinstance(response, dict) and obj.get("type") in TERMINAL_TYPES:
            return response.get("usage")
        return None
