"""The rule registry: one ``Rule`` record per code, looked up by code.

Modelled on ruff's ``codes.rs``: a stable code with a family prefix, a
kebab-case name, a message template and a documentation record in fixed
sections. ``sse-check rules`` and ``docs/rules/`` are generated from here and
nowhere else, so the docs cannot drift from the code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from checker.clients import CLIENTS
from checker.findings import QUOTE_CAP, Finding, Position, Severity, safe_text

# Family prefix -> (title, one-line scope). Order is the documentation order.
FAMILIES: dict[str, tuple[str, str]] = {
    "SSE": ("framing", "the text/event-stream framing (WHATWG), before any JSON is read"),
    "LIF": ("lifecycle", "the response's lifecycle events, terminal event, sequence numbers and usage"),
    "ITM": ("items", "output items: output_index, added/done pairing, item scope"),
    "CNT": ("content", "content parts of messages and reasoning items: content_index, part order, annotation_index"),
    "RSN": ("reasoning", "reasoning summary parts and their summary_index"),
    "FNC": ("function calls", "function-call arguments and names"),
    "HST": ("hosted tools", "hosted-tool calls (search, code interpreter, image generation, MCP, custom tools, shell, "
                            "apply_patch): progress-event order, streamed input, command and partial-image indexes"),
    "SCH": ("schema", "event and object shapes against the JSON Schemas, unknown event types"),
    "REC": ("reconciliation", "text, arguments and hosted-tool input agreeing across deltas, done events, items and "
                              "the final response"),
    "IDS": ("ids", "id prefixes and uniqueness of item ids and call ids"),
    "HTP": ("http", "the HTTP exchange around a stream: status, content type, errors, timeouts, connection close"),
    "CHT": ("chat completions", "Chat Completions chunks: identity, choices, role, tool-call fragments, finish_reason, "
                                "usage"),
    "RPL": ("replay", "what a client sends back of earlier turns: reasoning items, reasoning_content, prefix-cache reuse"),
    "STO": ("stored responses", "what a server keeps of a response created with store: true: retrieval, input items, "
                                "deletion, previous_response_id, resumption, background mode, conversations"),
    "ANT": ("anthropic messages", "the Anthropic Messages stream: message_start, content blocks and their deltas, "
                                  "message_delta, message_stop"),
    "WSK": ("websocket", "the Responses API's WebSocket mode: text frames, one event per message, close codes, the "
                         "error event, one response at a time, continuation"),
    "FMT": ("structured output", "the answer's text against the JSON format the request asked for (json_schema, "
                                 "json_object), in all three dialects"),
    "RPT": ("repetition", "one scenario probed several times (probe --repeat): a verdict that changes between runs, or only under load (--concurrency 1,8)"),
    # Checked by flows of several requests (checker.surface), not in one stream.
    "FLW": ("flows", "flows of several requests: a step built from an earlier answer"),
    "MOD": ("models", "GET /v1/models: a valid list, and the model under test in it"),
    "TUR": ("tool turns", "multi-step tool use: a function call's result sent back, call ids across requests"),
    "INP": ("input forms", "what a request may carry that a server must take: system and developer messages, an "
                           "assistant turn in the history, a tool_choice that names one function"),
    "TCH": ("tool choice", "the tool a request forces (tool_choice by name) and the tools it offers, against the calls "
                           "of the answer"),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Rule:
    """One rule: code, name, severity, message template, documentation, sources, the clients it breaks."""

    code: str
    name: str
    severity: Severity
    message: str
    summary: str
    why: str
    sources: tuple[str, ...]
    clients: tuple[str, ...]
    # Example captures, relative to the project's captures/ folder ("" for no bad example).
    bad: str
    good: str

    @property
    def family(self) -> str:
        return self.code[:3]

    def finding(
        self,
        position: Position,
        *,
        pointer: str | None = None,
        details: dict[str, Any] | None = None,
        **fields: Any,
    ) -> Finding:
        """Build a finding; ``fields`` fill the message template."""
        return Finding(
            code=self.code,
            name=self.name,
            severity=self.severity,
            # Quoted input is capped and every control character escaped, whatever a rule passes in.
            message=safe_text(self.message.format(
                **{k: safe_text(v, QUOTE_CAP) if isinstance(v, str) else v for k, v in fields.items()})),
            position=position,
            clients=self.clients,
            pointer=pointer,
            details=details if details is not None else {k: _plain(v) for k, v in fields.items()},
        )


def _plain(value: Any) -> Any:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return str(value)


RULES: dict[str, Rule] = {}
# The names registered so far: a new name is looked up here, not compared with every rule (200 rules
# registered at start-up made that a quadratic few milliseconds).
_NAMES: set[str] = set()


def rule(
    code: str,
    name: str,
    severity: str,
    message: str,
    *,
    summary: str,
    why: str,
    sources: tuple[str, ...],
    clients: tuple[str, ...] = (),
    bad: str | None = None,
    good: str,
    example: bool = True,
) -> Rule:
    """Register a rule. Codes and names are unique; clients must be known."""
    if code in RULES:
        raise ValueError(f"duplicate rule code {code}")
    if code[:3] not in FAMILIES:
        raise ValueError(f"{code}: unknown family prefix")
    unknown = [c for c in clients if c not in CLIENTS]
    if unknown:
        raise ValueError(f"{code}: unknown clients {unknown}")
    if name in _NAMES:
        raise ValueError(f"duplicate rule name {name}")
    registered = Rule(
        code=code,
        name=name,
        severity=Severity.parse(severity),
        message=message,
        summary=summary,
        why=why,
        sources=sources,
        clients=clients,
        # A rule that no stream should produce (an internal error) has no bad example.
        bad=(bad or f"rules/{code}-{name}.sse") if example else "",
        good=good,
    )
    RULES[code] = registered
    _NAMES.add(name)
    return registered


def get(code: str) -> Rule:
    return RULES[code]


def select(codes: list[str], selectors: list[str]) -> list[str]:
    """Codes matching any selector: a full code, a family prefix or a rule name."""
    chosen = []
    for code in codes:
        r = RULES[code]
        if any(code.startswith(s.upper()) or s == r.name for s in selectors):
            chosen.append(code)
    return chosen
