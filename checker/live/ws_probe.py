"""The live probe of the Responses API's WebSocket mode (``probe --transport websocket``; docs/websocket.md).

One connection to ``ws(s)://…/v1/responses`` carries the Responses scenarios one after the other: a
``response.create`` per scenario (its request body, without ``stream`` and ``background``), then one
continuation of the first response by ``previous_response_id`` with only a new input. Every message sent
and received, and the close, is written down as it happens as a transcript (checker/ws_transcript.py),
and the transcript's bytes are fed, as they are written, to a :class:`checker.ws_checks.WebSocketLinter`:
the verdict is the lint of the transcript, which ``--save`` writes as ``websocket.ws.jsonl``, so
``sse-check lint`` of it says the same. The linter also tells when the response in flight has ended (its
terminal event, an ``error`` event), which is when the next ``response.create`` is sent.

Every wait is bounded by the probe's limits: the upgrade (``connect_timeout``), the first event after a
``response.create`` (``first_byte_timeout``), each later event (``idle_timeout``), the whole connection
(``total_timeout``). A wait that runs out is a ``timeout`` record (WSK009) and ends the run. A server that
refuses the upgrade (404, 405, 426, 501, …) does not offer the WebSocket mode: that is one line, not a
finding.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from checker.errors import UsageError
from checker.lint_result import LintResult
from checker.live.probe import ProbeConfig
from checker.live.saving import write_atomic
from checker.live.scenarios import Scenario
from checker.ws_checks import ResponseOutcome, WebSocketLinter
from checker.ws_transcript import binary_value, header, line

SAVED_NAME = "websocket.ws.jsonl"
SCENARIO_HEADER = "X-SSE-Check-Scenario"
# Request fields that mean nothing over WebSocket (stream is implicit; background is not supported).
HTTP_ONLY_FIELDS = ("stream", "stream_options", "background")
CONTINUATION_INPUT = [{"role": "user", "content": "Say that again in one short sentence."}]


@dataclass(slots=True)
class WsProbeResult:
    url: str
    result: LintResult | None = None  # None when the server does not offer the WebSocket mode
    outcomes: list[ResponseOutcome] | None = None
    unsupported: str | None = None  # why not, in one line
    transcript: bytes = b""
    saved: str | None = None
    close: dict[str, Any] | None = None  # the transcript's close record
    seconds: float | None = None  # from the upgrade to the close


def ws_url(url: str) -> str:
    """The WebSocket URL of an HTTP endpoint: http → ws, https → wss."""
    scheme, sep, rest = url.partition("://")
    return {"http": "ws", "https": "wss"}.get(scheme.lower(), scheme) + sep + rest


def create_event(scenario: Scenario, model: str) -> dict[str, Any]:
    """The ``response.create`` client event of a scenario: its request body without the HTTP-only fields."""
    body = {k: v for k, v in scenario.request(model).items() if k not in HTTP_ONLY_FIELDS}
    return {"type": "response.create", **body}


class _Session:
    """One connection's run: the transcript as it is written, the linter fed the same bytes."""

    def __init__(self, config: ProbeConfig, url: str) -> None:
        self.config, self.url = config, url
        self.linter = WebSocketLinter(config.engine, name=SAVED_NAME)
        self.transcript = bytearray()
        self.started = time.monotonic()

    def write(self, data: bytes) -> None:
        data = self.config.redactor.bytes(data)
        self.transcript += data
        self.linter.feed(data)

    def record(self, **fields: Any) -> None:
        self.write(line({"t": round(time.monotonic() - self.started, 4), **fields}))

    def left(self) -> float:
        return self.config.limits.total_timeout - (time.monotonic() - self.started)

    async def send(self, ws: Any, event: dict[str, Any], scenario: str, expect: str = "stream") -> None:
        text = orjson.dumps(event).decode()
        # Recorded first: a request the server closed the connection on is one it left unanswered (WSK004).
        self.record(send=text, scenario=scenario, **({"expect": expect} if expect != "stream" else {}))
        await ws.send(text)

    async def answer(self, ws: Any, label: str) -> bool:
        """Receive until the response asked for has ended; False when the connection ended or a wait ran out."""
        from websockets.exceptions import ConnectionClosed

        limits = self.config.limits
        first = True
        while not self.linter.idle:
            wait = min(limits.first_byte_timeout if first else limits.idle_timeout, self.left())
            try:
                message = await asyncio.wait_for(ws.recv(), timeout=max(wait, 0.001))
            except TimeoutError:
                kind = "total" if wait >= self.left() else ("first-event" if first else "idle")
                what = f"{'first' if first else 'next'} event of response {label}"
                self.record(timeout=kind, seconds=round(wait, 3), waiting=what)
                return False
            except ConnectionClosed as exc:
                self.closed(exc.rcvd, exc.sent, exc.rcvd_then_sent)
                return False
            first = False
            if isinstance(message, bytes):
                self.record(binary=binary_value(message))
            else:
                self.record(text=message)
        return True

    def closed(self, rcvd: Any, sent: Any, rcvd_then_sent: bool | None) -> None:
        def pair(frame: Any) -> list[Any] | None:
            return [int(frame.code), str(frame.reason)] if frame is not None else None

        self.record(close={"received": pair(rcvd), "sent": pair(sent), "server_first": bool(rcvd_then_sent)})


async def probe_websocket(config: ProbeConfig, scenarios: Sequence[Scenario], *,
                          continuation: bool = True) -> WsProbeResult:
    """Run ``scenarios`` over one WebSocket connection, then a continuation of the first response."""
    try:
        from websockets.asyncio.client import connect
        from websockets.exceptions import InvalidHandshake, InvalidStatus
    except ImportError:
        raise UsageError("--transport websocket needs the websockets package: pip install 'sse-check[websocket]'") \
            from None
    url = ws_url(config.url_for("responses"))
    shown = config.redactor.url(url)
    names = [s.replay_names for s in scenarios]
    headers = [*config.headers, (SCENARIO_HEADER, ",".join("|".join(n) for n in [*names, *names[:1]]))]
    try:
        ws = await asyncio.wait_for(connect(url, additional_headers=headers, max_size=config.limits.max_bytes,
                                            open_timeout=None, ping_interval=None, compression=None),
                                    timeout=config.limits.connect_timeout)
    except InvalidStatus as exc:
        status = exc.response.status_code
        return WsProbeResult(shown, unsupported=f"HTTP {status} {exc.response.reason_phrase} to the WebSocket "
                                                f"upgrade of {shown}")
    except InvalidHandshake as exc:  # an answer to the upgrade that is no HTTP/1.1 response, a bad header
        raise UsageError(f"the WebSocket upgrade of {shown} failed: {exc}") from None
    except TimeoutError:  # connected, but the upgrade got no answer (str(TimeoutError()) is empty)
        raise UsageError(f"no answer to the WebSocket upgrade of {shown} within "
                         f"{config.limits.connect_timeout:g} s") from None
    except OSError as exc:
        raise UsageError(f"cannot connect to {shown}: {exc or type(exc).__name__}") from None
    session = _Session(config, url)
    upgrade = ws.response
    response_headers = [(k, config.redactor.text(v)) for k, v in upgrade.headers.raw_items()] if upgrade else []
    session.write(header(shown, upgrade.status_code if upgrade else 101, response_headers))
    await _run(session, ws, scenarios, config.model, continuation)
    result = session.linter.close()
    saved = None
    if config.save_dir is not None:
        path = config.save_dir / SAVED_NAME
        write_atomic(path, bytes(session.transcript))
        saved = str(path)
    return WsProbeResult(shown, result=result, outcomes=session.linter.outcomes(),
                         transcript=bytes(session.transcript), saved=saved, close=session.linter.close_record,
                         seconds=round(time.monotonic() - session.started, 4))


async def _run(session: _Session, ws: Any, scenarios: Sequence[Scenario], model: str, continuation: bool) -> None:
    """Every scenario's response, the continuation, then the client's close (recorded as the server answers it)."""
    from websockets.exceptions import ConnectionClosed

    going = True
    try:
        for number, scenario in enumerate(scenarios, start=1):
            await session.send(ws, create_event(scenario, model), scenario.name, scenario.expect)
            going = await session.answer(ws, f"{number} ({scenario.name})")
            if not going:
                break
        first = session.linter.responses[0] if session.linter.responses else None
        if going and continuation and first is not None and first.created_id and first.result is not None:
            event = {"type": "response.create", "model": model, "previous_response_id": first.created_id,
                     "input": CONTINUATION_INPUT}
            await session.send(ws, event, "continuation")
            going = await session.answer(ws, f"{len(scenarios) + 1} (continuation)")
    except ConnectionClosed as exc:  # while sending
        session.closed(exc.rcvd, exc.sent, exc.rcvd_then_sent)
        going = False
    if going or session.linter.close_record is None:
        await _close(session, ws)


async def _close(session: _Session, ws: Any) -> None:
    try:
        await asyncio.wait_for(ws.close(code=1000), timeout=max(min(session.config.limits.close_timeout, 10.0), 0.1))
    except (TimeoutError, OSError):
        pass
    protocol = ws.protocol
    if session.linter.close_record is None:
        session.closed(protocol.close_rcvd, protocol.close_sent, protocol.close_rcvd_then_sent)
