"""Conversations in real traffic, and the replay checks (RPL) on the requests a client actually sent.

Theory of operation
-------------------
Pure: no sockets, no clock. ``sse-check proxy`` calls :meth:`Tracker.begin` with each request body it
forwards to ``/v1/responses`` or ``/v1/chat/completions`` and :meth:`Tracker.finish` with what came back
(an :class:`checker.live.outcome.Outcome`); the rule fixtures in ``captures/replay`` go through the same
two calls (:func:`run_conversation`).

**Which conversation a request belongs to.** Clients do not say, so the tracker works it out, in order:

1. ``previous_response_id`` naming a response seen earlier: that response's conversation (and it is the
   predecessor);
2. an explicit id: the body's ``conversation`` (a string or ``{"id": …}``), or one of the headers
   :data:`CONVERSATION_HEADERS` (codex sends ``session_id`` and ``conversation_id``); requests with the
   same id share a conversation, whatever their content;
3. otherwise, the history itself: a request *continues* an earlier exchange of the same API when it
   starts with everything that exchange sent and adds to it (its input items, compared by
   :func:`fingerprint`: role and text of messages, call ids of tool calls and their outputs; reasoning
   items are left out, since the rule drops them from earlier turns). Of all exchanges it continues, the
   predecessor is the one whose input plus output shares the longest prefix with the request (ties: the
   most recent). No such exchange: a new conversation.

So concurrent conversations stay apart: two sessions opening with the same first message are two
conversations, and their second requests are told apart by the answer each sends back (the longest shared
history). A retry of a later turn joins its conversation (it extends the turn before it); a retry of a
first request, and a client that rewrites earlier messages (compaction, a system prompt with the time in
it), start a new conversation unless the client sends an explicit id. Reasoning items and chat reasoning the
server emitted are remembered per conversation, with the response that emitted them.

**The checks** (rules in ``checker/rules/replay.py``):

* Responses: every reasoning item in ``input`` must equal, as a JSON value (null and absent alike), the
  item of the same id the server emitted in this conversation (RPL001); in a conversation the proxy has
  seen answered, an id it never emitted is RPL002; and a stateless request (no ``previous_response_id``)
  that sends back the function calls or message of the current turn (no user message after them) must
  send the reasoning item emitted with them too (RPL003).
* Chat: the expected ``messages`` are computed with :func:`checker.replay.dialects.to_openai_chat` from
  the request's messages and the reasoning the server emitted for each assistant message it recognises
  (by content and tool-call ids); missing (RPL004), different (RPL005) or earlier-turn (RPL006)
  reasoning is reported. The wire does not carry the case file's ``turn: false``, so every user message
  starts a turn here: that is why RPL006 is only info.
* Usage: each answer's cached prompt tokens against the predecessor's prompt (RPL007, and the cache
  table of :meth:`Tracker.cache_rows`).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from checker.findings import Finding, Position
from checker.http_checks import api_of
from checker.live.outcome import Api, Outcome, outcome_from_json
from checker.replay.dialects import HISTORY_ONLY_KEYS, ROLES, HistoryError, current_turn_start, to_openai_chat
from checker.rules import replay as rules

Key = tuple[str, ...]

# Headers that name a conversation or session (lower case; codex sends the last two).
CONVERSATION_HEADERS: tuple[str, ...] = ("x-conversation-id", "conversation-id", "x-session-id", "session-id",
                                         "conversation_id", "session_id")
# Memory bounds: a long-running proxy keeps this many conversations (least recently used dropped) and this
# many exchanges to match new requests against; an agent's busiest hour is far below either.
MAX_CONVERSATIONS = 512
MAX_EXCHANGES = 4096
# Below this many prompt tokens OpenAI caches nothing, so no reuse is expected (and none reported).
CACHE_MIN_PROMPT = 1024
_START = Position(line=1, byte=0)


# --- fingerprints -----------------------------------------------------------------------------------


def text_of(content: Any) -> str:
    """The text of a message's content: a string, or the text of its parts (images and files left out)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(part.get("text") if part.get("text") is not None else part.get("refusal") or "")
            for part in content if isinstance(part, Mapping)
        )
    return ""


def _list(value: Any) -> list[Any]:
    """``value`` if it is a JSON array, else no elements: requests and answers carry any JSON anywhere."""
    return value if isinstance(value, list) else []


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


def chat_fingerprints(message: Mapping[str, Any]) -> list[Key]:
    role = str(message.get("role"))
    if role == "tool":
        return [("out", str(message.get("tool_call_id")))]
    keys: list[Key] = [("msg", role, text_of(message.get("content")))]
    for call in _list(message.get("tool_calls")):
        if isinstance(call, Mapping):
            keys.append(("call", str(call.get("id"))))
    return keys


def chat_message_key(position: int, message: Mapping[str, Any]) -> Key:
    """An assistant message's identity for the reasoning it came with: its place in ``messages`` (a chat
    history only grows), its text and its tool-call ids."""
    return (str(position), *map("\x1f".join, chat_fingerprints(message)))


def responses_input(request: Mapping[str, Any]) -> list[tuple[int | None, Mapping[str, Any]]]:
    """(index in ``input``, item) pairs; a string input is one user message (index None)."""
    value = request.get("input")
    if isinstance(value, str):
        return [(None, {"type": "message", "role": "user", "content": value})]
    if isinstance(value, list):
        return [(i, item) for i, item in enumerate(value) if isinstance(item, Mapping)]
    return []


def input_keys(api: Api, request: Mapping[str, Any]) -> tuple[Key, ...]:
    keys: list[Key] = []
    if api == "responses":
        if isinstance(request.get("instructions"), str):
            keys.append(("instructions", request["instructions"]))
        keys.extend(k for _, item in responses_input(request) if (k := fingerprint(item)) is not None)
    else:
        for message in _list(request.get("messages")):
            if isinstance(message, Mapping):
                keys.extend(chat_fingerprints(message))
    return tuple(keys)


def output_keys(outcome: Outcome) -> tuple[Key, ...]:
    if outcome.api == "responses":
        return tuple(k for item in outcome.output if (k := fingerprint(item)) is not None)
    return tuple(k for message in outcome.output for k in chat_fingerprints(message))


def explicit_id(request: Mapping[str, Any], headers: Iterable[tuple[str, str]]) -> str | None:
    """The conversation id a client gave, if any (body ``conversation``, or a header)."""
    conversation = request.get("conversation")
    if isinstance(conversation, Mapping):
        conversation = conversation.get("id")
    if isinstance(conversation, str) and conversation:
        return f"conversation {conversation}"
    found = {name.lower(): value for name, value in headers}
    for name in CONVERSATION_HEADERS:
        if found.get(name):
            return f"{name} {found[name]}"
    return None


def _common_prefix(a: Sequence[Key], b: Sequence[Key]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


# --- the records ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EmittedReasoning:
    item: Mapping[str, Any]
    number: int  # the exchange (response) that emitted it
    companions: tuple[Key, ...]  # the items emitted with it (up to the next reasoning item)


@dataclass(frozen=True, slots=True)
class EmittedChat:
    text: str
    field: str
    number: int


@dataclass(slots=True)
class Conversation:
    id: str  # c1, c2, … in order of appearance
    label: str | None = None  # the explicit id it was named by, if any
    exchanges: list[Exchange] = field(default_factory=list)
    reasoning: dict[str, EmittedReasoning] = field(default_factory=dict)  # by item id
    chat: dict[Key, EmittedChat] = field(default_factory=dict)  # by chat_message_key
    answered: int = 0  # exchanges with an outcome


@dataclass(slots=True, kw_only=True)
class Exchange:
    number: int
    api: Api
    request: Mapping[str, Any]
    conversation: Conversation
    step: int  # 1 + the predecessor's step: the request's place in its conversation
    predecessor: Exchange | None
    keys: tuple[Key, ...]
    transcript: tuple[Key, ...] = ()  # keys, then the output's once the outcome is known
    outcome: Outcome | None = None

    @property
    def where(self) -> str:
        return f"{self.conversation.id}#{self.step}"


@dataclass(frozen=True, slots=True)
class CacheRow:
    """One answer's prompt-cache use, against its predecessor's prompt."""

    number: int
    conversation: str
    step: int
    prompt: int | None
    cached: int | None
    previous_prompt: int | None
    source: str

    @property
    def reuse(self) -> float | None:
        if self.cached is None or not self.previous_prompt:
            return None
        return self.cached / self.previous_prompt

    def as_dict(self) -> dict[str, Any]:
        reuse = self.reuse
        return {"number": self.number, "conversation": self.conversation, "step": self.step,
                "prompt_tokens": self.prompt, "cached_tokens": self.cached,
                "previous_prompt_tokens": self.previous_prompt,
                "reuse": round(reuse, 4) if reuse is not None else None, "source": self.source}


# --- the tracker -------------------------------------------------------------------------------------


class Tracker:
    """Conversations across requests; the RPL findings of each request and answer."""

    def __init__(self) -> None:
        self._conversations: OrderedDict[str, Conversation] = OrderedDict()
        self._named: dict[str, Conversation] = {}
        self._exchanges: list[Exchange] = []
        self._by_response: dict[str, Exchange] = {}
        self._next = 1
        self.cache: list[CacheRow] = []

    # -- a request ------------------------------------------------------------------------------------

    def begin(self, number: int, api: Api, request: Mapping[str, Any],
              headers: Iterable[tuple[str, str]] = ()) -> tuple[Exchange, list[Finding]]:
        """Place a request in its conversation; the findings about what it sends back."""
        keys = input_keys(api, request)
        conversation, predecessor = self._place(api, request, keys, explicit_id(request, headers))
        exchange = Exchange(number=number, api=api, request=request, conversation=conversation,
                            step=predecessor.step + 1 if predecessor else 1, predecessor=predecessor,
                            keys=keys, transcript=keys)
        conversation.exchanges.append(exchange)
        self._exchanges.append(exchange)
        if len(self._exchanges) > MAX_EXCHANGES:
            del self._exchanges[: len(self._exchanges) - MAX_EXCHANGES]
        if api == "responses":
            findings = responses_findings(request, conversation, self.emitted_anywhere)
        else:
            findings = chat_findings(request, conversation)
        return exchange, findings

    def _place(self, api: Api, request: Mapping[str, Any], keys: tuple[Key, ...],
               explicit: str | None) -> tuple[Conversation, Exchange | None]:
        previous = request.get("previous_response_id") if api == "responses" else None
        if isinstance(previous, str) and previous in self._by_response:
            before = self._by_response[previous]
            return self._touch(before.conversation), before
        if explicit is not None:
            conversation = self._named.get(explicit)
            if conversation is None:
                conversation = self._named[explicit] = self._new(label=explicit)
            candidates = [e for e in conversation.exchanges if e.api == api]
            predecessor = _best(candidates, keys) or (candidates[-1] if candidates else None)
            return self._touch(conversation), predecessor
        if isinstance(previous, str):  # a response from before the proxy started
            return self._new(label=f"previous_response_id {previous}"), None
        predecessor = _best([e for e in self._exchanges if e.api == api and e.conversation.label is None], keys)
        if predecessor is not None:
            return self._touch(predecessor.conversation), predecessor
        return self._new(), None

    def _new(self, label: str | None = None) -> Conversation:
        conversation = Conversation(id=f"c{self._next}", label=label)
        self._next += 1
        self._conversations[conversation.id] = conversation
        while len(self._conversations) > MAX_CONVERSATIONS:
            _, dropped = self._conversations.popitem(last=False)
            self._forget(dropped)
        return conversation

    def _touch(self, conversation: Conversation) -> Conversation:
        if conversation.id in self._conversations:
            self._conversations.move_to_end(conversation.id)
        return conversation

    def _forget(self, conversation: Conversation) -> None:
        if conversation.label is not None:
            self._named.pop(conversation.label, None)
        gone = set(map(id, conversation.exchanges))
        self._exchanges = [e for e in self._exchanges if id(e) not in gone]
        for rid in [rid for rid, e in self._by_response.items() if id(e) in gone]:
            del self._by_response[rid]

    # -- its answer -----------------------------------------------------------------------------------

    def finish(self, exchange: Exchange, outcome: Outcome | None) -> list[Finding]:
        """Record what the server answered (None: no usable answer); the findings about its cache use."""
        if outcome is None:
            return []
        exchange.outcome = outcome
        exchange.transcript = exchange.keys + output_keys(outcome)
        conversation = exchange.conversation
        conversation.answered += 1
        if outcome.response_id:
            self._by_response[outcome.response_id] = exchange
        if outcome.api == "responses":
            _remember_reasoning(conversation, exchange.number, outcome.output)
        else:
            messages = exchange.request.get("messages")
            position = len(messages) if isinstance(messages, list) else 0  # where the answer will be sent back
            for offset, message in enumerate(outcome.output):
                text = message.get(outcome.reasoning_field)
                conversation.chat[chat_message_key(position + offset, message)] = EmittedChat(
                    text=text if isinstance(text, str) else "", field=outcome.reasoning_field,
                    number=exchange.number)
        return self._cache(exchange, outcome)

    def _cache(self, exchange: Exchange, outcome: Outcome) -> list[Finding]:
        usage = outcome.usage
        if usage is None:
            return []
        before = exchange.predecessor
        previous = before.outcome.usage.prompt if before and before.outcome and before.outcome.usage else None
        self.cache.append(CacheRow(number=exchange.number, conversation=exchange.conversation.id,
                                   step=exchange.step, prompt=usage.prompt, cached=usage.cached,
                                   previous_prompt=previous, source=usage.source))
        if usage.cached is None or previous is None or previous < CACHE_MIN_PROMPT or usage.cached * 2 >= previous:
            return []
        percent = round(100 * usage.cached / previous)
        return [rules.PREFIX_CACHE_NOT_REUSED.finding(
            _START, cached=usage.cached, previous=previous, percent=percent,
            details={"cached_tokens": usage.cached, "previous_prompt_tokens": previous, "source": usage.source,
                     "predecessor": before.number if before else None})]

    def conversations(self) -> list[Conversation]:
        return list(self._conversations.values())

    def emitted_anywhere(self, ident: str) -> EmittedReasoning | None:
        """A reasoning item the server emitted in any remembered conversation (most recent first): a
        client whose conversation the heuristic split (say, after compacting its history) still sends
        back items of the first part."""
        for conversation in reversed(self._conversations.values()):
            found = conversation.reasoning.get(ident)
            if found is not None:
                return found
        return None


def _best(candidates: Sequence[Exchange], keys: tuple[Key, ...]) -> Exchange | None:
    """The exchange a request continues: it sent a proper prefix of ``keys``; longest shared history wins.

    Proper: a request that repeats another's input exactly (the same first question in two sessions)
    starts its own conversation; a retry of a later turn still extends the turn before it.
    """
    best, score = None, -1
    for exchange in reversed(candidates):
        sent = exchange.keys
        if not sent or len(keys) <= len(sent) or keys[: len(sent)] != sent:
            continue
        shared = _common_prefix(exchange.transcript, keys)
        if shared > score:
            best, score = exchange, shared
    return best


def _remember_reasoning(conversation: Conversation, number: int, output: Sequence[Mapping[str, Any]]) -> None:
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


# --- the checks ----------------------------------------------------------------------------------------


def _fmt(number: int) -> str:
    return f"{number:03d}"


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


def _nonempty(item: Mapping[str, Any]) -> bool:
    return bool(reasoning_text(item) or item.get("encrypted_content"))


def _pointer(index: int | None) -> str:
    return "/input" if index is None else f"/input/{index}"


def _nowhere(ident: str) -> EmittedReasoning | None:
    return None


def responses_findings(request: Mapping[str, Any], conversation: Conversation,
                       elsewhere: Callable[[str], EmittedReasoning | None] = _nowhere) -> list[Finding]:
    """RPL001-RPL003 for one Responses request in its conversation (as known before it is answered).

    ``elsewhere(id)`` finds a reasoning item emitted in another conversation: such an item is compared
    with what was emitted (RPL001), not reported as unknown."""
    found: list[Finding] = []
    items = responses_input(request)
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
                    _START, pointer=_pointer(index), id=shown, fields=", ".join(fields),
                    response=_fmt(match.number),
                    details={"id": shown, "fields": fields, "response": match.number}))
        elif conversation.answered:
            twin = by_text.get(text) if text else None
            hint = (f" (the server emitted the same text as {twin.item.get('id')} in response {_fmt(twin.number)})"
                    if twin is not None else "")
            shown = ident or "(no id)"
            found.append(rules.REASONING_ITEM_UNKNOWN.finding(
                _START, pointer=_pointer(index), id=shown, hint=hint,
                details={"id": shown, "same_text_as": twin.item.get("id") if twin else None}))
    if isinstance(request.get("previous_response_id"), str):
        return found  # the server keeps the earlier items: nothing of them has to be sent
    last_user = max((i if i is not None else -1 for i, item in items
                     if fingerprint(item) is not None and item.get("role") == "user"), default=-1)
    current = {fingerprint(item) for i, item in items if i is not None and i > last_user}
    for key, entry in emitted.items():
        ident = entry.item.get("id")
        if not entry.companions or not _nonempty(entry.item):
            continue
        if (isinstance(ident, str) and ident in sent_ids) or reasoning_text(entry.item) in sent_texts:
            continue
        if any(companion in current for companion in entry.companions):
            found.append(rules.REASONING_ITEM_MISSING.finding(
                _START, pointer="/input", id=ident or "(no id)", response=_fmt(entry.number),
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


def _sent_reasoning(message: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """(field, text) of the reasoning an assistant message carries, if any."""
    for name in ("reasoning_content", "reasoning"):
        value = message.get(name)
        if isinstance(value, str) and value:
            return name, value
    return None, None


def chat_findings(request: Mapping[str, Any], conversation: Conversation) -> list[Finding]:
    """RPL004-RPL006 for one chat request: what it sends against the case-file rule."""
    messages = request.get("messages")
    if not isinstance(messages, list) or not conversation.chat:
        return []
    history: list[dict[str, Any]] = []
    known: dict[int, EmittedChat] = {}
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping) or message.get("role") not in ROLES:
            return []  # not a history the reference can read (a legacy "function" role): nothing to check
        entry = {k: v for k, v in message.items() if k not in HISTORY_ONLY_KEYS}
        if message.get("role") == "assistant":
            emitted = conversation.chat.get(chat_message_key(index, message))
            if emitted is not None:
                entry["reasoning"] = emitted.text
                known[index] = emitted
        history.append(entry)
    try:
        expected = to_openai_chat(history)
    except HistoryError:
        return []
    last_user = current_turn_start(history)
    found: list[Finding] = []
    for index, emitted in known.items():
        want = expected[index].get("reasoning_content")
        name, sent = _sent_reasoning(messages[index])
        pointer = f"/messages/{index}"
        if want:
            if sent is None:
                found.append(rules.REASONING_CONTENT_MISSING.finding(
                    _START, pointer=pointer, index=index, response=_fmt(emitted.number),
                    details={"index": index, "response": emitted.number, "field": emitted.field}))
            elif sent != want:
                found.append(rules.REASONING_CONTENT_ALTERED.finding(
                    _START, pointer=pointer, index=index, field=name, response=_fmt(emitted.number),
                    details={"index": index, "response": emitted.number, "field": name}))
        elif sent is not None:
            if index < last_user:
                found.append(rules.REASONING_CONTENT_EARLIER_TURN.finding(
                    _START, pointer=pointer, index=index, user=last_user, field=name,
                    details={"index": index, "user": last_user, "field": name}))
            elif sent != emitted.text:
                found.append(rules.REASONING_CONTENT_ALTERED.finding(
                    _START, pointer=pointer, index=index, field=name, response=_fmt(emitted.number),
                    details={"index": index, "response": emitted.number, "field": name}))
    return found


# --- conversation fixtures (captures/replay) -------------------------------------------------------


def run_conversation(fixture: Mapping[str, Any]) -> list[list[Finding]]:
    """The RPL findings of each exchange of a conversation fixture, in order.

    A fixture (``captures/replay/*.conversation.json``) is ``{"about", "expect": [codes], "exchanges":
    [{"path", "headers"?: {name: value}, "request": {...}, "response": <the answer as a non-streamed JSON
    body: a Response object, or a chat completion>}]}``.
    """
    tracker = Tracker()
    out: list[list[Finding]] = []
    for number, exchange in enumerate(fixture.get("exchanges") or [], start=1):
        api = api_of(str(exchange.get("path", "/v1/responses")))
        if api is None:
            raise ValueError(f"exchange {number}: path {exchange.get('path')!r} is neither API")
        headers = [(str(k), str(v)) for k, v in (exchange.get("headers") or {}).items()]
        record, findings = tracker.begin(number, api, exchange.get("request") or {}, headers)
        response = exchange.get("response")
        outcome = outcome_from_json(api, response) if isinstance(response, Mapping) else None
        findings += tracker.finish(record, outcome)
        out.append(findings)
    return out
