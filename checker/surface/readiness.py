"""One readiness verdict per client after a probe: ready, degraded or broken, because …

Built from two things the run already knows:

* every finding of every stream the client would read: the scenarios of the dialects it speaks and the flows'
  streamed steps, through the client matrix (:func:`checker.compat.matrix`: each finding's effect on each
  client, from the dialects' effect tables, checked against the real SDKs by the oracle tests). The worst
  cell decides, and the first finding (in run order) with that verdict is the client's *first blocking
  finding*. Findings of the features' own rules (MOD, TUR, FLW, …) act through the capability table instead:
  a broken model list does not break a client that never lists models;
* the capability table (:mod:`checker.surface.capability`), through :data:`RELIES_ON`: the capabilities each
  client relies on, *required* (broken or unsupported: the client is broken) or *optional* (broken: degraded;
  unsupported: named in ``without``, the client works without it).

A client none of whose dialects was probed is ``unknown``; one whose endpoints all answer that they are not there
(404, 405, 501: the capability table's ``unsupported``) is ``not served``: this server does not speak its API,
which says nothing of how it would read a stream (it was called broken, beside the 404 that said why).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from checker.compat import Verdict, effects_of, matrix
from checker.engine import LintResult
from checker.surface.capability import Capability, feature_families

READY, DEGRADED, BROKEN, UNKNOWN, NOT_SERVED = "ready", "degraded", "broken", "unknown", "not served"
_WORDS = {Verdict.OK: READY, Verdict.DEGRADED: DEGRADED, Verdict.BREAKS: BROKEN}


@dataclass(frozen=True, slots=True)
class Reliance:
    feature: str  # a capability row's name
    required: bool
    source: str  # the client code that makes it rely on it


# The dialects each client speaks (its requests: checker.live.adapters), and the capabilities it relies on, each
# with the client code that shows it. A new feature adds its rows here (a client that does not use it has none).
DIALECTS: dict[str, tuple[str, ...]] = {
    "openai-python": ("responses", "chat"),
    "openai-node": ("responses", "chat"),
    "codex": ("responses",),
    "openai-agents": ("responses", "chat"),
    "anthropic-python": ("messages",),
    "anthropic-ts": ("messages",),
}
_PY_RESPONSES = "openai-python src/openai/resources/responses/responses.py"
_NODE_RESPONSES = "openai-node src/resources/responses/responses.ts"
RELIES_ON: dict[str, tuple[Reliance, ...]] = {
    "openai-python": (
        Reliance("models", False, "openai-python src/openai/resources/models.py (client.models.list())"),
        Reliance("tool_turn.responses", False, "openai-python src/openai/types/responses/response_input_param.py "
                                               "(FunctionCallOutput)"),
        Reliance("tool_turn.chat", False, "openai-python src/openai/types/chat/"
                                          "chat_completion_tool_message_param.py"),
        Reliance("structured_output.responses", False, "openai-python src/openai/lib/_parsing/_responses.py "
                                                       "(parse_text: responses.parse(), text_format=)"),
        Reliance("structured_output.chat", False, "openai-python src/openai/lib/_parsing/_completions.py "
                                                  "(_parse_content: chat.completions.parse())"),
        Reliance("stored.retrieve", False, f"{_PY_RESPONSES} (responses.retrieve)"),
        Reliance("stored.resumption", False, f"{_PY_RESPONSES} (responses.retrieve, stream and starting_after)"),
        Reliance("stored.background", False, f"{_PY_RESPONSES} (create with background, then retrieve)"),
        Reliance("websocket.responses", False, f"{_PY_RESPONSES} (responses.connect(): ResponsesConnection, the "
                                               "WebSocket mode)"),
    ),
    "openai-node": (
        Reliance("models", False, "openai-node src/resources/models.ts (client.models.list())"),
        Reliance("tool_turn.responses", False, "openai-node src/resources/responses/responses.ts "
                                               "(ResponseInputItem.FunctionCallOutput)"),
        Reliance("tool_turn.chat", False, "openai-node src/resources/chat/completions/completions.ts "
                                          "(ChatCompletionToolMessageParam)"),
        Reliance("structured_output.responses", False, "openai-node src/lib/ResponsesParser.ts (parseResponse: "
                                                       "every json_schema answer is parsed)"),
        Reliance("structured_output.chat", False, "openai-node src/lib/parser.ts (parseResponseFormatContent)"),
        Reliance("stored.retrieve", False, f"{_NODE_RESPONSES} (responses.retrieve)"),
        Reliance("stored.resumption", False, f"{_NODE_RESPONSES} (responses.retrieve, stream and starting_after)"),
    ),
    "codex": (
        Reliance("tool_turn.responses", True, "codex codex-rs/protocol/src/models.rs (every tool call's result "
                                              "goes back as ResponseInputItem::FunctionCallOutput)"),
        Reliance("models", False, "codex codex-rs/lmstudio/src/client.rs (OSS providers list GET {base}/models)"),
        Reliance("custom_tool.responses", False, "codex codex-rs/core/src/tools/handlers/apply_patch.rs "
                                                 "(create_apply_patch_freeform_tool: apply_patch as a custom tool)"),
        Reliance("websocket.responses", False, "codex codex-rs/codex-api/src/endpoint/responses_websocket.rs (the "
                                               "Responses API over WebSocket, where the provider offers it)"),
    ),
    "openai-agents": (
        Reliance("tool_turn.responses", True, "openai-agents-python src/agents/items.py (ToolCallOutputItem: the "
                                              "run loop sends each function_call_output back)"),
        Reliance("tool_turn.chat", False, "openai-agents-python src/agents/models/chatcmpl_converter.py (tool "
                                          "messages for OpenAIChatCompletionsModel)"),
        Reliance("structured_output.responses", False, "openai-agents-python src/agents/agent_output.py "
                                                       "(an agent's output_type is a strict json_schema format)"),
        Reliance("stored.stateful_tool_use", False, "openai-agents-python src/agents/models/openai_responses.py "
                                                    "(previous_response_id: only the new items are sent)"),
        Reliance("inputs.assistant_history", False, "openai-agents-python src/agents/result.py "
                                                    "(to_input_list: the earlier run's items are the next input)"),
        Reliance("tool_choice.responses", False, "openai-agents-python src/agents/models/openai_responses.py "
                                                 "(Converter.convert_tool_choice: ModelSettings.tool_choice naming "
                                                 "a tool)"),
        Reliance("tool_choice.chat", False, "openai-agents-python src/agents/models/chatcmpl_converter.py "
                                            "(Converter.convert_tool_choice)"),
    ),
    "anthropic-python": (
        Reliance("tool_turn.messages", False, "anthropic-sdk-python src/anthropic/types/tool_result_block_param.py"),
        Reliance("structured_output.messages", False, "anthropic-sdk-python src/anthropic/lib/_parse/_response.py "
                                                      "(parse_text: messages.parse(), output_format=)"),
    ),
    "anthropic-ts": (
        Reliance("tool_turn.messages", False, "anthropic-sdk-typescript src/resources/messages/messages.ts "
                                              "(ToolResultBlockParam)"),
    ),
}
CLIENT_ORDER: tuple[str, ...] = tuple(DIALECTS)


@dataclass(slots=True, kw_only=True)
class Readiness:
    client: str
    verdict: str  # ready / degraded / broken / not served / unknown
    because: str = ""
    finding: dict[str, Any] | None = None  # {"code", "message", "scenario"}: the first blocking finding
    without: list[str] = field(default_factory=list)  # optional capabilities the server does not offer

    def as_dict(self) -> dict[str, Any]:
        return {"client": self.client, "verdict": self.verdict, "because": self.because, "finding": self.finding,
                "without": self.without}


def _stream_verdict(client: str, results: Sequence[tuple[str, LintResult]]) -> tuple[Verdict, str, dict | None]:
    """The worst cell of ``client`` over the streams of its dialects, and its first finding."""
    own = feature_families()
    worst: tuple[Verdict, str, dict[str, Any] | None] = (Verdict.OK, "", None)
    for name, result in results:
        if result.dialect not in DIALECTS[client] or client not in effects_of(result).clients:
            continue
        kept = [f for f in result.findings if f.code[:3] not in own]
        cell = matrix(_with(result, kept))[client]
        if cell.verdict > worst[0]:
            ref = ({"code": cell.finding.code, "message": cell.finding.message, "scenario": name}
                   if cell.finding is not None else None)
            because = f"{name}: {cell.symptom or cell.cause}" + (f" ({cell.finding.code})" if cell.finding else "")
            worst = (cell.verdict, because, ref)
    return worst


def _with(result: LintResult, findings: list[Any]) -> LintResult:
    return dataclasses.replace(result, findings=findings) if len(findings) != len(result.findings) else result


def client_readiness(client: str, results: Sequence[tuple[str, LintResult]],
                     capabilities: Mapping[str, Capability]) -> Readiness:
    """One client's verdict from the run's results (scenario or step name, result) and the capability rows."""
    rows = [capabilities.get(f"stream.{api}") for api in DIALECTS[client]]
    probed = [row for row in rows if row is not None and row.status != "not checked"]
    if not probed:
        return Readiness(client=client, verdict=UNKNOWN, because=f"{'/'.join(DIALECTS[client])} not probed")
    if all(row.status == "unsupported" for row in probed):
        return Readiness(client=client, verdict=NOT_SERVED, because="; ".join(
            row.why or f"{row.title}: unsupported" for row in probed))  # the answer that said so: "POST …: 404"
    verdict, because, ref = _stream_verdict(client, results)
    out = Readiness(client=client, verdict=_WORDS[verdict], finding=ref,
                    because=because or "no finding of the streams it reads affects it")
    for reliance in RELIES_ON.get(client, ()):
        row = capabilities.get(reliance.feature)
        if row is None or row.status in ("supported", "not checked"):
            continue
        if row.status == "unsupported" and not reliance.required:
            out.without.append(row.title)
            continue
        level = Verdict.BREAKS if reliance.required else Verdict.DEGRADED
        if level > verdict:
            verdict = level
            word = "needs" if reliance.required else "uses"
            out.verdict, out.because = _WORDS[level], f"{word} {row.title}, which is {row.status}: {row.why}"
            out.finding = dict(row.finding) if row.finding else None
    return out


def readiness(results: Sequence[tuple[str, LintResult]], capabilities: Sequence[Capability]) -> list[Readiness]:
    """Every client's verdict, in :data:`CLIENT_ORDER`."""
    rows = {row.feature: row for row in capabilities}
    return [client_readiness(client, results, rows) for client in CLIENT_ORDER]
