"""Hosted-tool calls' grammars (data): each family's progress events in the order they come, its streamed
input, and where its item keeps that input.

The grammar is the order OpenAI sends (streams recorded from api.openai.com in
vercel/ai packages/openai/src/responses/__fixtures__):

* web and file search: ``in_progress → searching → completed``;
* code interpreter: ``in_progress → code.delta* → code.done → interpreting → completed``;
* image generation: ``in_progress → generating → partial_image* → completed``;
* MCP call: ``in_progress → arguments.delta* → arguments.done → completed | failed``,
  ``in_progress`` repeated while the arguments stream (OpenAI does);
* MCP tool listing: ``in_progress → completed | failed``;
* custom tool: ``input.delta* → input.done``; apply_patch: ``operation_diff.delta* → operation_diff.done``;
* shell call, per command: ``command.added → command.delta* → command.done``; shell output,
  per command: ``output_content.delta* → output_content.done``.

checker/dialects/responses/hosted.py follows a call through its family's grammar.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

R = "response."
FINAL_STATUSES = frozenset({"completed", "failed", "incomplete"})


@dataclass(frozen=True, slots=True)
class Family:
    """One hosted tool's events: stage ranks in the order they come, and its streamed input."""

    item_type: str
    stages: dict[str, int]  # event type -> rank; equal ranks are alternatives (completed | failed)
    required: tuple[frozenset[str], ...] = ()  # one event of each group before a call completes
    repeatable: frozenset[str] = frozenset()  # may come several times in a row (deltas, partial images)
    anytime: frozenset[str] = frozenset()  # may come again at any point before the last stage
    input_delta: str | None = None
    input_done: str | None = None
    done_field: str | None = None  # the `.done` event's field with the final input
    item_path: tuple[str, ...] = ()  # where the item keeps it ("code"; "operation", "diff")

    @property
    def last_rank(self) -> int:
        return max(self.stages.values(), default=0)


def _progress(item_type: str, *names: str, prefix: str | None = None) -> dict[str, int]:
    base = R + (prefix or item_type) + "."
    return {base + name: rank for rank, name in enumerate(names, start=1)}


def _one(*types: str) -> frozenset[str]:
    return frozenset(types)


def _search(item_type: str) -> Family:
    stages = _progress(item_type, "in_progress", "searching", "completed")
    return Family(item_type, stages, required=tuple(_one(t) for t in stages))


_CODE = R + "code_interpreter_call."
_CODE_IN = R + "code_interpreter_call_code."
_IMAGE = R + "image_generation_call."
_MCP = R + "mcp_call."
_MCP_ARGS = R + "mcp_call_arguments."
_LIST = R + "mcp_list_tools."
_CUSTOM = R + "custom_tool_call_input."
_PATCH = R + "apply_patch_call_operation_diff."

FAMILIES: dict[str, Family] = {
    family.item_type: family
    for family in (
        _search("web_search_call"),
        _search("file_search_call"),
        Family(
            "code_interpreter_call",
            {_CODE + "in_progress": 1, _CODE_IN + "delta": 2, _CODE_IN + "done": 3, _CODE + "interpreting": 4,
             _CODE + "completed": 5},
            required=(_one(_CODE + "in_progress"), _one(_CODE + "interpreting"), _one(_CODE + "completed")),
            repeatable=_one(_CODE_IN + "delta"),
            input_delta=_CODE_IN + "delta", input_done=_CODE_IN + "done", done_field="code", item_path=("code",),
        ),
        Family(
            "image_generation_call",
            {_IMAGE + "in_progress": 1, _IMAGE + "generating": 2, _IMAGE + "partial_image": 3,
             _IMAGE + "completed": 4},
            required=(_one(_IMAGE + "in_progress"), _one(_IMAGE + "generating"), _one(_IMAGE + "completed")),
            repeatable=_one(_IMAGE + "partial_image"),
        ),
        Family(
            "mcp_call",
            {_MCP + "in_progress": 1, _MCP_ARGS + "delta": 2, _MCP_ARGS + "done": 3, _MCP + "completed": 4,
             _MCP + "failed": 4},
            required=(_one(_MCP + "in_progress"), _one(_MCP + "completed", _MCP + "failed")),
            repeatable=_one(_MCP_ARGS + "delta"),
            anytime=_one(_MCP + "in_progress"),
            input_delta=_MCP_ARGS + "delta", input_done=_MCP_ARGS + "done", done_field="arguments",
            item_path=("arguments",),
        ),
        Family(
            "mcp_list_tools",
            {_LIST + "in_progress": 1, _LIST + "completed": 2, _LIST + "failed": 2},
            required=(_one(_LIST + "in_progress"), _one(_LIST + "completed", _LIST + "failed")),
        ),
        Family(
            "custom_tool_call",
            {_CUSTOM + "delta": 1, _CUSTOM + "done": 2},
            repeatable=_one(_CUSTOM + "delta"),
            input_delta=_CUSTOM + "delta", input_done=_CUSTOM + "done", done_field="input", item_path=("input",),
        ),
        Family(
            "apply_patch_call",
            {_PATCH + "delta": 1, _PATCH + "done": 2},
            repeatable=_one(_PATCH + "delta"),
            input_delta=_PATCH + "delta", input_done=_PATCH + "done", done_field="diff",
            item_path=("operation", "diff"),
        ),
        Family("shell_call", {}),
        Family("shell_call_output", {}),
    )
}

COMMAND_ADDED = R + "shell_call_command.added"
COMMAND_DELTA = R + "shell_call_command.delta"
COMMAND_DONE = R + "shell_call_command.done"
OUTPUT_DELTA = R + "shell_call_output_content.delta"
OUTPUT_DONE = R + "shell_call_output_content.done"
PARTIAL_IMAGE = _IMAGE + "partial_image"

# Every hosted-tool event type -> the item type it belongs to.
EVENT_ITEM_TYPES: dict[str, str] = {etype: f.item_type for f in FAMILIES.values() for etype in f.stages}
EVENT_ITEM_TYPES.update({COMMAND_ADDED: "shell_call", COMMAND_DELTA: "shell_call", COMMAND_DONE: "shell_call",
                         OUTPUT_DELTA: "shell_call_output", OUTPUT_DONE: "shell_call_output"})
# The input deltas a run of the machine's fast path may append (shell commands by command_index).
INPUT_DELTAS = frozenset({f.input_delta for f in FAMILIES.values() if f.input_delta} | {COMMAND_DELTA})


def short(etype: str) -> str:
    return etype.removeprefix(R)


def at(obj: Any, path: tuple[str, ...]) -> Any:
    """The value at ``path`` in an item (None where the path does not lead to one)."""
    for key in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj
