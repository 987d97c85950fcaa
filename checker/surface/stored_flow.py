"""A stored-response flow's verdicts from its answers, and the saved form of a flow (``*.flow.json``).

:func:`check_flow` reads the answers of the steps named in :data:`STEPS` (any may be missing: its features
are then not checked) and gives the capability rows of the stored-response features, in a fixed order, with
their STO findings. A resumed stream is also checked as what it is, a stream: the events up to N from the
create and the resumed ones after them are linted together by the engine, and the findings the create's own
stream did not have (a repeated or missing ``sequence_number``, a second ``response.created``) count against
resumption. Pure: the probe's live flow and ``captures/stored/*.flow.json`` go through the same function.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import parse_qs, urlsplit

from checker.engine import EngineOptions, LintResult, StreamLinter
from checker.findings import Finding
from checker.sse import SSEEvent, decode_all
from checker.surface import stored_checks as checks
from checker.surface.stored_answers import Answer, Verdict, final_response

# The steps of a stored-response flow, by name: what each asks (see checker.surface.stored for the requests).
STEPS: dict[str, str] = {
    "create": "POST /v1/responses, streamed, store: true, a function call asked",
    "retrieve": "GET /v1/responses/{id}",
    "input_items": "GET /v1/responses/{id}/input_items?order=asc",
    "resume": "GET /v1/responses/{id}?stream=true&starting_after=N",
    "delete": "DELETE /v1/responses/{id}",
    "deleted": "GET /v1/responses/{id} after the DELETE",
    "unknown_previous": "POST /v1/responses with a previous_response_id no response has",
    "background": "POST /v1/responses, background: true, stream: false",
    "poll": "GET /v1/responses/{id} of the background response (poll, poll_2, … in order)",
    "cancel_background": "POST /v1/responses, background: true, to cancel",
    "cancel": "POST /v1/responses/{id}/cancel",
    "cancelled": "GET /v1/responses/{id} after the cancel",
    "conversation_create": "POST /v1/conversations",
    "conversation_get": "GET /v1/conversations/{id}",
    "conversation_delete": "DELETE /v1/conversations/{id}",
    "conversation_deleted": "GET /v1/conversations/{id} after the DELETE",
    "compact": "POST /v1/responses/compact",
    "continue": "POST /v1/responses, previous_response_id and only the function_call_output",
}


def starting_after(answer: Answer | None) -> int | None:
    """The N of a resumption request's ``starting_after=N``."""
    if answer is None:
        return None
    values = parse_qs(urlsplit(answer.path).query).get("starting_after")
    try:
        return int(values[0]) if values else None
    except ValueError:
        return None


def check_flow(answers: Sequence[Answer], *, lint_options: EngineOptions = EngineOptions()) -> list[Verdict]:
    """The capability rows of the stored-response features, from a flow's answers (in the order asked)."""
    # A step that got no answer (no connection, or a replay server without its capture) was as good as not asked.
    answers = [answer for answer in answers if answer.status is not None]
    by = {answer.step: answer for answer in answers}
    polls = [answer for answer in answers if answer.step == "poll" or answer.step.startswith("poll_")]
    create = by.get("create")
    elsewhere = any(by[s].ok for s in ("input_items", "resume", "delete") if s in by)
    retrieve = checks.check_retrieve(create, by.get("retrieve"), elsewhere=elsewhere)
    unknown = by.get("unknown_previous")
    unknown_id = (unknown.request or {}).get("previous_response_id") if unknown is not None else None
    return [
        retrieve,
        checks.check_input_items(create, by.get("input_items")),
        _resumption(create, by.get("resume"), lint_options),
        checks.check_delete(create, retrieve.state == "supported" or retrieve.state == "broken" and
                            bool(by.get("retrieve") and by["retrieve"].ok), by.get("delete"), by.get("deleted")),
        checks.check_unknown_previous(unknown, str(unknown_id)),
        checks.check_continuation(create, by.get("continue"), stores=retrieve.state != "unsupported"),
        checks.check_background(by.get("background"), polls),
        checks.check_cancel(by.get("cancel_background"), by.get("cancel"), by.get("cancelled")),
        checks.check_conversations(by.get("conversation_create"), by.get("conversation_get"),
                                   by.get("conversation_delete"), by.get("conversation_deleted")),
        checks.check_compact(by.get("compact")),
    ]


def _resumption(create: Answer | None, resumed: Answer | None, lint_options: EngineOptions) -> Verdict:
    after = starting_after(resumed)
    verdict = checks.check_resume(create, after, resumed)
    if verdict.state not in ("supported", "broken") or create is None or resumed is None or after is None:
        return verdict
    assert create.stream is not None and resumed.stream is not None
    extra = spliced_findings(create.stream, after, resumed.stream, lint_options)
    if extra:
        verdict.findings.extend(extra)
        verdict.state, verdict.why = "broken", verdict.findings[0].message
    return verdict


def _events_up_to(stream: bytes, after: int) -> bytes:
    """The stream's bytes up to the end of its event with sequence_number ``after``."""
    import json  # noqa: PLC0415 - only here

    end = 0
    for event in decode_all(stream):
        if isinstance(event, SSEEvent):
            try:
                number = json.loads(event.data).get("sequence_number")
            except (ValueError, AttributeError):
                continue
            if isinstance(number, int) and number <= after:
                end = event.end_byte
    return stream[:end]


def spliced_findings(stream: bytes, after: int, resumed: bytes, lint_options: EngineOptions) -> list[Finding]:
    """The findings of the create's events up to N followed by the resumed events that the create's own
    stream does not have: what resuming broke, as the stream machine sees it."""
    prefix = _events_up_to(stream, after)
    if prefix and not prefix.endswith((b"\n\n", b"\r\n\r\n", b"\r\r")):
        prefix += b"\n"
    own = {f.code for f in lint_answer(lint_options, stream).findings}
    return [f for f in lint_answer(lint_options, prefix + resumed).findings if f.code not in own]


# --- saved flows ---------------------------------------------------------------------------------------------


def answers_of(record: Mapping[str, Any]) -> list[Answer]:
    """The answers of a saved flow (``{"about", "expect": [codes], "steps": [answer, …]}``)."""
    return [Answer.from_json(step) for step in record.get("steps") or [] if isinstance(step, Mapping)]


def flow_findings(record: Mapping[str, Any]) -> list[Finding]:
    """Every STO (and resumed-stream) finding of a saved flow."""
    return [finding for verdict in check_flow(answers_of(record)) for finding in verdict.findings]


def created_id(answers: Sequence[Answer], step: str = "create") -> str | None:
    """The id of the response a step created (for the next steps' paths)."""
    final = final_response(next((a for a in answers if a.step == step), None))
    return final.get("id") if final else None


def lint_answer(options: EngineOptions, data: bytes, *, request: dict[str, Any] | None = None) -> LintResult:
    """One streamed answer of the flow, linted as ``sse-check lint`` lints a capture."""
    linter = StreamLinter.from_options(options, request=request)
    linter.feed(data)
    return linter.close()
