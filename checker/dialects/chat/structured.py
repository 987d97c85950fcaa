"""Structured output in Chat Completions: ``response_format`` and the choices' ``content`` it applies to
(docs/spec.md §8)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from checker.dialects.base import StreamSummary
from checker.structured_output import Answer, RequestedFormat, json_schema_format

# The finish reason of a whole answer; "length" cuts it (said, not judged); "content_filter" and "tool_calls"
# end it otherwise (the content before calls is no answer of the format).
WHOLE, CUT = "stop", "length"


def requested_format(request: Mapping[str, Any] | None) -> RequestedFormat | None:
    """``response_format`` of the request, when it asks for JSON (the schema under ``json_schema``)."""
    value = request.get("response_format") if isinstance(request, Mapping) else None
    return json_schema_format(value, "response_format", nested="json_schema")


def answer_texts(summary: StreamSummary) -> list[Answer] | None:
    """The content of every choice that finished with "stop" or "length" and sent no refusal (openai-node
    parses each choice's content, openai-python's parse helpers too)."""
    answers = []
    for choice in summary.texts or ():
        parts = {part.get("type"): part.get("text") for part in choice.get("content") or ()}
        finish = choice.get("finish_reason")
        if finish not in (WHOLE, CUT) or parts.get("refusal"):
            continue
        answers.append(Answer(f"choice {choice.get('output_index')}", str(parts.get("content") or ""),
                              cut=f"finish_reason {CUT}" if finish == CUT else None))
    return answers


def nonstream_answers(completion: Mapping[str, Any]) -> list[Answer] | None:
    """The same texts of a non-streamed completion: each choice's ``message.content`` when it finished with
    "stop" or "length" and holds no refusal (openai-python's ``chat.completions.parse()`` parses each)."""
    choices = completion.get("choices")
    answers = []
    for position, choice in enumerate(choices if isinstance(choices, list) else ()):
        if not isinstance(choice, Mapping):
            continue
        raw = choice.get("message")
        message: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
        finish = choice.get("finish_reason")
        if finish not in (WHOLE, CUT) or message.get("refusal"):
            continue
        index = choice.get("index", position)
        content = message.get("content")
        answers.append(Answer(f"choice {index}", content if isinstance(content, str) else "",
                              cut=f"finish_reason {CUT}" if finish == CUT else None))
    return answers
