"""Conversations in real traffic, and the replay checks (RPL) on the requests a client actually sent.

Theory of operation
-------------------
Pure: no sockets, no clock. ``sse-check proxy`` calls :meth:`Tracker.begin` with each request body it
forwards to ``/v1/responses``, ``/v1/chat/completions`` or ``/v1/messages`` and :meth:`Tracker.finish` with
what came back (an :class:`checker.live.outcome.Outcome`); the rule fixtures in ``captures/replay`` go
through the same two calls (:func:`run_conversation`).

**Which conversation a request belongs to.** Clients do not say, so the tracker works it out, in order:

1. ``previous_response_id`` naming a response seen earlier: that response's conversation (and it is the
   predecessor);
2. an explicit id: the body's ``conversation`` (a string or ``{"id": …}``), or one of the headers
   :data:`CONVERSATION_HEADERS` (codex sends ``session_id`` and ``conversation_id``); requests with the
   same id share a conversation, whatever their content;
3. otherwise, the history itself: a request *continues* an earlier exchange of the same API when it
   starts with everything that exchange sent and adds to it (its history's keys, by the adapter: role and
   text of messages, call ids of tool calls and their outputs; reasoning items are left out, since the
   rule drops them from earlier turns). Of all exchanges it continues, the
   predecessor is the one whose input plus output shares the longest prefix with the request (ties: the
   most recent). No such exchange: a new conversation.

So concurrent conversations stay apart: two sessions opening with the same first message are two
conversations, and their second requests are told apart by the answer each sends back (the longest shared
history). A retry of a later turn joins its conversation (it extends the turn before it); a retry of a
first request, and a client that rewrites earlier messages (compaction, a system prompt with the time in
it), start a new conversation unless the client sends an explicit id. Reasoning items, chat reasoning and
Messages thinking blocks the server emitted are remembered per conversation, with the response that emitted
them.

**The checks** (rules in ``checker/rules/replay.py``): what a request sends back of the reasoning the server
emitted is checked by its dialect's request adapter (:mod:`checker.live.adapters`: RPL001-RPL003 for
Responses, RPL004-RPL006 for chat, RPL008-RPL010 for Anthropic Messages' thinking blocks), which also says
what a history's keys are and what an answer leaves to remember. Here, for every dialect: each answer's cached prompt tokens against the predecessor's prompt
(RPL007, and the cache table :attr:`Tracker.cache`).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from checker.findings import Finding, Position
from checker.live import adapters
from checker.live.answer import Api, Outcome
from checker.live.conversation import CacheRow, Conversation, EmittedReasoning, Exchange, Key, common_prefix
from checker.live.outcome import outcome_from_json
from checker.rules import replay as rules

__all__ = ["CONVERSATION_HEADERS", "CacheRow", "Conversation", "Exchange", "Tracker", "explicit_id",
           "run_conversation"]

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
        adapter = adapters.get(api)
        keys = adapter.input_keys(request)
        conversation, predecessor = self._place(api, request, keys, explicit_id(request, headers))
        exchange = Exchange(number=number, api=api, request=request, conversation=conversation,
                            step=predecessor.step + 1 if predecessor else 1, predecessor=predecessor,
                            keys=keys, transcript=keys)
        conversation.exchanges.append(exchange)
        self._exchanges.append(exchange)
        if len(self._exchanges) > MAX_EXCHANGES:
            del self._exchanges[: len(self._exchanges) - MAX_EXCHANGES]
        return exchange, adapter.history_findings(request, conversation, self.emitted_anywhere)

    def _place(self, api: Api, request: Mapping[str, Any], keys: tuple[Key, ...],
               explicit: str | None) -> tuple[Conversation, Exchange | None]:
        previous = adapters.get(api).previous_response(request)
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
        adapter = adapters.get(outcome.api)
        exchange.transcript = exchange.keys + adapter.output_keys(outcome)
        conversation = exchange.conversation
        conversation.answered += 1
        if outcome.response_id:
            self._by_response[outcome.response_id] = exchange
        adapter.remember(conversation, exchange, outcome)
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
        shared = common_prefix(exchange.transcript, keys)
        if shared > score:
            best, score = exchange, shared
    return best


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
        adapter = adapters.for_path(str(exchange.get("path", "/v1/responses")))
        if adapter is None:
            raise ValueError(f"exchange {number}: path {exchange.get('path')!r} is no dialect's endpoint")
        api = adapter.name
        headers = [(str(k), str(v)) for k, v in (exchange.get("headers") or {}).items()]
        record, findings = tracker.begin(number, api, exchange.get("request") or {}, headers)
        response = exchange.get("response")
        outcome = outcome_from_json(api, response) if isinstance(response, Mapping) else None
        findings += tracker.finish(record, outcome)
        out.append(findings)
    return out
