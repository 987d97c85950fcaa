"""The Chat Completions wire vocabulary (docs/spec.md §6): what a chunk is and how it is named.

One module so that the machine, the rules, the effects and recognition agree on every name. A Chat
Completions stream has no event types: every event is a ``chat.completion.chunk`` object, ended by
``data: [DONE]``; what changes from chunk to chunk is the ``choices[]`` deltas.
"""

from __future__ import annotations

from typing import Any

NAME = "chat"
TITLE = "OpenAI Chat Completions"
ENDPOINTS: tuple[str, ...] = ("/chat/completions",)
CHUNK_OBJECT = "chat.completion.chunk"
# The one schema of a chunk and of the non-streamed answer (schemas/chat/, tools/gen_schemas.py).
SCHEMA_SET = "chat"
CHUNK_SCHEMA = "CreateChatCompletionStreamResponse"
COMPLETION_SCHEMA = "CreateChatCompletionResponse"

# Fields every chunk repeats with the first chunk's value (the description: "Each chunk has the same ID",
# "… the same timestamp"); system_fingerprint likewise names one backend configuration.
CONSTANT_FIELDS: tuple[str, ...] = ("id", "object", "created", "model", "system_fingerprint")
# Of those, the fields both SDKs take from the chunks after the first (openai-python's accumulator assigns every
# chunk's system_fingerprint to its snapshot, openai-node's assignOwnProperties copies every field a chunk
# carries): a value that first comes on a later chunk, after chunks that carried none or null (vLLM sends it on
# the last chunk only: captures/vllm), reaches both final completions as it was sent, so it is no change. The
# others, openai-python keeps from the first chunk.
GIVEN_LATER_FIELDS: frozenset[str] = frozenset({"system_fingerprint"})
# How a choice's end is named among a stream's terminals ("finish_reason stop").
FINISH_PREFIX = "finish_reason "
FINISH_REASONS = frozenset({"stop", "length", "tool_calls", "content_filter", "function_call"})
# finish_reason values that end a turn with calls sent (function_call: the deprecated single call).
CALL_FINISHES = frozenset({"tool_calls", "function_call"})
# The vendor reasoning fields of a delta (llama.cpp and vLLM: reasoning_content; vLLM >= 0.10, Ollama: reasoning).
REASONING_FIELDS: tuple[str, ...] = ("reasoning_content", "reasoning")
# The text fields of a delta that a client concatenates into the message.
TEXT_FIELDS: tuple[str, ...] = ("content", "refusal", *REASONING_FIELDS)
# The request fields that cap the completion (max_tokens is deprecated in favour of max_completion_tokens).
TOKEN_LIMITS: tuple[str, ...] = ("max_completion_tokens", "max_tokens")


def recognise(obj: dict[str, Any]) -> str | None:
    """Evidence that a first event object is a Chat Completions chunk, else None."""
    kind = obj.get("object")
    if kind == CHUNK_OBJECT:
        return f"object {CHUNK_OBJECT!r}"
    if "choices" in obj and "type" not in obj and kind != "text_completion":
        return "choices[] without a type"
    return None


def event_type(obj: dict[str, Any]) -> str | None:
    """What a chunk names itself: its ``object`` (a chunk has no ``type``)."""
    kind = obj.get("object")
    return kind if isinstance(kind, str) else None


def lane(obj: dict[str, Any]) -> str:
    """The report lane of a chunk: its one choice by index (``#0``, labelled "choice #0"), else ``response``, the
    lane of the completion's own chunks (usage, an error; a chunk that packs several choices is drawn there)."""
    choices = obj.get("choices")
    if isinstance(choices, list) and len(choices) == 1 and isinstance(choices[0], dict):
        index = choices[0].get("index")
        if type(index) is int:
            return f"#{index}"
    return "response"
