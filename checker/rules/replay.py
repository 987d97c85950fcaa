"""Replay rules: what a client sends back of earlier turns (SPEC §4-§5, ``cases/reasoning-replay.json``).

These findings are about the *requests* of a conversation, not about one stream's bytes, so no single
capture can produce them: ``sse-check proxy`` checks them on the traffic it forwards, with the
conversation tracking and checks in ``checker.live.history``. This module only declares the rules.
Their examples are conversations (the requests and answers of two or more turns), in
``captures/replay/*.conversation.json``.
"""

from checker.rules.registry import rule

SPEC4 = "SPEC §4 (llama.cpp: reasoning items sent back, prefix cache and cached_tokens)"
SPEC5 = "SPEC §5 (sending reasoning back: which assistant messages carry it)"
CASES = "cases/reasoning-replay.json (the client rule, with cases)"
LLAMA_README = "captures/llama.cpp/README.md, 'The replay experiment' (cached_tokens 284 exact vs 273 dropped)"
OPENAI_REASONING = "OpenAI reasoning guide: pass reasoning items back unchanged between tool calls"
DEEPSEEK_400 = "DeepSeek API: HTTP 400 \"Missing `reasoning_content` field…\" inside a tool-call stretch"
ANTHROPIC_400 = ("Anthropic Messages: HTTP 400 \"Expected `thinking` or `redacted_thinking`…\" when thinking "
                 "is not echoed unmodified in a tool loop")
GOOD_RESPONSES = "replay/good-responses.conversation.json"
GOOD_CHAT = "replay/good-chat.conversation.json"

REASONING_ITEM_ALTERED = rule(
    "RPL001", "reasoning-item-altered", "error",
    "reasoning item {id} is sent back changed ({fields} differ from what response {response} emitted)",
    summary="Flags a Responses reasoning item sent back in `input` whose JSON value differs from the item the "
            "server emitted with the same id (its text, summary, encrypted content or any other field; a null "
            "and an absent field count as equal).",
    why="A reasoning item must go back exactly as it came: OpenAI rejects an `encrypted_content` that does not "
        "match, llama.cpp's prefix cache stops at the first changed token (an exact replay reused 284 prompt "
        "tokens, an altered one stops at the edit), and the model reads a chain of thought it never wrote.",
    sources=(SPEC4, LLAMA_README, OPENAI_REASONING),
    bad="replay/RPL001-reasoning-item-altered.conversation.json",
    good=GOOD_RESPONSES,
)
REASONING_ITEM_UNKNOWN = rule(
    "RPL002", "reasoning-item-unknown", "warning",
    "reasoning item {id} was not emitted by the server in this conversation{hint}",
    summary="Flags a Responses reasoning item sent back in a known conversation whose id (or, without an id, "
            "whose text) matches no reasoning item the server emitted in it.",
    why="A client that invents, renames or carries over reasoning items from elsewhere sends the model a "
        "reasoning it did not produce; servers that look items up by id (OpenAI with `store`) reject unknown "
        "ids, and the prefix cache cannot match the rendered prompt.",
    sources=(SPEC4, OPENAI_REASONING),
    bad="replay/RPL002-reasoning-item-unknown.conversation.json",
    good=GOOD_RESPONSES,
)
REASONING_ITEM_MISSING = rule(
    "RPL003", "reasoning-item-missing", "warning",
    "reasoning item {id} (emitted by response {response} with {companions}) is not sent back, "
    "though its turn continues",
    summary="Flags a stateless Responses request that sends back the function calls or message of the current "
            "turn (no user message after them) but not the reasoning item the server emitted with them.",
    why="Inside a turn the model's reasoning must come back with its tool calls: OpenAI's reasoning models "
        "lose the plan they made, llama.cpp loses the prefix cache of the reasoning (273 instead of 284 cached "
        "tokens in the replay experiment), and DeepSeek and Anthropic answer HTTP 400 in the same situation in "
        "their dialects.",
    sources=(SPEC4, SPEC5, CASES, LLAMA_README, OPENAI_REASONING, ANTHROPIC_400),
    bad="replay/RPL003-reasoning-item-missing.conversation.json",
    good=GOOD_RESPONSES,
)
REASONING_CONTENT_MISSING = rule(
    "RPL004", "reasoning-content-missing", "warning",
    "assistant message {index} is in the current turn but is sent without the reasoning the server "
    "emitted with it (response {response})",
    summary="Flags a chat request whose current-turn assistant message (after the last user message) comes "
            "without `reasoning_content` although the server's answer carried reasoning.",
    why="The case-file rule sends `reasoning_content` on every assistant message of the current turn with "
        "non-empty reasoning. DeepSeek rejects the request (HTTP 400 \"Missing `reasoning_content` field\") "
        "inside a tool-call stretch; templates that keep reasoning in the current turn (Qwen3, gpt-oss) render "
        "a different prompt, so the prefix cache is lost.",
    sources=(SPEC5, CASES, DEEPSEEK_400),
    bad="replay/RPL004-reasoning-content-missing.conversation.json",
    good=GOOD_CHAT,
)
REASONING_CONTENT_ALTERED = rule(
    "RPL005", "reasoning-content-altered", "warning",
    "assistant message {index} sends back {field} that differs from the reasoning response {response} emitted",
    summary="Flags a chat request whose assistant message carries reasoning (`reasoning_content` or "
            "`reasoning`) different from what the server streamed for that message.",
    why="The template renders the reasoning as sent: a trimmed, re-joined or edited reasoning changes the "
        "prompt (the prefix cache stops at the edit) and shows the model a chain of thought it did not write.",
    sources=(SPEC5, CASES, LLAMA_README),
    bad="replay/RPL005-reasoning-content-altered.conversation.json",
    good=GOOD_CHAT,
)
REASONING_CONTENT_EARLIER_TURN = rule(
    "RPL006", "reasoning-content-earlier-turn", "info",
    "assistant message {index} comes before the last user message (index {user}) but still carries {field}",
    summary="Flags a chat request that sends reasoning on an assistant message of an earlier turn (before the "
            "last user message), which the case-file rule leaves out.",
    why="Earlier turns go without their reasoning: it costs prompt tokens, and DeepSeek's reasoner rejected "
        "`reasoning_content` outside the current turn. It is right only if that last user message was a note "
        "delivered at a step boundary (`turn: false` in the case file), which the wire does not show: hence "
        "info.",
    sources=(SPEC5, CASES),
    bad="replay/RPL006-reasoning-content-earlier-turn.conversation.json",
    good=GOOD_CHAT,
)
PREFIX_CACHE_NOT_REUSED = rule(
    "RPL007", "prefix-cache-not-reused", "info",
    "the server reused {cached} cached tokens of the previous prompt's {previous} ({percent}%) although this "
    "request extends it",
    summary="Flags a turn that continues the previous request of its conversation but whose usage reports "
            "less than half of the previous prompt as cached (`usage.input_tokens_details.cached_tokens`, "
            "chat `prompt_tokens_details.cached_tokens`, or llama.cpp's `timings.cache_n`); only for previous "
            "prompts of 1024 tokens or more, below which OpenAI caches nothing.",
    why="A stateless replay that sends the history back unchanged lets the server reuse its prefix cache; a "
        "low reuse means the client rewrote an earlier part of the prompt (reasoning dropped or altered, tool "
        "arguments re-serialised, a changing system prompt), and every turn pays for the whole prompt again.",
    sources=(SPEC4, LLAMA_README, "OpenAI prompt caching guide (prompts of 1024 tokens or more)"),
    bad="replay/RPL007-prefix-cache-not-reused.conversation.json",
    good=GOOD_RESPONSES,
)
