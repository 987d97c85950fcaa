"""What a Chat Completions chunk says, piece by piece (``Dialect.pieces``), for ``sse-check diff`` and the timelines.

A chunk has no event type: what matters is what its choices' deltas carry. Each choice is a lane ("choice 0"),
and each tool call of a choice, by its ``index``, a lane of its own ("choice 0 tool call 1"), so that a diff of
two builds says "`reasoning_content` disappeared from choice 0" or "choice 0 tool call 0's `start` now arrives
after its `arguments`" instead of "a chunk is new". Text is abstracted away: a run of content fragments is one
``content`` step, however many chunks it took. The usage chunk, an ``{"error": …}`` object and ``[DONE]`` (the
engine's) belong to the completion as a whole.
"""

from __future__ import annotations

from typing import Any

from checker.dialects.base import Piece, Unit
from checker.dialects.chat import vocabulary as vocab

# What a delta may carry besides text fields, and is read apart (the rest, vendor extensions, by their key).
_STRUCTURED = frozenset({"role", "tool_calls", "function_call"})
# The identity fields of a tool call fragment: the first fragment of an index carries them.
_CALL_IDENTITY = ("id", "type")


def choice_unit(index: Any) -> Unit:
    """A choice's lane: named by its ``index`` ("choice ?" when it has none)."""
    shown = index if type(index) is int else "?"
    return Unit(None, index if type(index) is int else None, "choice", name=f"choice {shown}")


def pieces(obj: dict[str, Any]) -> list[Piece]:
    """Every piece of a chunk, choice by choice in their order in the chunk, then its usage."""
    out: list[Piece] = []
    if "error" in obj and obj.get("error") is not None:
        out.append(Piece(None, "error", "error"))
    choices = obj.get("choices")
    if isinstance(choices, list):
        for choice in choices:
            if isinstance(choice, dict):
                out.extend(_choice(choice))
            else:
                out.append(Piece(None, "(choice not an object)", "other"))
    if obj.get("usage") is not None:
        out.append(Piece(None, "usage", "lifecycle"))
    if not out:
        out.append(Piece(None, "(no choices)" if not isinstance(choices, list) else "(empty chunk)", "other"))
    return out


def _choice(choice: dict[str, Any]) -> list[Piece]:
    index = choice.get("index")
    unit = choice_unit(index)
    out: list[Piece] = []
    delta = choice.get("delta")
    if isinstance(delta, dict):
        if delta.get("role") is not None:
            out.append(Piece(unit, "role", "added"))
        for key, value in delta.items():
            if key in _STRUCTURED or value is None or value == "":
                continue
            # Text fields and string extensions stream as fragments; anything else is a landmark.
            out.append(Piece(unit, key, "delta" if isinstance(value, str) else "other"))
        out.extend(_calls(unit, delta))
    elif delta is not None:
        out.append(Piece(unit, "(delta not an object)", "other"))
    finish = choice.get("finish_reason")
    if finish is not None:
        out.append(Piece(unit, f"{vocab.FINISH_PREFIX}{finish}", "done"))
    if not out:
        # An empty delta before the finish (some servers send one as a keep-alive).
        out.append(Piece(unit, "(empty delta)", "keepalive"))
    return out


def _calls(choice: Unit, delta: dict[str, Any]) -> list[Piece]:
    out: list[Piece] = []
    calls = delta.get("tool_calls")
    if isinstance(calls, list):
        for call in calls:
            if isinstance(call, dict):
                out.extend(_call(choice, call.get("index"), call, "tool call"))
            else:
                out.append(Piece(choice, "(tool call not an object)", "other"))
    elif calls is not None:
        out.append(Piece(choice, "(tool_calls not a list)", "other"))
    legacy = delta.get("function_call")
    if isinstance(legacy, dict):
        out.extend(_call(choice, None, legacy, "function call"))
    return out


def _call(choice: Unit, index: Any, call: dict[str, Any], word: str) -> list[Piece]:
    """A tool call fragment: ``start`` when it carries the call's identity (id, type or name), then its
    ``arguments`` fragment (``arguments (not a string)`` when a server sends an object)."""
    shown = "" if word == "function call" else f" {index if type(index) is int else '?'}"
    unit = Unit(None, index if type(index) is int else None, "tool_call", name=f"{choice.name} {word}{shown}")
    function = call.get("function") if word == "tool call" else call
    if not isinstance(function, dict):
        function = {}
    out: list[Piece] = []
    if any(call.get(key) is not None for key in _CALL_IDENTITY) or function.get("name") is not None:
        out.append(Piece(unit, "start", "part"))  # drawn in its choice's lane, as a part of it
    arguments = function.get("arguments")
    if isinstance(arguments, str):
        if arguments:
            out.append(Piece(unit, "arguments", "delta"))
    elif arguments is not None:
        out.append(Piece(unit, "arguments (not a string)", "other"))
    if not out:
        out.append(Piece(unit, "(empty fragment)", "keepalive"))
    return out
