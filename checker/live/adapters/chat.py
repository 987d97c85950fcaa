"""OpenAI Chat Completions' requests and answers (``POST …/chat/completions``).

The history is ``messages``; an answer is one assistant message, accumulated from the chunks' deltas
(``content``, ``reasoning_content`` or ``reasoning``, ``tool_calls`` by index); the usage counts are
``prompt_tokens`` / ``completion_tokens`` with their ``*_details``, in the chunk that has them.

The RPL checks of what a client sends back (rules in ``checker/rules/replay.py``): the expected ``messages``
are computed with :func:`checker.replay.dialects.to_openai_chat` from the request's messages and the
reasoning the server emitted for each assistant message it recognises (by content and tool-call ids);
missing (RPL004), different (RPL005) or earlier-turn (RPL006) reasoning is reported. The wire does not carry
the case file's ``turn: false``, so every user message starts a turn here: that is why RPL006 is only info.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from checker.findings import Finding
from checker.live.adapters.base import Ask, START, Accumulator, ReplayScript, RequestAdapter, response_number
from checker.live.answer import Outcome, UsageFields, usage_from
from checker.live.conversation import Conversation, EmittedChat, EmittedReasoning, Exchange, Key, json_list, text_of
from checker.replay.dialects import HISTORY_ONLY_KEYS, ROLES, HistoryError, current_turn_start, to_openai_chat
from checker.rules import replay as rules

USAGE = UsageFields(prompt="prompt_tokens", output="completion_tokens", prompt_details="prompt_tokens_details",
                    output_details="completion_tokens_details")
# Where servers put an assistant message's reasoning: DeepSeek and llama.cpp, then vLLM and Ollama.
REASONING_FIELDS = ("reasoning_content", "reasoning")


def chat_fingerprints(message: Mapping[str, Any]) -> list[Key]:
    role = str(message.get("role"))
    if role == "tool":
        return [("out", str(message.get("tool_call_id")))]
    keys: list[Key] = [("msg", role, text_of(message.get("content")))]
    for call in json_list(message.get("tool_calls")):
        if isinstance(call, Mapping):
            keys.append(("call", str(call.get("id"))))
    return keys


def chat_message_key(position: int, message: Mapping[str, Any]) -> Key:
    """An assistant message's identity for the reasoning it came with: its place in ``messages`` (a chat
    history only grows), its text and its tool-call ids."""
    return (str(position), *map("\x1f".join, chat_fingerprints(message)))


# --- answers -----------------------------------------------------------------------------------------


class _Answer(Accumulator):
    def __init__(self) -> None:
        self.id: str | None = None
        self.usage: Any = None
        self.timings: Any = None
        self.content: list[str] = []
        self.reasoning: list[str] = []
        self.reasoning_field = "reasoning_content"
        self.calls: dict[int, dict[str, Any]] = {}

    def event(self, obj: dict[str, Any]) -> None:
        if isinstance(obj.get("id"), str):
            self.id = obj["id"]
        if obj.get("usage") is not None:
            self.usage = obj["usage"]
        if obj.get("timings") is not None:
            self.timings = obj["timings"]
        choices = obj.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return
        delta = choices[0].get("delta")
        if not isinstance(delta, dict):
            return
        if isinstance(delta.get("content"), str):
            self.content.append(delta["content"])
        for name in REASONING_FIELDS:
            if isinstance(delta.get(name), str):
                self.reasoning.append(delta[name])
                self.reasoning_field = name
        calls = delta.get("tool_calls")
        for call in calls if isinstance(calls, list) else ():
            if isinstance(call, dict):
                self._call_delta(call)

    def _call_delta(self, call: dict[str, Any]) -> None:
        given = call.get("index")
        index = given if type(given) is int else len(self.calls)
        entry = self.calls.setdefault(index, {"id": None, "type": "function",
                                              "function": {"name": "", "arguments": ""}})
        if isinstance(call.get("id"), str):
            entry["id"] = call["id"]
        function = call.get("function")
        if isinstance(function, dict):
            if isinstance(function.get("name"), str):
                entry["function"]["name"] += function["name"]
            if isinstance(function.get("arguments"), str):
                entry["function"]["arguments"] += function["arguments"]

    def close(self) -> Outcome:
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self.content)}
        if self.reasoning:
            message[self.reasoning_field] = "".join(self.reasoning)
        if self.calls:
            message["tool_calls"] = [self.calls[i] for i in sorted(self.calls)]
        return Outcome(api=ChatAdapter.name, response_id=self.id, output=[message],
                       usage=usage_from(USAGE, self.usage, self.timings), reasoning_field=self.reasoning_field)


# --- the RPL checks ----------------------------------------------------------------------------------


def _sent_reasoning(message: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """(field, text) of the reasoning an assistant message carries, if any."""
    for name in REASONING_FIELDS:
        value = message.get(name)
        if isinstance(value, str) and value:
            return name, value
    return None, None


def _history(messages: list[Any], conversation: Conversation,
             ) -> tuple[list[dict[str, Any]], dict[int, EmittedChat]] | None:
    """The request's messages as a reference history (with the reasoning the server emitted for the assistant
    messages it recognises) and those messages' emitted reasoning; None when the reference cannot read it."""
    history: list[dict[str, Any]] = []
    known: dict[int, EmittedChat] = {}
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping) or message.get("role") not in ROLES:
            return None  # not a history the reference can read (a legacy "function" role): nothing to check
        entry = {k: v for k, v in message.items() if k not in HISTORY_ONLY_KEYS}
        if message.get("role") == "assistant":
            emitted = conversation.chat.get(chat_message_key(index, message))
            if emitted is not None:
                entry["reasoning"] = emitted.text
                known[index] = emitted
        history.append(entry)
    return history, known


def chat_findings(request: Mapping[str, Any], conversation: Conversation) -> list[Finding]:
    """RPL004-RPL006 for one chat request: what it sends against the case-file rule."""
    messages = request.get("messages")
    if not isinstance(messages, list) or not conversation.chat:
        return []
    read = _history(messages, conversation)
    if read is None:
        return []
    history, known = read
    try:
        expected = to_openai_chat(history)
    except HistoryError:
        return []
    last_user = current_turn_start(history)
    found: list[Finding] = []
    for index, emitted in known.items():
        finding = _judge(index, emitted, expected[index].get("reasoning_content"), messages[index], last_user)
        if finding is not None:
            found.append(finding)
    return found


def _judge(index: int, emitted: EmittedChat, want: Any, message: Mapping[str, Any], last_user: int) -> Finding | None:
    """RPL004-RPL006 for one assistant message the server answered: ``want`` is the reasoning the rule sends
    back (falsy: none), ``message`` what the client sent."""
    name, sent = _sent_reasoning(message)
    pointer = f"/messages/{index}"
    altered = (want and sent is not None and sent != want) or (
        not want and sent is not None and index >= last_user and sent != emitted.text)
    if want and sent is None:
        return rules.REASONING_CONTENT_MISSING.finding(
            START, pointer=pointer, index=index, response=response_number(emitted.number),
            details={"index": index, "response": emitted.number, "field": emitted.field})
    if altered:
        return rules.REASONING_CONTENT_ALTERED.finding(
            START, pointer=pointer, index=index, field=name, response=response_number(emitted.number),
            details={"index": index, "response": emitted.number, "field": name})
    if not want and sent is not None and index < last_user:
        return rules.REASONING_CONTENT_EARLIER_TURN.finding(
            START, pointer=pointer, index=index, user=last_user, field=name,
            details={"index": index, "user": last_user, "field": name})
    return None


# --- the adapter -------------------------------------------------------------------------------------


class ChatAdapter(RequestAdapter):
    name = "chat"
    aliases = ("openai-chat",)
    endpoint = "/chat/completions"
    usage_fields = USAGE
    reasoning_where = "reasoning_content or reasoning field"
    words = {"limit": "max_tokens", "cut": 'finish_reason "length"', "failed": "an error object",
             "entries": "messages", "history": "messages", "no_reasoning": "none asked for",
             "one_call": 'tool_choice "required", parallel_tool_calls false', "format": "response_format"}
    # Without it no usage chunk is sent, and the usage rules have nothing to check.
    stream_fields = {"stream_options": {"include_usage": True}}

    def scenario_body(self, ask: Ask) -> dict[str, Any]:
        # max_tokens rather than max_completion_tokens: what llama-server, vLLM and the gateways all read.
        # No reasoning asked is said by not asking: reasoning_effort "none" is refused by older models.
        body: dict[str, Any] = {} if ask.model is None else {"model": ask.model}
        body["messages"] = {"role": "user", "content": 42} if ask.malformed else \
            [{"role": "user", "content": ask.prompt}]
        if ask.tools:
            body["tools"] = [{"type": "function", "function": {k: tool[k] for k in ("name", "description",
                                                                                   "parameters") if k in tool}}
                             for tool in ask.tools]
        if ask.require_tool:
            body["tool_choice"] = "required"
        if ask.parallel is not None:
            body["parallel_tool_calls"] = ask.parallel
        if ask.reasoning not in (None, "none"):
            body["reasoning_effort"] = ask.reasoning
        if ask.answer_schema is not None:
            body["response_format"] = {"type": "json_schema", "json_schema": {
                "name": "answer", "strict": True, "schema": copy.deepcopy(dict(ask.answer_schema))}}
        body["max_tokens"] = ask.max_tokens
        return body

    def is_request(self, request: Mapping[str, Any]) -> bool:
        return "messages" in request

    def calls_in(self, output: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
        return [(str(call.get("id")), str((call.get("function") or {}).get("name")))
                for message in output for call in json_list(message.get("tool_calls")) if isinstance(call, Mapping)]

    def with_tool_results(self, body: Mapping[str, Any], output: Sequence[Mapping[str, Any]],
                          results: Sequence[tuple[str, str]]) -> dict[str, Any]:
        tools = [{"role": "tool", "tool_call_id": call_id, "content": text} for call_id, text in results]
        return {**copy.deepcopy(dict(body)), "tool_choice": "auto",
                "messages": [*copy.deepcopy(json_list(body.get("messages"))), *copy.deepcopy(list(output)), *tools]}

    def is_stream(self, head: bytes) -> bool:
        return b'"chat.completion.chunk"' in head

    def accumulator(self) -> Accumulator:
        return _Answer()

    def answer(self, obj: Mapping[str, Any]) -> Outcome | None:
        choices = obj.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
            return None
        message = choices[0].get("message")
        if not isinstance(message, Mapping):
            return None
        rid = obj.get("id") if isinstance(obj.get("id"), str) else None
        field_name = "reasoning" if message.get("reasoning_content") is None and message.get("reasoning") else \
            "reasoning_content"
        return Outcome(api=self.name, response_id=rid, output=[dict(message)],
                       usage=usage_from(USAGE, obj.get("usage"), obj.get("timings")), reasoning_field=field_name)

    def input_keys(self, request: Mapping[str, Any]) -> tuple[Key, ...]:
        return tuple(key for message in json_list(request.get("messages")) if isinstance(message, Mapping)
                     for key in chat_fingerprints(message))

    def output_keys(self, outcome: Outcome) -> tuple[Key, ...]:
        return tuple(k for message in outcome.output for k in chat_fingerprints(message))

    def history_findings(self, request: Mapping[str, Any], conversation: Conversation,
                         elsewhere: Callable[[str], EmittedReasoning | None]) -> list[Finding]:
        return chat_findings(request, conversation)

    def remember(self, conversation: Conversation, exchange: Exchange, outcome: Outcome) -> None:
        messages = exchange.request.get("messages")
        position = len(messages) if isinstance(messages, list) else 0  # where the answer will be sent back
        for offset, message in enumerate(outcome.output):
            text = message.get(outcome.reasoning_field)
            conversation.chat[chat_message_key(position + offset, message)] = EmittedChat(
                text=text if isinstance(text, str) else "", field=outcome.reasoning_field, number=exchange.number)

    # --- the live replay ----------------------------------------------------------------------------

    @staticmethod
    def _tools(script: ReplayScript) -> list[dict[str, Any]]:
        return [{"type": "function", "function": {k: tool[k] for k in ("name", "description", "parameters")}}
                for tool in script.tools]

    def turn1_body(self, script: ReplayScript) -> dict[str, Any]:
        return {"max_tokens": script.max_tokens, "messages": [{"role": "user", "content": script.prompt}],
                "tools": self._tools(script), "tool_choice": "required", "stream_options": {"include_usage": True}}

    def turn1_output(self, outcome: Outcome) -> dict[str, Any]:
        return {"message": dict(outcome.output[0]) if outcome.output else {}, "field": outcome.reasoning_field}

    def turn2_body(self, script: ReplayScript, turn1: Mapping[str, Any], family: str,
                   variant: str) -> dict[str, Any] | None:
        message = turn1.get("message") or {}
        name = str(turn1.get("field") or "reasoning_content")
        reasoning = message.get(name) if isinstance(message.get(name), str) else ""
        if variant == "dropped":
            reasoning = ""
        elif variant == "altered":
            reasoning = script.alter(reasoning) if reasoning else None
            if reasoning is None:
                return None
        calls = [copy.deepcopy(call) for call in message.get("tool_calls") or [] if isinstance(call, dict)]
        assistant: dict[str, Any] = {"role": "assistant", "content": message.get("content") or ""}
        if calls:
            assistant["tool_calls"] = calls
        if reasoning:
            assistant["reasoning"] = reasoning
        history: list[dict[str, Any]] = [{"role": "user", "content": script.prompt}, assistant]
        for call in calls:
            function = call.get("function") or {}
            history.append({"role": "tool", "tool_call_id": str(call.get("id") or ""),
                            "content": script.tool_output(str(function.get("name")), function.get("arguments"))})
        # The case-file rule: the reasoning goes back on the current turn's reply (the continue family) ...
        messages = to_openai_chat(history, field=name)
        if family == "new_user":
            # ... and a new user message ends that turn: the rule would now leave the reasoning out, but the
            # point is to see whether the template keeps it, so the messages stay as they are.
            messages.append({"role": "user", "content": script.follow_up})
        return {"max_tokens": script.max_tokens, "messages": messages, "tools": self._tools(script),
                "tool_choice": "auto", "stream_options": {"include_usage": True}}

    def reasoning_of(self, turn1: Mapping[str, Any]) -> str:
        message = turn1.get("message") or {}
        value = message.get(turn1.get("field") or "reasoning_content")
        return value if isinstance(value, str) else ""

    def has_reasoning(self, turn1: Mapping[str, Any]) -> bool:
        return bool(self.reasoning_of(turn1))

    def after_reasoning(self, turn1: Mapping[str, Any]) -> tuple[str, ...]:
        message = turn1.get("message") or {}
        kinds = ["message"] if message.get("content") else []
        return (*kinds, *["function_call"] * len(message.get("tool_calls") or []))

    def is_reasoning_delta(self, obj: Mapping[str, Any]) -> bool:
        choices = obj.get("choices")
        delta = choices[0].get("delta") if isinstance(choices, list) and choices and isinstance(
            choices[0], dict) else None
        return isinstance(delta, dict) and any(isinstance(delta.get(k), str) and delta[k] for k in REASONING_FIELDS)

    def stream_usage(self, obj: Mapping[str, Any]) -> Any:
        return obj.get("usage")
