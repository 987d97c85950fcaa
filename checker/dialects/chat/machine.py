"""The Chat Completions machine: one stream's state, fed parsed chunks (docs/spec.md §6).

It follows what the clients build from the chunks: per choice the role, the text of each delta field
(content, refusal, the vendor reasoning field), the tool calls joined by index, and the finish reason;
per stream the identity of the first chunk and the usage chunk. The engine owns the framing (the SSE
decoder, JSON, ``[DONE]`` and what follows it); the machine owns everything a chunk says.

``try_fast`` is the hot path of an ordinary content chunk (one choice, text deltas only, nothing that
could break a rule): it either takes the chunk whole or leaves the state untouched, so the full path
(``handle``) gives identical findings; ``run_spec`` offers the engine the run of such chunks that follows
(both in checker/dialects/chat/fast_path.py). tests/test_chat_corpus.py checks both paths on every capture.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from checker.dialects.base import ItemSummary, StreamSummary
from checker.dialects.chat import fast_path
from checker.dialects.chat import vocabulary as vocab
from checker.dialects.chat.message_fields import (
    late_usage_findings, message_finding, note_message, reasoning_findings, resent,
)
from checker.dialects.chat.schema_findings import chunk_schema_findings, preamble
from checker.findings import Finding, Position
from checker.rules import chat as rules


@dataclass(slots=True)
class ToolCall:
    """One tool call of a choice, as its fragments built it."""

    index: int
    id: str | None
    type: str | None
    name: str | None
    at: Position
    fragments: list[str] = field(default_factory=list)
    length: int = 0  # characters of arguments so far
    bad_arguments: bool = False  # a non-string fragment was seen

    @property
    def arguments(self) -> str:
        return "".join(self.fragments)

    def as_dict(self) -> dict[str, Any]:
        return {"index": self.index, "id": self.id, "type": self.type, "name": self.name,
                "arguments": self.arguments}


@dataclass(slots=True)
class Choice:
    """One choice's accumulated message."""

    index: int
    deltas: int = 0
    role: str | None = None
    texts: dict[str, list[str]] = field(default_factory=dict)  # delta field -> fragments (with keep_texts)
    lengths: dict[str, int] = field(default_factory=dict)  # delta field -> characters
    calls: dict[int, ToolCall] = field(default_factory=dict)
    finish: str | None = None
    finish_at: Position | None = None
    last_finish: str | None = None  # what the clients end with: they keep the last finish_reason
    first_event: int | None = None  # the index of the event that opened the choice
    # CHT029: the chunks whose choice carried `message`, the first one's position, and of the last one whether
    # its tool_calls was null and what the deltas had built before it (openai-node puts it over its snapshot)
    messages: int = 0
    message_at: Position | None = None
    # CHT025, reported at the end: per vendor reasoning field, where it began and its first fragment's length
    reasoning_at: dict[str, tuple[Position, int]] = field(default_factory=dict)
    message_calls_null: bool = False
    built_before_message: bool = False
    calls_before_message: bool = False
    calls_after_message: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {"index": self.index, "role": self.role, "finish_reason": self.finish,
                **{name: "".join(parts) for name, parts in self.texts.items()},
                "tool_calls": [call.as_dict() for _, call in sorted(self.calls.items())]}


class ChatMachine:
    """One Chat Completions stream. ``request`` is the recorded request body (n, max tokens, usage)."""

    def __init__(self, *, request: dict[str, Any] | None = None, keep_texts: bool = False,
                 schema_set: Any = None, known_types: Any = None) -> None:
        if schema_set is None:
            from checker.schemas import load_schema_set

            schema_set = load_schema_set(vocab.SCHEMA_SET)
        self._schemas = schema_set
        self.request = request if isinstance(request, dict) else {}
        self.keep_texts = keep_texts
        self.terminated = False  # an error object ended the completion
        self.errored = False
        self.first: dict[str, Any] | None = None
        self.choices: dict[int, Choice] = {}
        self.usage: dict[str, Any] | None = None
        self.usage_at: Position | None = None
        self.chunks = 0
        # CONSTANT_FIELDS name -> [first differing position, its value, chunks that differ, the last value]
        self._changed: dict[str, list[Any]] = {}
        # The first chunk's identity, as the hot path compares it; None while the hot path may not be taken
        # (before the first chunk; after the usage chunk or a changed identity, every chunk is a finding's).
        self._fast_identity: tuple[Any, ...] | None = None
        # Chunks after the usage chunk (CHT020, reported at the end) and the usage each SDK ends with.
        self._after_usage: list[tuple[Position, str]] = []
        self._usage_kept: list[dict[str, Any] | None] = [None, None]
        n = self.request.get("n")
        self._n = n if type(n) is int and n > 0 else None

    # -- the hot path -----------------------------------------------------------

    # The hot path and the run it may start (checker/dialects/chat/fast_path.py), bound as methods.
    try_fast = fast_path.try_fast
    run_spec = fast_path.run_spec

    def _append(self, state: Choice, name: str, value: str) -> None:
        state.lengths[name] = state.lengths.get(name, 0) + len(value)
        if self.keep_texts:
            state.texts.setdefault(name, []).append(value)

    # -- the full path ------------------------------------------------------------

    def handle(self, obj: dict[str, Any], pos: Position) -> list[Finding]:
        out: list[Finding] = []
        self.chunks += 1
        error = obj.get("error")
        if error:
            detail = _dump(error)
            out.append(rules.ERROR_OBJECT.finding(pos, detail=detail if len(detail) <= 120 else detail[:119] + "…"))
            self.errored = self.terminated = True
            return out
        usage = obj.get("usage")
        choices = obj.get("choices")
        listed = choices if type(choices) is list else []
        empty = type(choices) is list and not choices and not isinstance(usage, dict)
        if obj.get("object") != vocab.CHUNK_OBJECT:
            # The engine validates a chunk by the schema its `object` names; one that names none is checked here.
            out.extend(chunk_schema_findings(self._schemas.validate_object(vocab.CHUNK_SCHEMA, obj), pos))
        if empty and "prompt_filter_results" in obj:  # Azure's preamble: nothing in it for a client to lose
            out.extend(preamble(rules.EMPTY_CHUNK.finding(pos)))
            out[:] = [preamble(f)[0] if f.code == "CHT002" else f for f in out]
            return out
        if not empty:  # an empty chunk (Azure's prompt filter results: id "", object "") names no completion
            self._identity(obj, pos, out)
        if self.usage_at is not None:
            what = "" if not listed else f" (with {len(listed)} choice(s))"
            self._after_usage.append((pos, what))
            self._usage_kept[0] = usage if isinstance(usage, dict) else None  # openai-python: the last chunk's
            if "usage" in obj:  # openai-node copies the chunk's own fields: an absent usage keeps the earlier
                self._usage_kept[1] = usage if isinstance(usage, dict) else None
        if isinstance(usage, dict):
            self._usage(usage, listed, pos, out)
        elif empty:
            out.append(rules.EMPTY_CHUNK.finding(pos))
        for choice in listed:
            if isinstance(choice, dict):
                self._choice(choice, pos, out)
        return out

    def _identity(self, obj: dict[str, Any], pos: Position, out: list[Finding]) -> None:
        """Record the first chunk's identity; a later difference is reported at the end (CHT001), when it is
        known whether the last chunk still differs (openai-node's final completion has the last chunk's)."""
        first = self.first
        if first is None:
            self.first = {name: obj.get(name) for name in vocab.CONSTANT_FIELDS}
            self._fast_identity = tuple(self.first.values())
            return
        for name in vocab.CONSTANT_FIELDS:
            if name in obj:
                value = obj[name]
                change = self._changed.get(name)
                if value is not None and first.get(name) is None and change is None \
                        and name in vocab.GIVEN_LATER_FIELDS:
                    first[name] = value  # the first value given: what a later chunk must repeat
                    self._fast_identity = None
                    continue
                if value != first.get(name):
                    if change is None:
                        self._changed[name] = [pos, value, 1, value]
                        self._fast_identity = None
                    else:
                        change[2] += 1
                        change[3] = value
                elif change is not None:
                    change[3] = value

    def _identity_findings(self, out: list[Finding]) -> None:
        first = self.first or {}
        for name in vocab.CONSTANT_FIELDS:
            change = self._changed.get(name)
            if change is None:
                continue
            pos, after, count, last = change
            details = {"field": name, "before": _plain(first.get(name)), "after": _plain(after), "chunks": count,
                       "last": _plain(last), "last_differs": last != first.get(name)}
            rule = rules.CREATED_CHANGED if name == "created" else rules.IDENTITY_CHANGED
            out.append(rule.finding(pos, details=details, field=name, after=_short(after),
                                    before=_short(first.get(name)), count=count))

    def _usage(self, usage: dict[str, Any], choices: list[Any], pos: Position, out: list[Finding]) -> None:
        self.usage, self.usage_at = usage, pos
        self._fast_identity = None
        if choices:
            out.append(rules.USAGE_WITH_CHOICES.finding(pos, count=len(choices)))
        for problem in _usage_problems(usage):
            out.append(rules.USAGE_TOTALS.finding(pos, problem=problem))

    def _choice(self, choice: dict[str, Any], pos: Position, out: list[Finding]) -> None:
        index = choice.get("index")
        state = self._choice_state(index, pos, out)
        if state is None:
            return
        message = choice.get("message")
        if isinstance(message, dict):
            note_message(state, message, pos)
        delta = choice.get("delta")
        delta = delta if isinstance(delta, dict) else {}
        state.deltas += 1
        finished = state.finish
        role = delta.get("role")
        if state.deltas == 1:
            state.role = role if isinstance(role, str) else None
            if state.role is None:
                out.append(rules.ROLE_MISSING.finding(pos, index=index))
        elif role is not None:
            change = "" if role == state.role else f" (first {state.role!r})"
            out.append(rules.ROLE_REPEATED.finding(pos, index=index, role=_short(role), change=change))
        for name in vocab.TEXT_FIELDS:
            value = delta.get(name)
            if type(value) is not str or not value:
                continue
            if finished is not None:
                out.append(rules.AFTER_FINISH.finding(pos, index=index, what=f"{name} text", finish=finished))
            if name in vocab.REASONING_FIELDS and name not in state.lengths:
                state.reasoning_at[name] = (pos, len(value))
            self._append(state, name, value)
        calls = delta.get("tool_calls")
        if isinstance(calls, list) and calls:
            state.calls_after_message = True
            if finished is not None:
                out.append(rules.AFTER_FINISH.finding(pos, index=index, what="a tool-call fragment", finish=finished))
            for fragment in calls:
                self._fragment(state, fragment, pos, out)
        reason = choice.get("finish_reason")
        if isinstance(reason, str) and reason:  # another type is the schema's finding (CHT002)
            state.last_finish = reason
            if finished is None:
                state.finish, state.finish_at = reason, pos
                self._finished(state, pos, out)
            else:
                out.append(rules.FINISH_REPEATED.finding(pos, index=index, finish=_short(reason), first=finished))

    def _choice_state(self, index: Any, pos: Position, out: list[Finding]) -> Choice | None:
        if type(index) is not int:
            out.append(rules.CHOICE_INDEX.finding(pos, choice=_short(index), problem="not an integer"))
            return None
        state = self.choices.get(index)
        if state is not None:
            return state
        problem = None
        if index < 0:
            problem = "negative"
        elif self._n is not None and index >= self._n:
            problem = f"not below the request's n ({self._n})"
        elif index != len(self.choices):
            problem = f"skips to {index} with {len(self.choices)} choice(s) so far"
        if problem is not None:
            out.append(rules.CHOICE_INDEX.finding(pos, choice=index, problem=problem))
            if index < 0:
                return None
        state = self.choices[index] = Choice(index, first_event=pos.event_index)
        return state

    def _fragment(self, state: Choice, fragment: Any, pos: Position, out: list[Finding]) -> None:
        if not isinstance(fragment, dict):
            return  # the schema finding says what it is
        at = fragment.get("index")
        if type(at) is not int:
            got = "none" if at is None else f"{_short(at)}"
            out.append(rules.TOOL_INDEX_MISSING.finding(pos, index=state.index, value=got))
            return
        function = fragment.get("function")
        function = function if isinstance(function, dict) else {}
        ident = {"id": _named(fragment.get("id")), "type": _named(fragment.get("type")),
                 "function.name": _named(function.get("name"))}
        call = state.calls.get(at)
        if call is None:
            call = state.calls[at] = ToolCall(at, ident["id"], ident["type"], ident["function.name"], pos)
            missing = [name for name, value in ident.items() if value is None]
            if missing:
                out.append(rules.TOOL_START_INCOMPLETE.finding(pos, index=state.index, call=at,
                                                               missing=" or ".join(missing)))
            self._duplicate_id(state, call, pos, out)
        else:
            if "type" in fragment and fragment["type"] is None and call.type is not None:
                out.append(rules.TOOL_TYPE_NULL.finding(pos, index=state.index, call=at))
            new_call = ident["id"] is not None and call.id is not None and ident["id"] != call.id
            again = "" if new_call else resent(fragment, function, call)  # a new call at the index: CHT015
            if again:
                out.append(rules.TOOL_IDENTITY_RESENT.finding(pos, index=state.index, call=at, fields=again))
            self._identity_again(state, call, ident, pos, out)
        self._arguments(state, call, function.get("arguments"), pos, out)

    def _duplicate_id(self, state: Choice, call: ToolCall, pos: Position, out: list[Finding]) -> None:
        if call.id is None:
            return
        for other in state.calls.values():
            if other is not call and other.id == call.id:
                out.append(rules.TOOL_ID_DUPLICATE.finding(pos, index=state.index, call=call.index, id=call.id,
                                                           first_call=other.index))
                return

    def _identity_again(self, state: Choice, call: ToolCall, ident: dict[str, str | None], pos: Position,
                        out: list[Finding]) -> None:
        new_id, new_name = ident["id"], ident["function.name"]
        if new_id is not None and new_name is not None and call.id is not None and new_id != call.id \
                and new_name != call.name:
            out.append(rules.TOOL_INDEX_SHARED.finding(pos, index=state.index, call=call.index, name=new_name,
                                                       id=new_id, other=call.name))
            return
        for name, value in ident.items():
            before = getattr(call, "name" if name == "function.name" else name)
            if value is None:
                continue
            if before is None:
                setattr(call, "name" if name == "function.name" else name, value)
            elif value != before:
                out.append(rules.TOOL_IDENTITY_CHANGED.finding(pos, index=state.index, call=call.index, field=name,
                                                               before=before, after=value))
            elif name != "type":  # openai-python replaces `type` (accumulate_delta), it concatenates the rest
                out.append(rules.TOOL_IDENTITY_REPEATED.finding(pos, index=state.index, call=call.index, field=name,
                                                                value=value))

    def _arguments(self, state: Choice, call: ToolCall, value: Any, pos: Position, out: list[Finding]) -> None:
        if value is None:
            return
        if type(value) is not str:
            call.bad_arguments = True
            out.append(rules.ARGUMENTS_NOT_STRING.finding(pos, index=state.index, call=call.index,
                                                          kind=_json_kind(value)))
            return
        if call.length >= 2 and len(value) >= call.length and value.startswith(call.arguments):
            out.append(rules.ARGUMENTS_REPEATED.finding(pos, index=state.index, call=call.index))
        call.fragments.append(value)
        call.length += len(value)

    def _finished(self, state: Choice, pos: Position, out: list[Finding]) -> None:
        """A choice's finish_reason arrived: what must hold of the choice now."""
        reason = state.finish
        if reason in vocab.CALL_FINISHES and not state.calls:
            out.append(rules.FINISH_NOT_TOOL_CALLS.finding(pos, index=state.index, finish=reason,
                                                           problem="without any tool call"))
        elif reason == "stop" and state.calls:
            out.append(rules.FINISH_NOT_TOOL_CALLS.finding(
                pos, index=state.index, finish=reason, problem=f"after {len(state.calls)} tool call(s)"))
        self._check_arguments(state, pos, out)

    def _check_arguments(self, state: Choice, pos: Position, out: list[Finding]) -> None:
        if state.finish == "length":
            return  # the token limit cut the call: its finish_reason says so, as OpenAI's own streams do
        for call in state.calls.values():
            if call.bad_arguments:
                continue
            text = call.arguments
            try:
                orjson.loads(text)
            except orjson.JSONDecodeError as exc:
                error = "empty" if not text.strip() else str(exc).split(":", 1)[0]
                out.append(rules.ARGUMENTS_INVALID.finding(pos, index=state.index, call=call.index,
                                                           name=call.name or "?", error=error))

    # -- the end --------------------------------------------------------------------

    def finish(self, end: Position) -> list[Finding]:
        out: list[Finding] = []
        self._identity_findings(out)
        out.extend(late_usage_findings(self._after_usage, self.usage, self._usage_kept))
        for state in self.choices.values():
            out.extend(reasoning_findings(state))
            if state.message_at is not None:
                out.append(message_finding(state, state.message_at))
        if self.errored or self.first is None:
            return out
        for state in self.choices.values():
            if state.finish is None:
                out.append(rules.FINISH_MISSING.finding(end, index=state.index))
                self._check_arguments(state, end, out)
        self._length_checks(end, out)
        options = self.request.get("stream_options")
        if isinstance(options, dict) and options.get("include_usage") is True and self.usage is None:
            out.append(rules.USAGE_MISSING.finding(end))
        return out

    def _length_checks(self, end: Position, out: list[Finding]) -> None:
        """finish_reason against the request's token limit, where the usage says how many were used."""
        limit = next((self.request[k] for k in vocab.TOKEN_LIMITS if type(self.request.get(k)) is int), None)
        used = (self.usage or {}).get("completion_tokens")
        if limit is None or type(used) is not int or len(self.choices) != 1:
            return
        (state,) = self.choices.values()
        at = self.usage_at or end
        if state.finish == "stop" and used >= limit:
            out.append(rules.FINISH_LENGTH.finding(at, index=state.index, finish="stop",
                                                   problem=f"the completion used the whole limit ({used} of "
                                                           f"{limit} tokens)"))
        elif state.finish == "length" and used < limit:
            out.append(rules.FINISH_LENGTH.finding(at, index=state.index, finish="length",
                                                   problem=f"only {used} of the {limit} tokens allowed were used"))

    def summary(self) -> StreamSummary:
        """Per choice an item (``output_index`` its index, done once finished); the terminals are the choices'
        final finish reasons (the last one each sent, which is what the clients keep), as "finish_reason stop"
        (reports say the stream was "ended by finish_reason stop")."""
        ordered = [self.choices[i] for i in sorted(self.choices)]
        finishes = tuple(f"{vocab.FINISH_PREFIX}{state.last_finish}" for state in ordered
                         if state.last_finish is not None)
        return StreamSummary(
            terminal=finishes[0] if finishes else None,
            terminals=finishes,
            response_id=(self.first or {}).get("id"),
            truncated=self.truncated,
            items=tuple(ItemSummary(id=None, type="choice", output_index=state.index, done=state.finish is not None,
                                    added_at=state.first_event,
                                    parts=(*(name for name, length in state.lengths.items() if length),
                                           *(("tool_calls",) if state.calls else ())))
                        for state in ordered),
            texts=[_report_item(state) for state in ordered] if self.keep_texts else None,
        )

    def choice_texts(self) -> list[dict[str, Any]]:
        """Per choice what it accumulated: role, finish_reason, each text field joined, the tool calls."""
        return [self.choices[i].as_dict() for i in sorted(self.choices)]

    @property
    def truncated(self) -> bool:
        return any(state.finish == "length" for state in self.choices.values())


def _report_item(state: Choice) -> dict[str, Any]:
    """A choice as the reports' text view shows an item: its text fields as parts, each call as a part."""
    parts = [{"index": n, "type": name, "text": "".join(fragments)}
             for n, (name, fragments) in enumerate(state.texts.items())]
    parts += [{"index": len(parts) + n, "type": f"tool call {call.name or '?'} ({call.id or 'no id'})",
               "text": call.arguments} for n, (_, call) in enumerate(sorted(state.calls.items()))]
    return {"id": None, "type": "choice", "output_index": state.index, "done": state.finish is not None,
            "finish_reason": state.finish, "content": parts}


def _dump(value: Any) -> str:
    """Compact JSON of a received value (the standard library for what orjson refuses: an integer past 64 bits)."""
    try:
        return orjson.dumps(value).decode("utf-8", "replace")
    except TypeError:
        import json

        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


def _named(value: Any) -> str | None:
    """An identity field's value; an empty string names nothing (both SDKs skip it)."""
    return value if isinstance(value, str) and value else None


def _short(value: Any) -> Any:
    if isinstance(value, str) and len(value) > 60:
        return value[:59] + "…"
    return value if isinstance(value, (str, int, float, bool)) or value is None else _json_kind(value)


def _plain(value: Any) -> Any:
    return value if isinstance(value, (str, int, float, bool)) or value is None else _json_kind(value)


def _json_kind(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", int: "a number", float: "a number",
            bool: "a boolean", type(None): "null"}.get(type(value), type(value).__name__)


def _usage_problems(usage: dict[str, Any]) -> list[str]:
    prompt, completion, total = (usage.get(k) for k in ("prompt_tokens", "completion_tokens", "total_tokens"))
    problems = []
    if type(prompt) is int and type(completion) is int and type(total) is int and total != prompt + completion:
        problems.append(f"total_tokens {total} is not prompt_tokens {prompt} + completion_tokens {completion}")
    for details, part, whole, whole_name in (("completion_tokens_details", "reasoning_tokens", completion,
                                              "completion_tokens"),
                                             ("prompt_tokens_details", "cached_tokens", prompt, "prompt_tokens")):
        block = usage.get(details)
        value = block.get(part) if isinstance(block, dict) else None
        if type(value) is int and type(whole) is int and value > whole:
            problems.append(f"{details}.{part} {value} exceeds {whole_name} {whole}")
    return problems
