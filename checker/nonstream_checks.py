"""Bodies that are not a stream: a non-streamed answer (``stream: false``) judged as its endpoint's dialect
defines it and its parity with the stream, and an HTTP error's body.

Each dialect says what its non-streamed answer is (``Dialect.nonstream``, checker/dialects/base.py): its object
(HTP018 when the body is not one), its own consistency checks and schema, the texts a requested JSON format
applies to (FMT, judged as a stream's answer is: checker/structured_output.py), and the digests parity compares. The
probe asks a scenario twice where it can, streamed and not, and records the digests of the streamed answer in the
meta's ``reference`` (:func:`stream_reference`); :func:`parity_findings` compares the non-streamed answer's
digests with them (HTP016/HTP017). Pure functions of bytes and records: no I/O (``checker.http_checks`` calls
them). No dialect is named here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from checker import dialects, structured_output
from checker.dialects.base import Dialect, NonStreamed
from checker.exchange_text import clip as _clip
from checker.exchange_text import json_kind as _json_kind
from checker.exchange_text import one_line as _one_line
from checker.findings import Finding, Position
from checker.rules import http as rules

# A non-streaming body or an error body is kept whole up to this size (far above any real one).
MAX_KEPT_BODY = 16 * 1024 * 1024
_START = Position(line=1, byte=0)


def nonstream_findings(body: bytes, dialect: Dialect | None, reference: Any, *, whole: bool = True,
                       request: Any = None) -> list[Finding]:
    """A ``stream: false`` answer, as its endpoint's dialect defines it (HTP018 when it is not that answer), its
    own consistency, and its parity with the stream recorded in the meta's ``reference``; the answer of an
    endpoint of no dialect is not judged."""
    hook = _hook(dialect)
    if hook is None:
        return []
    obj, why = _parsed(body, hook.what, whole)
    if why is not None:
        return [why]
    if not isinstance(obj, dict) or obj.get("error"):
        return []  # an error body with a 2xx status is reported as such
    problem = hook.problem(obj)
    if problem is not None:
        return [rules.NONSTREAM_NOT_RESPONSE.finding(_START, what=hook.what, detail=problem)]
    request = request if isinstance(request, Mapping) else {}
    found = hook.consistency(obj, request, _START)
    found.extend(structured_findings(obj, dialect, hook, request))
    if isinstance(reference, dict) and isinstance(reference.get("output"), list):
        terminal, shown = hook.streamed(str(reference.get("terminal") or ""))
        found.extend(parity_findings(hook.digest(obj), reference["output"], terminal=terminal, shown=shown,
                                     call_types=hook.call_types))
    return found


def structured_findings(obj: dict[str, Any], dialect: Dialect | None, hook: NonStreamed,
                        request: Mapping[str, Any]) -> list[Finding]:
    """The answer's texts against the JSON format the request asked for (FMT, docs/spec.md §8), as a stream's are
    judged at its end: a non-streamed answer is what ``responses.parse()`` and ``chat.completions.parse()``
    read."""
    if dialect is None or dialect.requested_format is None or hook.answer_texts is None:
        return []
    requested = dialect.requested_format(request)
    if requested is None:
        return []
    return structured_output.check(requested, hook.answer_texts(obj) or [], _START, dialect.clients_for)


def nonstream_object_findings(body: bytes, dialect: Dialect | None, schemas: Any) -> list[Finding]:
    """A whole ``stream: false`` answer that is its dialect's object, against the dialect's schema set."""
    hook = _hook(dialect)
    if hook is None:
        return []
    try:
        obj = json.loads(body)
    except (UnicodeDecodeError, ValueError):
        return []  # HTP018 says what it is
    if not isinstance(obj, dict) or obj.get("error") or hook.problem(obj) is not None:
        return []  # HTP004 / HTP018
    return hook.schema(obj, schemas, _START)


def _hook(dialect: Dialect | None) -> NonStreamed | None:
    return dialect.nonstream() if dialect is not None and dialect.nonstream is not None else None


def _parsed(body: bytes, what: str, whole: bool) -> tuple[Any, Finding | None]:
    """The body's JSON, or HTP018 saying why it is not even JSON (or too large to be judged)."""
    if not whole:
        detail = f"larger than {MAX_KEPT_BODY} bytes"
        return None, rules.NONSTREAM_NOT_RESPONSE.finding(_START, what=what, detail=detail)
    try:
        obj = json.loads(body)
    except (UnicodeDecodeError, ValueError) as exc:
        stripped = body.lstrip()
        if stripped.startswith((b"event:", b"data:", b":")):
            detail = "an event stream was sent although the request said stream: false"
        else:
            detail = f"not JSON ({_one_line(str(exc))})"
        return None, rules.NONSTREAM_NOT_RESPONSE.finding(_START, what=what, detail=detail)
    if not isinstance(obj, dict):
        return None, rules.NONSTREAM_NOT_RESPONSE.finding(_START, what=what, detail=f"a JSON {_json_kind(obj)}")
    return obj, None


def parity_findings(got: Sequence[Mapping[str, Any]], streamed: Sequence[Any], *, terminal: str,
                    shown: str | None = None,
                    call_types: frozenset[str] = frozenset({"function_call"})) -> list[Finding]:
    """Compare digests of the non-streaming answer with those of the streamed one (``checker.dialects.base.
    NonStreamed``): the units' types (HTP016), their ids' prefixes (HTP016), then their texts (HTP017).
    ``terminal`` is how the stream ended, ``shown`` how the message names the streamed answer."""
    label = shown or f"{terminal} output"
    want = [d for d in streamed if isinstance(d, dict)]
    got_types = [d.get("type") for d in got]
    want_types = [d.get("type") for d in want]
    if got_types != want_types:
        got_text = ", ".join(map(str, got_types)) or "none"
        detail = f"items {got_text} vs streamed {', '.join(map(str, want_types)) or 'none'}"
        return [_parity(terminal, label, detail)]
    found = []
    for index, (a, b) in enumerate(zip(got, want)):
        for key in dict.fromkeys(k for k in (*a, *b) if k.endswith("_prefix")):
            if a.get(key) != b.get(key):
                what = key.removesuffix("_prefix")
                detail = f"item {index} ({a.get('type')}) {what} prefix {a.get(key)!r} vs streamed {b.get(key)!r}"
                found.append(_parity(terminal, label, detail))
    if found:
        return found
    for index, (a, b) in enumerate(zip(got, want)):
        if a.get("text") != b.get("text"):
            noun = "name or arguments" if a.get("type") in call_types else "text"
            found.append(rules.NONSTREAM_TEXT.finding(_START, index=index, type=a.get("type"), what=noun))
    return found


def _parity(terminal: str, label: str, detail: str) -> Finding:
    return rules.NONSTREAM_PARITY.finding(_START, details={"terminal": terminal, "detail": detail}, streamed=label,
                                          detail=detail)


def stream_reference(body: bytes, scenario: str, dialect: Dialect | str | None = None) -> dict[str, Any] | None:
    """The meta ``reference`` for non-streaming parity: digests of a stream's final answer, as ``dialect`` (its
    first event's dialect when not given) builds it; None when the stream never finished one."""
    from checker.sse import decode_all

    events = []
    for event in decode_all(body):
        data = getattr(event, "data", None)
        try:
            obj = json.loads(data) if isinstance(data, bytes) else None
        except (UnicodeDecodeError, ValueError):
            continue
        if isinstance(obj, dict):
            events.append(obj)
    chosen = (dialects.get(dialect) if dialect else None) if isinstance(dialect, str) else dialect
    if chosen is None:
        chosen = (dialects.recognise(events[0])[0] if events else None) or dialects.default()
    hook = _hook(chosen)
    found = hook.stream_final(events) if hook is not None else None
    if found is None:
        return None
    return {"scenario": scenario, "terminal": found[0], "output": found[1]}


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


NO_ERROR_MEMBER = "a JSON object without an `error` member"


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
    return NO_ERROR_MEMBER
