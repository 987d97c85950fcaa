"""Structured output in Anthropic Messages: ``output_config.format`` (the beta's ``output_format``) and the text
blocks it applies to (docs/spec.md §8)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from checker.dialects.base import StreamSummary
from checker.dialects.messages.vocabulary import TEXT
from checker.structured_output import Answer, RequestedFormat, json_schema_format

# The stop reason of a whole answer; max_tokens cuts it (said, not judged); stop_sequence cuts it where the
# caller asked, tool_use and pause_turn leave it unfinished, and after a refusal the text need not match the
# schema (Anthropic's structured outputs docs).
WHOLE, CUT = "end_turn", "max_tokens"


def requested_format(request: Mapping[str, Any] | None) -> RequestedFormat | None:
    """``output_config.format`` (or the beta's top-level ``output_format``), when it asks for JSON. Anthropic's
    structured outputs are constrained decoding: always strict."""
    if not isinstance(request, Mapping):
        return None
    config = request.get("output_config")
    if isinstance(config, Mapping) and config.get("format") is not None:
        return json_schema_format(config.get("format"), "output_config.format", strict_default=True)
    return json_schema_format(request.get("output_format"), "output_format", strict_default=True)


def answer_texts(summary: StreamSummary) -> list[Answer] | None:
    """Every text block of a message that ended with end_turn or max_tokens (anthropic-python's parse reads
    each)."""
    if summary.stop_reason not in (WHOLE, CUT):
        return None
    cut = f"stop_reason {CUT}" if summary.stop_reason == CUT else None
    return [Answer(f"block {block.get('index')}", str(block.get("text") or ""), cut=cut)
            for block in summary.texts or () if block.get("type") == TEXT]


def nonstream_answers(message: Mapping[str, Any]) -> list[Answer] | None:
    """The same texts of a non-streamed Message: every text block, when it ended with end_turn or max_tokens
    (anthropic-python's ``messages.parse()`` parses a non-streamed message's text blocks)."""
    reason = message.get("stop_reason")
    if reason not in (WHOLE, CUT):
        return None
    cut = f"stop_reason {CUT}" if reason == CUT else None
    content = message.get("content")
    return [Answer(f"block {index}", block["text"] if isinstance(block.get("text"), str) else "", cut=cut)
            for index, block in enumerate(content if isinstance(content, list) else ())
            if isinstance(block, Mapping) and block.get("type") == TEXT]
