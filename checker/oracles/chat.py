"""What a real client made of a Chat Completions stream, in one shape for every SDK (the oracles' answer).

The client matrix predicts; an oracle asks the client. A Chat Completions SDK's answer is a completion:
per choice a message (role, content, refusal, the vendor reasoning field, tool calls) and a finish
reason. :func:`completion_view` reduces an SDK's completion (as JSON) to what the comparison reads, and
:func:`expected_view` builds the same view from what sse-check's machine followed on the stream, so that
"ok" can be checked as "the client returned exactly what was streamed".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# The message fields compared (the vendor reasoning fields included: a client that keeps only a fragment
# of them has lost the reasoning).
MESSAGE_TEXTS = ("content", "refusal", "reasoning_content", "reasoning")


@dataclass(frozen=True, slots=True, kw_only=True)
class ChatOutcome:
    """What one client did with one chat capture: raised (``"Type: message"``) or returned ``completion``."""

    client: str
    version: str
    mode: str
    raised: str | None = None
    chunks: int = 0
    completion: dict[str, Any] | None = field(default=None)

    @property
    def summary(self) -> str:
        if self.raised is not None:
            return f"raises {self.raised}"
        if self.completion is None:
            return f"reads {self.chunks} chunk(s)"
        finishes = ", ".join(str(c.get("finish_reason")) for c in self.completion.get("choices", ()))
        return f"returns a completion ({finishes or 'no choices'})"

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> "ChatOutcome":
        completion = raw.get("completion")
        return cls(client=raw["client"], version=raw.get("version", "?"), mode=raw.get("mode", "?"),
                   raised=raw.get("raised"), chunks=int(raw.get("chunks") or 0),
                   completion=completion_view(completion) if isinstance(completion, dict) else None)


def _text(value: Any) -> Any:
    """An absent or empty text is no text: the SDKs differ only in which of the two they return."""
    return None if value in (None, "") else value


def completion_view(completion: dict[str, Any]) -> dict[str, Any]:
    """The compared part of a completion (an SDK's, as JSON): id, and per choice its message and finish."""
    choices = []
    for choice in completion.get("choices") or ():
        message = choice.get("message") or {}
        calls = [{"id": call.get("id"), "type": call.get("type"),
                  "name": (call.get("function") or {}).get("name"),
                  "arguments": (call.get("function") or {}).get("arguments")}
                 for call in message.get("tool_calls") or ()]
        choices.append({"index": choice.get("index"), "finish_reason": choice.get("finish_reason"),
                        "role": message.get("role"), **{k: _text(message.get(k)) for k in MESSAGE_TEXTS},
                        "tool_calls": calls})
    return {"id": completion.get("id"), "model": completion.get("model"), "created": completion.get("created"),
            "system_fingerprint": completion.get("system_fingerprint"), "usage": _usage(completion.get("usage")),
            "choices": choices}


def _usage(usage: Any) -> Any:
    if not isinstance(usage, dict):
        return None
    return {k: usage.get(k) for k in ("prompt_tokens", "completion_tokens", "total_tokens")}


def expected_view(first: dict[str, Any], usage: dict[str, Any] | None,
                  choices: tuple[dict[str, Any], ...]) -> dict[str, Any]:
    """The view of what the stream carried: the first chunk's identity, the usage chunk's usage, the machine's
    choices with their texts kept."""
    view = []
    for choice in choices:
        calls = [{k: call.get(k) for k in ("id", "type", "name", "arguments")} for call in choice["tool_calls"]]
        view.append({"index": choice["index"], "finish_reason": choice["finish_reason"], "role": choice["role"],
                     **{k: _text(choice.get(k)) for k in MESSAGE_TEXTS}, "tool_calls": calls})
    return {"id": first.get("id"), "model": first.get("model"), "created": first.get("created"),
            "system_fingerprint": first.get("system_fingerprint"), "usage": _usage(usage), "choices": view}


def differences(got: dict[str, Any], want: dict[str, Any]) -> list[str]:
    """Where a client's completion differs from the stream's, one short phrase each (empty: the same)."""
    found = []
    for key in ("id", "model", "created", "system_fingerprint", "usage"):
        if got.get(key) != want.get(key):
            found.append(f"{key} {_clip(got.get(key))} (streamed {_clip(want.get(key))})")
    got_choices, want_choices = got.get("choices", []), want.get("choices", [])
    if len(got_choices) != len(want_choices):
        found.append(f"{len(got_choices)} choice(s) (streamed {len(want_choices)})")
    for mine, theirs in zip(got_choices, want_choices, strict=False):
        for key, value in theirs.items():
            if mine.get(key) != value:
                found.append(f"choice {theirs.get('index')} {key} {_clip(mine.get(key))} (streamed {_clip(value)})")
    return found


def _clip(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:79] + "…"
