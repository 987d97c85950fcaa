"""A stored-response flow's answers as data, and how to read them (pure: no I/O).

An :class:`Answer` is one exchange of a flow as recorded (step name, method, path, the JSON sent, the status,
the JSON or stream received); a :class:`Verdict` is one row of the capability table. The helpers read a final
Response out of an answer, decide whether an error says the feature is absent, and compare a retrieved
Response or a listed input item with what was streamed or sent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from checker.findings import Finding, Position
from checker.sse import SSEEvent, decode_all

State = Literal["supported", "unsupported", "broken", "not checked"]
START = Position(line=1, byte=0)
# Statuses that say "there is no such endpoint here" (a route the server does not have).
ABSENT = frozenset({404, 405, 501})
TERMINAL = frozenset({"completed", "incomplete", "failed", "cancelled"})
_NOT_SUPPORTED = re.compile(r"not (?:be )?supported|does not support|unsupported|not implemented", re.I)
_TERMINAL_EVENTS = ("response.completed", "response.incomplete", "response.failed")


@dataclass(frozen=True, slots=True, kw_only=True)
class Answer:
    """One recorded exchange of a flow: what was asked and what came back."""

    step: str
    method: str = "GET"
    path: str = ""
    request: Any = None  # the JSON body sent, if any
    status: int | None = None  # None: no answer at all (the connection failed)
    body: Any = None  # the JSON answer, parsed; None when it was not JSON (or was a stream)
    stream: bytes | None = None  # a streamed answer's bytes

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Answer:
        stream = obj.get("stream")
        return cls(step=str(obj.get("step")), method=str(obj.get("method", "GET")), path=str(obj.get("path", "")),
                   request=obj.get("request"), status=obj.get("status"), body=obj.get("body"),
                   stream=stream.encode("utf-8") if isinstance(stream, str) else None)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"step": self.step, "method": self.method, "path": self.path}
        if self.request is not None:
            out["request"] = self.request
        out["status"] = self.status
        if self.stream is not None:
            out["stream"] = self.stream.decode("utf-8", "replace")
        else:
            out["body"] = self.body
        return out


@dataclass(slots=True)
class Verdict:
    """One row of the capability table."""

    feature: str
    state: State
    why: str = ""
    findings: list[Finding] = field(default_factory=list)


# --- reading answers ------------------------------------------------------------------------------------


def stream_events(data: bytes) -> list[dict[str, Any]]:
    """The JSON objects of a stream's events, in order (what is not a JSON object is left out)."""
    out = []
    for event in decode_all(data):
        if isinstance(event, SSEEvent):
            try:
                obj = json.loads(event.data)
            except ValueError:
                continue
            if isinstance(obj, dict):
                out.append(obj)
    return out


def final_response(answer: Answer | None) -> dict[str, Any] | None:
    """The Response an answer ended with: a stream's terminal event's, or the JSON object itself."""
    if answer is None or not answer.ok:
        return None
    if answer.stream is not None:
        found = None
        for event in stream_events(answer.stream):
            if event.get("type") in _TERMINAL_EVENTS and isinstance(event.get("response"), dict):
                found = event["response"]
        return found
    body = answer.body
    return body if isinstance(body, dict) and isinstance(body.get("id"), str) else None


def error_of(answer: Answer) -> dict[str, Any] | None:
    error = answer.body.get("error") if isinstance(answer.body, dict) else None
    return error if isinstance(error, dict) else None


def message_of(answer: Answer) -> str:
    error = error_of(answer)
    text = error.get("message") if error else answer.body.get("detail") if isinstance(answer.body, dict) else None
    return " ".join(str(text).split())[:120] if text else ""


def absent(answer: Answer) -> bool:
    """The server does not offer what was asked: no such route, or an error that says it is not supported."""
    if answer.status in ABSENT and not (answer.status == 404 and _names_missing_object(answer)):
        return True
    return answer.status is not None and 400 <= answer.status < 500 and bool(_NOT_SUPPORTED.search(message_of(answer)))


def _names_missing_object(answer: Answer) -> bool:
    """A 404 that is about the object (``Response with id … not found``), not about the route."""
    message = message_of(answer).lower()
    return "not found" in message and ("resp_" in message or "id" in message) and "file not found" not in message


def unsupported(feature: str, answer: Answer) -> Verdict:
    message = message_of(answer)
    return Verdict(feature, "unsupported", f"{answer.method} {answer.path}: HTTP {answer.status}"
                                           + (f" ({message})" if message else ""))


def broken(feature: str, findings: list[Finding]) -> Verdict:
    return Verdict(feature, "broken", findings[0].message, findings)


def not_checked(feature: str, why: str) -> Verdict:
    return Verdict(feature, "not checked", why)


def outcome(feature: str, findings: list[Finding], why: str) -> Verdict:
    return broken(feature, findings) if findings else Verdict(feature, "supported", why)


def same(a: Any, b: Any) -> bool:
    """JSON equality where a null member and an absent one are the same."""
    if isinstance(a, dict) and isinstance(b, dict):
        keys = set(a) | set(b)
        return all(same(a.get(k), b.get(k)) for k in keys)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def _label(item: Any, index: int) -> str:
    if not isinstance(item, dict):
        return f"output[{index}]"
    return f"output[{index}] ({item.get('type')} {item.get('id')})"


def response_differences(streamed: Mapping[str, Any], stored: Any) -> list[str]:
    """How a retrieved response differs from the streamed one: id, status, output item for item, usage."""
    if not isinstance(stored, dict) or stored.get("object", "response") != "response":
        return ["it is not a Response object"]
    out = [f"{key} {stored.get(key)!r}, the stream's {streamed.get(key)!r}"
           for key in ("id", "status") if not same(stored.get(key), streamed.get(key))]
    mine, theirs = streamed.get("output") or [], stored.get("output")
    if not isinstance(theirs, list):
        return [*out, "it has no output list"]
    if len(theirs) != len(mine):
        out.append(f"{len(theirs)} output items, the stream {len(mine)}")
    for index, (a, b) in enumerate(zip(mine, theirs)):
        if not same(a, b):
            keys = sorted(k for k in set(a) | set(b) if not same(a.get(k), b.get(k))) \
                if isinstance(a, dict) and isinstance(b, dict) else ["the item"]
            out.append(f"{_label(a, index)}: {', '.join(keys)} differ")
    if not same(stored.get("usage"), streamed.get("usage")):
        out.append("usage differs")
    return out


def _texts(content: Any) -> list[tuple[str, Any]]:
    if isinstance(content, str):
        return [("text", content)]
    if isinstance(content, list):
        return [(str(p.get("type")), p.get("text")) for p in content if isinstance(p, dict)]
    return []


def sent_items(value: Any) -> list[dict[str, Any]]:
    """The input a create request sent, as items: a string is one user message."""
    if isinstance(value, str):
        return [{"type": "message", "role": "user", "content": value}]
    return [dict(v) for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def item_difference(sent: Mapping[str, Any], listed: Any) -> str | None:
    """Why a listed input item is not the item sent (None when it is): type, role, text, call id, output."""
    if not isinstance(listed, dict):
        return "is not an object"
    kind = sent.get("type") or "message"
    if listed.get("type") != kind:
        return f"is a {listed.get('type')!r}, the request sent a {kind!r}"
    if kind == "message":
        if listed.get("role") != sent.get("role"):
            return f"has role {listed.get('role')!r}, the request sent {sent.get('role')!r}"
        if [t for _, t in _texts(listed.get("content"))] != [t for _, t in _texts(sent.get("content"))]:
            return "has other text than the request sent"
        return None
    keys = [k for k in ("call_id", "output", "arguments", "name") if k in sent and not same(listed.get(k), sent[k])]
    return f"has another {', '.join(keys)} than the request sent" if keys else None
