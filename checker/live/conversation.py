"""The records of conversations in real traffic: what the tracker (checker.live.history) knows of each
conversation and exchange, and what the server emitted in it (per dialect, filled by its request adapter)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from checker.live.answer import Api, Outcome

# What identifies an item of a history (a message by role and text, a tool call by its id, ...).
Key = tuple[str, ...]


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


def json_list(value: Any) -> list[Any]:
    """``value`` if it is a JSON array, else no elements: requests and answers carry any JSON anywhere."""
    return value if isinstance(value, list) else []


def common_prefix(a: Sequence[Key], b: Sequence[Key]) -> int:
    """How many keys ``a`` and ``b`` share from the start."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


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


@dataclass(frozen=True, slots=True)
class EmittedThinking:
    """The thinking and redacted_thinking blocks of one Anthropic Messages answer, as streamed."""

    blocks: tuple[Mapping[str, Any], ...]
    number: int


@dataclass(slots=True)
class Conversation:
    id: str  # c1, c2, … in order of appearance
    label: str | None = None  # the explicit id it was named by, if any
    exchanges: list[Exchange] = field(default_factory=list)
    reasoning: dict[str, EmittedReasoning] = field(default_factory=dict)  # by item id
    chat: dict[Key, EmittedChat] = field(default_factory=dict)  # by chat_message_key
    thinking: dict[Key, EmittedThinking] = field(default_factory=dict)  # by messages_history.message_key
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
