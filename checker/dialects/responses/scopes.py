"""Item-scoped events: which item, part and role each event type targets (data tables).

Field *shapes* are the schemas' job; these tables say only what an event does to the output items: the item
type it belongs to, whether it targets a content part, a summary part, the arguments or a hosted tool's own
state, and its role (added, delta, done...).
"""

from __future__ import annotations

from dataclasses import dataclass

from checker.dialects.responses import hosted


@dataclass(frozen=True, slots=True)
class Scope:
    """What an event type does to the output items: the item type, its target within it, its role."""

    item_type: str | None  # the item type the event belongs to (None: message or reasoning, by part)
    target: str  # "item" | "content" | "summary" | "args" | "tool" (a hosted-tool call's own events)
    role: str  # "added", "done", "delta", "text_done", "part_added", "part_done", "other"
    part_type: str | None = None  # the part type a text event writes into
    field: str | None = None  # the JSON field carrying the delta or final text


SCOPES: dict[str, Scope] = {
    "response.output_item.added": Scope(None, "item", "added"),
    "response.output_item.done": Scope(None, "item", "done"),
    "response.content_part.added": Scope(None, "content", "part_added"),
    "response.content_part.done": Scope(None, "content", "part_done"),
    "response.output_text.delta": Scope("message", "content", "delta", "output_text", "delta"),
    "response.output_text.done": Scope("message", "content", "text_done", "output_text", "text"),
    "response.output_text.annotation.added": Scope("message", "content", "other", "output_text"),
    "response.refusal.delta": Scope("message", "content", "delta", "refusal", "delta"),
    "response.refusal.done": Scope("message", "content", "text_done", "refusal", "refusal"),
    "response.reasoning_text.delta": Scope("reasoning", "content", "delta", "reasoning_text", "delta"),
    "response.reasoning_text.done": Scope("reasoning", "content", "text_done", "reasoning_text", "text"),
    "response.reasoning_summary_part.added": Scope("reasoning", "summary", "part_added"),
    "response.reasoning_summary_part.done": Scope("reasoning", "summary", "part_done"),
    "response.reasoning_summary_text.delta": Scope("reasoning", "summary", "delta", "summary_text", "delta"),
    "response.reasoning_summary_text.done": Scope("reasoning", "summary", "text_done", "summary_text", "text"),
    "response.function_call_arguments.delta": Scope("function_call", "args", "delta", None, "delta"),
    "response.function_call_arguments.done": Scope("function_call", "args", "text_done", None, "arguments"),
}
# Hosted-tool events (progress, streamed input, shell commands and output): their item must exist and be open,
# and checker/dialects/responses/hosted.py follows each call's grammar.
for _etype, _item_type in hosted.EVENT_ITEM_TYPES.items():
    SCOPES.setdefault(_etype, Scope(_item_type, "tool", "other"))
ANNOTATION_ADDED = "response.output_text.annotation.added"

DELTA_SCOPES = {name: scope for name, scope in SCOPES.items() if scope.role == "delta"}

# Which text event closes a part of each type.
TEXT_DONE_TYPE = {
    "output_text": "response.output_text.done",
    "refusal": "response.refusal.done",
    "reasoning_text": "response.reasoning_text.done",
    "summary_text": "response.reasoning_summary_text.done",
}
# Which item type may hold a content part of each type.
PART_OWNER = {"output_text": "message", "refusal": "message", "reasoning_text": "reasoning"}

# vLLM-style aliases, handled as their canonical event after being reported.
ALIASES = {
    "response.reasoning_part.added": "response.content_part.added",
    "response.reasoning_part.done": "response.content_part.done",
    "response.reasoning.delta": "response.reasoning_text.delta",
    "response.reasoning.done": "response.reasoning_text.done",
    "response.reasoning_summary.delta": "response.reasoning_summary_text.delta",
    "response.reasoning_summary.done": "response.reasoning_summary_text.done",
}
