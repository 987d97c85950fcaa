"""The reference: a history in, the request messages of one dialect out.

Pure functions: no I/O, no clock, inputs never mutated (every value in the
output is a fresh copy).

The rule (docs/spec.md §5, ``cases/reasoning-replay.json``)
---------------------------------------------------
A user message *starts a turn* unless it has ``"turn": false`` (a job's note,
a team message delivered at a step boundary). The *current turn* is every
message after the last turn-starting user message. Only the assistant
messages of the current turn send their reasoning back; earlier turns' replies
go without it. If the history ends with a turn-starting user message, nothing
is sent. If the history has no turn-starting user message at all (it opens
with the assistant, or holds only ``turn: false`` notes), the whole history is
the current turn: the conversation started the turn, and servers that insist on
reasoning inside a tool loop (DeepSeek, Anthropic) reject a request without it.

The history
-----------
A list of messages, in order. Every dialect reads the same keys:

``role``
    ``user``, ``assistant`` or ``tool`` (``system`` and ``developer`` pass
    through in ``openai-chat`` and ``responses``; they never start a turn).
``content``
    The text (or content parts/blocks, passed through unchanged).
``turn`` (user only)
    ``false`` for a delivery that does not start a turn; absent or ``true``
    starts one. Never appears in any output.
``tool_calls`` (assistant) / ``tool_call_id`` (tool)
    In the OpenAI chat shape: ``[{"id", "type": "function", "function":
    {"name", "arguments"}}]``; ``arguments`` is a JSON string (an object is
    accepted too).
``reasoning`` (assistant)
    The reasoning text as received; absent, ``null`` or ``""`` means none.
    ``reasoning_content`` is read as an alias when ``reasoning`` is absent, so a
    message stored as a llama.cpp/DeepSeek chat response returned it works.
``thinking`` (assistant, Anthropic)
    The Anthropic blocks exactly as received, in order:
    ``{"type": "thinking", "thinking": str, "signature": str}`` and
    ``{"type": "redacted_thinking", "data": str}``. Preferred over
    ``reasoning`` by the ``anthropic`` dialect, because Anthropic's API only
    accepts thinking that comes back with its signature.
``reasoning_items`` (assistant, Responses)
    The Responses API reasoning output items exactly as received
    (``{"type": "reasoning", "id", "summary", "content"?,
    "encrypted_content"?}``). Preferred over ``reasoning`` by the
    ``responses`` dialect.

``turn``, ``reasoning``, ``reasoning_content``, ``thinking`` and
``reasoning_items`` are history-only keys: a dialect writes reasoning in its own
shape and only where the rule says so. Every other key passes through.

The dialects
------------
``openai-chat``
    The messages as given minus the history-only keys; a current-turn assistant
    message with non-empty reasoning gets ``reasoning_content`` (``field=
    "reasoning"`` for vLLM and Ollama). Tool calls and ids unchanged.
``anthropic``
    Messages API shape. An assistant message's ``content`` is a list of blocks:
    thinking blocks first (current turn only; signatures and ``redacted_thinking``
    kept, a thinking block with empty text but a signature kept, one with
    neither text nor signature dropped), then ``text`` (if the content is not
    empty), then one ``tool_use`` per tool call (``input`` parsed from
    ``arguments``). Consecutive ``tool`` messages become one user message of
    ``tool_result`` blocks, as Anthropic requires for parallel calls. A user
    message's content passes unchanged. Without a ``thinking`` list, non-empty
    ``reasoning`` becomes one unsigned thinking block (enough for servers that do
    not check signatures, e.g. llama.cpp's ``/v1/messages``; Anthropic's own API
    rejects it).
``responses``
    Responses API ``input`` items: user (and system/developer) messages as
    ``{"type": "message", "role", "content"}``; an assistant message as its
    reasoning items (current turn only, replayed verbatim: same ``id``,
    ``summary``, ``content``, ``encrypted_content``), then
    ``{"type": "message", "role": "assistant", "content"}`` if the content is not
    empty, then one ``function_call`` item per tool call; a tool message as a
    ``function_call_output``. Without ``reasoning_items``, non-empty
    ``reasoning`` becomes ``{"type": "reasoning", "summary": [], "content":
    [{"type": "reasoning_text", "text": …}]}`` (no ``id``: none can be invented).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

Message = dict[str, Any]
History = Sequence[Mapping[str, Any]]

ROLES: Final = frozenset({"user", "assistant", "tool", "system", "developer"})
FIELDS: Final = ("reasoning_content", "reasoning")
DEFAULT_FIELD: Final = "reasoning_content"
HISTORY_ONLY_KEYS: Final = frozenset({"turn", "reasoning", "reasoning_content", "thinking", "reasoning_items"})
THINKING_TYPES: Final = frozenset({"thinking", "redacted_thinking"})


class HistoryError(ValueError):
    """A history that no dialect can build from; the message names the message index."""


# --- the history -------------------------------------------------------------


def _where(index: int, message: Mapping[str, Any]) -> str:
    role = message.get("role")
    return f"message {index} ({role})" if isinstance(role, str) else f"message {index}"


def validate_history(history: object) -> list[Mapping[str, Any]]:
    """Check the keys every dialect reads; return the history as a list.

    Raises :class:`HistoryError` naming the first bad message. Dialect-specific
    needs (a ``tool_call_id`` for Anthropic, say) are checked when building.
    """
    if not isinstance(history, list):
        raise HistoryError(f"the history must be a list of messages, not {_type_name(history)}")
    for index, message in enumerate(history):
        if not isinstance(message, Mapping):
            raise HistoryError(f"message {index} must be an object, not {_type_name(message)}")
        where = _where(index, message)
        role = message.get("role")
        if role not in ROLES:
            raise HistoryError(f"{where}: role must be one of {', '.join(sorted(ROLES))}")
        if "turn" in message and not isinstance(message["turn"], bool):
            raise HistoryError(f"{where}: turn must be true or false, not {message['turn']!r}")
        for key in ("reasoning", "reasoning_content"):
            if message.get(key) is not None and not isinstance(message[key], str):
                raise HistoryError(f"{where}: {key} must be a string, not {_type_name(message[key])}")
        if message.get("thinking") is not None:
            _check_thinking(where, message["thinking"])
        if message.get("reasoning_items") is not None:
            _check_reasoning_items(where, message["reasoning_items"])
        if message.get("tool_calls") is not None and not isinstance(message["tool_calls"], list):
            raise HistoryError(f"{where}: tool_calls must be a list")
    return list(history)


def _check_thinking(where: str, blocks: object) -> None:
    if not isinstance(blocks, list):
        raise HistoryError(f"{where}: thinking must be a list of thinking/redacted_thinking blocks")
    for n, block in enumerate(blocks):
        if not isinstance(block, Mapping) or block.get("type") not in THINKING_TYPES:
            raise HistoryError(f"{where}: thinking[{n}] must be a thinking or redacted_thinking block")
        if block["type"] == "thinking":
            if not isinstance(block.get("thinking"), str):
                raise HistoryError(f"{where}: thinking[{n}].thinking must be a string")
            if block.get("signature") is not None and not isinstance(block["signature"], str):
                raise HistoryError(f"{where}: thinking[{n}].signature must be a string")
        elif not isinstance(block.get("data"), str):
            raise HistoryError(f"{where}: thinking[{n}].data must be a string")


def _check_reasoning_items(where: str, items: object) -> None:
    if not isinstance(items, list):
        raise HistoryError(f"{where}: reasoning_items must be a list of Responses reasoning items")
    for n, item in enumerate(items):
        if not isinstance(item, Mapping) or item.get("type") != "reasoning":
            raise HistoryError(f'{where}: reasoning_items[{n}] must be an object with "type": "reasoning"')


def starts_turn(message: Mapping[str, Any]) -> bool:
    """A user message starts a turn unless it says ``"turn": false``."""
    return message.get("role") == "user" and message.get("turn", True) is not False


def current_turn_start(history: History) -> int:
    """Index of the last turn-starting user message; -1 if there is none.

    Every message after this index belongs to the current turn (with -1, the
    whole history does).
    """
    for index in range(len(history) - 1, -1, -1):
        if starts_turn(history[index]):
            return index
    return -1


def replay_indices(history: History) -> frozenset[int]:
    """Indices of the assistant messages whose reasoning is sent back (if they have any)."""
    start = current_turn_start(history)
    return frozenset(
        index for index in range(start + 1, len(history)) if history[index].get("role") == "assistant"
    )


def stored_reasoning(message: Mapping[str, Any]) -> str:
    """The reasoning text an assistant message came with ('' for none)."""
    value = message.get("reasoning")
    if value is None:
        value = message.get("reasoning_content")
    return value if isinstance(value, str) else ""


# --- openai-chat --------------------------------------------------------------


def to_openai_chat(history: History, *, field: str = DEFAULT_FIELD) -> list[Message]:
    """The OpenAI chat ``messages``: reasoning as ``field`` on the current turn's replies."""
    if field not in FIELDS:
        raise HistoryError(f"unknown reasoning field {field!r} (choose from {', '.join(FIELDS)})")
    history = validate_history(list(history))
    carriers = replay_indices(history)
    out: list[Message] = []
    for index, message in enumerate(history):
        reasoning = stored_reasoning(message) if index in carriers else ""
        built: Message = {}
        for key, value in message.items():
            if key in HISTORY_ONLY_KEYS:
                continue
            built[key] = copy.deepcopy(value)
            if key == "content" and reasoning:
                built[field] = reasoning
        if reasoning and field not in built:
            built[field] = reasoning
        out.append(built)
    return out


# --- anthropic ----------------------------------------------------------------


def _thinking_blocks(message: Mapping[str, Any]) -> list[Message]:
    blocks = message.get("thinking")
    if blocks is None:
        text = stored_reasoning(message)
        return [{"type": "thinking", "thinking": text}] if text else []
    kept: list[Message] = []
    for block in blocks:
        if block["type"] == "thinking" and not block["thinking"] and not block.get("signature"):
            continue  # nothing to send: no text, nothing signed
        kept.append(copy.deepcopy(dict(block)))
    return kept


def _function(where: str, n: int, call: object) -> tuple[str, str, Any]:
    """(id, name, arguments) of an OpenAI-shaped tool call."""
    if not isinstance(call, Mapping):
        raise HistoryError(f"{where}: tool_calls[{n}] must be an object")
    function = call.get("function")
    if not isinstance(call.get("id"), str) or not isinstance(function, Mapping) or not isinstance(
        function.get("name"), str
    ):
        raise HistoryError(f'{where}: tool_calls[{n}] needs "id" and "function": {{"name", "arguments"}}')
    return call["id"], function["name"], function.get("arguments", "{}")


def _tool_use(where: str, n: int, call: object) -> Message:
    call_id, name, arguments = _function(where, n, call)
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError as exc:
            raise HistoryError(f"{where}: tool_calls[{n}].function.arguments is not JSON ({exc})") from None
    if not isinstance(arguments, Mapping):
        raise HistoryError(f"{where}: tool_calls[{n}].function.arguments must be a JSON object")
    return {"type": "tool_use", "id": call_id, "name": name, "input": copy.deepcopy(dict(arguments))}


def _tool_call_id(where: str, message: Mapping[str, Any]) -> str:
    call_id = message.get("tool_call_id")
    if not isinstance(call_id, str):
        raise HistoryError(f"{where}: a tool message needs its tool_call_id")
    return call_id


def to_anthropic(history: History) -> list[Message]:
    """The Anthropic Messages ``messages``: thinking blocks first on the current turn's replies."""
    history = validate_history(list(history))
    carriers = replay_indices(history)
    out: list[Message] = []
    previous_role: str | None = None
    for index, message in enumerate(history):
        where = _where(index, message)
        role = message["role"]
        content = message.get("content")
        if role in ("system", "developer"):
            raise HistoryError(f"{where}: the anthropic dialect takes the system prompt outside the messages")
        if role == "user":
            out.append({"role": "user", "content": copy.deepcopy(content)})
        elif role == "tool":
            block = {"type": "tool_result", "tool_use_id": _tool_call_id(where, message),
                     "content": copy.deepcopy(content)}
            if previous_role == "tool":
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
        else:
            blocks = _thinking_blocks(message) if index in carriers else []
            if isinstance(content, str):
                if content:
                    blocks.append({"type": "text", "text": content})
            elif isinstance(content, list):
                blocks.extend(copy.deepcopy(content))
            elif content is not None:
                raise HistoryError(f"{where}: content must be a string or a list of blocks")
            blocks.extend(_tool_use(where, n, call) for n, call in enumerate(message.get("tool_calls") or []))
            out.append({"role": "assistant", "content": blocks})
        previous_role = role
    return out


# --- responses ----------------------------------------------------------------


def _reasoning_items(message: Mapping[str, Any]) -> list[Message]:
    items = message.get("reasoning_items")
    if items is None:
        text = stored_reasoning(message)
        return [{"type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": text}]}] if text else []
    return [copy.deepcopy(dict(item)) for item in items]


def to_responses(history: History) -> list[Message]:
    """The Responses API ``input`` items: reasoning items replayed verbatim in the current turn."""
    history = validate_history(list(history))
    carriers = replay_indices(history)
    out: list[Message] = []
    for index, message in enumerate(history):
        where = _where(index, message)
        role = message["role"]
        content = copy.deepcopy(message.get("content"))
        if role == "tool":
            out.append({"type": "function_call_output", "call_id": _tool_call_id(where, message),
                        "output": content if content is not None else ""})
        elif role != "assistant":
            out.append({"type": "message", "role": role, "content": content})
        else:
            if index in carriers:
                out.extend(_reasoning_items(message))
            if content:
                out.append({"type": "message", "role": "assistant", "content": content})
            for n, call in enumerate(message.get("tool_calls") or []):
                call_id, name, arguments = _function(where, n, call)
                if not isinstance(arguments, str):
                    arguments = json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))
                out.append({"type": "function_call", "call_id": call_id, "name": name, "arguments": arguments})
    return out


# --- the registry -------------------------------------------------------------

DIALECTS: Final[dict[str, Callable[[History], list[Message]]]] = {
    "openai-chat": to_openai_chat,
    "anthropic": to_anthropic,
    "responses": to_responses,
}


def build(dialect: str, history: History, *, field: str = DEFAULT_FIELD) -> list[Message]:
    """The request messages of ``dialect`` for ``history`` (``field`` only matters for openai-chat)."""
    if dialect == "openai-chat":
        return to_openai_chat(history, field=field)
    try:
        builder = DIALECTS[dialect]
    except KeyError:
        raise HistoryError(f"unknown dialect {dialect!r} (choose from {', '.join(DIALECTS)})") from None
    return builder(history)


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number",
            float: "a number"}.get(type(value), type(value).__name__)
