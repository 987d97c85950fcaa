"""The checks of a WebSocket exchange: a transcript (checker/ws_transcript.py) in, one lint result out.

The Responses API's WebSocket mode carries the SSE stream's events as messages, several responses one after
the other on one connection. :class:`WebSocketLinter` reads the transcript of one connection and

* gives each response its own engine, a :class:`MessageLinter`: the :class:`checker.engine.StreamLinter`
  of an SSE stream (the same schemas, the same dialect machine, the same profile), fed one message at a
  time as one event. The seam is the engine's decoder: a message needs no SSE framing, so the decoder is
  replaced by a feed that hands the engine each message as the event it carries, its event name the
  event's own type. The SSE framing rules cannot fire (there is no framing text: no ``event:`` line to
  miss or contradict, no multi-line ``data:``); everything about the events is checked as for SSE;
* checks the messages and the connection itself (rule family WSK, checker/rules/websocket.py): text frames,
  one complete JSON event per message, the ``error`` event's shape, responses kept apart, a continuation
  by ``previous_response_id`` accepted, the close and its code, the probe's timeouts.

``probe --transport websocket`` computes its verdict with this class from the transcript it saves, and
``lint X.ws.jsonl`` does the same from the file: the live verdict is the lint of its capture by
construction. Sans-I/O.
"""

from __future__ import annotations

import dataclasses
import json
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import orjson

from checker.engine import EngineOptions, LintResult, StreamLinter
from checker.findings import Finding, Position
from checker.json_scan import json_kind
from checker.rules import websocket as wsk
from checker.sse import SSEEvent
from checker.ws_transcript import Record, TranscriptReader

# Close codes after which clients carry on as after a normal end (openai-python: ConnectionClosedOK).
NORMAL_CLOSE = (1000, 1001)
# The replay server's answer to a scenario it has no capture for: the response is skipped, not failed.
NOT_REPLAYED = "scenario_not_found"


class _MessageFeed:
    """Stands in for the engine's SSE decoder: hands over the one event :meth:`MessageLinter.message` set."""

    def __init__(self) -> None:
        self.pending: SSEEvent | None = None
        self.events_dispatched = 0
        self.bytes_seen = 0
        self.pending_line = False
        self._data = b""  # read by the engine's hot path: no event is ever half-decoded here
        self._buf = b""
        self._end = Position(1, 0)

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        event, self.pending = self.pending, None
        return [event] if event is not None else []

    def close(self) -> list[SSEEvent]:
        return []

    def end_position(self) -> Position:
        return self._end


class MessageLinter(StreamLinter):
    """The engine of one response fed WebSocket messages: each message is one event, checked by the
    dialect's schemas and machine exactly as an SSE event is."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.feed_of_messages = _MessageFeed()
        self.decoder = self.feed_of_messages  # type: ignore[assignment]
        self.sniffer.decided = True  # a message is an event, never a body to sniff

    def message(self, data: bytes, event: str | None, line: int, byte: int) -> list[Finding]:
        """One message's JSON event (``data``, exactly as received), ``event`` its type, at transcript
        ``line`` (``byte`` its offset)."""
        feed = self.feed_of_messages
        feed.pending = SSEEvent(feed.events_dispatched, data, event, "", None, line, byte, byte + len(data), 1)
        feed.events_dispatched += 1
        feed.bytes_seen += len(data)
        feed._end = Position(line + 1, byte + len(data))
        return self.feed(data)


@dataclass(slots=True, eq=False)
class _Response:
    """One ``response.create`` and what came of it."""

    number: int
    scenario: str
    request: dict[str, Any]
    linter: MessageLinter
    previous: str | None = None
    created_id: str | None = None
    started: bool = False
    ended: bool = False
    skipped: str | None = None
    result: LintResult | None = None
    line: int = 0
    expect: str = "stream"  # "error": an error event is the right answer (a scenario sending a bad request)

    @property
    def label(self) -> str:
        return f"{self.number} ({self.scenario})" if self.scenario else str(self.number)


@dataclass(slots=True)
class ResponseOutcome:
    """What one response of the connection came to, for the probe's report."""

    number: int
    scenario: str
    response_id: str | None
    terminal: str | None
    skipped: str | None
    findings: list[Finding] = field(default_factory=list)


class WebSocketLinter:
    """Lint one WebSocket connection's transcript: ``feed`` its bytes (any chunking), then ``close``.

    ``options`` (profile, select, ignore, limits, collapse) apply to every response's engine and to the WSK
    findings alike; each response's request is the ``response.create`` the transcript recorded."""

    def __init__(self, options: EngineOptions = EngineOptions(), *, name: str = "transcript") -> None:
        # Timelines are drawn from SSE events (a transcript has none to draw), and every response of the
        # WebSocket mode is a Responses one.
        self.options = dataclasses.replace(options, trace=False, dialect="responses")
        self.sink = options.sink()
        self.reader = TranscriptReader(name)
        self.header: dict[str, Any] | None = None
        self.responses: list[_Response] = []
        self.waiting: deque[_Response] = deque()
        self.current: _Response | None = None
        self.messages = 0
        self.ids: set[str] = set()  # ids of this connection's responses
        self.close_record: dict[str, Any] | None = None
        self._result: LintResult | None = None

    # -- feeding ------------------------------------------------------------------------------------------

    def feed(self, chunk: bytes) -> list[Finding]:
        out: list[Finding] = []
        for record in self.reader.feed(chunk):
            self._record(record, out)
        return out

    def close(self) -> LintResult:
        if self._result is not None:
            return self._result
        out: list[Finding] = []
        for record in self.reader.close():
            self._record(record, out)
        if self.close_record is None:  # the transcript stops mid-connection: what is open was not seen to end
            for response in self._open():
                self._end(response, reader_stopped=True)
        self.sink.settle(None)
        self._result = self._lint_result()
        return self._result

    @property
    def idle(self) -> bool:
        """No response asked for is still open: the next ``response.create`` may be sent."""
        return all(r.ended for r in self.responses)

    def outcomes(self) -> list[ResponseOutcome]:
        """Each response's own verdict (after :meth:`close`): the engine's findings of its events."""
        return [ResponseOutcome(r.number, r.scenario, r.created_id, r.result.terminal if r.result else None,
                                r.skipped, list(r.result.findings) if r.result else [])
                for r in self.responses]

    def _record(self, record: Record, out: list[Finding]) -> None:
        if record.kind == "header":
            self.header = record.value
        elif record.kind == "send":
            self._sent(record)
        elif record.kind == "text":
            self.messages += 1
            self._text(record.value, record, out)
        elif record.kind == "binary":
            self.messages += 1
            self._binary(record, out)
        elif record.kind == "close":
            self._closed(record, out)
        elif record.kind == "timeout":
            self._timeout(record, out)

    def _emit(self, finding: Finding, out: list[Finding]) -> None:
        self.sink.emit(finding, out)

    # -- the client's requests ----------------------------------------------------------------------------

    def _sent(self, record: Record) -> None:
        try:
            body = orjson.loads(record.value)
        except orjson.JSONDecodeError:
            return  # not a request the checks can follow (the probe never sends one)
        if not isinstance(body, dict) or body.get("type") != "response.create":
            return
        request = {k: v for k, v in body.items() if k != "type"}
        previous = request.get("previous_response_id")
        response = _Response(number=len(self.responses) + 1, scenario=str(record.fields.get("scenario") or ""),
                             request=request, linter=MessageLinter.from_options(self.options, request=request),
                             previous=previous if isinstance(previous, str) else None, line=record.line,
                             expect=str(record.fields.get("expect") or "stream"))
        self.responses.append(response)
        self.waiting.append(response)

    def _active(self) -> _Response | None:
        """The response the next event belongs to: the one in flight, else the next one asked for."""
        if self.current is not None and not self.current.ended:
            return self.current
        self.current = self.waiting.popleft() if self.waiting else None
        return self.current

    def _open(self) -> list[_Response]:
        """The responses asked for that have not ended, in order."""
        return [r for r in self.responses if not r.ended]

    def _end(self, response: _Response, *, reader_stopped: bool = False, discard: bool = False) -> None:
        response.ended = True
        if response in self.waiting:
            self.waiting.remove(response)
        if not discard:
            response.result = response.linter.close(reader_stopped=reader_stopped or not response.started)
        if response.created_id is not None:
            self.ids.add(response.created_id)

    # -- messages -----------------------------------------------------------------------------------------

    def _binary(self, record: Record, out: list[Finding]) -> None:
        data: bytes = record.value
        self._emit(wsk.BINARY_FRAME.finding(_at(record), message=self.messages, size=len(data)), out)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            self._emit(wsk.NOT_ONE_EVENT.finding(_at(record), message=self.messages,
                                                 reason=f"binary data, not UTF-8 text (byte {exc.start})"), out)
            return
        self._text(text, record, out)  # read as openai-python does: the bytes parsed as JSON

    def _text(self, text: str, record: Record, out: list[Finding]) -> None:
        values, problem = split_values(text)
        if len(values) > 1:
            count = len(values) + (1 if problem else 0)
            self._emit(wsk.SEVERAL_EVENTS.finding(_at(record), message=self.messages, count=count), out)
        elif problem is not None:
            self._emit(wsk.NOT_ONE_EVENT.finding(_at(record), message=self.messages, reason=problem), out)
        for value, raw in values:
            if not isinstance(value, dict):
                reason = f"{json_kind(value)}, not an object"
                self._emit(wsk.NOT_ONE_EVENT.finding(_at(record), message=self.messages, reason=reason), out)
                continue
            self._event(value, raw, record, out)

    def _event(self, obj: dict[str, Any], raw: bytes, record: Record, out: list[Finding]) -> None:
        etype = obj.get("type")
        if etype == "error":
            self._error(obj, record, out)
            return
        name = etype if isinstance(etype, str) else None
        response = self._active()
        if response is None:
            self._interleaved(name, "arrived while no response.create was waiting for an answer", record, out)
            return
        rid = _response_id(obj)
        if response.started and name == "response.created":
            self._interleaved(name, f"starts another response ({rid or 'no id'}) while response "
                                    f"{response.label} is in flight", record, out)
            return
        if response.created_id is not None and rid is not None and rid != response.created_id:
            self._interleaved(name, f"belongs to response {rid} while response {response.label} "
                                    f"({response.created_id}) is in flight", record, out)
            return
        if name == "response.created" and rid is not None:
            response.created_id = rid
        response.started = True
        out.extend(response.linter.message(raw, name, record.line, record.byte))
        if response.linter.machine.terminated:
            self._end(response)

    def _interleaved(self, name: str | None, what: str, record: Record, out: list[Finding]) -> None:
        self._emit(wsk.INTERLEAVED.finding(_at(record, name), event=name or "(without a type)", what=what), out)

    def _error(self, obj: dict[str, Any], record: Record, out: list[Finding]) -> None:
        problem = error_shape_problem(obj)
        if problem is not None:
            self._emit(wsk.ERROR_SHAPE.finding(_at(record, "error"), problem=problem), out)
        response = self._active()
        if response is None:
            return  # about the connection, not a response (a connection limit, a bad client message)
        code, message = error_words(obj)
        if code == NOT_REPLAYED:
            response.skipped = f"the replay server has no capture for it: {message}"
            self._end(response, discard=True)
            return
        if response.expect == "error":
            pass  # the answer asked for: its shape is all there is to check
        elif response.previous is not None and response.previous in self.ids and code == "previous_response_not_found":
            self._emit(wsk.CONTINUATION_REFUSED.finding(_at(record, "error"), previous=response.previous,
                                                        error=_words(code, message)), out)
        else:
            self._emit(wsk.RESPONSE_ERROR.finding(_at(record, "error"), scenario=response.label,
                                                  error=_words(code, message)), out)
        self._end(response, reader_stopped=True)

    # -- the end ------------------------------------------------------------------------------------------

    def _closed(self, record: Record, out: list[Finding]) -> None:
        close = record.value if isinstance(record.value, dict) else {}
        self.close_record = close
        words = describe_close(close)
        unfinished = self._open()
        if unfinished:
            first = unfinished[0]
            self._emit(wsk.CLOSED_MID_RESPONSE.finding(_at(record), close=words, response=first.label,
                                                       what="ended" if first.started else "was answered"), out)
        for response in unfinished:
            self._end(response)
        received = close.get("received")
        code = received[0] if isinstance(received, list) and received else None
        if code not in NORMAL_CLOSE:
            self._emit(wsk.ABNORMAL_CLOSE.finding(_at(record), close=words), out)

    def _timeout(self, record: Record, out: list[Finding]) -> None:
        fields = record.value if isinstance(record.value, str) else "idle"
        seconds = record.fields.get("seconds")
        what = str(record.fields.get("waiting") or f"event ({fields} timeout)")
        if self._open():
            self._emit(wsk.NO_ANSWER.finding(_at(record), what=what,
                                             timeout=float(seconds) if isinstance(seconds, (int, float)) else 0.0),
                       out)
        for response in self._open():
            self._end(response, reader_stopped=True)

    def _lint_result(self) -> LintResult:
        results = [r.result for r in self.responses if r.result is not None]
        findings = [f for result in results for f in result.findings] + self.sink.findings()
        findings.sort(key=lambda f: (f.position.byte, f.position.line))
        last = results[-1] if results else None
        return LintResult(
            findings=findings, events=sum(r.events for r in results), bytes=self.reader.bytes_seen,
            terminal=last.terminal if last else None, response_id=last.response_id if last else None,
            profile=self.sink.profile.name, terminals=tuple(t for r in results for t in r.terminals),
            dialect="responses", items=[item for r in results for item in r.items],
        )


# --- pure helpers ------------------------------------------------------------------------------------------


def split_values(text: str) -> tuple[list[tuple[Any, bytes]], str | None]:
    """The JSON values of one message, each with its exact bytes, and what is wrong with the rest (None when
    the message is nothing but those values)."""
    raw = text.encode("utf-8")
    try:
        return [(orjson.loads(raw), raw)], None
    except orjson.JSONDecodeError as exc:
        first_error = f"not JSON ({exc.msg} at character {exc.pos})" if text.strip() else "an empty message"
    decoder = json.JSONDecoder()
    values: list[tuple[Any, bytes]] = []
    at = len(text) - len(text.lstrip())
    while at < len(text):
        try:
            value, end = decoder.raw_decode(text, at)
        except json.JSONDecodeError as exc:
            if not values:
                return [], first_error
            return values, f"a partial JSON value after them ({exc.msg} at character {exc.pos})"
        values.append((value, text[at:end].encode("utf-8")))
        at = end + len(text[end:]) - len(text[end:].lstrip())
    return (values, None) if len(values) > 1 else ([], first_error)


def error_shape_problem(obj: dict[str, Any]) -> str | None:
    """What is wrong with an ``error`` event's shape, or None (openai-python's ResponseWsError)."""
    error = obj.get("error")
    if not isinstance(error, dict):
        flat = [k for k in ("code", "message", "param") if k in obj]
        if flat:
            return (f"has {', '.join(flat)} at the top level (the SSE stream's error shape): the WebSocket "
                    "mode nests them in an \"error\" object")
        return "has no \"error\" object"
    missing = [k for k in ("type", "message") if not isinstance(error.get(k), str)]
    if missing:
        return f"has an \"error\" object without a string {' or '.join(missing)}"
    status = obj.get("status")
    if status is not None and not (isinstance(status, int) and not isinstance(status, bool) and 400 <= status <= 599):
        return f"has \"status\" {status!r}, not an HTTP error status (400-599)"
    return None


def error_words(obj: dict[str, Any]) -> tuple[str | None, str]:
    """An ``error`` event's code and message, from the WebSocket shape or, failing that, the flat one."""
    nested = obj.get("error")
    error: dict[str, Any] = nested if isinstance(nested, dict) else obj
    code, message = error.get("code"), error.get("message")
    return (code if isinstance(code, str) else None), (message if isinstance(message, str) else "")


def describe_close(close: dict[str, Any]) -> str:
    """How a connection ended, in words: the code received, or that no close frame came (1006)."""
    received = close.get("received")
    if not (isinstance(received, list) and received and isinstance(received[0], int)):
        return "no close frame: the connection dropped (1006)"
    code, reason = received[0], received[1] if len(received) > 1 and received[1] else ""
    who = "the server" if close.get("server_first") else "the server, answering the client's close"
    return f"code {code}{f' {reason!r}' if reason else ''} from {who}"


def _words(code: str | None, message: str) -> str:
    return f"{code}: {message}" if code and message else code or message or "(no code, no message)"


def _response_id(obj: dict[str, Any]) -> str | None:
    response = obj.get("response")
    rid = response.get("id") if isinstance(response, dict) else None
    return rid if isinstance(rid, str) else None


def _at(record: Record, event_type: str | None = None) -> Position:
    return Position(line=record.line, byte=record.byte, event_index=None, event_type=event_type)
