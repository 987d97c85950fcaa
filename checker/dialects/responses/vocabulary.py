"""The Responses API's event vocabulary, defined once: event types, the terminal set, their statuses.

Every module that must know what ends a Responses stream (the machine, the client matrix, the reports, the
probe and proxy) imports it from here (docs/spec.md §2: ``response.completed``, ``response.incomplete`` and
``response.failed`` are the terminal events; a response's ``status`` at the end names its terminal).
"""

from __future__ import annotations

from typing import Final

PREFIX: Final = "response."

CREATED: Final = "response.created"
QUEUED: Final = "response.queued"
IN_PROGRESS: Final = "response.in_progress"
COMPLETED: Final = "response.completed"
INCOMPLETE: Final = "response.incomplete"
FAILED: Final = "response.failed"
ERROR: Final = "error"

OUTPUT_ITEM_ADDED: Final = "response.output_item.added"
OUTPUT_ITEM_DONE: Final = "response.output_item.done"
CONTENT_PART_ADDED: Final = "response.content_part.added"
CONTENT_PART_DONE: Final = "response.content_part.done"
SUMMARY_PART_ADDED: Final = "response.reasoning_summary_part.added"
SUMMARY_PART_DONE: Final = "response.reasoning_summary_part.done"
OUTPUT_TEXT_DELTA: Final = "response.output_text.delta"
OUTPUT_TEXT_DONE: Final = "response.output_text.done"
ARGUMENTS_DELTA: Final = "response.function_call_arguments.delta"
ARGUMENTS_DONE: Final = "response.function_call_arguments.done"

# The events that open a response, before any output (the lifecycle's first states).
OPENING_TYPES: Final = frozenset({CREATED, QUEUED, IN_PROGRESS})
# THE terminal set: the events that end a response, in the order of their statuses below.
TERMINAL_TYPES: Final = frozenset({COMPLETED, INCOMPLETE, FAILED})
# The response's status each terminal event carries.
TERMINAL_STATUS: Final = {COMPLETED: "completed", INCOMPLETE: "incomplete", FAILED: "failed"}
# The content-part and summary-part boundaries.
PART_TYPES: Final = frozenset({CONTENT_PART_ADDED, CONTENT_PART_DONE, SUMMARY_PART_ADDED, SUMMARY_PART_DONE})
# The normal end: the one terminal every client's final call accepts.
NORMAL_END: Final = COMPLETED
