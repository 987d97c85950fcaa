"""The replay server: answer OpenAI-style requests with saved captures, byte for byte.

Theory of operation
-------------------
A :class:`Catalogue` is read once at start-up: every ``X.sse`` capture with its sidecars
(``X.request.json`` the request that produced it, ``X.headers.txt`` the recorded status line and
headers, ``X.nonstream.json`` the answer to the same request with ``stream: false``). Captures are
known by their scenario name, the file stem. After start-up nothing reads files.

Each ``POST /v1/responses`` (also ``/responses``; ``/v1/chat/completions`` for chat captures):

1. takes the faults: the server's own (command line) overridden field by field by the request's
   ``X-SSE-Check-Fault`` header (see ``checker.live.faults``; ``every``, ``first``, ``busy``: serve_every);
2. a ``redirect`` fault answers 307, a ``status`` fault answers that status with a JSON error body;
3. picks a capture (:meth:`Catalogue.select`): the ``X-SSE-Check-Scenario`` header, else the body's
   ``model`` naming a scenario, else the recorded request body that matches this one
   (:data:`MATCH_FIELDS`), else the ``default`` capture; else 404 with a JSON error listing the scenarios;
4. answers the recorded status and headers (minus the framing ones: the server stack decides
   Content-Length or chunked) and the capture's bytes, written as ``checker.live.faults.body_chunks``
   yields them. ``stream: false`` gets ``X.nonstream.json`` instead (404 if there is none); a capture
   recorded with an error status is answered whatever ``stream`` says.

Every replayed response names its capture in ``X-SSE-Check-Scenario`` and how it was chosen in
``X-SSE-Check-Selected-By`` (so a prober can check it got the scenario it asked for).

A response body is emitted by one task while a second waits for the client to leave or the server to close;
whichever finishes first ends the other. That is what lets a stall hang "forever" yet end when the client gives
up, and a shutdown end every open stream at once (:meth:`Replayer.close`).
Dropping a connection mid-body (the ``disconnect-after`` fault) is done by returning without ending the response: the
server closes the connection without the final chunk. uvicorn logs that as an error;
:class:`checker.live.server.OnPurposeFilter` drops it.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from checker.captures import CAPTURE_SUFFIX, expand, request_for
from checker.errors import UsageError
from checker.live import adapters
from checker.live.faults import FAULT_HEADER, FaultError, Faults, body_chunks, parse_header, retry_after, status_error
from checker.live.serve_every import InFlight, every_nth
from checker.live.serve_ws import websocket_routes  # the WebSocket mode of /v1/responses (docs/websocket.md)
from checker.live.serve_stored import StoredResponses
from checker.live.serve_models import models_answer
from checker.live.server import CLOSE_AFTER_RESPONSE, ClosingOnPurpose

SCENARIO_HEADER = "x-sse-check-scenario"
SELECTED_BY_HEADER = "x-sse-check-selected-by"

Kind = str  # a request adapter's name (checker.live.adapters): "responses", "chat"
SelectedBy = Literal["header", "model", "request", "default"]
# A recorded answer's head: (status, replayable headers, whether it had a Content-Length).
Head = tuple[int, tuple[tuple[str, str], ...], bool]

# The request fields that decide what a server streams back; two requests that agree on all of them
# (absent == null) ask for the same capture. `model`, `stream`, sampling settings and metadata are ignored.
MATCH_FIELDS: tuple[str, ...] = (
    "input", "instructions", "previous_response_id", "messages",
    "tools", "tool_choice", "max_output_tokens", "max_tokens", "max_completion_tokens",
    "reasoning", "reasoning_effort", "text", "response_format",
)

# Recorded headers the server stack must decide itself: framing, connection handling, the date.
_NOT_REPLAYED = frozenset({"content-length", "transfer-encoding", "connection", "keep-alive", "date"})
_STATUS_LINE = re.compile(r"HTTP/\d(?:\.\d)?\s+(\d{3})(?:\s.*)?")
_SSE_DEFAULT_HEADERS = (("content-type", "text/event-stream"), ("cache-control", "no-cache"))
_JSON_TYPE = "application/json"


# --- the catalogue --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Capture:
    """One replayable capture, read into memory."""

    name: str
    path: Path
    body: bytes
    status: int = 200
    headers: tuple[tuple[str, str], ...] = _SSE_DEFAULT_HEADERS  # lower-case names, no framing headers
    sized: bool = False  # recorded with a Content-Length rather than chunked
    request: Mapping[str, Any] | None = None
    nonstream: bytes | None = None
    kind: Kind = adapters.DEFAULT.name
    closes: bool = False  # the server closed the connection after this answer, unannounced (its X.meta.json)

    @property
    def is_error(self) -> bool:
        return not 200 <= self.status < 300

    @property
    def content_type(self) -> str | None:
        return next((value for name, value in self.headers if name == "content-type"), None)


@dataclass(frozen=True, slots=True)
class Selection:
    capture: Capture
    by: SelectedBy


def _stem(path: Path) -> str:
    return path.name.removesuffix(CAPTURE_SUFFIX)


def parse_head(text: str, where: str = "headers") -> Head:
    """A recorded ``HTTP/1.1 200 OK`` line and header lines -> (status, replayable headers, sized)."""
    lines = text.splitlines()
    match = _STATUS_LINE.fullmatch(lines[0].strip()) if lines else None
    if match is None:
        raise UsageError(f"{where}: the first line is not an HTTP status line")
    headers: list[tuple[str, str]] = []
    sized = False
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            break
        name, colon, value = line.partition(":")
        name = name.strip().lower()
        if not colon or not name or not re.fullmatch(r"[!#$%&'*+.^_`|~0-9a-z-]+", name):
            raise UsageError(f"{where}:{number}: not a header line: {line!r}")
        if name == "content-length":
            sized = True
        if name not in _NOT_REPLAYED:
            headers.append((name, value.strip()))
    return int(match.group(1)), tuple(headers), sized


def _read_meta(meta_file: Path) -> Any:
    """The parsed ``X.meta.json`` (None if there is none); the error instead when it cannot be read, raised only
    by whoever needs it (a capture with its own ``X.headers.txt`` does not)."""
    if not meta_file.is_file():
        return None
    try:
        return json.loads(meta_file.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return UsageError(f"{meta_file}: unreadable sidecar: {exc}")


def _head_from_meta(meta: Any, meta_file: Path) -> Head | None:
    """Status and headers from a ``X.meta.json`` written by ``sse-check probe --save``, if it has them."""
    if isinstance(meta, UsageError):
        raise meta
    status, headers = (meta.get("status"), meta.get("headers")) if isinstance(meta, dict) else (None, None)
    if not isinstance(status, int):
        return None
    pairs = headers.items() if isinstance(headers, dict) else headers if isinstance(headers, list) else []
    lines = [f"{pair[0]}: {pair[1]}" for pair in pairs if isinstance(pair, (list, tuple)) and len(pair) == 2]
    return parse_head("\n".join([f"HTTP/1.1 {status}", *lines]), str(meta_file))


def _kind(request: Mapping[str, Any] | None, body: bytes) -> Kind:
    """The dialect a capture answers: its stream's when its first bytes show one (a Messages request and a
    chat one can look alike), else its recorded request's, else the default's."""
    shown = adapters.recognise_stream(body[:4096])
    if shown is not None:
        return shown.name
    if request is not None:
        return adapters.for_request(request).name
    return adapters.DEFAULT.name


def load_capture(path: Path) -> Capture:
    """A capture and its sidecars (``X.request.json`` or ``X.meta.json``, ``X.headers.txt``, ``X.nonstream.json``)."""
    name = _stem(path)
    body = path.read_bytes()
    meta_file = path.with_name(f"{name}.meta.json")
    meta = _read_meta(meta_file)
    head_file = path.with_name(f"{name}.headers.txt")
    head: Head | None
    if head_file.is_file():
        try:
            head = parse_head(head_file.read_text(encoding="utf-8"), str(head_file))
        except UnicodeDecodeError as exc:
            raise UsageError(f"{head_file}: not UTF-8: {exc}") from None
    else:
        head = _head_from_meta(meta, meta_file)
    status, headers, sized = head if head is not None else (200, _SSE_DEFAULT_HEADERS, False)
    request = request_for(path)
    nonstream_file = path.with_name(f"{name}.nonstream.json")
    nonstream = nonstream_file.read_bytes() if nonstream_file.is_file() else None
    return Capture(
        name=name, path=path, body=body, status=status, headers=headers, sized=sized,
        request=request, nonstream=nonstream, kind=_kind(request, body), closes=_recorded_close(meta),
    )


def _recorded_close(meta: Any) -> bool:
    """Whether the probe that saved the capture saw the server close the connection after it, unannounced."""
    connection = meta.get("connection") if isinstance(meta, dict) else None
    return isinstance(connection, dict) and connection.get("closed_by_server") is True


def _match_key(body: Mapping[str, Any]) -> dict[str, Any]:
    return {name: body.get(name) for name in MATCH_FIELDS}


@dataclass(frozen=True, slots=True)
class _Entry:
    capture: Capture
    key: dict[str, Any] | None  # the recorded request's MATCH_FIELDS, if a request was recorded


class Catalogue:
    """The captures a server replays, by dialect and scenario name, in the order given. Two captures may
    share a name when they answer different dialects (``plain_text`` of Responses, of chat, of Messages)."""

    def __init__(self, captures: Iterable[Capture]) -> None:
        self._entries: dict[tuple[Kind, str], _Entry] = {}
        for capture in captures:
            where = (capture.kind, capture.name)
            if where in self._entries:
                other = self._entries[where].capture.path
                raise UsageError(f"two captures named {capture.name!r}: {other} and {capture.path}")
            key = _match_key(capture.request) if capture.request is not None else None
            self._entries[where] = _Entry(capture, key)
        if not self._entries:
            raise UsageError("no captures to serve")

    @classmethod
    def from_paths(cls, paths: Sequence[str | Path]) -> Catalogue:
        """Captures from ``.sse`` files and directories (searched recursively); a file given twice counts once."""
        files: list[Path] = []
        seen: set[Path] = set()
        for source in expand([str(p) for p in paths]):
            if source == "-":
                raise UsageError("serve needs capture files or directories, not stdin")
            path = Path(source)
            if not path.is_file():
                raise UsageError(f"no such capture: {path}")
            if not path.name.endswith(CAPTURE_SUFFIX):
                raise UsageError(f"{path}: not a {CAPTURE_SUFFIX} capture "
                                 f"(give NAME{CAPTURE_SUFFIX} files or directories; sidecars are found next to them)")
            if path.resolve() not in seen:
                seen.add(path.resolve())
                files.append(path)
        return cls(load_capture(path) for path in files)

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[Capture]:
        return (entry.capture for entry in self._entries.values())

    def __contains__(self, name: object) -> bool:
        return any(name == n for _, n in self._entries)

    @property
    def names(self) -> list[str]:
        """The scenario names, each once (a name several dialects answer is listed once)."""
        return list(dict.fromkeys(n for _, n in self._entries))

    def names_of(self, kind: Kind) -> list[str]:
        return [n for k, n in self._entries if k == kind]

    def kinds(self) -> list[Kind]:
        """The dialects the captures answer, in order."""
        return list(dict.fromkeys(k for k, _ in self._entries))

    def get(self, name: str, kind: Kind | None = None) -> Capture | None:
        """The capture of that name answering ``kind`` (any dialect's when ``kind`` is None: the first)."""
        if kind is not None:
            entry = self._entries.get((kind, name))
            return entry.capture if entry else None
        return next((e.capture for (_, n), e in self._entries.items() if n == name), None)

    def select(
        self,
        body: Mapping[str, Any],
        kind: Kind,
        *,
        scenario: str | None = None,
        default: str | None = None,
    ) -> Selection | None:
        """The capture for a request to ``kind``'s endpoint: by explicit scenario, model, matching request
        body, or default; a capture of another dialect only when none of this one has that name."""
        if scenario is not None:
            capture = self.get(scenario, kind)
            return Selection(capture, "header") if capture else None
        model = body.get("model")
        if isinstance(model, str) and (found := self.get(model, kind)) is not None:
            return Selection(found, "model")
        key = _match_key(body)
        for entry in self._entries.values():
            if entry.key is not None and entry.capture.kind == kind and entry.key == key:
                return Selection(entry.capture, "request")
        if default is not None and (found := self.get(default, kind) or self.get(default)) is not None:
            return Selection(found, "default")
        return None


# --- emitting a response ----------------------------------------------------------------------------


class _Emission:
    """An ASGI response that writes ``body`` under ``faults`` and stops when the client or server leaves."""

    def __init__(
        self,
        status: int,
        headers: Sequence[tuple[str, str]],
        body: bytes,
        faults: Faults,
        *,
        sized: bool,
        closing: asyncio.Event,
    ) -> None:
        self.status = status
        self.headers = list(headers)
        self.body = body
        self.faults = faults
        self.sized = sized and not faults.keep_open_s
        self.closing = closing

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.faults.close:
            scope[CLOSE_AFTER_RESPONSE] = True  # closed as the last chunk goes (checker.live.server)
        emitter = asyncio.ensure_future(self._emit(send))
        watcher = asyncio.ensure_future(_until_gone(receive, self.closing))
        try:
            await asyncio.wait({emitter, watcher}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (emitter, watcher):
                task.cancel()
            await asyncio.gather(emitter, watcher, return_exceptions=True)
        if emitter.done() and not emitter.cancelled() and emitter.exception() is not None:
            raise emitter.exception()  # type: ignore[misc]  # a bug, or the close fault: to the server

    async def _emit(self, send: Send) -> None:
        if self.faults.first_byte_delay_ms:
            await asyncio.sleep(self.faults.first_byte_delay_ms / 1000)
        headers = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in self.headers]
        if self.sized:
            headers.append((b"content-length", str(len(self.body)).encode()))
        await send({"type": "http.response.start", "status": self.status, "headers": headers})
        async for chunk in body_chunks(self.body, self.faults):
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        if self.faults.ending == "disconnect":
            return  # the server closes the connection without ending the body
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        if self.faults.close:
            # ASGI cannot close a kept-alive connection; uvicorn closes it when the application fails after its
            # response is complete (OnPurposeFilter). Under make_server, CLOSE_AFTER_RESPONSE has closed it already.
            raise ClosingOnPurpose()


async def _until_gone(receive: Receive, closing: asyncio.Event) -> None:
    async def disconnected() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass

    waits = [asyncio.ensure_future(disconnected()), asyncio.ensure_future(closing.wait())]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in waits:
            task.cancel()


# --- the application ------------------------------------------------------------------------------


def _error(status: int, message: str, kind: str = "invalid_request_error", code: str | None = None) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": kind, "param": None, "code": code}}, status_code=status)


def _json_object(raw: bytes) -> dict[str, Any]:
    """The request body as a JSON object, or {} when it is not one (selection then needs the header or a default)."""
    try:
        body = json.loads(raw) if raw else {}
    except (UnicodeDecodeError, json.JSONDecodeError):
        return {}
    return body if isinstance(body, dict) else {}


class Replayer:
    """The replay server's state and its Starlette application (:attr:`app`)."""

    def __init__(self, catalogue: Catalogue, *, faults: Faults | None = None, default: str | None = None) -> None:
        if default is not None and default not in catalogue:
            raise UsageError(f"--default {default!r} is not a scenario (known: {', '.join(catalogue.names)})")
        self.catalogue = catalogue
        self.faults = faults or Faults()
        self.default, self.closing, self.stored = default, asyncio.Event(), StoredResponses(self.faults)
        answers = [Route(prefix + adapter.endpoint, self._handler(adapter.name), methods=["POST"])
                   for adapter in adapters.ADAPTERS.values() for prefix in ("/v1", "")]
        self.app = Starlette(
            routes=[
                *answers, *self.stored.routes(),
                Route("/v1/models", self._models, methods=["GET"]), Route("/models", self._models, methods=["GET"]),
                Route("/health", self._health, methods=["GET"]),
                *websocket_routes(self),
            ],
            exception_handlers={HTTPException: self._http_error},
        )
        self.app.state.replayer = self
        self.app.add_middleware(InFlight, server=self)  # the requests being answered, for the busy fault

    def close(self) -> None:
        """End every open response now (server shutdown): stalls and keep-open waits stop at once."""
        self.closing.set()

    def _handler(self, kind: Kind):  # noqa: ANN202 - a Starlette endpoint
        async def endpoint(request: Request) -> Response | _Emission:
            return await self.answer(request, kind)

        return endpoint

    async def answer(self, request: Request, kind: Kind) -> Response | _Emission:
        try:
            overrides = parse_header(request.headers.get(FAULT_HEADER, ""))
        except FaultError as exc:
            return _error(400, f"bad X-SSE-Check-Fault header: {exc}")
        faults = every_nth(self, self.faults.with_overrides(overrides))
        body = _json_object(await request.body())
        quick = Faults(first_byte_delay_ms=faults.first_byte_delay_ms)
        if faults.redirect is not None and urlsplit(faults.redirect).path != request.url.path:
            return _Emission(307, [("location", faults.redirect)], b"", quick, sized=True, closing=self.closing)
        if faults.status is not None:
            headers = [("content-type", _JSON_TYPE)]
            if (after := retry_after(faults)) is not None:
                headers.append(("retry-after", after))
            payload = json.dumps(status_error(faults.status), separators=(",", ":")).encode()
            return _Emission(faults.status, headers, payload, quick, sized=True, closing=self.closing)

        if kind not in self.catalogue.kinds() and self.default is None:
            # No capture answers this dialect: its endpoint is not served, as a server without it answers.
            return _error(404, f"{request.method} {request.url.path}: this replay server has no "
                               f"{kind} captures", code="not_found")
        scenario = request.headers.get(SCENARIO_HEADER)
        selection = self.catalogue.select(body, kind, scenario=scenario, default=self.default)
        if selection is None:
            known = ", ".join(self.catalogue.names_of(kind))
            reason = (f"unknown scenario {scenario!r}" if scenario is not None
                      else "no capture matches this request (by model, request body or --default)")
            return _error(404, f"{reason}; choose one with the X-SSE-Check-Scenario header or the model field. "
                               f"Known scenarios: {known}", code="scenario_not_found")
        capture = selection.capture
        if body.get("stream") is True or capture.is_error:
            status, headers, payload, sized = capture.status, list(capture.headers), capture.body, capture.sized
        elif capture.nonstream is not None:
            status, headers, payload, sized = 200, [("content-type", _JSON_TYPE)], capture.nonstream, True
        else:
            return _error(404, f"scenario {capture.name!r} has no non-streaming answer "
                               f"({capture.name}.nonstream.json); send \"stream\": true", code="scenario_not_found")
        if (early := self.stored.on_answer(body, selection.by, faults, payload, capture.is_error)) is not None:
            return early  # an unknown previous_response_id refused, a background request queued
        if faults.content_type is not None:
            headers = [(n, v) for n, v in headers if n != "content-type"] + [("content-type", faults.content_type)]
        if capture.closes and payload is capture.body and "close" not in overrides:
            faults = faults.with_overrides({"close": True})  # replayed as recorded (not its nonstream.json)
        headers += [(SCENARIO_HEADER, capture.name), (SELECTED_BY_HEADER, selection.by)]
        return _Emission(status, headers, payload, faults, sized=sized, closing=self.closing)

    async def _models(self, request: Request) -> JSONResponse:
        return models_answer(self.catalogue, self.faults, request.headers.get(FAULT_HEADER, ""))

    async def _health(self, request: Request) -> JSONResponse:
        return JSONResponse({"status": "ok"})

    async def _http_error(self, request: Request, exc: Exception) -> JSONResponse:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        message = f"{request.method} {request.url.path}: {exc.detail if isinstance(exc, HTTPException) else exc}"
        return _error(status, message, code="not_found" if status == 404 else None)


def create_app(catalogue: Catalogue, *, faults: Faults | None = None, default: str | None = None) -> Starlette:
    """The ASGI application replaying ``catalogue``; ``app.state.replayer`` is its :class:`Replayer`."""
    return Replayer(catalogue, faults=faults, default=default).app
