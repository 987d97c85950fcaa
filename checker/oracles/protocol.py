"""The oracle protocol: how a real client is run on a capture, and the one shape of what it did.

Every real client sse-check predicts (the client matrix, ``checker.compat``) can also be *run*: pointed at a
loopback HTTP server that answers with a capture's saved status, headers and body, driven through the call its
users make, and reduced to an :class:`Outcome`. The pieces, in the order a run meets them:

* :class:`Exchange`: what the loopback server sends for one capture (``X.sse`` and its sidecars:
  ``X.meta.json``'s status, headers and how the exchange ended, or ``X.headers.txt``; else ``200
  text/event-stream``). A recorded answer that never came (no status) is replayed as a server that accepts the
  connection and never answers; an exchange that ended in a transport failure is replayed as a chunked body cut
  before its last chunk; one the server kept open is kept open. ``checker.oracles.loopback.serve_exchanges``
  serves many exchanges from ONE server: exchange *k* under ``http://127.0.0.1:PORT/c/k/v1``.
* :class:`Job`: one run of a client: the exchange, the model name, the dialect (``responses``, ``chat``,
  ``messages``), the tool names the user's call declares (a client such as the Agents SDK refuses a call to an
  undeclared tool), the recorded request (its ``text`` format, ``n``, ``tools``...) and a timeout.
* A client in the registry (``checker.oracles.registry``) runs either **in process** (a Python function
  ``run(job: DriverCall) -> Outcome``: openai-python, anthropic-python) or as a **driver**: a command run out
  of process (Node, a CLI, another venv)::

      DRIVER BASE_URL MODEL DIALECT [TOOL,NAMES]

  prints ONE JSON object on stdout, the normalised outcome (below), and exits 0 whatever the client did (a
  non-zero exit or no JSON is the driver's own failure, reported as such, never as the client's verdict).
  ``BASE_URL`` is the OpenAI-style base and ends with ``/v1`` (``http://127.0.0.1:PORT/c/3/v1``); a client that
  adds ``/v1`` itself (the Anthropic SDKs, Claude Code) is given it without. The environment carries
  ``SSE_CHECK_ORACLE_TIMEOUT`` (seconds: the client's own request timeout), ``SSE_CHECK_ORACLE_REQUEST`` (the
  recorded request as JSON, ``{}`` when there is none: a driver may pass on what its users' call would have) and
  the switches that keep clients on loopback (no telemetry, no update checks: :data:`QUIET_ENV`). The server
  answers every request to the same base URL with the same exchange, so a driver makes ONE model call (an
  agent run limited to one turn, tools that are never executed).

  A driver that also accepts ``--batch`` (declared in its registry entry) is run ONCE for many captures: it
  reads one line ``BASE_URL MODEL DIALECT TOOLS REQUEST_JSON`` per job on stdin (``TOOLS`` is ``-`` for none;
  ``REQUEST_JSON`` is the rest of the line) and writes one outcome line per job, in order, flushed.

The normalised outcome, as JSON (drivers) and as :class:`Outcome` (Python)::

    {"client": "openai-node", "version": "7.59.0", "dialect": "responses",
     "raised": null | "ErrorType: message",       # the user-facing call failed: the client's own words
     "text": "Hello" | null,                      # the final answer's text (every text part, joined)
     "tool_calls": [{"id": "call_1", "name": "get_weather", "arguments": "{\\"city\\":\\"Paris\\"}"}],
     "status": "completed" | null,                # Responses: the final response's status (Messages: stop_reason)
     "finish_reason": "stop" | null,              # chat: choice 0's finish_reason; Messages: stop_reason
     "errors": ["..."]}                           # non-fatal errors the client surfaced (error parts)

``tool_calls[].id`` is the id the user answers (Responses: ``call_id``; chat: the call's ``id``; Messages:
``tool_use.id``), ``arguments`` the argument string as the client hands it over (Messages: the input as
canonical JSON, ``json.dumps(input, sort_keys=True, separators=(",", ":"), ensure_ascii=False)``). Extra keys
are allowed and kept in ``Outcome.extra``; the Responses oracles also report ``mode``, ``terminal``, ``events``
and ``output`` (the final items as ``{"type", "id", "text"}``), which the comparison reads when present.

This module is data and parsing only (no client is imported, nothing is run): the registry and the runner
import it, and so may any code that reads outcomes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

# Environment for every client run: nothing leaves loopback. Each client's own switches are added by its
# registry entry; these are the ones several clients share.
QUIET_ENV: dict[str, str] = {
    "NO_PROXY": "*", "no_proxy": "*", "HTTP_PROXY": "", "HTTPS_PROXY": "", "http_proxy": "", "https_proxy": "",
    "DO_NOT_TRACK": "1", "NO_UPDATE_NOTIFIER": "1", "NPM_CONFIG_UPDATE_NOTIFIER": "false",
    "OPENAI_AGENTS_DISABLE_TRACING": "1", "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_ERROR_REPORTING": "1",
    "LANGCHAIN_TRACING_V2": "false", "LANGSMITH_TRACING": "false",
}
DIALECTS = ("responses", "chat", "messages")
DEFAULT_TIMEOUT_S = 20.0


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall:
    """One tool call in a client's final result."""

    id: str | None
    name: str | None
    arguments: str | None

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "arguments": self.arguments}

    @classmethod
    def from_dict(cls, raw: Any) -> ToolCall:
        raw = raw if isinstance(raw, dict) else {}
        return cls(id=_opt_str(raw.get("id")), name=_opt_str(raw.get("name")), arguments=_args(raw.get("arguments")))


@dataclass(frozen=True, slots=True, kw_only=True)
class OutputItem:
    """A Responses output item as the Responses oracles compare it (type, id, its text)."""

    type: str | None
    id: str | None
    # A message's text parts (refusals included), a call's arguments, a reasoning item's text.
    text: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"type": self.type, "id": self.id, "text": self.text}


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    """What a real client did with one capture: the normalised outcome (the module docstring).

    ``raised`` is set when the client's user-facing call failed ("ExceptionType: message"); otherwise the final
    result is ``text``, ``tool_calls``, ``status`` and ``finish_reason``. openai-python's
    ``get_final_response()`` raises on a stream that ends with ``response.incomplete`` or ``response.failed``
    (it returns only a completed response); openai-node's ``finalResponse()`` resolves with it.
    ``failure`` is set instead when the oracle itself could not run the client (the driver crashed, printed no
    JSON, or overran its deadline): no verdict can be read from such a run.
    """

    client: str
    version: str
    dialect: str = "responses"
    raised: str | None = None
    text: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    status: str | None = None
    finish_reason: str | None = None
    errors: tuple[str, ...] = ()
    # The Responses oracles' detail (kept from their first shape): how they called, the terminal event they
    # saw, how many events the stream helper yielded, and the final items.
    mode: str = "client"
    terminal: str | None = None
    events: int = 0
    output: tuple[OutputItem, ...] = ()
    failure: str | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def summary(self) -> str:
        if self.failure is not None:
            return f"could not be run: {self.failure}"
        if self.raised is not None:
            return f"raises {self.raised}"
        parts = [f"text {_clip(self.text)}"]
        if self.tool_calls:
            parts.append("calls " + ", ".join(f"{c.name}({_clip(c.arguments, 40)})" for c in self.tool_calls))
        if self.status is not None:
            parts.append(f"status {self.status}")
        if self.finish_reason is not None:
            parts.append(f"finish {self.finish_reason}")
        if self.errors:
            parts.append(f"{len(self.errors)} error part(s)")
        return "returns " + ", ".join(parts)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "client": self.client, "version": self.version, "dialect": self.dialect, "raised": self.raised,
            "text": self.text, "tool_calls": [c.as_dict() for c in self.tool_calls], "status": self.status,
            "finish_reason": self.finish_reason, "errors": list(self.errors), "mode": self.mode,
            "terminal": self.terminal, "events": self.events, "output": [o.as_dict() for o in self.output],
        }
        if self.failure is not None:
            out["failure"] = self.failure
        return {**self.extra, **out}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Outcome:
        """An outcome from a driver's JSON (missing keys read as absent; a wrong type as absent too)."""
        output = tuple(OutputItem(type=_opt_str(o.get("type")), id=_opt_str(o.get("id")), text=_opt_str(o.get("text")))
                       for o in raw.get("output") or () if isinstance(o, dict))
        calls = tuple(ToolCall.from_dict(c) for c in raw.get("tool_calls") or () if isinstance(c, dict))
        errors = tuple(str(e) for e in raw.get("errors") or ()) if isinstance(raw.get("errors"), list) else ()
        known = {"client", "version", "dialect", "raised", "text", "tool_calls", "status", "finish_reason", "errors",
                 "mode", "terminal", "events", "output", "failure"}
        events = raw.get("events")
        return cls(client=str(raw.get("client") or "?"), version=str(raw.get("version") or "?"),
                   dialect=str(raw.get("dialect") or "responses"), raised=_opt_str(raw.get("raised")),
                   text=_opt_str(raw.get("text")), tool_calls=calls, status=_opt_str(raw.get("status")),
                   finish_reason=_opt_str(raw.get("finish_reason")), errors=errors,
                   mode=str(raw.get("mode") or "client"), terminal=_opt_str(raw.get("terminal")),
                   events=events if type(events) is int else 0, output=output, failure=_opt_str(raw.get("failure")),
                   extra={k: v for k, v in raw.items() if k not in known})

    @classmethod
    def from_json(cls, line: str) -> Outcome:
        """An outcome from one line of a driver's stdout; ValueError when it is not one JSON object."""
        raw = json.loads(line)
        if not isinstance(raw, dict):
            raise ValueError("a driver's outcome must be one JSON object")
        return cls.from_dict(raw)


@dataclass(frozen=True, slots=True, kw_only=True)
class Exchange:
    """What the loopback server sends for one capture.

    ``status`` None: the recorded server never answered (it accepted the connection and sent nothing);
    ``cut``: the body ended in a transport failure (replayed as a chunked body without its last chunk);
    ``kept_open``: the server kept the connection open after the body (the connection is held until the client
    lets go or the batch ends)."""

    body: bytes
    status: int | None = 200
    reason: str = ""
    headers: tuple[tuple[str, str], ...] = (("content-type", "text/event-stream"), ("cache-control", "no-cache"))
    cut: bool = False
    kept_open: bool = False
    refused: bool = False  # the recorded connection never opened: closed at once, nothing sent


@dataclass(frozen=True, slots=True, kw_only=True)
class Job:
    """One run of a client on one exchange (see the module docstring)."""

    exchange: Exchange
    dialect: str
    model: str = "oracle"
    tools: tuple[str, ...] = ()
    request: dict[str, Any] = field(default_factory=dict, compare=False)
    timeout_s: float = DEFAULT_TIMEOUT_S
    name: str = ""  # the capture's name, for messages


@dataclass(frozen=True, slots=True, kw_only=True)
class DriverCall:
    """What a client is given for one job: the driver's arguments, typed (an in-process runner's one argument)."""

    base_url: str  # ends with /v1
    model: str
    dialect: str
    tools: tuple[str, ...] = ()
    request: dict[str, Any] = field(default_factory=dict, compare=False)
    timeout_s: float = DEFAULT_TIMEOUT_S

    @property
    def root_url(self) -> str:
        """The base URL without its ``/v1``: for clients that add it themselves."""
        return self.base_url.removesuffix("/v1")

    def argv(self) -> list[str]:
        """The driver's arguments: ``BASE_URL MODEL DIALECT [TOOL,NAMES]``."""
        return [self.base_url, self.model, self.dialect, *([",".join(self.tools)] if self.tools else [])]

    def batch_line(self) -> str:
        """The job as one line of a ``--batch`` driver's stdin."""
        return " ".join([self.base_url, self.model or "oracle", self.dialect, ",".join(self.tools) or "-",
                         json.dumps(self.request, separators=(",", ":"))]) + "\n"

    @classmethod
    def parse(cls, argv: list[str]) -> DriverCall:
        """A driver's arguments (``sys.argv[1:]``) back into a call (Python drivers use this)."""
        if len(argv) < 3:
            raise ValueError("usage: DRIVER BASE_URL MODEL DIALECT [TOOL,NAMES]")
        tools = tuple(t for t in (argv[3] if len(argv) > 3 else "").split(",") if t and t != "-")
        return cls(base_url=argv[0], model=argv[1], dialect=argv[2], tools=tools)


def error_text(exc: BaseException) -> str:
    """An exception as an outcome's ``raised``: "Type: message" (an openai ``APIError``: its own message)."""
    text = str(exc)
    if type(exc).__name__ == "APIError":
        text = getattr(exc, "message", text)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _opt_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _args(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)  # an object: canonical


def _clip(value: Any, width: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 1] + "…"
