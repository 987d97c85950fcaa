"""Bodies that are not a stream: a non-streamed answer (``stream: false``) judged as its endpoint defines it
and its parity with the stream, and an HTTP error's body.

The probe asks each scenario twice where it can, streamed and not, and records digests of the streamed final
output in the meta's ``reference``; :func:`parity_findings` compares the non-streamed answer's output with
them (HTP016/HTP017). Pure functions of bytes and records: no I/O (``checker.http_checks`` calls them).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from checker.dialects.responses.vocabulary import TERMINAL_TYPES
from checker.exchange_text import clip as _clip
from checker.exchange_text import json_kind as _json_kind
from checker.exchange_text import one_line as _one_line
from checker.findings import Finding, Position
from checker.rules import http as rules

# A non-streaming body or an error body is kept whole up to this size (far above any real one).
MAX_KEPT_BODY = 16 * 1024 * 1024
_START = Position(line=1, byte=0)
# The order OpenAI's output items come in (reasoning, then the message, then calls): HTP015 checks it.
_ITEM_RANK = {"reasoning": 0, "message": 1, "function_call": 2}


def nonstream_findings(body: bytes, api: str | None, reference: Any, *, whole: bool = True) -> list[Finding]:
    """A ``stream: false`` answer, as its endpoint (``api``) defines it: a Response object (its output order,
    and parity with the stream recorded in the meta's ``reference``), or a chat completion; the answer of
    another endpoint is not judged."""
    if api is None:
        return []
    what = "Response object" if api == "responses" else "chat completion"
    if not whole:
        return [rules.NONSTREAM_NOT_RESPONSE.finding(_START, what=what, detail=f"larger than {MAX_KEPT_BODY} bytes")]
    try:
        obj = json.loads(body)
    except (UnicodeDecodeError, ValueError) as exc:
        stripped = body.lstrip()
        if stripped.startswith((b"event:", b"data:", b":")):
            detail = "an event stream was sent although the request said stream: false"
        else:
            detail = f"not JSON ({_one_line(str(exc))})"
        return [rules.NONSTREAM_NOT_RESPONSE.finding(_START, what=what, detail=detail)]
    if not isinstance(obj, dict):
        return [rules.NONSTREAM_NOT_RESPONSE.finding(_START, what=what, detail=f"a JSON {_json_kind(obj)}")]
    if obj.get("error"):
        return []  # reported as an error body with a 2xx status
    if api == "chat":
        why = _not_a_chat_completion(obj)
        return [rules.NONSTREAM_NOT_RESPONSE.finding(_START, what=what, detail=why)] if why else []
    output = obj.get("output")
    if not isinstance(output, list):
        return [rules.NONSTREAM_NOT_RESPONSE.finding(_START, what=what, detail="no output array")]
    found: list[Finding] = []
    items = [item for item in output if isinstance(item, dict)]
    types = [str(item.get("type")) for item in items]
    ranks = [_ITEM_RANK[t] for t in types if t in _ITEM_RANK]
    if ranks != sorted(ranks):
        found.append(rules.NONSTREAM_ORDER.finding(_START, order=", ".join(types)))
    if isinstance(reference, dict) and isinstance(reference.get("output"), list):
        found.extend(parity_findings(digest_output(items), reference["output"],
                                     terminal=str(reference.get("terminal") or "response.completed")))
    return found


def _not_a_chat_completion(obj: Mapping[str, Any]) -> str | None:
    """Why a JSON object is not a chat completion as the SDKs read one (``choices[i].message``), if it is not.

    Only the shape the clients index is required: fields the description lists but the SDKs do not need
    (``logprobs``, which llama-server leaves out) are not this rule's business.
    """
    choices = obj.get("choices")
    if not isinstance(choices, list):
        return "no choices array" if choices is None else f"choices is a JSON {_json_kind(choices)}"
    for index, choice in enumerate(choices):
        if not isinstance(choice, dict):
            return f"choices[{index}] is a JSON {_json_kind(choice)}"
        if not isinstance(choice.get("message"), dict):
            return f"choices[{index}] has no message object"
    return None


def digest_output(output: Sequence[Any]) -> list[dict[str, Any]]:
    """What parity compares of each output item: type, id prefixes, and its text or name + arguments."""
    digests = []
    for item in output:
        if not isinstance(item, dict):
            continue
        kind = str(item.get("type"))
        digest: dict[str, Any] = {"type": kind, "id_prefix": _prefix(item.get("id"))}
        if kind == "function_call":
            digest["call_id_prefix"] = _prefix(item.get("call_id"))
            digest["text"] = f"{item.get('name')}({item.get('arguments')})"
        else:
            parts = [*(item.get("content") or []), *(item.get("summary") or [])]
            digest["text"] = "".join(str(p.get("text") or p.get("refusal") or "") for p in parts if isinstance(p, dict))
        digests.append(digest)
    return digests


def parity_findings(got: Sequence[Mapping[str, Any]], streamed: Sequence[Any], *, terminal: str) -> list[Finding]:
    """Compare digests of the non-streaming output with those of the streamed final output."""
    short = terminal.removeprefix("response.")
    want = [d for d in streamed if isinstance(d, dict)]
    got_types = [d.get("type") for d in got]
    want_types = [d.get("type") for d in want]
    if got_types != want_types:
        got_text = ", ".join(map(str, got_types)) or "none"
        detail = f"items {got_text} vs streamed {', '.join(map(str, want_types)) or 'none'}"
        return [rules.NONSTREAM_PARITY.finding(_START, terminal=short, detail=detail)]
    found = []
    for index, (a, b) in enumerate(zip(got, want)):
        for key in ("id_prefix", "call_id_prefix"):
            if a.get(key) != b.get(key):
                what = "id" if key == "id_prefix" else "call_id"
                detail = f"item {index} ({a.get('type')}) {what} prefix {a.get(key)!r} vs streamed {b.get(key)!r}"
                found.append(rules.NONSTREAM_PARITY.finding(_START, terminal=short, detail=detail))
    if found:
        return found
    for index, (a, b) in enumerate(zip(got, want)):
        if a.get("text") != b.get("text"):
            noun = "name or arguments" if a.get("type") == "function_call" else "text"
            found.append(rules.NONSTREAM_TEXT.finding(_START, index=index, type=a.get("type"), what=noun))
    return found


def final_output(events: Iterable[Any]) -> tuple[str, list[Any]] | None:
    """(terminal type, ``response.output``) of the last terminal event among decoded SSE events, if any."""
    found = None
    for event in events:
        data = getattr(event, "data", None)
        if not isinstance(data, bytes) or b"response." not in data:
            continue
        try:
            obj = json.loads(data)
        except (UnicodeDecodeError, ValueError):
            continue
        if isinstance(obj, dict) and obj.get("type") in TERMINAL_TYPES and isinstance(obj.get("response"), dict):
            output = obj["response"].get("output")
            if isinstance(output, list):
                found = (obj["type"], output)
    return found


def stream_reference(body: bytes, scenario: str) -> dict[str, Any] | None:
    """The meta ``reference`` for non-streaming parity: digests of a stream's final output."""
    from checker.sse import decode_all

    found = final_output(decode_all(body))
    if found is None:
        return None
    return {"scenario": scenario, "terminal": found[0], "output": digest_output(found[1])}


def _prefix(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    head, sep, _ = value.partition("_")
    return head + sep if sep else ""


def nonstream_id(body: bytes, meta: Mapping[str, Any]) -> str | None:
    """The id of a non-streamed answer (a stream's id comes from its machine)."""
    if meta.get("expect") != "nonstream" or not body:
        return None
    try:
        obj = json.loads(body)
    except (UnicodeDecodeError, ValueError):
        return None
    rid = obj.get("id") if isinstance(obj, dict) else None
    return rid if isinstance(rid, str) else None


# --- error bodies ------------------------------------------------------------------------------------


def error_object(body: bytes) -> str | None:
    """The body's JSON error, shortened to one line, when the body is ``{"error": {...}}`` (or a string)."""
    try:
        obj = json.loads(body)
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(obj, dict) or not obj.get("error"):
        return None
    error = obj["error"]
    if isinstance(error, dict):
        text = str(error.get("message") or error.get("code") or json.dumps(error))
    else:
        text = str(error)
    return _clip(_one_line(text), 160)


def not_error_json(body: bytes, whole: bool) -> str:
    """Why an error body is not the JSON error object the SDKs read (HTP003), in a few words."""
    if not body:
        return "the body is empty"
    try:
        obj = json.loads(body)
    except (UnicodeDecodeError, ValueError):
        text = body[:200].decode("utf-8", "replace")
        kind = "an HTML page" if "<html" in text.lower() or text.lstrip().startswith("<!") else "not JSON"
        return f"{kind}: {_clip(_one_line(text), 80)!r}" + ("" if whole else " …")
    if not isinstance(obj, dict):
        return f"a JSON {_json_kind(obj)}"
    return "a JSON object without an `error` member"
