"""The stored-response checks (STO rules), one function per feature: pure functions of a flow's answers.

Each check reads the :class:`checker.surface.stored_answers.Answer`s of the steps its feature needs and gives
a :class:`checker.surface.stored_answers.Verdict`: supported, unsupported (the server does not offer it: 404,
405, 501, or an error that says so), broken (with its STO findings) or not checked (a step it needs failed
first). A feature the server does not offer is never a finding.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from checker.rules import stored as rules
from checker.surface.stored_answers import (
    START,
    TERMINAL,
    Answer,
    Verdict,
    absent,
    broken,
    error_of,
    final_response,
    item_difference,
    message_of,
    not_checked,
    outcome,
    response_differences,
    same,
    sent_items,
    stream_events,
    unsupported,
)

RUNNING = ("queued", "in_progress")

def check_retrieve(create: Answer | None, retrieve: Answer | None, *, elsewhere: bool = False) -> Verdict:
    """GET /v1/responses/{id} against the streamed create. ``elsewhere``: another stored-response endpoint
    answered for the same id (so a 404 here is a loss, not an absent feature)."""
    feature = "retrieve"
    streamed = final_response(create)
    if streamed is None or retrieve is None:
        return not_checked(feature, "the streamed create with store: true gave no final response")
    if retrieve.ok:
        diffs = response_differences(streamed, retrieve.body)
        found = [rules.STORED_DIFFERS.finding(START, id=streamed["id"], detail="; ".join(diffs[:3]))] if diffs else []
        return outcome(feature, found, "GET /v1/responses/{id} equals the streamed response")
    claims = "its Response says store: true" if streamed.get("store") is True else \
        "another stored-response endpoint answers for it" if elsewhere else ""
    if absent(retrieve) and not claims:
        return unsupported(feature, retrieve)
    claim = claims or f"HTTP {retrieve.status} is no refusal of the feature"
    return broken(feature, [rules.STORED_LOST.finding(START, what="GET /v1/responses/{id}", status=retrieve.status,
                                                       id=streamed["id"], claim=claim)])


def check_input_items(create: Answer | None, listed: Answer | None) -> Verdict:
    """GET /v1/responses/{id}/input_items?order=asc against the input the create sent."""
    feature = "input_items"
    streamed = final_response(create)
    if streamed is None or listed is None or create is None:
        return not_checked(feature, "the streamed create with store: true gave no final response")
    if absent(listed):
        return unsupported(feature, listed)
    ident = streamed["id"]
    if not listed.ok:
        return broken(feature, [rules.INPUT_ITEMS_DIFFER.finding(START, id=ident,
                                                                  detail=f"answered HTTP {listed.status}")])
    detail = _list_shape(listed.body) or _list_content(sent_items((create.request or {}).get("input")), listed.body)
    found = [rules.INPUT_ITEMS_DIFFER.finding(START, id=ident, detail=detail)] if detail else []
    return outcome(feature, found, "input_items lists the input sent, in order")


def _list_shape(body: Any) -> str | None:
    if not isinstance(body, dict) or body.get("object") != "list" or not isinstance(body.get("data"), list):
        return "is not a list object ({\"object\": \"list\", \"data\": [...]})"
    missing = [k for k in ("first_id", "last_id", "has_more") if k not in body]
    if missing:
        return f"has no {', '.join(missing)}"
    data = body["data"]
    ids = [item.get("id") if isinstance(item, dict) else None for item in data]
    if any(not isinstance(i, str) for i in ids):
        return "lists an item without an id (the list is paged by item id)"
    if data and (body.get("first_id") != ids[0] or body.get("last_id") != ids[-1]):
        return "has first_id/last_id that are not its first and last items' ids"
    return None


def _list_content(sent: list[dict[str, Any]], body: Mapping[str, Any]) -> str | None:
    data = body["data"]
    if body.get("has_more") is True and len(data) < len(sent):
        return None  # a page: only what it shows can be compared
    if len(data) != len(sent):
        return f"lists {len(data)} items, the request sent {len(sent)}"
    for index, (item, listed) in enumerate(zip(sent, data)):
        why = item_difference(item, listed)
        if why:
            return f"item {index} {why}"
    return None


def check_delete(create: Answer | None, retrieved: bool, delete: Answer | None, after: Answer | None) -> Verdict:
    """DELETE /v1/responses/{id}, then GET: 404. Only asked of a response GET could retrieve."""
    feature = "delete"
    streamed = final_response(create)
    if delete is not None and absent(delete):
        return unsupported(feature, delete)
    if streamed is None or delete is None or not retrieved:
        return not_checked(feature, "no stored response could be retrieved to delete")
    ident = streamed["id"]
    detail = None
    if not delete.ok:
        detail = f"answered HTTP {delete.status} for a response GET had just answered"
    elif after is not None and after.ok:
        detail = f"answered HTTP {delete.status}, but GET still answers the response afterwards"
    elif after is not None and after.status != 404:
        detail = f"answered HTTP {delete.status}, then GET answered HTTP {after.status} instead of 404"
    found = [rules.DELETE_NOT_HONOURED.finding(START, id=ident, detail=detail)] if detail else []
    return outcome(feature, found, "DELETE, then GET answers 404")


def check_unknown_previous(answer: Answer | None, unknown: str) -> Verdict:
    """A create with a ``previous_response_id`` that no response has: 400 (or 404) with an OpenAI error."""
    feature = "previous_response_id"
    if answer is None:
        return not_checked(feature, "not asked")
    if answer.ok:
        return broken(feature, [rules.UNKNOWN_PREVIOUS_ACCEPTED.finding(START, id=unknown, status=answer.status)])
    if absent(answer) and "not found" not in message_of(answer).lower():
        return unsupported(feature, answer)
    error = error_of(answer)
    problems = []
    if answer.status not in (400, 404):
        problems.append(f"HTTP {answer.status}")
    if error is None or not isinstance(error.get("message"), str) or "type" not in error:
        problems.append("a body that is not {\"error\": {\"message\", \"type\", \"param\", \"code\"}}")
    if problems:
        return broken(feature, [rules.UNKNOWN_PREVIOUS_WRONG_ERROR.finding(START, id=unknown,
                                                                             detail=" and ".join(problems))])
    return Verdict(feature, "supported", f"an unknown id is refused with HTTP {answer.status} "
                                         f"({error.get('code') if error else None})")


def check_resume(create: Answer | None, after: int | None, resumed: Answer | None) -> Verdict:
    """GET /v1/responses/{id}?stream=true&starting_after=N: exactly the stream's events after N, in order."""
    feature = "resumption"
    streamed = final_response(create)
    if streamed is None or create is None or create.stream is None or resumed is None or after is None:
        return not_checked(feature, "no streamed response with sequence numbers to resume")
    if not resumed.ok:
        return unsupported(feature, resumed)  # a refusal (only background responses, say) or no such feature
    original = stream_events(create.stream)
    if not any(_seq(e) is not None for e in original):
        return not_checked(feature, "offered, but the stream has no sequence_number to resume after")
    expected = [e for e in original if _seq(e) is not None and _seq(e) > after]  # type: ignore[operator]
    got = stream_events(resumed.stream or b"")
    detail = resumption_difference(expected, got, after)
    found = [rules.RESUMPTION_WRONG.finding(START, id=streamed["id"], after=after, detail=detail)] if detail else []
    return outcome(feature, found, f"the {len(expected)} events after sequence_number {after}, as streamed")


def _seq(event: Mapping[str, Any]) -> int | None:
    number = event.get("sequence_number")
    return number if isinstance(number, int) and not isinstance(number, bool) else None


def resumption_difference(expected: Sequence[Mapping[str, Any]], got: Sequence[Mapping[str, Any]],
                          after: int) -> str | None:
    """Why a resumed stream is not the expected events (None when it is)."""
    if not got:
        return f"no events, expected {len(expected)}" if expected else None
    first, want = _seq(got[0]), _seq(expected[0]) if expected else None
    if first is not None and first <= after:
        return f"it starts at sequence_number {first}, not after {after}" + \
            (" (it restarts from the beginning)" if got[0].get("type") == "response.created" else "")
    if want is not None and first is not None and first > want:
        return f"it starts at sequence_number {first}: the events from {want} are skipped"
    for index, (a, b) in enumerate(zip(expected, got)):
        if not same(a, b):
            return f"its event {index} ({b.get('type')}, sequence_number {_seq(b)}) is not the stream's " \
                   f"({a.get('type')}, sequence_number {_seq(a)})"
    if len(got) != len(expected):
        return f"{len(got)} events, the stream had {len(expected)} after it"
    return None


def check_background(create: Answer | None, polls: Sequence[Answer]) -> Verdict:
    """``background: true``: queued or in_progress, then polled to a terminal status, never back."""
    feature = "background"
    if create is None:
        return not_checked(feature, "not asked")
    if not create.ok:
        return unsupported(feature, create) if absent(create) or create.status in (400, 422) else \
            not_checked(feature, f"the background create answered HTTP {create.status}")
    first = final_response(create) or (create.body if isinstance(create.body, dict) else {})
    ident, status = first.get("id"), first.get("status")
    if status in TERMINAL and all(absent(p) for p in polls):
        return Verdict(feature, "unsupported", f"answered in the foreground (status {status} at once)")
    statuses = [status] + [(p.body or {}).get("status") if p.ok and isinstance(p.body, dict) else p.status
                           for p in polls]
    detail = status_path_problem(statuses)
    if detail is None and statuses[-1] in RUNNING:
        return not_checked(feature, f"still {statuses[-1]} after {len(polls)} polls (a slow answer, not a defect)")
    found = [rules.BACKGROUND_STATUS_WRONG.finding(START, id=ident, detail=detail)] if detail else []
    return outcome(feature, found, " → ".join(str(s) for s in dict.fromkeys(statuses)))


def status_path_problem(statuses: Sequence[Any]) -> str | None:
    """Why a sequence of polled statuses is no path queued → in_progress → terminal (None when it is, also when
    it has not ended yet: polling stops at a budget, and a slow answer is no defect)."""
    rank = {"queued": 0, "in_progress": 1}
    for index, status in enumerate(statuses):
        if isinstance(status, int):
            return f"poll {index} answered HTTP {status}"
        if status not in rank and status not in TERMINAL:
            return f"poll {index} says status {status!r}, which is no status of a response"
        if index:
            before = statuses[index - 1]
            if before in TERMINAL and status != before:
                return f"poll {index} says {status} after {before}: a finished response changed"
            if before in rank and status in rank and rank[status] < rank[before]:
                return f"poll {index} says {status} after {before}: it went back"
    return None


def check_cancel(create: Answer | None, cancel: Answer | None, after: Answer | None) -> Verdict:
    """POST /v1/responses/{id}/cancel of a running background response: ``cancelled``, and it stays so."""
    feature = "cancel"
    running = final_response(create) if create is not None and create.stream is None else None
    if cancel is not None and absent(cancel):
        return unsupported(feature, cancel)
    if running is None or cancel is None or running.get("status") not in RUNNING:
        return not_checked(feature, "no background response was running to cancel")
    ident = running["id"]
    status = cancel.body.get("status") if cancel.ok and isinstance(cancel.body, dict) else None
    detail = None
    if not cancel.ok:
        detail = f"answered HTTP {cancel.status} for a running background response"
    elif status not in TERMINAL:
        detail = f"answered status {status!r}: the response runs on"
    elif after is not None and isinstance(after.body, dict) and after.body.get("status") != status:
        detail = f"answered {status}, but the next GET says {after.body.get('status')!r}"
    found = [rules.CANCEL_NOT_HONOURED.finding(START, id=ident, detail=detail)] if detail else []
    return outcome(feature, found, f"a running background response ends {status}")


def check_conversations(create: Answer | None, get: Answer | None, delete: Answer | None,
                        after: Answer | None) -> Verdict:
    """POST /v1/conversations, GET and DELETE it, GET again (404)."""
    feature = "conversations"
    if create is None:
        return not_checked(feature, "not asked")
    if absent(create):
        return unsupported(feature, create)
    problem = _conversation_problem("POST /v1/conversations", create, "conversation")
    ident = create.body.get("id") if isinstance(create.body, dict) else None
    if problem is None and get is not None:
        problem = _conversation_problem("GET /v1/conversations/{id}", get, "conversation", ident)
    if problem is None and delete is not None:
        problem = _conversation_problem("DELETE /v1/conversations/{id}", delete, "conversation.deleted", ident)
    if problem is None and after is not None and after.status != 404:
        problem = ("GET /v1/conversations/{id}", f"HTTP {after.status} after the conversation was deleted, not 404")
    found = [rules.CONVERSATION_MALFORMED.finding(START, endpoint=problem[0], detail=problem[1])] if problem else []
    return outcome(feature, found, "create, retrieve and delete answer their objects")


def _conversation_problem(endpoint: str, answer: Answer, kind: str,
                          ident: Any = None) -> tuple[str, str] | None:
    if not answer.ok:
        return endpoint, f"HTTP {answer.status}"
    body = answer.body
    if not isinstance(body, dict) or body.get("object") != kind:
        return endpoint, f"no {kind} object"
    if not isinstance(body.get("id"), str) or (ident is not None and body["id"] != ident):
        return endpoint, f"a {kind} object with id {body.get('id')!r}" + (f", not {ident!r}" if ident else "")
    if kind == "conversation" and (not isinstance(body.get("created_at"), int) or "metadata" not in body):
        return endpoint, "a conversation without created_at or metadata"
    if kind == "conversation.deleted" and body.get("deleted") is not True:
        return endpoint, "a conversation.deleted object that does not say deleted: true"
    return None


def check_compact(answer: Answer | None) -> Verdict:
    """POST /v1/responses/compact: a ``response.compaction`` object."""
    feature = "compact"
    if answer is None:
        return not_checked(feature, "not asked")
    if absent(answer):
        return unsupported(feature, answer)
    body = answer.body
    detail: str | None
    if not answer.ok:
        detail = f"HTTP {answer.status}"
    elif not isinstance(body, dict) or body.get("object") != "response.compaction":
        detail = "no response.compaction object"
    elif not isinstance(body.get("output"), list) or not all(isinstance(i, dict) and "type" in i
                                                             for i in body["output"]):
        detail = "a compaction without an output list of items"
    else:
        missing = [k for k in ("id", "created_at", "usage") if k not in body]
        detail = f"a compaction without {', '.join(missing)}" if missing else None
    found = [rules.COMPACTION_MALFORMED.finding(START, detail=detail)] if detail else []
    return outcome(feature, found, "a response.compaction object")


def function_call(answer: Answer | None) -> dict[str, Any] | None:
    """The first function call of an answer's final response."""
    final = final_response(answer)
    for item in (final or {}).get("output") or []:
        if isinstance(item, dict) and item.get("type") == "function_call" and isinstance(item.get("call_id"), str):
            return item
    return None


def check_continuation(call: Answer | None, cont: Answer | None, *, stores: bool) -> Verdict:
    """The stateful continuation of a function call: ``previous_response_id`` and only its output. ``stores``:
    the server retrieves stored responses (so a refusal is a failure, not an absent feature)."""
    feature = "stateful tool use"
    first = final_response(call)
    if first is None or function_call(call) is None or cont is None:
        return not_checked(feature, "the first request with store: true made no function call")
    ident = first["id"]
    if not cont.ok:
        if absent(cont) or not stores:
            return unsupported(feature, cont)
        return broken(feature, [rules.CONTINUATION_REFUSED.finding(
            START, id=ident, status=cont.status, message=f"({message_of(cont)})" if message_of(cont) else "")])
    answer = final_response(cont)
    if answer is None:
        return not_checked(feature, "the continuation gave no final response")
    echoed = answer.get("previous_response_id")
    found = [] if echoed == ident else [rules.PREVIOUS_NOT_ECHOED.finding(START, id=ident, echoed=repr(echoed))]
    return outcome(feature, found, "previous_response_id with only the function_call_output is answered")
