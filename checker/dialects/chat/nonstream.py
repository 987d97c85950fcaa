"""A ``stream: false`` chat completion (``POST /v1/chat/completions``), judged as what it is, and compared with
the same request's stream (:data:`NONSTREAMED`, the dialect's hook; docs/spec.md §6).

The completion is checked as the machine checks the message a stream reconciles to, with the same rules:
``finish_reason`` against the calls (CHT009) and the request's token limit where the usage says how many were
used (CHT010), a call's arguments that must parse as JSON unless the limit cut them (CHT017), two calls with one
id (CHT016), usage totals (CHT022); and against ``CreateChatCompletionResponse`` (CHT002 on the completion).

Parity compares per choice (in index order) its reasoning (the vendor ``reasoning_content``/``reasoning``),
its content, its refusal, each tool call (id prefix, name and arguments, as canonical JSON when they parse),
and its finish reason (a digest type of its own, so a different finish is HTP016, not a text difference).
The stream's side is rebuilt from its chunks here, as the clients accumulate them.

Pure: decoded JSON in, findings out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from checker.dialects.base import Digest, NonStreamed, id_prefix
from checker.dialects.chat import vocabulary as vocab
from checker.dialects.chat.structured import nonstream_answers
from checker.findings import Finding, Position
from checker.rules import chat as rules
from checker.schema_errors import missing_properties, value_facts

COMPLETION = "chat.completion"
_TOOL_CALL = "tool_call"


def problem(obj: dict[str, Any]) -> str | None:
    """Why a JSON object is not a chat completion as the SDKs read one (``choices[i].message``), if it is not.

    Only the shape the clients index is required here: the schema says the rest (CHT002).
    """
    choices = obj.get("choices")
    if not isinstance(choices, list):
        return "no choices array" if choices is None else f"choices is a JSON {_kind(choices)}"
    for index, choice in enumerate(choices):
        if not isinstance(choice, dict):
            return f"choices[{index}] is a JSON {_kind(choice)}"
        if not isinstance(choice.get("message"), dict):
            return f"choices[{index}] has no message object"
    return None


def consistency(obj: dict[str, Any], request: Mapping[str, Any], pos: Position) -> list[Finding]:
    """The completion's own consistency, by the stream rules that judge the message a stream reconciles to."""
    out: list[Finding] = []
    for choice in obj["choices"]:
        index, finish = choice.get("index"), choice.get("finish_reason")
        calls = [c for c in choice["message"].get("tool_calls") or () if isinstance(c, dict)]
        if finish in vocab.CALL_FINISHES and not calls:
            out.append(rules.FINISH_NOT_TOOL_CALLS.finding(pos, index=index, finish=finish,
                                                           problem="without any tool call"))
        elif finish == "stop" and calls:
            out.append(rules.FINISH_NOT_TOOL_CALLS.finding(pos, index=index, finish=finish,
                                                           problem=f"after {len(calls)} tool call(s)"))
        out.extend(_call_findings(index, finish, calls, pos))
    usage = obj.get("usage")
    if isinstance(usage, dict):
        out.extend(rules.USAGE_TOTALS.finding(pos, problem=p) for p in usage_problems(usage))
        out.extend(_length_findings(obj["choices"], usage, request, pos))
    return out


def _call_findings(index: Any, finish: Any, calls: list[dict[str, Any]], pos: Position) -> list[Finding]:
    """CHT016 (two calls, one id) and CHT017 (arguments that are not JSON, unless the token limit cut them)."""
    out: list[Finding] = []
    first: dict[str, int] = {}
    for number, call in enumerate(calls):
        cid = call.get("id")
        if isinstance(cid, str) and cid:
            seen = first.setdefault(cid, number)
            if seen != number:
                out.append(rules.TOOL_ID_DUPLICATE.finding(pos, index=index, call=number, id=cid, first_call=seen))
        function = _obj(call.get("function"))
        arguments = function.get("arguments")
        if finish == "length" or not isinstance(arguments, str):
            continue  # cut by the limit, as finish_reason says; a wrong type is the schema's finding
        try:
            json.loads(arguments)
        except ValueError as exc:
            error = "empty" if not arguments.strip() else str(exc).split(":", 1)[0]
            out.append(rules.ARGUMENTS_INVALID.finding(pos, index=index, call=number,
                                                       name=str(function.get("name") or "?"), error=error))
    return out


def _length_findings(choices: list[Any], usage: dict[str, Any], request: Mapping[str, Any],
                     pos: Position) -> list[Finding]:
    """CHT010: finish_reason against the request's token limit, where the usage says how many were used."""
    limit = next((request[k] for k in vocab.TOKEN_LIMITS if type(request.get(k)) is int), None)
    used = usage.get("completion_tokens")
    if limit is None or type(used) is not int or len(choices) != 1:
        return []
    index, finish = choices[0].get("index"), choices[0].get("finish_reason")
    if finish == "stop" and used >= limit:
        return [rules.FINISH_LENGTH.finding(pos, index=index, finish="stop",
                                            problem=f"the completion used the whole limit ({used} of {limit} tokens)")]
    if finish == "length" and used < limit:
        return [rules.FINISH_LENGTH.finding(pos, index=index, finish="length",
                                            problem=f"only {used} of the {limit} tokens allowed were used")]
    return []


def usage_problems(usage: dict[str, Any]) -> list[str]:
    """What is inconsistent in a usage object's totals (CHT022), as the machine says it of the usage chunk."""
    from checker.dialects.chat.machine import _usage_problems  # one wording for the stream and the completion

    return _usage_problems(usage)


def schema(obj: dict[str, Any], schemas: Any, pos: Position) -> list[Finding]:
    """The completion against ``CreateChatCompletionResponse`` (CHT002): the missing properties of one object as
    one finding."""
    out: list[Finding] = []
    missing: dict[str, list[str]] = {}
    for violation in schemas.validate_object(vocab.COMPLETION_SCHEMA, obj):
        pointer = violation.pointer
        if violation.keyword == "required" and violation.missing is not None:
            missing.setdefault(pointer.rsplit("/", 1)[0], []).append(violation.missing)
            continue
        details = {"keyword": violation.keyword, "missing": [], "pointer": pointer, "type": COMPLETION,
                   **value_facts(violation)}
        out.append(rules.CHUNK_SCHEMA.finding(pos, pointer=pointer, details=details, what="completion",
                                              where=pointer or "/", detail=violation.message))
    for parent, names in missing.items():
        details = {"keyword": "required", "missing": names, "pointer": parent, "type": COMPLETION}
        out.append(rules.CHUNK_SCHEMA.finding(pos, pointer=parent, details=details, what="completion",
                                              where=parent or "/", detail=missing_properties(names)))
    return out


# --- parity ---------------------------------------------------------------------------------------------------


@dataclass
class _Choice:
    """One choice's final message, from the completion or accumulated from a stream's deltas."""

    reasoning: str = ""
    content: str = ""
    refusal: str = ""
    calls: dict[int, list[str]] = field(default_factory=dict)  # position -> [id, name, arguments]
    finish: str | None = None


def digest(obj: dict[str, Any]) -> list[Digest]:
    choices: dict[int, _Choice] = {}
    for position, raw in enumerate(obj.get("choices") or ()):
        if not isinstance(raw, dict) or not isinstance(raw.get("message"), dict):
            continue
        message = raw["message"]
        raw_index = raw.get("index")
        index = raw_index if isinstance(raw_index, int) and not isinstance(raw_index, bool) else position
        choice = choices[index] = _Choice(finish=_text(raw.get("finish_reason")) or None)
        choice.reasoning = "".join(_text(message.get(name)) for name in vocab.REASONING_FIELDS)
        choice.content, choice.refusal = _text(message.get("content")), _text(message.get("refusal"))
        for number, call in enumerate(message.get("tool_calls") or ()):
            function = call.get("function") if isinstance(call, dict) else None
            function = function if isinstance(function, dict) else {}
            choice.calls[number] = [_text(call.get("id")) if isinstance(call, dict) else "",
                                    _text(function.get("name")), _text(function.get("arguments"))]
    return _digests(choices)


def stream_final(events: Sequence[dict[str, Any]]) -> tuple[str, list[Digest]] | None:
    """(the first choice's finish as "finish_reason stop", the digests) of the completion the chunks build."""
    choices: dict[int, _Choice] = {}
    for event in events:
        for raw in event.get("choices") or () if isinstance(event.get("choices"), list) else ():
            if isinstance(raw, dict) and type(raw.get("index")) is int:
                _accumulate(choices.setdefault(raw["index"], _Choice()), raw)
    finished = [choices[i].finish for i in sorted(choices) if choices[i].finish]
    if not finished:
        return None
    return f"{vocab.FINISH_PREFIX}{finished[0]}", _digests(choices)


def _accumulate(choice: _Choice, raw: dict[str, Any]) -> None:
    delta = _obj(raw.get("delta"))
    choice.reasoning += "".join(_text(delta.get(name)) for name in vocab.REASONING_FIELDS)
    choice.content += _text(delta.get("content"))
    choice.refusal += _text(delta.get("refusal"))
    for fragment in delta.get("tool_calls") or () if isinstance(delta.get("tool_calls"), list) else ():
        if not isinstance(fragment, dict) or type(fragment.get("index")) is not int:
            continue
        call = choice.calls.setdefault(fragment["index"], ["", "", ""])
        function = _obj(fragment.get("function"))
        call[0] = call[0] or _text(fragment.get("id"))
        call[1] = call[1] or _text(function.get("name"))
        call[2] += _text(function.get("arguments"))
    if isinstance(raw.get("finish_reason"), str) and raw["finish_reason"]:
        choice.finish = raw["finish_reason"]


def _digests(choices: dict[int, _Choice]) -> list[Digest]:
    out: list[Digest] = []
    for index in sorted(choices):
        choice, where = choices[index], "" if index == 0 else f" (choice {index})"
        for kind, text in (("reasoning", choice.reasoning), ("message", choice.content),
                           ("refusal", choice.refusal)):
            if text:
                out.append({"type": kind + where, "text": text})
        for position in sorted(choice.calls):
            cid, name, arguments = choice.calls[position]
            out.append({"type": _TOOL_CALL + where, "id_prefix": id_prefix(cid) if cid else None,
                        "text": f"{name}({canonical(arguments)})"})
        out.append({"type": f"{vocab.FINISH_PREFIX}{choice.finish}{where}", "text": ""})
    return out


def canonical(arguments: str) -> str:
    """Arguments as compact JSON with sorted keys when they parse (two encodings of one object are one call)."""
    try:
        return json.dumps(json.loads(arguments), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    except ValueError:
        return arguments


def streamed(terminal: str) -> tuple[str, str]:
    return terminal, f"completion ({terminal or 'unfinished'})"


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _kind(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", int: "number", float: "number", bool: "boolean",
            type(None): "null"}.get(type(value), type(value).__name__)


NONSTREAMED = NonStreamed(what="chat completion", problem=problem, consistency=consistency, schema=schema,
                          digest=digest, stream_final=stream_final, streamed=streamed,
                          call_types=frozenset({_TOOL_CALL}), answer_texts=nonstream_answers)
