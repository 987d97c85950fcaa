"""Replay rules: what a client sends back of earlier turns (docs/spec.md §4-§5, ``cases/reasoning-replay.json``).

These findings are about the *requests* of a conversation, not about one stream's bytes, so no single
capture can produce them: ``sse-check proxy`` checks them on the traffic it forwards, with the
conversation tracking and checks in ``checker.live.history``. This module only declares the rules.
Their examples are conversations (the requests and answers of two or more turns), in
``captures/replay/*.conversation.json``.
"""

from checker.rules.registry import rule

SPEC4 = "docs/spec.md §4 (llama.cpp: reasoning items sent back, prefix cache and cached_tokens)"
SPEC5 = "docs/spec.md §5 (sending reasoning back: which assistant messages carry it)"
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
    "reasoning item {id} is sent back changed: {fields} not as response {response} emitted it",
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
    "reasoning item {id} is sent back in a known conversation, but the server never emitted it{hint}",
    summary="Flags a Responses reasoning item sent back in a conversation the proxy has seen answered whose id "
            "(or, without an id, whose text) matches no reasoning item the server emitted, in that conversation "
            "or in any other answer the proxy saw.",
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
            "chat `prompt_tokens_details.cached_tokens`, Messages `cache_read_input_tokens` against its whole "
            "prompt, or llama.cpp's `timings.cache_n`); only for previous prompts of 1024 tokens or more, below "
            "which OpenAI caches nothing.",
    why="A stateless replay that sends the history back unchanged lets the server reuse its prefix cache; a "
        "low reuse means the client rewrote an earlier part of the prompt (reasoning dropped or altered, tool "
        "arguments re-serialised, a changing system prompt), and every turn pays for the whole prompt again.",
    sources=(SPEC4, LLAMA_README, "OpenAI prompt caching guide (prompts of 1024 tokens or more)"),
    bad="replay/RPL007-prefix-cache-not-reused.conversation.json",
    good=GOOD_RESPONSES,
)

SPEC7 = "docs/spec.md §7.2 (a thinking block's signature, needed to send it back)"
ANTHROPIC_THINKING = ("Anthropic extended thinking guide: pass thinking blocks back unmodified, with their "
                      "signature, for the last assistant turn of a tool loop")
GOOD_MESSAGES = "replay/good-messages.conversation.json"

THINKING_SIGNATURE_DROPPED = rule(
    "RPL008", "thinking-signature-dropped", "error",
    "assistant message {index} sends back thinking block {block} without the signature response {response} "
    "emitted with it",
    summary="Flags an Anthropic Messages request that sends back a thinking block of an earlier answer with "
            "its `signature` missing or empty although the server streamed a non-empty one "
            "(`signature_delta`).",
    why="The signature is what lets the server trust the thinking it gets back: Anthropic rejects a thinking "
        "block without it (HTTP 400), so a client that rebuilds the assistant message from the text alone (a "
        "conversion to the OpenAI chat shape and back, a log that kept only `thinking`) breaks every tool loop "
        "with thinking on. The anthropic SDKs keep it: `message.content` sent back as it came is right.",
    sources=(SPEC5, SPEC7, ANTHROPIC_THINKING, ANTHROPIC_400),
    bad="replay/RPL008-thinking-signature-dropped.conversation.json",
    good=GOOD_MESSAGES,
)
THINKING_BLOCK_ALTERED = rule(
    "RPL009", "thinking-block-altered", "error",
    "assistant message {index} sends back its thinking changed: {what} (not as response {response} emitted it)",
    summary="Flags an Anthropic Messages request whose assistant message, recognised as an earlier answer by "
            "its text and tool_use ids, carries thinking or redacted_thinking blocks that differ from the ones "
            "the server emitted for it: a text, signature or `data` changed, blocks added, left out or "
            "reordered, or a thinking block after the text or tool_use it preceded.",
    why="Thinking goes back exactly as it came, first in the message: Anthropic checks the signature against "
        "the text and rejects a mismatch (HTTP 400), a redacted block is opaque and must come back whole, and "
        "a server that does not check (llama-server) renders a chain of thought the model never wrote, with "
        "its prefix cache stopping at the edit.",
    sources=(SPEC5, SPEC7, ANTHROPIC_THINKING, LLAMA_README),
    bad="replay/RPL009-thinking-block-altered.conversation.json",
    good=GOOD_MESSAGES,
)
THINKING_BLOCK_MISSING = rule(
    "RPL010", "thinking-block-missing", "warning",
    "assistant message {index} is in the current turn but is sent without its thinking ({count}, emitted by "
    "response {response})",
    summary="Flags an Anthropic Messages request that continues a tool loop (no user message with anything but "
            "`tool_result` blocks after the assistant message) but sends the assistant message without the "
            "thinking or redacted_thinking blocks the server emitted with it; a request with thinking disabled "
            "is left alone.",
    why="Inside a turn the thinking must come back with its tool calls: Anthropic answers HTTP 400 \"Expected "
        "`thinking` or `redacted_thinking`, but found `tool_use`\", and a server that takes the history as it "
        "comes (llama-server) loses the plan and the prefix cache of the reasoning. Earlier turns may leave it "
        "out (Anthropic strips it), as the case-file rule does.",
    sources=(SPEC5, CASES, ANTHROPIC_THINKING, ANTHROPIC_400),
    bad="replay/RPL010-thinking-block-missing.conversation.json",
    good=GOOD_MESSAGES,
)

# --- the live replay (RPL1xx) -------------------------------------------------------------------------
# `sse-check replay --live URL` / `sse-check probe URL --replay` (checker/replay/live.py): turn 1, then a
# stateless turn 2 that sends its reasoning back exact, dropped or altered, in two families (continue the
# turn; a new user message). Their examples are measurements (the six turn-2 usages) in
# captures/replay/live/*.json, checked by tests/live/test_live_replay.py.
LIVE_GOOD = "replay/live/good.json"
LIVE_LLAMA = "replay/live/llama.cpp.json"

REPLAYED_REASONING_CACHE_LOST = rule(
    "RPL101", "replayed-reasoning-cache-lost", "warning",
    "replayed reasoning not rendered as generated: prefix cache lost ({family}: the exact replay reused {exact} "
    "cached tokens, no more than the controls: dropped {dropped}, altered {altered})",
    summary="Live replay: flags a server whose prefix cache reuses no more of a stateless continuation (turn 1's "
            "output and the tool results sent back, no new user message) when the reasoning is sent back exactly "
            "as emitted than when it is dropped or has one word altered.",
    why="Inside a turn, a client that sends the reasoning back exactly as emitted should find the previous "
        "prompt plus that reasoning in the prefix cache: the server generated those tokens itself a moment ago. "
        "If the exact replay reuses no more than the controls, the server's template renders the replayed "
        "reasoning differently from how it was generated (trimmed, re-wrapped, moved or dropped), and every "
        "step of an agent loop pays for the whole history again. llama-server with a Qwen3 template reuses 284 "
        "tokens for the exact replay (275 of the prompt + all 9 reasoning tokens) against 273 without it.",
    sources=(SPEC4, SPEC5, LLAMA_README),
    bad="replay/live/RPL101-replayed-reasoning-cache-lost.json",
    good=LIVE_GOOD,
)
REPLAY_REUSE_STOPPED = rule(
    "RPL102", "replay-reuse-stopped", "info",
    "{family}, reasoning exact: the prefix-cache reuse stopped {where} ({cached} of {input} prompt tokens cached; "
    "previous prompt {previous}, + reasoning ≈{reasoning_end}, + whole output ≈{output_end})",
    summary="Live replay: says where the prefix-cache reuse of the exact continuation stopped when it did not "
            "reach the end of the previous output: inside the previous prompt, inside the reasoning, or after "
            "the reasoning but before the tool calls or the message.",
    why="The cached part of a stateless continuation shows how the server renders the history sent back to "
        "it. Reuse that stops after the reasoning means the template writes the rest of the previous output "
        "(typically the tool calls, whose arguments it re-serialises) differently from the tokens the model "
        "generated: not a client bug, but a cost on every step of an agent loop, worth knowing when comparing "
        "servers and templates. llama-server reuses the prompt and the reasoning, not the tool calls.",
    sources=(SPEC4, LLAMA_README),
    bad=LIVE_LLAMA,
    good=LIVE_GOOD,
)
NEW_TURN_KEEPS_REASONING = rule(
    "RPL103", "new-turn-keeps-reasoning", "info",
    "with a new user message the server still renders the earlier turn's reasoning (new turn: exact {exact} "
    "cached tokens, dropped {dropped}, altered {altered}): a client that leaves it out, as the case-file rule "
    "allows, loses the prefix cache from there",
    summary="Live replay: flags a server whose prefix cache reuses more of a new user turn when the earlier "
            "turn's reasoning is sent back than when it is dropped, that is, whose template keeps earlier turns' "
            "reasoning in the prompt.",
    why="The case-file rule sends no reasoning for earlier turns, and templates such as Qwen3 and GLM-4.5 drop it "
        "at a new user message anyway (equal reuse for exact, dropped and altered reasoning, as llama-server "
        "shows). A template that keeps it renders a different prompt for clients that follow the rule, so their "
        "prefix cache ends where the earlier reasoning was: information for choosing what to send back to "
        "this server.",
    sources=(SPEC5, CASES, LLAMA_README),
    bad="replay/live/RPL103-new-turn-keeps-reasoning.json",
    good=LIVE_GOOD,
)
REPLAYED_REASONING_REJECTED = rule(
    "RPL104", "replayed-reasoning-rejected", "error",
    "the server rejected the {family} request that sends the reasoning back exactly as it emitted it: "
    "HTTP {status}{error}{control}",
    summary="Live replay: flags an HTTP error answer to a stateless turn 2 that sends turn 1's reasoning back "
            "unchanged (the Responses reasoning item as emitted, chat `reasoning_content`, or the Messages "
            "thinking and redacted_thinking blocks with their signatures).",
    why="A server must accept its own output back: clients are told to pass reasoning items back unchanged "
        "between tool calls, and the case-file rule sends `reasoning_content` in the current turn. llama-server "
        "rejects a replayed reasoning item without `summary` or with an empty `content` (HTTP 400); a server "
        "that rejects the item it emitted itself leaves no client a way to keep the reasoning in a tool loop.",
    sources=(SPEC4, SPEC5, OPENAI_REASONING),
    bad="replay/live/RPL104-replayed-reasoning-rejected.json",
    good=LIVE_GOOD,
)
REPLAY_CACHE_UNMEASURED = rule(
    "RPL105", "replay-cache-unmeasured", "info",
    "the live replay cannot measure the prefix cache: {reason}",
    summary="Live replay: says why the cache reuse could not be compared: turn 1 produced no reasoning, or the "
            "server reported no cached tokens (neither `cached_tokens` in `usage` nor llama.cpp's "
            "`timings.cache_n`), or 0 on every request.",
    why="Without a reuse count the exact, dropped and altered replays cannot be compared, so no cache finding "
        "is possible; the table then only shows what was sent and answered. OpenAI caches nothing below 1024 "
        "prompt tokens, so its short replays report 0; llama-server builds before February 2026 report "
        "`timings.cache_n` only.",
    sources=(SPEC4, "OpenAI prompt caching guide (prompts of 1024 tokens or more)"),
    bad="replay/live/RPL105-replay-cache-unmeasured.json",
    good=LIVE_GOOD,
)
REPLAY_CONTROL_REJECTED = rule(
    "RPL106", "replay-control-rejected", "info",
    "the {family} control with the reasoning {variant} was rejected: HTTP {status}{error}",
    summary="Live replay: notes an HTTP error answer to a control request, the turn 2 that drops the reasoning "
            "or alters one word of it.",
    why="A server may insist on the reasoning as emitted (DeepSeek rejects a tool-call stretch without "
        "`reasoning_content`, Anthropic thinking without a valid signature, OpenAI an `encrypted_content` that "
        "does not match), so only the exact replay must be accepted (RPL104). The rejection is shown because "
        "that control then gives no cache number to compare with.",
    sources=(SPEC5, DEEPSEEK_400, ANTHROPIC_400),
    bad="replay/live/RPL106-replay-control-rejected.json",
    good=LIVE_GOOD,
)
