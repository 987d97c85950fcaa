"""Write the structured-output answers with ``stream: false`` of the three dialects (docs/spec.md §8, rules FMT).

    python captures/make_structured_nonstream.py

The same cases as captures/make_structured_captures.py (its ``CASES``: each rule's bad example and the conforming
answers), asked without streaming: ``structured-nonstream/<dialect>/<case>.sse`` is the JSON answer (the object
the case's stream builds: Responses' final ``response``, a chat completion, an Anthropic ``Message``), its
``.meta.json`` the exchange as ``sse-check probe --save`` records a ``stream: false`` request carrying the
format (``checker.live.probe.build_meta``), its ``.expect.json`` the complete set of codes ``sse-check lint``
reports (tests/test_structured_nonstream.py). Not under captures/structured: the stream corpus lints those
folders as streams.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "captures"))

import make_structured_captures as streams  # noqa: E402

from captures.generated_files import write_files  # noqa: E402
from checker.live.probe import ProbeLimits, build_meta  # noqa: E402
from checker.live.saving import meta_json  # noqa: E402
from checker.live.scenarios import Scenario  # noqa: E402
from checker.sse import decode_all  # noqa: E402

FOLDER = ROOT / "captures" / "structured-nonstream"
ENDPOINTS = {"responses": "/v1/responses", "chat": "/v1/chat/completions", "messages": "/v1/messages"}
REQUEST_HEADERS = {"messages": [["anthropic-version", "2023-06-01"]]}


def events_of(data: bytes) -> list[dict[str, Any]]:
    found = []
    for event in decode_all(data):
        if event.data and event.data != b"[DONE]":
            found.append(json.loads(event.data))
    return found


def responses_answer(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The terminal event's response: what the same request answers without streaming."""
    response: dict[str, Any] = events[-1]["response"]
    return response


def chat_answer(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The completion the chunks build (one choice), as openai-python's ChatCompletionStreamState accumulates it."""
    first = events[0]
    message: dict[str, Any] = {"role": "assistant", "content": None, "refusal": None}
    finish = None
    usage = None
    for chunk in events:
        usage = chunk.get("usage") or usage
        for choice in chunk.get("choices") or ():
            delta = choice.get("delta") or {}
            for key in ("content", "refusal"):
                if delta.get(key) is not None:
                    message[key] = (message[key] or "") + delta[key]
            finish = choice.get("finish_reason") or finish
    answer = {"id": first["id"], "object": "chat.completion", "created": first["created"], "model": first["model"],
              "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}]}
    if usage is not None:
        answer["usage"] = usage
    return answer


def messages_answer(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The Message the events build, as anthropic-python's stream accumulates it."""
    message: dict[str, Any] = {}
    for event in events:
        kind = event["type"]
        if kind == "message_start":
            message = json.loads(json.dumps(event["message"]))
        elif kind == "content_block_start":
            message["content"].append(dict(event["content_block"]))
        elif kind == "content_block_delta" and event["delta"]["type"] == "text_delta":
            block = message["content"][event["index"]]
            block["text"] = block.get("text", "") + event["delta"]["text"]
        elif kind == "message_delta":
            message.update(event["delta"])
            message["usage"] = {**message["usage"], **event["usage"]}
    return message


ANSWERS = {"responses": responses_answer, "chat": chat_answer, "messages": messages_answer}


def dialect_of(path: Path) -> str:
    rel = path.relative_to(ROOT / "captures").parts
    return rel[0] if rel[0] in ("chat", "messages") else "responses"


def cases() -> Iterator[tuple[str, str, dict[str, Any], bytes, list[str], str]]:
    """(dialect, case name, request, answer body, expected codes, about) of every case of every dialect."""
    about = {name: (text, list(expect)) for name, text, *_, expect in streams.CASES}
    for path, request, data in streams.captures():
        dialect, name = dialect_of(path), path.stem
        request = {**request, "stream": False}
        answer = ANSWERS[dialect](events_of(data))
        body = (json.dumps(answer, indent=2, ensure_ascii=False) + "\n").encode()
        text, expect = about[name]
        yield dialect, name, request, body, expect, text


def build() -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for dialect, name, request, body, expect, about in cases():
        scenario = Scenario(name="structured_output_nonstream", expect="nonstream", api=dialect, body=request,
                            summary="a strict json_schema answer with stream false: JSON the request's schema "
                                    "accepts")
        meta = build_meta(
            scenario=scenario, url=f"http://127.0.0.1:8080{ENDPOINTS[dialect]}", request=request,
            request_headers=[["Content-Type", "application/json"], ["Accept", "application/json"],
                             *REQUEST_HEADERS.get(dialect, []), ["Authorization", "<redacted>"]],
            status=200, reason="OK", headers=[["content-type", "application/json"]], size=len(body), events=0,
            timings={"headers": 0.012, "first_byte": 0.015, "total": 0.25}, limits=ProbeLimits(),
            started_at="2026-10-01T12:00:00+00:00",
            connection={"closed_by_server": None, "closed_after": None, "retried": None})
        meta["about"] = f"{about}, asked with stream: false"
        stem = f"{dialect}/{name}"
        files[f"{stem}.sse"] = body
        files[f"{stem}.meta.json"] = meta_json(meta).encode()
        files[f"{stem}.expect.json"] = (json.dumps({"openai": sorted(expect)}) + "\n").encode()
    return files


def main() -> int:
    files = build()
    write_files(files, FOLDER)
    print(f"wrote {len(files)} files under {FOLDER.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
