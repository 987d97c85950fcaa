"""The clients whose behaviour the rules protect.

A rule names the clients that break (or degrade) on it; the client matrix is
built from these names. Keep the ids stable: they appear in JSON reports.
"""

from __future__ import annotations

CLIENTS: dict[str, str] = {
    "openai-python": "openai-python `responses.stream()` (src/openai/lib/streaming/responses/_responses.py)",
    "openai-node": "openai-node's response accumulator (src/internal/responses/response-accumulator.ts)",
    "codex": "codex (codex-rs/codex-api/src/sse/responses.rs)",
    "openai-agents": "openai-agents-python (builds the turn from response.completed.response.output)",
    "positional": "a positional strict client that pairs each output_item.added with the next output_item.done",
    "open-responses": "the Open Responses compliance suite (openresponses/openresponses)",
}


def describe(client: str) -> str:
    return CLIENTS.get(client, client)
