"""Structured output in the Responses API: ``text.format`` and the ``output_text`` parts it applies to
(docs/spec.md §8)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from checker.dialects.base import StreamSummary
from checker.dialects.responses.vocabulary import COMPLETED, INCOMPLETE
from checker.structured_output import Answer, RequestedFormat, json_schema_format


def requested_format(request: Mapping[str, Any] | None) -> RequestedFormat | None:
    """``text.format`` of the request, when it asks for JSON."""
    text = request.get("text") if isinstance(request, Mapping) else None
    return json_schema_format(text.get("format"), "text.format") if isinstance(text, Mapping) else None


def answer_texts(summary: StreamSummary) -> list[Answer] | None:
    """Every ``output_text`` part of every message item (openai-python's parse_text and openai-node's
    parseResponse parse each such part), when the response completed or is incomplete; a refusal part is no
    text to judge, a failed response has no answer."""
    if summary.terminal not in (COMPLETED, INCOMPLETE):
        return None
    # An incomplete response was cut (by max_output_tokens, or a content filter): its texts are not whole. So is
    # one whose response.completed says status incomplete (vLLM's max_output_tokens cut: captures/vllm):
    # openai-node's parseResponse parses the texts only of a response whose status is completed.
    cut = INCOMPLETE if summary.terminal == INCOMPLETE else None
    if summary.terminal == COMPLETED and summary.terminal_status == "incomplete":
        cut = "status incomplete"
    answers = []
    for item in summary.texts or ():
        if item.get("type") != "message":
            continue
        for part in item.get("content") or ():
            if part.get("type") == "output_text":
                where = item.get("output_index")
                unit = f"output {where}" if where is not None else f"message {item.get('id') or '?'}"
                answers.append(Answer(f"{unit} part {part.get('index')}",
                                      str(part.get("text") or ""), cut=cut))
    return answers


def nonstream_answers(response: Mapping[str, Any]) -> list[Answer] | None:
    """The same texts of a non-streamed Response: every ``output_text`` part of every message item, when its
    ``status`` is completed or incomplete (an incomplete one was cut; openai-python's ``responses.parse()``
    parses each part of a non-streamed answer)."""
    status = response.get("status")
    if status not in ("completed", "incomplete"):
        return None
    cut = "status incomplete" if status == "incomplete" else None
    answers = []
    for index, item in enumerate(_list(response.get("output"))):
        if not isinstance(item, Mapping) or item.get("type") != "message":
            continue
        for number, part in enumerate(_list(item.get("content"))):
            if isinstance(part, Mapping) and part.get("type") == "output_text":
                answers.append(Answer(f"output {index} part {number}", _text(part.get("text")), cut=cut))
    return answers


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""
