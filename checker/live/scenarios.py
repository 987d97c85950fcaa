"""The probe's scenarios: built-in requests as data, and user scenario files.

A scenario is one request to ``POST /v1/responses`` and what a conforming server answers to it:

* ``stream`` (the default): ``stream: true``, answered 200 with a Responses event stream;
* ``nonstream``: ``stream: false``, answered 200 with a JSON Response object, whose output order is checked
  and, when its ``pair`` (a streaming scenario with the same request) ran too, compared with that stream's
  final output;
* ``error``: an invalid request, answered with an HTTP error and a JSON body, or a stream ending in
  ``response.failed``.

The built-in names follow the real llama-server captures (``captures/llama.cpp``) where they match. Every
request carries ``X-SSE-Check-Scenario: NAME`` (harmless for real servers) so that ``sse-check serve``
answers it from the capture of that name; ``replay`` lists the capture names tried in turn when a replay
server has no capture of the first (the llama.cpp set has no ``parallel_calls`` but has ``replay-turn1``,
the same kind of answer).

User scenario files (``--scenario-file``, JSON or YAML, one scenario per file, named by the file stem) hold
either a bare request body, or ``{"request": {...}, "expect": "stream|nonstream|error", "summary": "...",
"replay": ["NAME", ...], "pair": "NAME", "headers": {"Name": "value"}, "name": "..."}``. ``model`` in the
request fixes the model (else ``--model`` fills it in). A user scenario with a built-in name replaces the
built-in one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from checker.errors import UsageError
from checker.live import adapters
from checker.live.adapters.base import Ask

Expect = Literal["stream", "nonstream", "error"]
EXPECTS: tuple[str, ...] = ("stream", "nonstream", "error")
SCENARIO_SUFFIXES = (".json", ".yaml", ".yml")


@dataclass(frozen=True, slots=True, kw_only=True)
class Scenario:
    name: str
    summary: str
    body: Mapping[str, Any]  # the request body, without "model" unless the scenario fixes it
    expect: Expect = "stream"
    replay: tuple[str, ...] = ()  # capture names a replay server may know this scenario by (default: name)
    pair: str | None = None  # nonstream: the streaming scenario whose final output it must match
    headers: tuple[tuple[str, str], ...] = ()  # extra request headers for this scenario only
    source: str = "built-in"
    # The dialect (request adapter) whose endpoint it is POSTed to, beside the probe's URL; None: the URL
    # as configured (the live replay's scenarios, whose URL is already their dialect's).
    api: str | None = None
    stream_fields: Mapping[str, Any] = field(default_factory=dict)  # added to a streamed request
    # A flow's step (checker.surface): its method (GET and DELETE send no body) and its own URL, resolved
    # beside the probe's, instead of its dialect's endpoint.
    method: str = "POST"
    url: str | None = None
    as_written: bool = False  # the body is sent as it is: no model or stream filled in

    @property
    def replay_names(self) -> tuple[str, ...]:
        return self.replay or (self.name,)

    @property
    def stream(self) -> bool:
        return self.expect != "nonstream"

    def sent(self, model: str) -> dict[str, Any] | None:
        """The body sent: :meth:`request`'s for a POST, none for a GET or a DELETE."""
        if self.method != "POST":
            return None
        return json.loads(json.dumps(dict(self.body))) if self.as_written else self.request(model)

    def request(self, model: str) -> dict[str, Any]:
        """The body POSTed: the scenario's, with ``model`` (unless fixed) and ``stream`` filled in."""
        body = {"model": model, **json.loads(json.dumps(self.body))}
        body["stream"] = self.stream
        if self.stream:
            body.update(json.loads(json.dumps(dict(self.stream_fields))))
        return body


# --- the built-in suite --------------------------------------------------------------------------------

# The tools of the llama.cpp captures (captures/llama.cpp/reasoning_one_call.request.json).
WEATHER_TOOL: dict[str, Any] = {
    "type": "function",
    "name": "get_weather",
    "description": "Get the current weather for a city",
    "parameters": {
        "type": "object",
        "properties": {
            "city": {"type": "string", "enum": ["Paris", "Tokyo", "London"]},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["city", "unit"],
        "additionalProperties": False,
    },
}
TIME_TOOL: dict[str, Any] = {
    "type": "function",
    "name": "get_time",
    "description": "Get the local time in a city",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string", "enum": ["Paris", "Tokyo", "London"]}},
        "required": ["city"],
        "additionalProperties": False,
    },
}
TOOLS = [WEATHER_TOOL, TIME_TOOL]
# Long enough for a short answer from a small model, short enough that a runaway one ends soon.
MAX_OUTPUT_TOKENS = 200
# The smallest limit OpenAI accepts; any reasoning model is cut by it.
TRUNCATE_AT = 16
# Enough for a short reasoning and the start of a call, not for its arguments: the real llama-server with the
# captures' model and flags (reasoning budget 10) is cut right after the call's "{" (captures/llama.cpp).
CALL_TRUNCATE_AT = 24
INVALID_MODEL = "sse-check-no-such-model"
# The structured_output scenario's answer: strict-mode JSON Schema (every property required, no others), which
# OpenAI, Anthropic and llama-server's grammar all accept.
WEATHER_ANSWER: dict[str, Any] = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "temperature": {"type": "integer"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
    },
    "required": ["city", "temperature", "unit"],
    "additionalProperties": False,
}


@dataclass(frozen=True, slots=True, kw_only=True)
class _Plan:
    """One built-in scenario in no dialect's words: each request adapter writes its request."""

    name: str
    summary: str  # with the adapter's words ({limit}, {cut}, {failed}, {no_reasoning}, {one_call})
    ask: Ask
    expect: Expect = "stream"
    replay: tuple[str, ...] = ()
    pair: str | None = None
    limit_words: dict[str, int] | None = None


_PLAIN = Ask(prompt="What is the weather in Paris?", reasoning="none", max_tokens=MAX_OUTPUT_TOKENS)
_ONE_CALL = Ask(prompt="What should I wear in Berlin?", tools=tuple(TOOLS), require_tool=True, parallel=False,
                reasoning="low", max_tokens=MAX_OUTPUT_TOKENS)
_CUT_CALL = Ask(prompt="What should I wear in Berlin?", tools=tuple(TOOLS), require_tool=True, parallel=False,
                reasoning="low", max_tokens=CALL_TRUNCATE_AT)

# The alternatives a replay server may know a scenario by: the real llama-server captures of each dialect
# (captures/llama.cpp, captures/chat/llama.cpp, captures/messages/llama.cpp) name the same answers differently.
PLANS: tuple[_Plan, ...] = (
    _Plan(name="plain_text", summary="text only, no reasoning ({no_reasoning})", ask=_PLAIN,
          replay=("plain_text", "plain")),
    _Plan(name="reasoning_text", summary="reasoning, then text",
          ask=Ask(prompt="Tell me about London", reasoning="low", max_tokens=MAX_OUTPUT_TOKENS),
          replay=("reasoning_text", "reasoning")),
    _Plan(name="reasoning_one_call", summary="one function call ({one_call})", ask=_ONE_CALL,
          replay=("reasoning_one_call", "tool_call")),
    _Plan(name="parallel_calls", summary="two function calls in one response (parallel tool calls)",
          ask=Ask(prompt="What are the weather and the local time in Paris? Call both tools at once.",
                  tools=tuple(TOOLS), require_tool=True, parallel=True, max_tokens=MAX_OUTPUT_TOKENS),
          replay=("parallel_calls", "replay-turn1", "two_calls", "two_tool_calls")),
    _Plan(name="reasoning_text_truncated", summary=f"{{limit}} {TRUNCATE_AT}: must end with {{cut}}",
          ask=Ask(prompt="Weather in Tokyo please", reasoning="low", max_tokens=TRUNCATE_AT),
          replay=("reasoning_text_truncated", "max_tokens_cut")),
    _Plan(name="function_call_truncated",
          summary=f"reasoning_one_call cut by {{limit}} {CALL_TRUNCATE_AT}: must end with {{cut}}, never a completed "
                  "call whose arguments are not JSON",
          ask=_CUT_CALL, replay=("function_call_truncated", "tool_call_truncated")),
    _Plan(name="invalid_model",
          summary=f"an unknown model ({INVALID_MODEL}): an HTTP error with a JSON body, or {{failed}}",
          ask=Ask(prompt="hi", model=INVALID_MODEL, max_tokens=MAX_OUTPUT_TOKENS), expect="error",
          replay=("invalid_model", "error_previous_response_id")),
    _Plan(name="malformed_input",
          summary="{history} that is neither a string nor a list of {entries}: an HTTP error with a JSON body, or {failed}",
          ask=Ask(prompt="hi", malformed=True, max_tokens=MAX_OUTPUT_TOKENS), expect="error",
          replay=("malformed_input", "error_previous_response_id")),
    _Plan(name="plain_text_nonstream",
          summary="plain_text with stream false: the result's order, and parity with the streamed output",
          ask=_PLAIN, expect="nonstream", replay=("plain_text", "plain"), pair="plain_text"),
    _Plan(name="reasoning_one_call_nonstream",
          summary="reasoning_one_call with stream false: reasoning before the call, parity with the stream",
          ask=_ONE_CALL, expect="nonstream", replay=("reasoning_one_call", "tool_call"), pair="reasoning_one_call"),
)


def qualified(api: str, name: str) -> str:
    """A scenario's name in a probe of several dialects: Responses' bare (as before), the others' prefixed
    (``chat/plain_text``, saved as ``chat/plain_text.sse`` under ``--save``)."""
    return name if api == adapters.DEFAULT.name else f"{api}/{name}"


def builtin(api: str) -> tuple[Scenario, ...]:
    """The built-in suite in dialect ``api``'s requests, written by its request adapter."""
    adapter = adapters.get(api)
    words = adapter.words
    out = []
    for plan in PLANS:
        replay = plan.replay if api != adapters.DEFAULT.name else _responses_replay(plan)
        out.append(Scenario(
            name=qualified(adapter.name, plan.name), summary=plan.summary.format(**words),
            body=adapter.scenario_body(plan.ask), expect=plan.expect, replay=replay,
            pair=qualified(adapter.name, plan.pair) if plan.pair else None, api=adapter.name,
            headers=adapter.request_headers, stream_fields=dict(adapter.stream_fields)))
    return tuple(out)


def _responses_replay(plan: _Plan) -> tuple[str, ...]:
    """Responses keeps the replay names it always had (its captures/llama.cpp names come first)."""
    known = {"parallel_calls": ("parallel_calls", "replay-turn1"),
             "invalid_model": ("invalid_model", "error_previous_response_id"),
             "malformed_input": ("malformed_input", "error_previous_response_id"),
             "plain_text_nonstream": ("plain_text",), "reasoning_one_call_nonstream": ("reasoning_one_call",)}
    return known.get(plan.name, ())


BUILTIN: tuple[Scenario, ...] = builtin(adapters.DEFAULT.name)


# --- user scenario files ---------------------------------------------------------------------------------


def _load_document(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read scenario file: {getattr(exc, 'strerror', None) or exc}") from None
    if path.suffix == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise UsageError(f"{path}: not JSON: {exc}") from None
    try:
        import yaml
    except ImportError:
        raise UsageError(f"{path}: YAML scenario files need PyYAML (pip install pyyaml), or use JSON") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise UsageError(f"{path}: not YAML: {' '.join(str(exc).split())}") from None


load_document = _load_document  # a scenario file's parsed document (flows read theirs too: checker.surface.files)

_WRAPPER_KEYS = {"request", "expect", "summary", "replay", "pair", "name", "headers", "api"}
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


def scenario_from_document(name: str, document: Any, *, source: str) -> Scenario:
    """One scenario from a parsed file: a bare request body, or the wrapper form."""
    if not isinstance(document, dict):
        raise UsageError(f"{source}: a scenario is a JSON/YAML object (a request body), not {type(document).__name__}")
    if isinstance(document.get("request"), dict):
        unknown = set(document) - _WRAPPER_KEYS
        if unknown:
            raise UsageError(f"{source}: unknown keys {sorted(unknown)} (a wrapper has {sorted(_WRAPPER_KEYS)})")
        body = dict(document["request"])
        name = str(document.get("name") or name)
        expect = document.get("expect")
        summary = document.get("summary")
        replay = document.get("replay") or ()
        pair = document.get("pair")
        headers = _headers(document.get("headers"), source)
    else:
        body, expect, summary, replay, pair, headers = dict(document), None, None, (), None, ()
    if expect is None:
        expect = "nonstream" if body.get("stream") is False else "stream"
    if expect not in EXPECTS:
        raise UsageError(f"{source}: expect must be one of {', '.join(EXPECTS)}, not {expect!r}")
    if isinstance(replay, str):
        replay = (replay,)
    if not isinstance(replay, (list, tuple)) or not all(isinstance(r, str) and r for r in replay):
        raise UsageError(f"{source}: replay must be a list of capture names")
    if pair is not None and not isinstance(pair, str):
        raise UsageError(f"{source}: pair must be a scenario name")
    if not name or any(ch in name for ch in "/\\") or name.startswith("."):
        raise UsageError(f"{source}: {name!r} cannot be a scenario name")
    if expect == "nonstream" and not replay and pair:
        replay = (pair,)
    adapter = _adapter_of(document, body, source)
    body.pop("stream", None)
    return Scenario(
        name=qualified(adapter.name, name),
        summary=str(summary) if summary else f"from {source}",
        body=body,
        expect=expect,  # type: ignore[arg-type]
        replay=tuple(replay),
        pair=qualified(adapter.name, pair) if pair else None,
        headers=(*adapter.request_headers, *headers),
        source=source,
        api=adapter.name,
        # A user's body is sent as written: no stream_fields added.
    )


def _adapter_of(document: dict[str, Any], body: dict[str, Any], source: str) -> adapters.RequestAdapter:
    """The dialect of a user scenario: its wrapper's ``api``, else what its request body shows."""
    api = document.get("api") if isinstance(document.get("request"), dict) else None
    if api is None:
        return adapters.for_request(body)
    try:
        return adapters.get(str(api))
    except ValueError:
        raise UsageError(f"{source}: api must be one of {', '.join(adapters.names())}, not {api!r}") from None


def _headers(value: Any, source: str) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    if not isinstance(value, dict):
        raise UsageError(f"{source}: headers must be an object of header names and values")
    pairs = []
    for name, text in value.items():
        if not isinstance(name, str) or not _HEADER_NAME.fullmatch(name) or not isinstance(text, (str, int, float)):
            raise UsageError(f"{source}: bad header {name!r}: {text!r}")
        text = str(text)
        if any(ch in text for ch in "\r\n\0"):
            raise UsageError(f"{source}: header {name}: the value contains a line break or NUL")
        pairs.append((name, text))
    return tuple(pairs)


def load_scenario_files(paths: Sequence[str | Path]) -> list[Scenario]:
    """Scenarios from files and directories (their ``*.json``, ``*.yaml``, ``*.yml``, sorted)."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.suffix in SCENARIO_SUFFIXES and p.is_file())
            if not found:
                raise UsageError(f"{path}: no scenario files (*.json, *.yaml) in this directory")
            files.extend(found)
        elif path.is_file():
            if path.suffix not in SCENARIO_SUFFIXES:
                raise UsageError(f"{path}: a scenario file ends in .json, .yaml or .yml")
            files.append(path)
        else:
            raise UsageError(f"no such scenario file: {path}")
    scenarios: list[Scenario] = []
    seen: dict[str, Path] = {}
    for path in files:
        scenario = scenario_from_document(path.stem, _load_document(path), source=str(path))
        if scenario.name in seen:
            raise UsageError(f"two scenario files named {scenario.name!r}: {seen[scenario.name]} and {path}")
        seen[scenario.name] = path
        scenarios.append(scenario)
    return scenarios


def suite(user: Iterable[Scenario] = (), apis: Sequence[str] = (adapters.DEFAULT.name,)) -> list[Scenario]:
    """The built-in scenarios of each dialect in ``apis`` (Responses alone by default), with user scenarios
    replacing those of the same name and the rest appended."""
    by_name = {s.name: s for api in apis for s in builtin(adapters.get(api).name)}
    extra: list[Scenario] = []
    for scenario in user:
        if scenario.name in by_name:
            by_name[scenario.name] = scenario
        else:
            extra.append(scenario)
    return [*by_name.values(), *extra]


def pick(scenarios: Sequence[Scenario], names: Sequence[str]) -> list[Scenario]:
    """The scenarios named (comma-separated, repeatable), in suite order; all of them if none is named."""
    wanted = [part.strip() for value in names for part in value.split(",") if part.strip()]
    if not wanted:
        return list(scenarios)
    # A bare name (plain_text) picks that scenario in every dialect probed; chat/plain_text only chat's.
    known = {s.name for s in scenarios} | {bare_name(s.name) for s in scenarios}
    unknown = [name for name in wanted if name not in known]
    if unknown:
        raise UsageError(f"unknown scenario {unknown[0]!r} (known: {', '.join(s.name for s in scenarios)}; "
                         "see --list-scenarios)")
    return [s for s in scenarios if s.name in wanted or bare_name(s.name) in wanted]


def bare_name(name: str) -> str:
    """A scenario's name without its dialect: ``chat/plain_text`` -> ``plain_text``."""
    return name.rpartition("/")[2]
