"""Reasoning summary rules: summary_index and summary parts (docs/spec.md §2)."""

from checker.rules.registry import rule

OPENAPI = "OpenAI OpenAPI 2.3.0 ResponseStreamEvent"

SUMMARY_DELTA_WITHOUT_PART = rule(
    "RSN001", "summary-delta-before-part", "error",
    "{type} before reasoning_summary_part.added for summary_index {index} of item {item!r}",
    summary="Flags reasoning summary text without its summary part.",
    why="openai-node appends to a summary part that does not exist and fails; Ollama and LiteLLM (#32777) omit "
        "reasoning_summary_part.added.",
    sources=(OPENAPI, "openai-node response-accumulator.ts", "LiteLLM #32777",
             "vercel-ai packages/openai/src/responses/openai-responses-language-model.ts (doStream) and packages/ai/src/generate-text/stream-text.ts ('text part … not found'; measured, tests/test_real_clients.py)"),
    clients=("openai-node", "vercel-ai"),
    good="conforming/reasoning-summary.sse",
)
SUMMARY_INDEX_NOT_APPENDED = rule(
    "RSN002", "summary-index-not-appended", "error",
    "reasoning_summary_part.added at summary_index {got}, expected {expected}",
    summary="Flags a summary part whose index is not the number of summary parts of its item so far.",
    why="Clients index the item's summary list with it: a gap raises or misplaces the summary text.",
    sources=(OPENAPI, "openai-node src/internal/responses/response-accumulator.ts"),
    clients=("openai-node",),
    good="conforming/reasoning-summary.sse",
)
SUMMARY_INDEX_MISMATCH = rule(
    "RSN003", "summary-index-mismatch", "warning",
    "{type} at summary_index {got}, but the item's open summary part is {expected}",
    summary="Flags summary text events whose summary_index is not the open summary part.",
    why="The summary text is appended to the wrong part, or to none.",
    sources=(OPENAPI, "openai-node src/internal/responses/response-accumulator.ts"),
    clients=("openai-node",),
    good="conforming/reasoning-summary.sse",
)
SUMMARY_PART_NOT_DONE = rule(
    "RSN004", "summary-part-not-done", "warning",
    "reasoning item {item!r} done while summary part {index} is open",
    summary="Flags a reasoning item completed with an open summary part.",
    why="Clients that finalize summaries at reasoning_summary_part.done never see the final summary.",
    sources=(OPENAPI,),
    good="conforming/reasoning-summary.sse",
)
AFTER_SUMMARY_DONE = rule(
    "RSN005", "event-after-summary-done", "warning",
    "{type} for summary part {index} of item {item!r} after it was done",
    summary="Flags summary text or a second done for a closed summary part.",
    why="The summary is final at reasoning_summary_part.done; later text is handled differently by each client.",
    sources=(OPENAPI,),
    good="conforming/reasoning-summary.sse",
)
