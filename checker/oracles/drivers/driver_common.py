"""What the Python drivers share: the driver protocol's arguments and outcome, and the follow-up proxy.

Standard library only, and no import of sse-check: a driver runs in its client's own environment (the Agents
SDK's venv, LangChain's) or, for a client that is a program (codex, Claude Code), in any Python 3.11. The
protocol is ``checker/oracles/protocol.py``'s: ``DRIVER BASE_URL MODEL DIALECT [TOOL,NAMES]`` prints one JSON
outcome; ``DRIVER --batch`` reads ``BASE_URL MODEL DIALECT TOOLS REQUEST_JSON`` lines (``TOOLS`` ``-`` for none)
and prints one outcome line per job, in order.

The follow-up proxy is for the agents that answer a tool call and ask the model again (codex has no turn limit;
Claude Code continues a ``max_tokens`` stop as well): the oracle's server answers every request with the same
capture, on which such an agent would loop. Between the agent and the server, the proxy relays the first model
request to the server and the server's answer back byte for byte (status line, headers, body, and the
connection's end as the server made it), and answers every later model request itself with a conforming text
answer of the dialect. Everything else (Claude Code's ``HEAD`` reachability check) gets a small answer from the
proxy, so the capture is served exactly once, to the call that matters.
"""

from __future__ import annotations

import json
import os
import select
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

MODEL_PATHS = {"responses": "/responses", "chat": "/chat/completions", "messages": "/messages"}


@dataclass(frozen=True, slots=True)
class Call:
    base_url: str  # ends with /v1
    model: str
    dialect: str
    tools: tuple[str, ...] = ()
    request: dict[str, Any] = field(default_factory=dict)

    @property
    def root_url(self) -> str:
        base = self.base_url.rstrip("/")
        return base[: -len("/v1")] if base.endswith("/v1") else base


def timeout_s() -> float:
    try:
        return float(os.environ.get("SSE_CHECK_ORACLE_TIMEOUT") or 20)
    except ValueError:
        return 20.0


def _tools(text: str) -> tuple[str, ...]:
    return tuple(t for t in text.split(",") if t and t != "-")


def parse_args(argv: list[str]) -> Call:
    if len(argv) < 3:
        raise SystemExit("usage: DRIVER BASE_URL MODEL DIALECT [TOOL,NAMES]  |  DRIVER --batch")
    request = json.loads(os.environ.get("SSE_CHECK_ORACLE_REQUEST") or "{}")
    return Call(argv[0], argv[1], argv[2], _tools(argv[3] if len(argv) > 3 else ""),
                request if isinstance(request, dict) else {})


def parse_line(line: str) -> Call:
    parts = line.strip().split(" ", 4)
    request: Any = json.loads(parts[4]) if len(parts) > 4 and parts[4].strip() else {}
    return Call(parts[0], parts[1], parts[2], _tools(parts[3] if len(parts) > 3 else ""),
                request if isinstance(request, dict) else {})


def outcome(client: str, version: str, dialect: str) -> dict[str, Any]:
    return {"client": client, "version": version, "dialect": dialect, "raised": None, "text": None,
            "tool_calls": [], "status": None, "finish_reason": None, "errors": []}


def error_text(exc: BaseException) -> str:
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def main(run: Callable[[Call], dict[str, Any]], argv: list[str] | None = None) -> int:
    """A driver's entry point: one call from the arguments, or ``--batch`` lines from stdin."""
    args = sys.argv[1:] if argv is None else argv
    if args[:1] != ["--batch"]:
        print(json.dumps(run(parse_args(args))), flush=True)
        return 0
    for line in sys.stdin:
        if line.strip():
            print(json.dumps(run(parse_line(line))), flush=True)
    return 0


# --- the follow-up proxy --------------------------------------------------------------------------------------

# Conforming text answers ("Done."), one per dialect: what a second model request gets.
_RESPONSE = {"id": "resp_followup", "object": "response", "created_at": 1760000000, "status": "in_progress",
             "model": "oracle", "output": [], "error": None, "incomplete_details": None}
_ITEM = {"id": "msg_followup", "type": "message", "status": "in_progress", "role": "assistant", "content": []}
_PART = {"type": "output_text", "text": "", "annotations": []}
_DONE_PART = {**_PART, "text": "Done."}
_DONE_ITEM = {**_ITEM, "status": "completed", "content": [_DONE_PART]}
_USAGE = {"input_tokens": 20, "output_tokens": 2, "total_tokens": 22, "input_tokens_details": {"cached_tokens": 0},
          "output_tokens_details": {"reasoning_tokens": 0}}
_RESPONSES_EVENTS: list[dict[str, Any]] = [
    {"type": "response.created", "sequence_number": 0, "response": _RESPONSE},
    {"type": "response.output_item.added", "sequence_number": 1, "output_index": 0, "item": _ITEM},
    {"type": "response.content_part.added", "sequence_number": 2, "item_id": "msg_followup", "output_index": 0,
     "content_index": 0, "part": _PART},
    {"type": "response.output_text.delta", "sequence_number": 3, "item_id": "msg_followup", "output_index": 0,
     "content_index": 0, "delta": "Done.", "logprobs": []},
    {"type": "response.output_text.done", "sequence_number": 4, "item_id": "msg_followup", "output_index": 0,
     "content_index": 0, "text": "Done.", "logprobs": []},
    {"type": "response.content_part.done", "sequence_number": 5, "item_id": "msg_followup", "output_index": 0,
     "content_index": 0, "part": _DONE_PART},
    {"type": "response.output_item.done", "sequence_number": 6, "output_index": 0, "item": _DONE_ITEM},
    {"type": "response.completed", "sequence_number": 7,
     "response": {**_RESPONSE, "status": "completed", "output": [_DONE_ITEM], "usage": _USAGE}},
]
_CHUNK = {"id": "chatcmpl-followup", "object": "chat.completion.chunk", "created": 1760000000, "model": "oracle"}
_CHAT_CHUNKS: list[dict[str, Any]] = [
    {**_CHUNK, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]},
    {**_CHUNK, "choices": [{"index": 0, "delta": {"content": "Done."}, "finish_reason": None}]},
    {**_CHUNK, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
]
_MESSAGES_EVENTS: list[dict[str, Any]] = [
    {"type": "message_start", "message": {"id": "msg_followup", "type": "message", "role": "assistant",
                                          "model": "oracle", "content": [], "stop_reason": None,
                                          "stop_sequence": None, "usage": {"input_tokens": 20, "output_tokens": 1}}},
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Done."}},
    {"type": "content_block_stop", "index": 0},
    {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
     "usage": {"output_tokens": 2}},
    {"type": "message_stop"},
]


def followup_body(dialect: str) -> bytes:
    if dialect == "chat":
        return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in _CHAT_CHUNKS) + b"data: [DONE]\n\n"
    events = _MESSAGES_EVENTS if dialect == "messages" else _RESPONSES_EVENTS
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


@dataclass(slots=True)
class ProxyState:
    upstream: str  # the oracle's base URL for the job, without /v1
    dialect: str
    model_requests: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


def _relay(state: ProxyState, handler: BaseHTTPRequestHandler, body: bytes) -> None:
    """Send the request on to the oracle's server and its answer back unchanged, until either side closes."""
    target = urlsplit(state.upstream)
    path = target.path.rstrip("/") + handler.path
    head = [f"{handler.command} {path} HTTP/1.1", f"host: {target.hostname}:{target.port}", "connection: close"]
    head += [f"{k}: {v}" for k, v in handler.headers.items() if k.lower() not in ("host", "connection")]
    client = handler.connection
    with socket.create_connection((target.hostname or "127.0.0.1", target.port or 80), timeout=timeout_s()) as up:
        up.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
        up.settimeout(None)
        while True:
            ready, _, _ = select.select([up, client], [], [], timeout_s() + 5)
            if not ready:
                return  # nothing from either side for longer than the client waits
            if client in ready and not client.recv(1, socket.MSG_PEEK):
                return  # the client let go (a server that keeps the connection open)
            if up in ready:
                data = up.recv(65536)
                if not data:
                    return
                client.sendall(data)


def _proxy_handler(state: ProxyState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _answer(self, status: int, content_type: str, data: bytes) -> None:
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(data)))
            self.send_header("connection", "close")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
            self.close_connection = True

        def _handle(self) -> None:
            length = self.headers.get("content-length")
            body = self.rfile.read(int(length)) if length and length.isdigit() else b""
            path = self.path.split("?", 1)[0]
            if self.command == "POST" and path.endswith(MODEL_PATHS.get(state.dialect, "/responses")):
                with state.lock:
                    state.model_requests += 1
                    first = state.model_requests == 1
                if first:
                    try:
                        _relay(state, self, body)
                    except OSError:
                        pass
                    self.close_connection = True
                    return
                return self._answer(200, "text/event-stream", followup_body(state.dialect))
            if self.command == "POST" and path.endswith("/count_tokens"):
                return self._answer(200, "application/json", b'{"input_tokens": 12}')
            return self._answer(200, "application/json", b"{}")

        do_GET = do_POST = do_HEAD = do_PUT = do_DELETE = do_PATCH = _handle

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
            return None

    return Handler


@contextmanager
def followup_proxy(upstream: str, dialect: str) -> Iterator[str]:
    """A proxy on 127.0.0.1 in front of ``upstream`` (the job's root URL); yields its root URL."""
    state = ProxyState(upstream.rstrip("/"), dialect)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _proxy_handler(state))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
