"""Write the WebSocket transcripts of ``captures/ws/``: a conforming connection and one example per WSK rule.

Run from the project root: ``python captures/make_ws_captures.py``. The output is deterministic.

Each ``X.ws.jsonl`` is a transcript in the format ``sse-check probe --transport websocket --save`` writes
(checker/ws_transcript.py): the client's ``response.create`` messages, every message received, the close.
The events are those of ``conforming/text.sse`` (the second response of a connection is the same answer
under another response id, continuing the first by ``previous_response_id``); each rule's example breaks
one thing. ``X.expect.json`` declares the complete set of codes ``sse-check lint`` reports for it
(tests/test_ws.py).
"""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent))

from captures.generated_files import write_files  # noqa: E402
from checker.sse import SSEDecoder, SSEEvent  # noqa: E402
from checker.ws_transcript import FORMAT, VERSION  # noqa: E402

OUT = ROOT / "ws"
SOURCE = ROOT / "conforming" / "text.sse"
URL = "ws://127.0.0.1:8080/v1/responses"
MODEL = "gpt-4.1-2025-04-14"
Transcript = list[dict[str, Any]]
WRITERS: dict[str, tuple[Callable[[], Transcript], tuple[str, ...]]] = {}


def transcript(name: str, *codes: str) -> Callable[[Callable[[], Transcript]], Callable[[], Transcript]]:
    def register(fn: Callable[[], Transcript]) -> Callable[[], Transcript]:
        WRITERS[name] = (fn, codes)
        return fn
    return register


def events(response_id: str | None = None) -> list[str]:
    """The data of each event of conforming/text.sse (its response id replaced by ``response_id``)."""
    decoder = SSEDecoder()
    found = [item for item in decoder.feed(SOURCE.read_bytes()) + decoder.close() if isinstance(item, SSEEvent)]
    texts = [event.data.decode() for event in found]
    original = json.loads(texts[0])["response"]["id"]
    return [t.replace(original, response_id) for t in texts] if response_id else texts


FIRST_ID = json.loads(events()[0])["response"]["id"]
SECOND_ID = "resp_0000000000000000000000000000000000000000000000b2"


def head() -> dict[str, Any]:
    return {"format": FORMAT, "version": VERSION, "url": URL, "status": 101,
            "headers": [["upgrade", "websocket"], ["connection", "Upgrade"]]}


def create(scenario: str, previous: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"type": "response.create", "model": MODEL, "input": "Say hello."}
    if previous is not None:
        body = {**body, "previous_response_id": previous, "input": "And again."}
    return {"t": 0.0, "send": json.dumps(body, separators=(",", ":")), "scenario": scenario}


def texts(items: list[str]) -> Transcript:
    return [{"t": 0.01, "text": item} for item in items]


def normal_close() -> dict[str, Any]:
    return {"t": 0.5, "close": {"received": [1000, ""], "sent": [1000, ""], "server_first": False}}


def ws_error(status: int, kind: str, code: str, message: str, param: str | None = None) -> str:
    return json.dumps({"type": "error", "status": status,
                       "error": {"type": kind, "code": code, "message": message, "param": param}},
                      separators=(",", ":"))


def two_responses(first: Transcript | None = None, close: dict[str, Any] | None = None) -> Transcript:
    return [head(), create("plain_text"), *(first if first is not None else texts(events())),
            create("continuation", FIRST_ID), *texts(events(SECOND_ID)), close or normal_close()]


@transcript("conforming")
def conforming() -> Transcript:
    return two_responses()


@transcript("WSK001-binary-frame", "WSK001")
def binary_frame() -> Transcript:
    first = texts(events())
    first[3] = {"t": 0.01, "binary": base64.b64encode(first[3]["text"].encode()).decode()}
    return two_responses(first)


@transcript("WSK002-several-events-in-one-message", "WSK002")
def several_events() -> Transcript:
    items = events()
    return two_responses(texts([*items[:3], items[3] + "\n" + items[4], *items[5:]]))


@transcript("WSK003-message-not-an-event", "WSK003", "CNT004")
def partial_event() -> Transcript:
    items = events()
    cut = len(items[3]) // 2
    return two_responses(texts([*items[:3], items[3][:cut], items[3][cut:], *items[4:]]))


@transcript("WSK004-closed-mid-response", "WSK004", "LIF006")
def closed_mid_response() -> Transcript:
    close = {"t": 0.2, "close": {"received": [1000, ""], "sent": [1000, ""], "server_first": True}}
    return [head(), create("plain_text"), *texts(events()[:5]), close]


@transcript("WSK005-abnormal-close", "WSK005")
def abnormal_close() -> Transcript:
    return two_responses(close={"t": 0.5, "close": {"received": None, "sent": [1000, ""], "server_first": False}})


@transcript("WSK006-error-event-shape", "WSK006", "WSK010")
def error_shape() -> Transcript:
    flat = json.dumps({"type": "error", "code": "invalid_value", "message": "input is empty", "param": "input",
                       "sequence_number": 0}, separators=(",", ":"))
    return [head(), create("plain_text"), *texts([flat]), normal_close()]


@transcript("WSK007-interleaved-response", "WSK007")
def interleaved() -> Transcript:
    first, other = events(), events(SECOND_ID)
    mixed = [first[0], other[0], first[1], other[1], *first[2:]]
    return [head(), create("plain_text"), *texts(mixed), normal_close()]


@transcript("WSK008-continuation-refused", "WSK008")
def continuation_refused() -> Transcript:
    refused = ws_error(400, "invalid_request_error", "previous_response_not_found",
                       f"Previous response with id '{FIRST_ID}' not found.", "previous_response_id")
    return [head(), create("plain_text"), *texts(events()), create("continuation", FIRST_ID), *texts([refused]),
            normal_close()]


@transcript("WSK009-no-answer", "WSK009")
def no_answer() -> Transcript:
    timeout = {"t": 30.0, "timeout": "first-event", "seconds": 30, "waiting": "first event of response 1 (plain_text)"}
    return [head(), create("plain_text"), timeout, normal_close()]


@transcript("WSK010-response-error", "WSK010")
def response_error() -> Transcript:
    refused = ws_error(400, "invalid_request_error", "model_not_found", f"The model '{MODEL}' does not exist.", "model")
    return [head(), create("plain_text"), *texts([refused]), normal_close()]


def render(records: Transcript) -> bytes:
    return b"".join(json.dumps(r, separators=(",", ":"), ensure_ascii=False).encode() + b"\n" for r in records)


def outputs() -> dict[str, bytes]:
    """Every file this script writes, by name."""
    files: dict[str, bytes] = {}
    for name, (fn, codes) in WRITERS.items():
        files[f"{name}.ws.jsonl"] = render(fn())
        files[f"{name}.expect.json"] = (json.dumps({"openai": sorted(codes)}, indent=2) + "\n").encode()
    return files


def main() -> None:
    write_files(outputs(), OUT)


if __name__ == "__main__":
    main()
