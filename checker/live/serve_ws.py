"""The replay server's WebSocket mode: ``ws://HOST/v1/responses`` answered from the recorded captures, with faults.

The Responses API's WebSocket mode (docs/websocket.md): the client sends ``{"type": "response.create", …}``
text messages on one connection; for each, this server picks a Responses capture as ``POST /v1/responses``
does (:meth:`checker.live.serve.Catalogue.select`: the scenario named for it, the body's ``model``, the
recorded request that matches, the ``--default``) and sends the capture's events, one JSON event per text
message, in order. A capture recorded with an error status is answered as an ``error`` event
(``{"type": "error", "status": 400, "error": {…}}``). Several responses follow one another on the
connection; ``previous_response_id`` must name a response this connection answered, else the answer is the
``previous_response_not_found`` error event.

Which scenario answers which ``response.create``: the handshake's ``X-SSE-Check-Scenario`` header lists
them in order, comma-separated (``plain_text,parallel_calls``), each with alternatives tried in turn
(``reasoning_one_call|reasoning_text``); past the list (or without it) the body decides. A name the server
has no capture for is the ``scenario_not_found`` error event, as over HTTP.

Faults, for client authors who test against broken servers, come in the handshake's
``X-SSE-Check-WS-Fault`` header (``binary=3;close-after=5``), applied to every response on the connection:
see :data:`FAULTS`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from starlette.responses import JSONResponse
from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from checker.sse import SSEDecoder, SSEEvent

if TYPE_CHECKING:
    from checker.live.serve import Capture, Replayer

WS_FAULT_HEADER = "x-sse-check-ws-fault"
SCENARIO_HEADER = "x-sse-check-scenario"
KIND = "responses"

# The faults, by the name the header uses: what each does to every response of the connection.
FAULTS: dict[str, str] = {
    "binary": "send the N-th event of each response in a binary frame (N=1 when no value is given)",
    "join": "send the N-th and the next event of each response in one message",
    "split": "send the N-th event of each response as two messages, each half of it",
    "swap": "send the N-th and the next event of each response in the wrong order",
    "interleave": "send a second response's events (another response id) between each response's",
    "close-after": "close the connection after N events of the first response (mid-response)",
    "close-code": "the close code of close-after (default 1011; 1000 is a normal close mid-response)",
    "stall-after": "send nothing more after N events of the first response, without closing",
    "close-after-response": "close the connection (1000) once the first response is complete: one response a connection",
    "flat-error": "send error events in the SSE stream's flat shape (code, message at the top)",
    "refuse-continuation": "answer previous_response_not_found even for a response of this connection",
    "refuse": "refuse the upgrade with HTTP N (404 when no value is given; 426, 405: as servers without the mode do)",
}
_FLAGS = ("interleave", "flat-error", "refuse-continuation", "close-after-response")


class WsFaultError(ValueError):
    """A fault the header names wrongly: the connection is refused with an error event, then closed."""


@dataclass(frozen=True, slots=True, kw_only=True)
class WsFaults:
    binary: int | None = None
    join: int | None = None
    split: int | None = None
    swap: int | None = None
    interleave: bool = False
    close_after: int | None = None
    close_code: int = 1011
    stall_after: int | None = None
    close_after_response: bool = False
    flat_error: bool = False
    refuse_continuation: bool = False
    refuse: int | None = None


def parse_ws_faults(text: str) -> WsFaults:
    """``binary=3;close-after=5`` as :class:`WsFaults`; a wrong name or value is a :class:`WsFaultError`."""
    values: dict[str, Any] = {}
    for part in (p.strip() for p in text.split(";")):
        if not part:
            continue
        name, _, raw = (s.strip() for s in part.partition("="))
        if name not in FAULTS:
            raise WsFaultError(f"unknown fault {name!r} (known: {', '.join(FAULTS)})")
        if name in _FLAGS:
            values[name.replace("-", "_")] = raw.lower() not in ("0", "false", "no")
            continue
        try:
            number = int(raw) if raw else 1
        except ValueError:
            raise WsFaultError(f"{name}={raw!r}: not a whole number") from None
        if name == "refuse":
            number = int(raw) if raw else 404
            if not 400 <= number <= 599:
                raise WsFaultError(f"{name}={number}: not an HTTP error status (400-599)")
        elif number < (1000 if name == "close-code" else 1):
            raise WsFaultError(f"{name}={number}: out of range")
        values[name.replace("-", "_")] = number
    return WsFaults(**values)


# --- what is sent ------------------------------------------------------------------------------------------


def capture_events(body: bytes) -> list[str]:
    """The data of each event of an SSE capture (``[DONE]`` left out: it is no event over WebSocket)."""
    decoder = SSEDecoder()
    items = decoder.feed(body) + decoder.close()
    return [i.data.decode("utf-8", "replace") for i in items if isinstance(i, SSEEvent) and i.data != b"[DONE]"]


def response_id(events: Sequence[str]) -> str | None:
    for text in events[:3]:
        try:
            response = json.loads(text).get("response")
        except (ValueError, AttributeError):
            continue
        if isinstance(response, dict) and isinstance(response.get("id"), str):
            return str(response["id"])
    return None


Frame = tuple[str, str | bytes]  # ("text", str) or ("binary", bytes)


def frames(events: list[str], faults: WsFaults) -> list[Frame]:
    """The messages one response is sent as, the faults applied (positions are 1-based event numbers)."""
    events = list(events)
    if faults.interleave:
        rid = response_id(events)
        other = [e.replace(rid, rid + "_interleaved") for e in events] if rid else list(events)
        events = [e for pair in zip(events, other) for e in pair] + events[len(other):]
    if faults.swap is not None and faults.swap < len(events):
        i = faults.swap - 1
        events[i], events[i + 1] = events[i + 1], events[i]
    out: list[Frame] = []
    skip = False
    for number, text in enumerate(events, start=1):
        if skip:
            skip = False
            continue
        if number == faults.join and number < len(events):
            out.append(("text", text + "\n" + events[number]))
            skip = True
        elif number == faults.split:
            half = len(text) // 2
            out += [("text", text[:half]), ("text", text[half:])]
        elif number == faults.binary:
            out.append(("binary", text.encode("utf-8")))
        else:
            out.append(("text", text))
    return out


def error_event(status: int, kind: str, code: str | None, message: str, param: str | None = None, *,
                flat: bool = False) -> str:
    """An ``error`` event: the WebSocket mode's shape, or (``flat``, a fault) the SSE stream's."""
    error = {"type": kind, "code": code, "message": message, "param": param}
    if flat:
        return json.dumps({"type": "error", "code": code, "message": message, "param": param})
    return json.dumps({"type": "error", "status": status, "error": error})


def recorded_error(capture: Capture, flat: bool) -> str:
    """A capture recorded with an error status, as an ``error`` event."""
    try:
        body = json.loads(capture.body)
    except ValueError:
        body = None
    error = body.get("error") if isinstance(body, dict) else None
    error = error if isinstance(error, dict) else {}
    return error_event(capture.status, str(error.get("type") or "server_error"), error.get("code"),
                       str(error.get("message") or capture.body[:200].decode("utf-8", "replace")),
                       error.get("param"), flat=flat)


# --- the connection ----------------------------------------------------------------------------------------


class _Connection:
    """One client's WebSocket connection: its faults, its scenario list, the responses it was sent."""

    def __init__(self, replayer: Replayer, websocket: WebSocket, faults: WsFaults) -> None:
        self.replayer, self.ws, self.faults = replayer, websocket, faults
        header = websocket.headers.get(SCENARIO_HEADER) or ""
        self.names = [part.strip() for part in header.split(",")] if header.strip() else []
        self.asked = 0
        self.ids: set[str] = set()
        self.sent_events = 0  # events of the first response sent so far (close-after, stall-after)
        self.first = True

    async def run(self) -> None:
        while True:
            message = await self.ws.receive()
            if message["type"] == "websocket.disconnect":
                return
            text = message.get("text")
            if text is None:
                text = (message.get("bytes") or b"").decode("utf-8", "replace")
            if not await self.answer(text):
                return

    async def answer(self, text: str) -> bool:
        """Answer one client message; False once the connection was closed (a fault)."""
        flat = self.faults.flat_error
        try:
            body = json.loads(text)
        except ValueError:
            body = None
        if not isinstance(body, dict) or body.get("type") != "response.create":
            await self.ws.send_text(error_event(400, "invalid_request_error", "invalid_event",
                                                "expected a response.create event", flat=flat))
            return True
        request = {k: v for k, v in body.items() if k != "type"}
        scenario = self.names[self.asked] if self.asked < len(self.names) else None
        self.asked += 1
        previous = request.get("previous_response_id")
        if previous is not None and (previous not in self.ids or self.faults.refuse_continuation):
            await self.ws.send_text(error_event(400, "invalid_request_error", "previous_response_not_found",
                                                f"Previous response with id '{previous}' not found.",
                                                "previous_response_id", flat=flat))
            return True
        capture = self.select(request, scenario)
        if capture is None:
            known = ", ".join(self.replayer.catalogue.names_of(KIND))
            await self.ws.send_text(error_event(404, "invalid_request_error", "scenario_not_found",
                                                f"no capture for scenario {scenario!r}; known: {known}", flat=flat))
            return True
        if capture.is_error:
            await self.ws.send_text(recorded_error(capture, flat))
            return True
        return await self.stream(capture_events(capture.body))

    def select(self, request: dict[str, Any], scenario: str | None) -> Capture | None:
        catalogue = self.replayer.catalogue
        if scenario is not None:
            return next((c for name in scenario.split("|") if (c := catalogue.get(name.strip(), KIND))), None)
        selection = catalogue.select(request, KIND, default=self.replayer.default)
        return selection.capture if selection is not None else None

    async def stream(self, events: list[str]) -> bool:
        rid = response_id(events)
        if rid is not None:
            self.ids.add(rid)
        first, self.first = self.first, False
        for kind, payload in frames(events, self.faults):
            if first and self.sent_events == self.faults.stall_after:
                await self.stall()
                return False
            if first and self.sent_events == self.faults.close_after:
                await self.ws.close(code=self.faults.close_code)
                return False
            if kind == "binary":
                await self.ws.send_bytes(payload if isinstance(payload, bytes) else payload.encode())
            else:
                await self.ws.send_text(str(payload))
            self.sent_events += 1 if first else 0
        if first and self.faults.close_after_response:
            await self.ws.close(code=1000)
            return False
        return True

    async def stall(self) -> None:
        """Hang without closing until the client leaves or the server shuts down."""
        leave = asyncio.ensure_future(self._until_disconnect())
        closing = asyncio.ensure_future(self.replayer.closing.wait())
        done, pending = await asyncio.wait({leave, closing}, return_when=asyncio.FIRST_COMPLETED)
        for task in pending:
            task.cancel()

    async def _until_disconnect(self) -> None:
        while (await self.ws.receive())["type"] != "websocket.disconnect":
            pass


def websocket_routes(replayer: Replayer) -> list[WebSocketRoute]:
    """The WebSocket endpoints of the replay server: ``/v1/responses`` and ``/responses``."""

    async def endpoint(websocket: WebSocket) -> None:
        try:
            faults = parse_ws_faults(websocket.headers.get(WS_FAULT_HEADER, ""))
        except WsFaultError as exc:
            await websocket.accept()
            await websocket.send_text(error_event(400, "invalid_request_error", "invalid_fault",
                                                  f"bad X-SSE-Check-WS-Fault header: {exc}"))
            await websocket.close(code=1008)
            return
        if faults.refuse is not None:  # as a server without the mode: an HTTP error answers the upgrade
            body = {"error": {"message": f"{websocket.url.path}: WebSocket upgrade refused (the refuse fault)",
                              "type": "invalid_request_error", "code": None}}
            await websocket.send_denial_response(JSONResponse(body, status_code=faults.refuse))
            return
        await websocket.accept()
        try:
            await _Connection(replayer, websocket, faults).run()
        except WebSocketDisconnect:
            return

    return [WebSocketRoute(prefix + "/responses", endpoint) for prefix in ("/v1", "")]
