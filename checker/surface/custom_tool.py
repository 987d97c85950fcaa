"""Custom tools (free-form input) on the Responses API, as a capability (rules TCH, checker/rules/tool_choice.py).

A custom tool (``{"type": "custom", "name", "description"}``, optionally with a grammar ``format``) takes plain
text instead of JSON arguments: the model's call is a ``custom_tool_call`` item whose ``input`` is that text,
streamed as ``response.custom_tool_call_input.delta``/``.done``. codex declares its ``apply_patch`` tool this
way for the model families that take it (codex-rs/core/src/tools/handlers/apply_patch.rs:
create_apply_patch_freeform_tool, used with ApplyPatchToolType::Freeform). Chat
Completions and Anthropic Messages have no such tool here, so the flow is the Responses API's only.

One flow: one streamed request offering one custom tool and forcing it by name (``tool_choice: {"type":
"custom", "name": …}``, ToolChoiceCustom in reference/openai-openapi.json). The stream gets every stream check
(the custom-tool events' order and reconciliation: HST, REC, SCH); the judge is the tool-choice one
(:func:`checker.surface.tool_choice.judge`): the custom tool not called (TCH001: a text answer, or a function
call instead), a call to a tool not offered (TCH002). A server that refuses the tool type with an error saying
it is not supported makes the row "unsupported".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from checker.live import adapters
from checker.live.adapters.base import Ask
from checker.live.scenarios import MAX_OUTPUT_TOKENS
from checker.surface.capability import Feature, register
from checker.surface.flow import Flow, Step
from checker.surface.tool_choice import judge

FLOW = "custom_tool"
API = "responses"
FEATURE = f"{FLOW}.{API}"
CUSTOM_TOOL: dict[str, Any] = {
    "type": "custom",
    "name": "run_python",
    "description": "Run a Python snippet. The input is the code itself, not JSON.",
}
ASK = Ask(prompt="Print hello world with the run_python tool.", reasoning="none", max_tokens=MAX_OUTPUT_TOKENS)


def custom_body() -> dict[str, Any]:
    body = adapters.get(API).scenario_body(ASK)
    body["tools"] = [dict(CUSTOM_TOOL)]
    body["tool_choice"] = {"type": "custom", "name": CUSTOM_TOOL["name"]}
    return body


def flows(apis: Sequence[str]) -> list[Flow]:
    if API not in apis:
        return []
    step = Step(name="forced", api=API, body=custom_body(), expect="stream", gate=True, replay=(FLOW,),
                summary=f"a custom tool forced by name: a custom_tool_call of {CUSTOM_TOOL['name']}")
    return [Flow(name=FLOW, feature=FEATURE, api=API, summary="a custom tool (free-form input), forced by name",
                 steps=(step,), details={"forced": CUSTOM_TOOL["name"]})]


register(Feature(name=FEATURE, title="custom tools (free-form input) on /v1/responses", families=("TCH",),
                 judge=judge))
