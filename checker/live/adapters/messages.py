"""Anthropic Messages' requests and answers (``POST …/v1/messages``).

The history is ``messages`` whose ``content`` is a string or a list of content blocks; an answer is one
assistant message whose content blocks are accumulated from the stream (``content_block_start`` then its
deltas: ``text_delta``, ``thinking_delta`` and ``signature_delta``, ``input_json_delta``); the usage counts
are ``input_tokens`` / ``output_tokens``, cached tokens in ``cache_read_input_tokens`` (folded into the
prompt count here, as the other dialects count them), split across ``message_start`` and ``message_delta``.

A thinking block goes back to the server with its ``signature`` as it came (Anthropic's extended thinking:
the signature is what lets the server trust the text): the proxy's history checks of that are
:mod:`checker.live.adapters.messages_history` (RPL008-RPL010); the live replay's turn 2 sends turn 1's blocks
back exact, drops the thinking, or alters one word of its text while keeping the signature.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from checker.findings import Finding
from checker.live.adapters import messages_history
from checker.live.adapters.base import Accumulator, Ask, ReplayScript, RequestAdapter
from checker.live.answer import Outcome, Usage, UsageFields
from checker.live.conversation import Conversation, EmittedReasoning, Exchange, Key, json_list, text_of

USAGE = UsageFields(prompt="input_tokens", output="output_tokens", prompt_details="input_tokens_details",
                    output_details="output_tokens_details")
API_VERSION = "2023-06-01"  # the anthropic-version header every request carries (the SDKs send this one)
# Anthropic's smallest thinking budget; max_tokens must exceed it, so asking to reason raises max_tokens.
THINKING_BUDGET = 1024
THINKING_TYPES = messages_history.THINKING_TYPES


def _int(value: Any) -> int | None:
    return value if type(value) is int and value >= 0 else None


def messages_usage(usage: Mapping[str, Any]) -> Usage | None:
    """Anthropic's counts as the live side's: the prompt is input plus cache reads and writes."""
    fresh, read = _int(usage.get("input_tokens")), _int(usage.get("cache_read_input_tokens"))
    written, output = _int(usage.get("cache_creation_input_tokens")), _int(usage.get("output_tokens"))
    if fresh is None and read is None and output is None:
        return None
    prompt = None if fresh is None else fresh + (read or 0) + (written or 0)
    return Usage(prompt=prompt, cached=read, output=output, source="usage", written=written)


def block_keys(role: str, block: Mapping[str, Any]) -> list[Key]:
    kind = block.get("type")
    if kind == "tool_use":
        return [("call", str(block.get("id")))]
    if kind == "tool_result":
        return [("out", str(block.get("tool_use_id")))]
    if kind == "text":
        return [("msg", role, str(block.get("text")))]
    if kind in THINKING_TYPES:
        return []  # thinking is what the checks compare, not what identifies a turn
    return [("block", role, str(kind))]  # an image, a document: there, whatever it holds


def message_keys(message: Mapping[str, Any]) -> list[Key]:
    """A message as keys: a string content and a list of one text block are the same message (the SDKs
    accept both, and a client may send its first message either way)."""
    role = str(message.get("role"))
    content = message.get("content")
    if isinstance(content, str):
        return [("msg", role, content)]
    keys: list[Key] = []
    for block in json_list(content):
        if isinstance(block, Mapping):
            keys.extend(block_keys(role, block))
    return keys or [("msg", role, text_of(content))]


class _Answer(Accumulator):
    def __init__(self) -> None:
        self.id: str | None = None
        self.usage: dict[str, Any] = {}
        self.blocks: dict[int, dict[str, Any]] = {}
        self.json: dict[int, list[str]] = {}

    def event(self, obj: dict[str, Any]) -> None:
        kind = obj.get("type")
        if kind == "message_start" and isinstance(obj.get("message"), dict):
            message = obj["message"]
            self.id = message.get("id") if isinstance(message.get("id"), str) else None
            if isinstance(message.get("usage"), dict):
                self.usage.update(message["usage"])
        elif kind == "message_delta" and isinstance(obj.get("usage"), dict):
            self.usage.update({k: v for k, v in obj["usage"].items() if v is not None})
        elif kind == "content_block_start" and isinstance(obj.get("content_block"), dict):
            given = obj.get("index")
            index = given if isinstance(given, int) else len(self.blocks)
            self.blocks[index] = copy.deepcopy(obj["content_block"])
        elif kind == "content_block_delta" and isinstance(obj.get("delta"), dict):
            self._delta(obj.get("index"), obj["delta"])

    def _delta(self, index: Any, delta: dict[str, Any]) -> None:
        block = self.blocks.get(index) if type(index) is int else None
        if block is None:
            return
        for kind, field in (("text_delta", "text"), ("thinking_delta", "thinking"), ("signature_delta", "signature")):
            if delta.get("type") == kind and isinstance(delta.get(field), str):
                block[field] = str(block.get(field) or "") + delta[field]
        if delta.get("type") == "input_json_delta" and isinstance(delta.get("partial_json"), str):
            self.json.setdefault(index, []).append(delta["partial_json"])

    def close(self) -> Outcome:
        for index, parts in self.json.items():
            try:
                self.blocks[index]["input"] = json.loads("".join(parts)) if "".join(parts).strip() else {}
            except json.JSONDecodeError:
                self.blocks[index]["input"] = "".join(parts)  # as received: the engine reports it
        content = [self.blocks[i] for i in sorted(self.blocks)]
        return Outcome(api=MessagesAdapter.name, response_id=self.id,
                       output=[{"role": "assistant", "content": content}], usage=messages_usage(self.usage))


def _thinking_text(content: Any) -> str:
    return "".join(str(b.get("thinking") or "") for b in json_list(content)
                   if isinstance(b, Mapping) and b.get("type") == "thinking")


class MessagesAdapter(RequestAdapter):
    name = "messages"
    aliases = ("anthropic",)
    endpoint = "/messages"
    usage_fields = USAGE
    reasoning_where = "thinking block"
    words = {"limit": "max_tokens", "cut": 'stop_reason "max_tokens"', "failed": "an error event",
             "entries": "messages", "history": "messages", "no_reasoning": "thinking disabled",
             "one_call": 'tool_choice "any", disable_parallel_tool_use', "format": "output_config.format"}
    request_headers = (("anthropic-version", API_VERSION),)
    sdk = "anthropic-sdk-python"
    usage_legend = ("input_tokens: every prompt token (Anthropic's input_tokens + cache_read_input_tokens + "
                    "cache_creation_input_tokens); cached_tokens: cache_read_input_tokens; cache_written: "
                    "cache_creation_input_tokens")

    def scenario_body(self, ask: Ask) -> dict[str, Any]:
        body: dict[str, Any] = {} if ask.model is None else {"model": ask.model}
        body["max_tokens"] = ask.max_tokens
        body["messages"] = {"role": "user", "content": 42} if ask.malformed else \
            [{"role": "user", "content": ask.prompt}]
        if ask.tools:
            body["tools"] = [{"name": t["name"], "description": t.get("description", ""),
                              "input_schema": t.get("parameters", {"type": "object"})} for t in ask.tools]
        if ask.require_tool:
            body["tool_choice"] = {"type": "any"}
            if ask.parallel is False:
                body["tool_choice"]["disable_parallel_tool_use"] = True
        if ask.reasoning == "none":
            body["thinking"] = {"type": "disabled"}
        elif ask.reasoning is not None and ask.max_tokens > 64 and not ask.require_tool:
            # A budget under max_tokens: a cut scenario (a few tokens) cannot ask for one, and Anthropic refuses
            # thinking with a forced tool; both leave it unsaid (a server that reasons by default still does).
            body["thinking"] = {"type": "enabled", "budget_tokens": THINKING_BUDGET}
            body["max_tokens"] = ask.max_tokens + THINKING_BUDGET
        if ask.answer_schema is not None:
            body["output_config"] = {"format": {"type": "json_schema",
                                                "schema": copy.deepcopy(dict(ask.answer_schema))}}
        return body

    def is_request(self, request: Mapping[str, Any]) -> bool:
        """Only what chat has not: a thinking setting, a top-level system, tools with input_schema, an object
        tool_choice, content blocks of Anthropic's kinds (a bare messages list is taken as chat's)."""
        if "messages" not in request:
            return False
        if any(k in request for k in ("thinking", "system", "stop_sequences", "anthropic_version", "output_config",
                                      "output_format")):
            return True
        tools = json_list(request.get("tools"))
        if any(isinstance(t, Mapping) and "input_schema" in t for t in tools):
            return True
        if isinstance(request.get("tool_choice"), Mapping) and request["tool_choice"].get("type") in (
                "any", "auto", "tool", "none"):
            return "function" not in request["tool_choice"]
        return any(isinstance(b, Mapping) and b.get("type") in ("tool_use", "tool_result", *THINKING_TYPES)
                   for m in json_list(request.get("messages")) if isinstance(m, Mapping)
                   for b in json_list(m.get("content")))

    def is_stream(self, head: bytes) -> bool:
        return b'"message_start"' in head or b"event: message_start" in head

    def calls_in(self, output: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
        return [(str(block.get("id")), str(block.get("name"))) for message in output
                for block in json_list(message.get("content"))
                if isinstance(block, Mapping) and block.get("type") == "tool_use"]

    def with_tool_results(self, body: Mapping[str, Any], output: Sequence[Mapping[str, Any]],
                          results: Sequence[tuple[str, str]]) -> dict[str, Any]:
        blocks = [{"type": "tool_result", "tool_use_id": call_id, "content": text} for call_id, text in results]
        messages = [*copy.deepcopy(json_list(body.get("messages"))), *copy.deepcopy(list(output)),
                    {"role": "user", "content": blocks}]
        return {**copy.deepcopy(dict(body)), "messages": messages, "tool_choice": {"type": "auto"}}

    def accumulator(self) -> Accumulator:
        return _Answer()

    def answer(self, obj: Mapping[str, Any]) -> Outcome | None:
        if obj.get("type") != "message" or not isinstance(obj.get("content"), list):
            return None
        rid = obj.get("id") if isinstance(obj.get("id"), str) else None
        usage = messages_usage(obj["usage"]) if isinstance(obj.get("usage"), Mapping) else None
        return Outcome(api=self.name, response_id=rid, output=[{"role": "assistant", "content": obj["content"]}],
                       usage=usage)

    def input_keys(self, request: Mapping[str, Any]) -> tuple[Key, ...]:
        keys: list[Key] = []
        if isinstance(request.get("system"), str):
            keys.append(("instructions", request["system"]))
        for message in json_list(request.get("messages")):
            if isinstance(message, Mapping):
                keys.extend(message_keys(message))
        return tuple(keys)

    def output_keys(self, outcome: Outcome) -> tuple[Key, ...]:
        return tuple(k for message in outcome.output for k in message_keys(message))

    def history_findings(self, request: Mapping[str, Any], conversation: Conversation,
                         elsewhere: Callable[[str], EmittedReasoning | None]) -> list[Finding]:
        return messages_history.thinking_findings(request, conversation)

    def remember(self, conversation: Conversation, exchange: Exchange, outcome: Outcome) -> None:
        messages = exchange.request.get("messages")
        position = len(messages) if isinstance(messages, list) else 0  # where the answer will be sent back
        for offset, message in enumerate(outcome.output):
            messages_history.remember(conversation, position + offset, message.get("content"), exchange.number)

    # --- the live replay ----------------------------------------------------------------------------

    @staticmethod
    def _tools(script: ReplayScript) -> list[dict[str, Any]]:
        return [{"name": t["name"], "description": t.get("description", ""),
                 "input_schema": t.get("parameters", {"type": "object"})} for t in script.tools]

    def _replay_body(self, script: ReplayScript, messages: list[dict[str, Any]], tool_choice: str,
                     ) -> dict[str, Any]:
        """A replay request as the anthropic SDKs' users write one: thinking on with its budget (max_tokens
        above it, as Anthropic requires), and a cache breakpoint on the last block, without which Anthropic
        caches nothing (llama-server ignores it: its cache is a prefix cache)."""
        last = messages[-1]
        if isinstance(last["content"], str):
            last["content"] = [{"type": "text", "text": last["content"]}]
        last["content"][-1] = {**last["content"][-1], "cache_control": {"type": "ephemeral"}}
        return {"max_tokens": script.max_tokens + script.thinking_budget,
                "thinking": {"type": "enabled", "budget_tokens": script.thinking_budget},
                "messages": messages, "tools": self._tools(script), "tool_choice": {"type": tool_choice}}

    def turn1_body(self, script: ReplayScript) -> dict[str, Any]:
        # A forced tool, as the other dialects' turn 1 ("required"): a model that must call a tool reasons
        # then calls one, which is what a continuation sends back.
        return self._replay_body(script, [{"role": "user", "content": script.prompt}], "any")

    def turn1_fallback(self, script: ReplayScript) -> dict[str, Any] | None:
        # Anthropic refuses a forced tool with thinking on (HTTP 400): "auto" is what it allows.
        return self._replay_body(script, [{"role": "user", "content": script.prompt}], "auto")

    def turn1_output(self, outcome: Outcome) -> dict[str, Any]:
        content = outcome.output[0].get("content") if outcome.output else []
        return {"content": copy.deepcopy(content if isinstance(content, list) else [])}

    @staticmethod
    def _sent_blocks(script: ReplayScript, turn1: Mapping[str, Any], variant: str) -> list[dict[str, Any]] | None:
        """Turn 1's content blocks as the variant sends them back: exact (thinking and redacted_thinking
        blocks as emitted, signature and data included: what the SDKs' ``message.content`` holds), dropped
        (no thinking block), altered (one word of the first thinking text changed, its signature kept: it no
        longer matches). None: nothing to alter."""
        blocks: list[dict[str, Any]] = []
        altered = False
        for block in turn1.get("content") or []:
            if not isinstance(block, dict) or (block.get("type") in THINKING_TYPES and variant == "dropped"):
                continue
            block = copy.deepcopy(block)
            if block.get("type") == "thinking" and variant == "altered" and not altered:
                changed = script.alter(str(block.get("thinking") or ""))
                if changed is not None:
                    block["thinking"], altered = changed, True
            blocks.append(block)
        return None if variant == "altered" and not altered else blocks

    def turn2_body(self, script: ReplayScript, turn1: Mapping[str, Any], family: str,
                   variant: str) -> dict[str, Any] | None:
        blocks = self._sent_blocks(script, turn1, variant)
        if blocks is None:
            return None
        results = [{"type": "tool_result", "tool_use_id": str(b.get("id")),
                    "content": script.tool_output(str(b.get("name")), json.dumps(b.get("input")))}
                   for b in blocks if b.get("type") == "tool_use"]
        if family == "continue" and not results:
            return None  # no tool loop to continue: it would end with the assistant message (a prefill)
        messages: list[dict[str, Any]] = [{"role": "user", "content": script.prompt},
                                          {"role": "assistant", "content": blocks}]
        follow = [{"type": "text", "text": script.follow_up}] if family == "new_user" else []
        if results or follow:
            messages.append({"role": "user", "content": [*results, *follow]})
        # No forced tool in turn 2 (as the other dialects'); Anthropic refuses one with thinking on anyway.
        return self._replay_body(script, messages, "auto")

    def reasoning_of(self, turn1: Mapping[str, Any]) -> str:
        return _thinking_text(turn1.get("content"))

    def has_reasoning(self, turn1: Mapping[str, Any]) -> bool:
        return any(isinstance(b, Mapping) and b.get("type") in THINKING_TYPES for b in turn1.get("content") or [])

    def after_reasoning(self, turn1: Mapping[str, Any]) -> tuple[str, ...]:
        blocks = [b for b in turn1.get("content") or [] if isinstance(b, Mapping)]
        last = max((i for i, b in enumerate(blocks) if b.get("type") in THINKING_TYPES), default=-1)
        names = {"tool_use": "function_call", "text": "message"}
        return tuple(names.get(str(b.get("type")), str(b.get("type"))) for b in blocks[last + 1:])

    def is_reasoning_delta(self, obj: Mapping[str, Any]) -> bool:
        delta = obj.get("delta")
        return obj.get("type") == "content_block_delta" and isinstance(delta, Mapping) and \
            delta.get("type") == "thinking_delta" and bool(delta.get("thinking"))

    def stream_usage(self, obj: Mapping[str, Any]) -> Any:
        if obj.get("type") == "message_start" and isinstance(obj.get("message"), Mapping):
            return obj["message"].get("usage")
        return obj.get("usage") if obj.get("type") == "message_delta" else None

    def usage_counts(self, usage: Any) -> Usage | None:
        return messages_usage(usage) if isinstance(usage, Mapping) else None
