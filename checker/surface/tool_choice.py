"""A tool forced by name, as a capability (rules TCH, checker/rules/tool_choice.py).

One flow per dialect probed: one streamed request offering the suite's two tools (``get_weather``,
``get_time``) and forcing the second by name, in the dialect's words (:data:`FORCED`): Responses
``{"type": "function", "name": …}``, chat ``{"type": "function", "function": {"name": …}}``, Anthropic
``{"type": "tool", "name": …}``. The second tool is forced so that a server that calls the first tool it is
given, or any tool, is told from one that honours the choice. The tools are declared ``strict: true`` where the
dialect has it without a beta (Responses, chat). The stream gets every stream check; the judge reads the
answer's calls against the request: the forced function not called (TCH001: a text answer, or a call to another
function), a call to a function the request did not offer (TCH002), a strict tool's arguments that its schema
refuses (TCH003).

An answer with neither a call nor text (only reasoning, cut by the token limit) is not judged: it says nothing
about the choice. A server that refuses the named form with an error saying it is not supported makes the row
"unsupported".
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import jsonschema_rs

from checker.live import adapters
from checker.live.adapters.base import Ask
from checker.live.scenarios import MAX_OUTPUT_TOKENS, TOOLS, qualified
from checker.rules import tool_choice as rules
from checker.surface.capability import Feature, register
from checker.structured_output import SHOWN_ERRORS, parse_json
from checker.surface.flow import Flow, Step
from checker.surface.record import START, FlowRecord, StepFinding

FLOW = "tool_choice"
STEP = "forced"
FORCED_TOOL = str(TOOLS[-1]["name"])  # the last of the offered tools: not what a server picks by default
# The suite's tools declared strict (their schemas are strict-ready: every property required, no others), so that
# the calls' arguments are judged against them (TCH003).
STRICT_TOOLS = tuple({**tool, "strict": True} for tool in TOOLS)
ASK = Ask(prompt="What time is it in Tokyo?", tools=STRICT_TOOLS, require_tool=True, parallel=False,
          reasoning="none", max_tokens=MAX_OUTPUT_TOKENS)


def _names(tools: Any, name_of: Callable[[Mapping[str, Any]], Any]) -> list[str]:
    found = [name_of(tool) for tool in tools if isinstance(tool, Mapping)] if isinstance(tools, list) else []
    return [str(name) for name in found if isinstance(name, str)]


def _text_parts(items: Any, kinds: tuple[str, ...]) -> str:
    parts = items if isinstance(items, list) else []
    return "".join(str(p.get("text") or "") for p in parts if isinstance(p, Mapping) and p.get("type") in kinds)


CUSTOM_WHERE = "tool_choice {type: custom, name}"
# A call as the judge reads it: (call id, tool name, kind, arguments), kind "function" or "custom" (Responses'
# free-form tools, whose input is text); the arguments as sent (a JSON string, or Anthropic's input object).
Call = tuple[str, str, str, Any]
# A strict tool's parameters schema by its name.
StrictSchemas = dict[str, Mapping[str, Any]]


@dataclass(frozen=True, slots=True)
class Words:
    """How one dialect's requests name their tools and a forced one, and its answers' calls and text."""

    where: str  # the request field, as findings name it
    force: Callable[[str, Any], dict[str, Any]]  # (tool name, the tool_choice it replaces) -> the forcing choice
    offered: Callable[[Mapping[str, Any]], list[str]]  # the names of a request's tools the model may call
    forced: Callable[[Any], tuple[str, str] | None]  # (name, kind) a tool_choice forces by name, if it does
    calls: Callable[[Sequence[Mapping[str, Any]]], list[Call]]  # an answer's calls
    strict: Callable[[Mapping[str, Any]], StrictSchemas]  # the parameters of each tool declared strict: true
    text: Callable[[Sequence[Mapping[str, Any]]], str]  # the text of an answer's output
    # Marks a request's function tools strict: true where the adapter's body does not carry the suite's flag
    # (chat's tools nest it under function; Anthropic's strict tools need a beta, so they are left as they are).
    declare_strict: Callable[[dict[str, Any]], None] = lambda body: None


# Responses: function tools, and custom tools (free-form input: a custom_tool_call item, not a function_call).
_RESPONSES_KINDS = {"function": "function_call", "custom": "custom_tool_call"}


def _responses_forced(choice: Any) -> tuple[str, str] | None:
    ok = isinstance(choice, Mapping) and choice.get("type") in _RESPONSES_KINDS and isinstance(choice.get("name"), str)
    return (str(choice["name"]), str(choice["type"])) if ok else None


def _responses_calls(output: Sequence[Mapping[str, Any]]) -> list[Call]:
    kinds = {item_type: kind for kind, item_type in _RESPONSES_KINDS.items()}
    return [(str(item.get("call_id")), str(item.get("name")), kinds[item["type"]],
             item.get("arguments") if item["type"] == "function_call" else None)
            for item in output if item.get("type") in kinds]


def _chat_calls(output: Sequence[Mapping[str, Any]]) -> list[Call]:
    calls = [c for m in output if isinstance(m.get("tool_calls"), list) for c in m["tool_calls"]
             if isinstance(c, Mapping)]
    return [(str(c.get("id")), str((c.get("function") or {}).get("name")), "function",
             (c.get("function") or {}).get("arguments")) for c in calls]


def _messages_calls(output: Sequence[Mapping[str, Any]]) -> list[Call]:
    blocks = [b for m in output if isinstance(m.get("content"), list) for b in m["content"] if isinstance(b, Mapping)]
    return [(str(b.get("id")), str(b.get("name")), "function", b.get("input")) for b in blocks
            if b.get("type") == "tool_use"]


def _strict(tools: Any, pick: Callable[[Mapping[str, Any]], Mapping[str, Any] | None], schema_key: str) -> StrictSchemas:
    """The ``schema_key`` schema of each tool (``pick`` gives the object holding name, strict and schema) that
    says ``strict: true``."""
    found: StrictSchemas = {}
    for tool in tools if isinstance(tools, list) else ():
        held = pick(tool) if isinstance(tool, Mapping) else None
        if isinstance(held, Mapping) and held.get("strict") is True and isinstance(held.get(schema_key), Mapping) \
                and isinstance(held.get("name"), str):
            found[held["name"]] = held[schema_key]
    return found


def _chat_forced(choice: Any) -> tuple[str, str] | None:
    function = choice.get("function") if isinstance(choice, Mapping) and choice.get("type") == "function" else None
    name = function.get("name") if isinstance(function, Mapping) else None
    return (name, "function") if isinstance(name, str) else None


def _messages_forced(choice: Any) -> tuple[str, str] | None:
    ok = isinstance(choice, Mapping) and choice.get("type") == "tool" and isinstance(choice.get("name"), str)
    return (str(choice["name"]), "function") if ok else None


def _chat_text(content: Any) -> str:
    """A chat message's text: its content string, or the text of its content parts."""
    return content if isinstance(content, str) else _text_parts(content, ("text",))


def _chat_strict(body: dict[str, Any]) -> None:
    for tool in body.get("tools") or ():
        if isinstance(tool.get("function"), dict):
            tool["function"]["strict"] = True


def _extras(choice: Any) -> dict[str, Any]:
    """What a tool_choice object says besides which tool (Anthropic's disable_parallel_tool_use)."""
    return {k: v for k, v in choice.items() if k not in ("type", "name", "function")} \
        if isinstance(choice, Mapping) else {}


WORDS: dict[str, Words] = {
    "responses": Words(
        where="tool_choice {type: function, name}",
        force=lambda name, was: {"type": "function", "name": name},
        offered=lambda req: _names(req.get("tools"), lambda t: t.get("name") if t.get("type") in _RESPONSES_KINDS
                                   else None),
        forced=_responses_forced,
        calls=_responses_calls,
        strict=lambda req: _strict(req.get("tools"), lambda t: t if t.get("type") == "function" else None,
                                   "parameters"),
        text=lambda output: "".join(_text_parts(item.get("content"), ("output_text",)) for item in output
                                    if item.get("type") == "message")),
    "chat": Words(
        where="tool_choice {type: function, function: {name}}",
        force=lambda name, was: {"type": "function", "function": {"name": name}},
        offered=lambda req: _names(req.get("tools"), lambda t: (t.get("function") or {}).get("name")
                                   if t.get("type") == "function" else None),
        forced=_chat_forced,
        calls=_chat_calls,
        declare_strict=_chat_strict,
        strict=lambda req: _strict(req.get("tools"), lambda t: t.get("function") if t.get("type") == "function"
                                   else None, "parameters"),
        text=lambda output: "".join(_chat_text(m.get("content")) for m in output)),
    "messages": Words(
        where="tool_choice {type: tool, name}",
        force=lambda name, was: {"type": "tool", "name": name, **_extras(was)},
        # Client tools have no type or type "custom"; server tools (web_search_…) are typed.
        offered=lambda req: _names(req.get("tools"), lambda t: t.get("name")
                                   if t.get("type") in (None, "custom") else None),
        forced=_messages_forced,
        calls=_messages_calls,
        strict=lambda req: _strict(req.get("tools"), lambda t: t if t.get("type") in (None, "custom") else None,
                                   "input_schema"),
        text=lambda output: "".join(_text_parts(m.get("content"), ("text",)) for m in output)),
}


def feature_name(api: str) -> str:
    return f"{FLOW}.{api}"


def forced_body(api: str) -> dict[str, Any]:
    """The dialect's request for ASK with its tool choice forcing :data:`FORCED_TOOL` by name."""
    body = copy.deepcopy(adapters.get(api).scenario_body(ASK))
    WORDS[api].declare_strict(body)
    body["tool_choice"] = WORDS[api].force(FORCED_TOOL, body.get("tool_choice"))
    return body


def flow_for(api: str) -> Flow:
    adapter = adapters.get(api)
    words = WORDS[adapter.name]
    step = Step(name=STEP, api=adapter.name, body=forced_body(adapter.name), expect="stream", gate=True,
                replay=(FLOW,), summary=f"two tools offered, {FORCED_TOOL} forced ({words.where}): a call to it")
    return Flow(name=qualified(adapter.name, FLOW), feature=feature_name(adapter.name), api=adapter.name,
                summary=f"a tool forced by name ({words.where})", steps=(step,), details={"forced": FORCED_TOOL})


def flows(apis: Sequence[str]) -> list[Flow]:
    return [flow_for(api) for api in apis if api in WORDS]


def _clip(text: str, size: int = 60) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= size else text[: size - 1] + "…")


def off_schema(arguments: Any, schema: Mapping[str, Any]) -> str | None:
    """Why a call's arguments do not validate against a strict tool's schema; None when they do, or when they are
    no JSON object at all (the stream's own rules say so: FNC001, CHT017, ANT017) or the schema cannot be
    compiled (nothing is claimed then)."""
    value = arguments
    if isinstance(arguments, str):
        value, error = parse_json(arguments)
        if error is not None:
            return None
    if not isinstance(value, Mapping):
        return None
    validator = _validator(json.dumps(schema, sort_keys=True))
    if validator is None:
        return None
    errors = [f"{'/' + '/'.join(str(p) for p in e.instance_path) if e.instance_path else 'the arguments'}: "
              f"{e.message}" for e in validator.iter_errors(dict(value))]
    if not errors:
        return None
    shown = "; ".join(errors[:SHOWN_ERRORS])
    return shown if len(shown) <= 160 else shown[:159] + "…"


@lru_cache(maxsize=32)
def _validator(schema_json: str) -> Any:
    try:
        return jsonschema_rs.validator_for(json.loads(schema_json))
    except Exception:  # noqa: BLE001 - a schema the library refuses: judge nothing against it
        return None


def _kind_words(kind: str) -> str:
    return "a custom tool call" if kind == "custom" else "a function call"


def judge(record: FlowRecord) -> list[StepFinding]:
    """TCH001 and TCH002 on the record of a tool-choice flow (any step whose request offers tools)."""
    words = WORDS.get(record.api or adapters.DEFAULT.name)
    if words is None:
        return []
    found: list[StepFinding] = []
    for step in record.steps:
        if not step.ok or not isinstance(step.request, Mapping) or not isinstance(step.answer, Mapping):
            continue
        output = step.answer.get("output")
        output = [o for o in output if isinstance(o, Mapping)] if isinstance(output, list) else []
        offered, calls = words.offered(step.request), words.calls(output)
        strict = words.strict(step.request)
        for call_id, name, kind, arguments in calls:
            if offered and name not in offered:
                found.append((step.name, rules.CALLED_TOOL_NOT_OFFERED.finding(
                    START, call_id=call_id, name=name, offered=", ".join(offered))))
            elif kind == "function" and name in strict:
                detail = off_schema(arguments, strict[name])
                if detail is not None:
                    found.append((step.name, rules.ARGUMENTS_OFF_SCHEMA.finding(START, call_id=call_id, name=name,
                                                                              detail=detail)))
        forced = words.forced(step.request.get("tool_choice"))
        if forced is None or forced in [(name, kind) for _, name, kind, _ in calls]:
            continue
        if calls:
            instead = "the answer called " + ", ".join(dict.fromkeys(
                name if kind == forced[1] else f"{name} ({_kind_words(kind)})" for _, name, kind, _ in calls)) + \
                " instead"
        elif words.text(output).strip():
            instead = "the answer is text, with no call: " + _clip(words.text(output))
        else:
            continue  # neither a call nor text (reasoning cut by the token limit): nothing to judge
        custom = forced[1] == "custom"
        what, where = (f"the custom tool {forced[0]}", CUSTOM_WHERE) if custom else (forced[0], words.where)
        found.append((step.name, rules.FORCED_TOOL_NOT_CALLED.finding(START, forced=what, where=where,
                                                                        instead=instead)))
    return found


for _api in WORDS:
    if _api in adapters.names():
        register(Feature(name=feature_name(_api), title=f"a tool forced by name on /v1{adapters.get(_api).endpoint}",
                         families=("TCH",), judge=judge))
