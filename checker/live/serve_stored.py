"""Stored responses for the replay server: what OpenAI keeps of a response created with ``store`` on.

The replay server (``checker.live.serve``) hands every Responses answer it replays to
:meth:`StoredResponses.on_answer`. Unless the request says ``"store": false`` (OpenAI's default is to
store), the answer's final Response object (the terminal event's ``response``, or the ``stream: false``
JSON), its events, and the input the request sent are kept under the response's id, and answered by:

* ``GET /v1/responses/{id}``: the Response object, as the stream ended it;
* ``GET /v1/responses/{id}?stream=true&starting_after=N``: the recorded events whose ``sequence_number`` is
  above N (an event without one counts by its position from 0), as a stream: resumption after a cut;
* ``GET /v1/responses/{id}/input_items`` (``order``, ``limit``, ``after``): the input as a ``list`` of items;
* ``DELETE /v1/responses/{id}``: ``{"id", "object": "response", "deleted": true}``, then 404;
* ``POST /v1/responses/{id}/cancel``: a background response not yet done ends ``cancelled``;
* ``POST /v1/responses`` with a ``previous_response_id`` no stored response has: 400, OpenAI's
  ``previous_response_not_found`` error (a request a recorded capture was made for is replayed as recorded);
* ``background: true`` with ``stream: false``: answered ``queued``; each GET moves it on, ``in_progress``
  then the recorded final response;
* ``POST /v1/conversations``, ``GET``/``DELETE /v1/conversations/{id}`` and ``POST /v1/responses/compact``:
  their objects (``conversation``, ``conversation.deleted``, ``response.compaction``) with the request's items.

Ids are the recorded ones: replaying a capture again stores it again under the same id. At most
:data:`STORE_LIMIT` responses are kept (the oldest go first). The ``stored`` fault (``checker.live.faults``)
makes one thing wrong, for the tests of the STO rules: ``unsupported`` answers every endpoint 404 and refuses
``previous_response_id`` as llama-server does; ``differ`` drops the retrieved response's last output item;
``input-items`` lists no input; ``keep-deleted`` answers DELETE but keeps the response; ``accept-unknown``
replays an answer for an unknown ``previous_response_id``; ``error-shape`` refuses it with HTTP 500 and a
``{"detail"}`` body; ``restart`` resumes from the first event and ``skip`` leaves out the first event after N;
``regress`` sends a finished background response back to ``in_progress``; ``cancel-ignored`` answers a
cancel with the response still running; ``lost-context`` refuses a ``function_call_output`` sent after a
known ``previous_response_id`` as if the call were not there; ``conversation-shape`` answers a conversation
without ``created_at`` and ``metadata``; ``compact-shape`` a compaction without its ``output``.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from checker.live.faults import FAULT_HEADER, FaultError, Faults, parse_header
from checker.sse import SSEEvent, decode_all

STORE_LIMIT = 1000
# What OpenAI answers for a previous_response_id it does not know (status 400); clients that recover from a
# lost chain (codex's proxies, the Agents SDK) match the code.
NOT_FOUND_CODE = "previous_response_not_found"
# What llama-server answers on every path it does not serve (the ``unsupported`` defect).
LLAMA_NOT_FOUND = {"error": {"message": "File Not Found", "type": "not_found_error", "code": 404}}
_TERMINAL = ("response.completed", "response.incomplete", "response.failed")
_CALL_TYPES_WITH_CALL_ID = ("function_call_output", "custom_tool_call_output")


@dataclass(slots=True)
class Stored:
    """One stored response."""

    response: dict[str, Any]  # the final Response object
    events: list[tuple[int, str | None, bytes]]  # (sequence number, event name, data) as streamed
    input_items: list[dict[str, Any]]
    background: bool = False
    state: str = "done"  # queued, in_progress, done, cancelled (a background response moves on per poll)
    polls: int = 0


@dataclass(slots=True)
class Conversation:
    id: str
    created_at: int
    metadata: Any
    items: list[dict[str, Any]] = field(default_factory=list)


def _error(status: int, message: str, *, param: str | None = None, code: str | None = None,
           kind: str = "invalid_request_error") -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": kind, "param": param, "code": code}}, status_code=status)


def _not_found(what: str, ident: str) -> JSONResponse:
    return _error(404, f"{what} with id '{ident}' not found.", code="not_found")


def _item_id(prefix: str, *parts: Any) -> str:
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:32]
    return f"{prefix}_{digest}"


def input_items(value: Any, salt: str = "") -> list[dict[str, Any]]:
    """The request's ``input`` as the items OpenAI lists for it: a string is one user message with an
    ``input_text`` part; a message's string content becomes one part; every item gets an id (its own if it
    has one, else a stable one derived from it)."""
    if value is None:
        return []
    entries = [{"role": "user", "content": value}] if isinstance(value, str) else value
    if not isinstance(entries, list):
        return []
    out = []
    for index, entry in enumerate(entries):
        if not isinstance(entry, Mapping):
            continue
        item = dict(entry)
        if item.get("type") in (None, "message"):
            item["type"] = "message"
            content = item.get("content")
            if isinstance(content, str):
                part = "output_text" if item.get("role") == "assistant" else "input_text"
                item["content"] = [{"type": part, "text": content}]
            item.setdefault("status", "completed")
        prefix = "msg" if item["type"] == "message" else "fco" if item["type"] in _CALL_TYPES_WITH_CALL_ID else "itm"
        item.setdefault("id", _item_id(prefix, salt, index, entry))
        out.append(item)
    return out


def _sequence(event: dict[str, Any], position: int) -> int:
    number = event.get("sequence_number")
    return number if isinstance(number, int) and not isinstance(number, bool) else position


def parse_stream(payload: bytes) -> tuple[dict[str, Any] | None, list[tuple[int, str | None, bytes]]]:
    """A recorded stream's final Response object (None without a terminal event) and its JSON events."""
    final: dict[str, Any] | None = None
    events: list[tuple[int, str | None, bytes]] = []
    for decoded in decode_all(payload):
        if not isinstance(decoded, SSEEvent):
            continue
        try:
            obj = json.loads(decoded.data)
        except ValueError:
            continue
        if not isinstance(obj, dict):
            continue
        events.append((_sequence(obj, len(events)), decoded.event, decoded.data))
        if obj.get("type") in _TERMINAL and isinstance(obj.get("response"), dict):
            final = obj["response"]
    return final, events


def _parse_json(payload: bytes) -> dict[str, Any] | None:
    try:
        obj = json.loads(payload)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) and isinstance(obj.get("id"), str) else None


def _frame(events: list[tuple[int, str | None, bytes]]) -> bytes:
    lines = []
    for _, name, data in events:
        lines.append((f"event: {name}\n".encode() if name else b"") + b"data: " + data + b"\n\n")
    return b"".join(lines)


def _in_state(response: dict[str, Any], status: str) -> dict[str, Any]:
    """The response as it reads before it is done (or once cancelled): no output, no usage yet."""
    return {**response, "status": status, "output": [], "usage": None, "completed_at": None}


class StoredResponses:
    """The stored responses and conversations of one replay server, and their routes."""

    def __init__(self, faults: Faults) -> None:
        self.faults = faults
        self._responses: OrderedDict[str, Stored] = OrderedDict()
        self._conversations: dict[str, Conversation] = {}

    # --- the hook in the replay server's POST /v1/responses ----------------------------------------------

    def on_answer(self, body: Mapping[str, Any], by: str, faults: Faults, payload: bytes,
                  recorded_error: bool) -> Response | None:
        """Called with each answer about to be replayed: an answer instead of it (an unknown
        ``previous_response_id``, a background request's ``queued``), or None to replay it as chosen. Only a
        Responses answer is stored: only it ends with a Response object that has an id."""
        if recorded_error:
            return None
        defect = faults.stored
        previous = body.get("previous_response_id")
        if isinstance(previous, str) and previous not in self._responses and by != "request":
            refused = self._refuse_previous(previous, defect)
            if refused is not None:
                return refused
        if defect == "lost-context" and isinstance(previous, str) and previous in self._responses:
            call = next((i for i in body.get("input") or [] if isinstance(i, Mapping) and "call_id" in i), None)
            if call is not None:
                return _error(400, f"No tool call found for function call output with call_id {call['call_id']}.",
                              param="input")
        if defect == "unsupported" or body.get("store") is False:
            return None
        streamed = body.get("stream") is True
        final, events = parse_stream(payload) if streamed else (_parse_json(payload), [])
        if final is None or not isinstance(final.get("id"), str):
            return None
        background = body.get("background") is True
        stored = Stored(response=final, events=events, input_items=input_items(body.get("input"), final["id"]),
                        background=background, state="queued" if background and not streamed else "done")
        self._keep(final["id"], stored)
        if stored.state == "queued":
            return JSONResponse({**_in_state(final, "queued"), "background": True})
        return None

    def _refuse_previous(self, previous: str, defect: str | None) -> Response | None:
        if defect == "accept-unknown":
            return None
        if defect == "unsupported":
            return _error(400, "this server does not support 'previous_response_id'.")
        if defect == "error-shape":
            return JSONResponse({"detail": f"response {previous} not found"}, status_code=500)
        return _error(400, f"Previous response with id '{previous}' not found.", param="previous_response_id",
                      code=NOT_FOUND_CODE)

    def _keep(self, ident: str, stored: Stored) -> None:
        self._responses.pop(ident, None)
        self._responses[ident] = stored
        while len(self._responses) > STORE_LIMIT:
            self._responses.popitem(last=False)

    # --- routes ---------------------------------------------------------------------------------------

    def routes(self) -> list[Route]:
        """The stored-response and conversation endpoints, with and without ``/v1``."""
        table = (
            ("/responses/compact", self.compact, "POST"),
            ("/responses/{response_id}", self.retrieve, "GET"),
            ("/responses/{response_id}", self.delete, "DELETE"),
            ("/responses/{response_id}/input_items", self.list_input_items, "GET"),
            ("/responses/{response_id}/cancel", self.cancel, "POST"),
            ("/conversations", self.create_conversation, "POST"),
            ("/conversations/{conversation_id}", self.get_conversation, "GET"),
            ("/conversations/{conversation_id}", self.delete_conversation, "DELETE"),
        )
        return [Route(prefix + path, endpoint, methods=[method])
                for path, endpoint, method in table for prefix in ("/v1", "")]

    def _defect(self, request: Request) -> tuple[str | None, Response | None]:
        """The request's ``stored`` defect (the server's, overridden by its X-SSE-Check-Fault), or a 400."""
        try:
            overrides = parse_header(request.headers.get(FAULT_HEADER, ""))
        except FaultError as exc:
            return None, _error(400, f"bad X-SSE-Check-Fault header: {exc}")
        defect = self.faults.with_overrides(overrides).stored
        return defect, JSONResponse(LLAMA_NOT_FOUND, status_code=404) if defect == "unsupported" else None

    def _lookup(self, request: Request) -> tuple[str | None, str, Stored] | Response:
        """The request's defect, the response id in its path and what is stored under it; or the answer that
        ends the request early (a bad fault header, an unsupported endpoint, an unknown id)."""
        defect, early = self._defect(request)
        if early is not None:
            return early
        ident = request.path_params["response_id"]
        stored = self._responses.get(ident)
        return _not_found("Response", ident) if stored is None else (defect, ident, stored)

    async def retrieve(self, request: Request) -> Response:
        if isinstance(found := self._lookup(request), Response):
            return found
        defect, ident, stored = found
        if request.query_params.get("stream", "").lower() == "true":
            return self._resume(request, stored, defect)
        response = self._poll(stored, defect)
        if stored.background:
            response = {**response, "background": True}
        if defect == "differ" and response.get("output"):
            response = {**response, "output": response["output"][:-1]}
        return JSONResponse(response)

    def _poll(self, stored: Stored, defect: str | None) -> dict[str, Any]:
        """The response as this GET sees it: a background one moves on by one state per poll."""
        stored.polls += 1
        if stored.state == "queued":
            stored.state = "in_progress"
            return _in_state(stored.response, "in_progress")
        if stored.state == "in_progress":
            stored.state = "done"
        elif stored.state == "cancelled":
            return _in_state(stored.response, "cancelled")
        elif stored.background and defect == "regress" and stored.polls == 3:
            return _in_state(stored.response, "in_progress")
        return stored.response

    def _resume(self, request: Request, stored: Stored, defect: str | None) -> Response:
        after_text = request.query_params.get("starting_after")
        try:
            after = int(after_text) if after_text is not None else None
        except ValueError:
            return _error(400, f"Invalid 'starting_after': {after_text!r} is not an integer.", param="starting_after")
        if not stored.events:
            return _error(400, "This response was not streamed: it has no events to resume.", param="stream")
        events = stored.events if after is None or defect == "restart" else [e for e in stored.events if e[0] > after]
        if defect == "skip" and after is not None:
            events = events[1:]
        return Response(_frame(events), media_type="text/event-stream", headers={"cache-control": "no-cache"})

    async def list_input_items(self, request: Request) -> Response:
        if isinstance(found := self._lookup(request), Response):
            return found
        defect, ident, stored = found
        items = [] if defect == "input-items" else list(stored.input_items)
        return self._page(request, items)

    def _page(self, request: Request, items: list[dict[str, Any]]) -> Response:
        """One page of a list, as OpenAI pages lists: ``order`` (default desc), ``after`` an id, ``limit``."""
        order = request.query_params.get("order", "desc")
        if order not in ("asc", "desc"):
            return _error(400, f"Invalid 'order': {order!r} (asc or desc).", param="order")
        try:
            limit = int(request.query_params.get("limit", "20"))
        except ValueError:
            limit = 0
        if not 1 <= limit <= 100:
            return _error(400, "Invalid 'limit': an integer from 1 to 100.", param="limit")
        ordered = items if order == "asc" else items[::-1]
        after = request.query_params.get("after")
        if after is not None:
            ids = [item.get("id") for item in ordered]
            ordered = ordered[ids.index(after) + 1:] if after in ids else []
        page = ordered[:limit]
        return JSONResponse({"object": "list", "data": page, "first_id": page[0]["id"] if page else None,
                             "last_id": page[-1]["id"] if page else None, "has_more": len(ordered) > limit})

    async def delete(self, request: Request) -> Response:
        if isinstance(found := self._lookup(request), Response):
            return found
        defect, ident, stored = found
        if defect != "keep-deleted":
            del self._responses[ident]
        return JSONResponse({"id": ident, "object": "response", "deleted": True})

    async def cancel(self, request: Request) -> Response:
        if isinstance(found := self._lookup(request), Response):
            return found
        defect, ident, stored = found
        if not stored.background:
            return _error(400, "Only responses created with background=true can be cancelled.", param="response_id")
        if stored.state in ("queued", "in_progress") and defect != "cancel-ignored":
            stored.state = "cancelled"
        answer = stored.response if stored.state == "done" else _in_state(stored.response, stored.state)
        return JSONResponse({**answer, "background": True})

    # --- compaction and conversations ---------------------------------------------------------------------

    async def _body(self, request: Request) -> tuple[dict[str, Any] | None, Response | None]:
        defect, early = self._defect(request)
        if early is not None:
            return None, early
        try:
            body = json.loads(await request.body() or b"{}")
        except ValueError:
            body = None
        if not isinstance(body, dict):
            return None, _error(400, "The body must be a JSON object.")
        return body, None

    async def compact(self, request: Request) -> Response:
        body, early = await self._body(request)
        if body is None:
            return early or _error(400, "bad request")
        items = input_items(body.get("input"), "compact")
        previous = body.get("previous_response_id")
        if isinstance(previous, str):
            if previous not in self._responses:
                return self._refuse_previous(previous, None) or _error(400, "bad request")
            earlier = self._responses[previous]
            items = earlier.input_items + [i for i in earlier.response.get("output") or [] if isinstance(i, dict)] + items
        kept = [item for item in items if item.get("type") == "message" and item.get("role") == "user"]
        summary = {"id": _item_id("cmp", items), "type": "compaction", "encrypted_content": _item_id("enc", items)}
        output = None if self._defect(request)[0] == "compact-shape" else [*kept, summary]
        tokens = len(json.dumps(items)) // 4
        usage = {"input_tokens": tokens, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 1,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": tokens + 1}
        return JSONResponse({"id": _item_id("resp", "compact", items), "object": "response.compaction",
                             "created_at": int(time.time()), "output": output, "usage": usage})

    async def create_conversation(self, request: Request) -> Response:
        body, early = await self._body(request)
        if body is None:
            return early or _error(400, "bad request")
        created = int(time.time())
        ident = _item_id("conv", body, created, len(self._conversations))
        conversation = Conversation(ident, created, body.get("metadata") or {}, input_items(body.get("items"), ident))
        self._conversations[ident] = conversation
        answer = _conversation_object(conversation)
        if self._defect(request)[0] == "conversation-shape":
            answer = {"id": answer["id"], "object": "conversation"}
        return JSONResponse(answer)

    async def get_conversation(self, request: Request) -> Response:
        defect, early = self._defect(request)
        if early is not None:
            return early
        ident = request.path_params["conversation_id"]
        conversation = self._conversations.get(ident)
        return JSONResponse(_conversation_object(conversation)) if conversation else _not_found("Conversation", ident)

    async def delete_conversation(self, request: Request) -> Response:
        defect, early = self._defect(request)
        if early is not None:
            return early
        ident = request.path_params["conversation_id"]
        if self._conversations.pop(ident, None) is None:
            return _not_found("Conversation", ident)
        return JSONResponse({"id": ident, "object": "conversation.deleted", "deleted": True})


def _conversation_object(conversation: Conversation) -> dict[str, Any]:
    return {"id": conversation.id, "object": "conversation", "created_at": conversation.created_at,
            "metadata": conversation.metadata}
