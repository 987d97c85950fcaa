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
    "vercel-ai": "the Vercel AI SDK `streamText()` (ai, @ai-sdk/openai, @ai-sdk/anthropic: "
                 "packages/openai/src/responses/openai-responses-language-model.ts)",
    "claude-code": "Claude Code `claude -p --output-format stream-json` (ANTHROPIC_BASE_URL; its result's is_error)",
    "langchain": "LangChain's ChatOpenAI / ChatAnthropic `.stream()`, the chunks summed "
                 "(langchain_openai/chat_models/base.py, langchain_anthropic/chat_models.py)",
    "positional": "a positional strict client that pairs each output_item.added with the next output_item.done",
    "open-responses": "the Open Responses compliance suite (openresponses/openresponses)",
    "anthropic-python": "anthropic-python `messages.stream()` / `get_final_message()` "
                        "(src/anthropic/lib/streaming/_messages.py)",
    "anthropic-ts": "@anthropic-ai/sdk `messages.stream()` / `finalMessage()` (src/lib/MessageStream.ts)",
}


# How a rule's sources cite each client's code (or, for the positional model, the reports that describe it):
# a rule that names a client must cite it (tests/test_compat.py), so every attribution can be checked
# against the code it claims.
CITED_AS: dict[str, tuple[str, ...]] = {
    "openai-python": ("openai-python ",),
    "openai-node": ("openai-node ",),
    "codex": ("codex ",),
    "openai-agents": ("openai-agents-python ",),
    "vercel-ai": ("vercel-ai ",),
    "claude-code": ("claude-code ",),
    "langchain": ("langchain-openai ", "langchain-anthropic "),
    "positional": ("llama.cpp PR #18486", "LocalAI #9658"),
    "open-responses": ("openresponses ",),
    "anthropic-python": ("anthropic-sdk-python ",),
    "anthropic-ts": ("anthropic-sdk-typescript ",),
}


def cites(source: str, client: str) -> bool:
    """Whether ``source`` cites ``client``'s code."""
    return source.startswith(CITED_AS.get(client, (client + " ",)))


def describe(client: str) -> str:
    return CLIENTS.get(client, client)
