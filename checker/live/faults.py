"""Fault injection for the replay server: faults as data, and the generator that emits a body with them.

A fault set is one frozen :class:`Faults` record. The command line gives the faults that apply to every
response; a request may add or override them, field by field, with the header

    X-SSE-Check-Fault: chunk-size=1;delay=5;disconnect-after=300

so that one server process can serve many test cases. :data:`FAULTS` is the one table of fault names:
the command-line flags, the header parser, ``sse-check serve --help`` and ``docs/serve.md`` all follow
it (a test checks the docs name every entry).

What each fault does to the bytes is decided here, without sockets: :func:`split_body` cuts a body into
the writes the server makes, and :func:`body_chunks` yields them with the delays, then stalls or keeps
the body open as asked. Whether the server finishes the body or drops the connection afterwards is
:attr:`Faults.ending`. The server (``checker.live.serve``) only sends what it is given.
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import unquote

FAULT_HEADER = "x-sse-check-fault"

# Limits on values: a wait longer than this is a typo rather than a test, and it would hold a server
# process (and its shutdown) hostage.
MAX_WAIT_MS = 600_000.0
# Default splitting writes one SSE event per HTTP chunk, but never more than this at once.
MAX_WRITE = 64 * 1024
# `keep-open` given in the header without a value.
DEFAULT_KEEP_OPEN_S = 30.0

Ending = Literal["end", "disconnect", "stall"]


class FaultError(ValueError):
    """A fault name or value that cannot be used; the server answers 400, the command line exits 2."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Faults:
    """The faults applied to one response; the default record is a faithful replay."""

    chunk_size: int | None = None  # bytes per write; None: one SSE event per write
    delay_ms: float = 0.0  # between writes
    first_byte_delay_ms: float = 0.0  # before the status line
    disconnect_after: int | None = None  # body bytes sent before the connection is dropped
    stall_after: int | None = None  # body bytes sent before the server hangs without closing
    keep_open_s: float | None = None  # seconds the body stays open after its last byte
    content_type: str | None = None  # replaces the recorded Content-Type
    status: int | None = None  # answer this status with a JSON error body instead of the capture
    retry_after: str | None = None  # Retry-After on a status fault (default 1 for 429 and 503)
    redirect: str | None = None  # answer 307 to this URL (unless the request already asks for its path)
    close: bool = False  # close the connection right after a complete response, without Connection: close
    every: int | None = None  # the other faults apply to every Nth request only (checker.live.serve_every)
    first: int | None = None  # … to the first N requests only
    busy: int | None = None  # … to a request that arrives while N or more others are being answered
    stored: str | None = None  # a defect of the stored-response endpoints (STORED_DEFECTS; checker.live.serve_stored)
    models: str | None = None  # GET /v1/models answered wrong: "invalid", "mistyped", "unlisted", "absent", "modelinfo"

    def with_overrides(self, overrides: Mapping[str, Any]) -> Faults:
        """A copy with some fields replaced (field name -> value, as :func:`parse_header` returns)."""
        return dataclasses.replace(self, **overrides) if overrides else self

    @property
    def limit(self) -> int | None:
        """How many body bytes are sent at most (before a stall or a disconnect), or None for all."""
        return _first_cut(self)[1]

    @property
    def ending(self) -> Ending:
        """What happens after the last byte sent: finish the body, drop the connection, or hang."""
        return _first_cut(self)[0]

    def header_value(self) -> str:
        """These faults as an ``X-SSE-Check-Fault`` header value (what a prober sends)."""
        default = Faults()
        parts = []
        for spec in FAULTS:
            value = getattr(self, spec.field)
            if value != getattr(default, spec.field):
                parts.append(f"{spec.name}={_render(value)}")
        return ";".join(parts)


def _first_cut(faults: Faults) -> tuple[Ending, int | None]:
    stall, drop = faults.stall_after, faults.disconnect_after
    if stall is not None and (drop is None or stall < drop):
        return "stall", stall
    if drop is not None:
        return "disconnect", drop
    return "end", None


# --- the table of faults ------------------------------------------------------------------------


def _count(minimum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text.strip())
        except ValueError:
            raise FaultError(f"not a whole number: {text!r}") from None
        if value < minimum:
            raise FaultError(f"must be at least {minimum}: {text!r}")
        return value

    return parse


def _duration(unit: float) -> Callable[[str], float]:
    """A non-negative number of milliseconds (unit 1) or seconds (unit 1000), kept in that unit."""

    def parse(text: str) -> float:
        try:
            value = float(text.strip())
        except ValueError:
            raise FaultError(f"not a number: {text!r}") from None
        if not math.isfinite(value) or value < 0:
            raise FaultError(f"must be a non-negative number: {text!r}")
        if value * unit > MAX_WAIT_MS:
            raise FaultError(f"longer than {MAX_WAIT_MS / 1000:g} s: {text!r}")
        return value

    return parse


def _yes_no(text: str) -> bool:
    value = text.strip().lower()
    if value in ("yes", "true", "1", "on"):
        return True
    if value in ("no", "false", "0"):
        return False
    raise FaultError(f"yes or no: {text!r}")


def _status(text: str) -> int:
    value = _count(0)(text)
    if not 400 <= value <= 599:
        raise FaultError(f"an error status is 400-599: {text!r}")
    return value


MODELS_FAULTS = ("invalid", "mistyped", "unlisted", "absent", "modelinfo")


def _models(text: str) -> str:
    value = text.strip().lower()
    if value not in MODELS_FAULTS:
        raise FaultError(f"one of {', '.join(MODELS_FAULTS)}: {text!r}")
    return value


_HEADER_SAFE = re.compile(r"[\x20-\x7e]+")


def _header_text(text: str) -> str:
    text = text.strip()
    if not _HEADER_SAFE.fullmatch(text):
        raise FaultError(f"must be non-empty printable ASCII: {text!r}")
    return text


# The stored-response defects (checker.live.serve_stored says what each one does).
STORED_DEFECTS: tuple[str, ...] = ("unsupported", "differ", "input-items", "keep-deleted", "accept-unknown",
                                   "error-shape", "restart", "skip", "regress", "cancel-ignored", "lost-context",
                                   "conversation-shape", "compact-shape")


def _stored(text: str) -> str:
    value = text.strip().lower()
    if value not in STORED_DEFECTS:
        raise FaultError(f"one of {', '.join(STORED_DEFECTS)}: {text!r}")
    return value


def _url(text: str) -> str:
    text = _header_text(text)
    if " " in text:
        raise FaultError(f"a URL has no spaces: {text!r}")
    return text


@dataclass(frozen=True, slots=True)
class FaultSpec:
    """One fault: its kebab-case name (header and flag), the :class:`Faults` field it sets, and its doc."""

    name: str
    field: str
    metavar: str
    parse: Callable[[str], Any]
    help: str
    bare: Any = None  # the value when the header names the fault without "=value"

    @property
    def flag(self) -> str:
        return f"--{self.name}"


FAULTS: tuple[FaultSpec, ...] = (
    FaultSpec("chunk-size", "chunk_size", "N", _count(1),
              "write the body N bytes at a time, each write one HTTP chunk (default: one SSE event per write)"),
    FaultSpec("delay", "delay_ms", "MS", _duration(1),
              "wait MS milliseconds between writes"),
    FaultSpec("first-byte-delay", "first_byte_delay_ms", "MS", _duration(1),
              "wait MS milliseconds before sending the status line"),
    FaultSpec("disconnect-after", "disconnect_after", "N", _count(0),
              "send N body bytes, then close the connection without ending the body "
              "(the client sees an incomplete chunked read)"),
    FaultSpec("stall-after", "stall_after", "N", _count(0),
              "send N body bytes, then hang without closing until the client gives up"),
    FaultSpec("keep-open", "keep_open_s", "S", _duration(1000),
              "after the last byte, keep the body open S seconds before ending it (codex PR #9170)",
              bare=DEFAULT_KEEP_OPEN_S),
    FaultSpec("content-type", "content_type", "VALUE", _header_text,
              "answer with this Content-Type instead of the recorded one"),
    FaultSpec("status", "status", "CODE", _status,
              "answer HTTP CODE (400-599) with an OpenAI-style JSON error body instead of the capture"),
    FaultSpec("retry-after", "retry_after", "S", _header_text,
              "Retry-After value sent with a status fault (default: 1 for 429 and 503, none otherwise; "
              "`none`: no Retry-After at all)"),
    FaultSpec("redirect", "redirect", "URL", _url,
              "answer 307 Temporary Redirect to URL (a path or an absolute URL); a request that already "
              "asks for URL's path is served normally, so following the redirect ends"),
    FaultSpec("close", "close", "yes|no", _yes_no,
              "after the complete response, close the connection without having sent Connection: close, as "
              "llama-server does after every stream (HTP019): a client's next request on it may get no answer. "
              "A capture recorded so (its X.meta.json) is served so unless close=no",
              bare=True),
    FaultSpec("every", "every", "N", _count(1),
              "apply the other faults only to every Nth request this server answers (requests N, 2N, …, all "
              "counted together); the others are served faithfully: a flaky server (probe --repeat)"),
    FaultSpec("first", "first", "N", _count(1),
              "apply the other faults only to the first N requests this server answers (all counted together); "
              "the later ones are served faithfully: a server that refuses, then recovers (probe --retries)"),
    FaultSpec("busy", "busy", "N", _count(1),
              "apply the other faults only to a request that arrives while N or more others are being answered: "
              "a server that fails under load only (probe --concurrency 1,4)"),
    FaultSpec("stored", "stored", "DEFECT", _stored,
              "a defect of the stored responses (GET/DELETE /v1/responses/ID, input_items, resumption, background): "
              "unsupported (not offered, as llama-server), differ, input-items, keep-deleted, accept-unknown, error-shape, "
              "restart, skip, regress, cancel-ignored, lost-context, conversation-shape, compact-shape"),
    FaultSpec("models", "models", "invalid|mistyped|unlisted|absent|modelinfo", _models,
              "GET /v1/models answered wrong: invalid (models without object and created), mistyped (created as "
              "a date string, owned_by null), unlisted (the "
              "recorded requests' models left out), absent (404, as a server without the endpoint), modelinfo "
              "(Anthropic's page of ModelInfo: right for a Messages-only server, not for OpenAI's clients)"),
)

FAULTS_BY_NAME: dict[str, FaultSpec] = {spec.name: spec for spec in FAULTS}
_NO_FAULTS = Faults()
assert {spec.field for spec in FAULTS} == {f.name for f in dataclasses.fields(Faults)}, "one spec per field"


def parse_value(name: str, text: str) -> Any:
    """The value of fault ``name`` given as text (a flag argument or a header value)."""
    spec = FAULTS_BY_NAME.get(name)
    if spec is None:
        raise FaultError(f"unknown fault {name!r} (known: {', '.join(FAULTS_BY_NAME)})")
    try:
        return spec.parse(text)
    except FaultError as exc:
        raise FaultError(f"{name}: {exc}") from None


def parse_header(value: str) -> dict[str, Any]:
    """``name=value;name=value`` -> {field: value}. Values are percent-decoded (``%3B`` is a ``;``);
    ``name=off`` sets the fault back to its default (no fault), overriding the command line."""
    overrides: dict[str, Any] = {}
    for piece in value.split(";"):
        piece = piece.strip()
        if not piece:
            continue
        name, has_value, text = piece.partition("=")
        name = name.strip().lower()
        spec = FAULTS_BY_NAME.get(name)
        if spec is None:
            raise FaultError(f"unknown fault {name!r} (known: {', '.join(FAULTS_BY_NAME)})")
        if not has_value:
            if spec.bare is None:
                raise FaultError(f"fault {name!r} needs a value: {name}={spec.metavar}")
            overrides[spec.field] = spec.bare
            continue
        text = unquote(text)
        if text.strip().lower() == "off":  # undo a command-line fault for this request
            overrides[spec.field] = getattr(_NO_FAULTS, spec.field)
            continue
        overrides[spec.field] = parse_value(name, text)
    return overrides


def _render(value: Any) -> str:
    if isinstance(value, float):
        text = str(int(value)) if value.is_integer() else repr(value)
    else:
        text = str(value)
    return text.replace("%", "%25").replace(";", "%3B")


# --- what the faults do to the bytes ------------------------------------------------------------

_BLANK_LINE = re.compile(rb"(?:\r\n|\n|\r)(?:\r\n|\n|\r)")


def split_body(body: bytes, chunk_size: int | None = None) -> list[bytes]:
    """The writes that carry ``body``: ``chunk_size`` bytes each, or one SSE event each (at most
    :data:`MAX_WRITE` bytes). Joined, they are ``body`` exactly."""
    if chunk_size is not None:
        return [body[i : i + chunk_size] for i in range(0, len(body), chunk_size)]
    writes: list[bytes] = []
    start = 0
    for match in _BLANK_LINE.finditer(body):
        writes.extend(split_body(body[start : match.end()], MAX_WRITE))
        start = match.end()
    writes.extend(split_body(body[start:], MAX_WRITE))
    return writes


async def _forever() -> None:
    await asyncio.get_running_loop().create_future()


async def body_chunks(
    body: bytes,
    faults: Faults,
    *,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
) -> AsyncIterator[bytes]:
    """Yield the writes of ``body`` under ``faults``, waiting between them.

    At most :attr:`Faults.limit` bytes are yielded. Then, for a stall, the generator never finishes
    (the server stops it when the client leaves); for a normal end with ``keep_open_s``, it waits that
    long before finishing. After it finishes, the server ends the body, or drops the connection if
    :attr:`Faults.ending` is ``"disconnect"``.
    """
    limit = faults.limit
    data = body if limit is None else body[:limit]
    for index, chunk in enumerate(split_body(data, faults.chunk_size)):
        if index and faults.delay_ms:
            await sleep(faults.delay_ms / 1000)
        yield chunk
    ending = faults.ending
    if ending == "stall":
        await _forever()
    elif ending == "end" and faults.keep_open_s:
        await sleep(faults.keep_open_s)


def status_error(status: int) -> dict[str, Any]:
    """The OpenAI-style JSON error body answered for a ``status`` fault."""
    if status == 429:
        kind, code, message = "requests", "rate_limit_exceeded", "Rate limit reached"
    elif status >= 500:
        kind, code, message = "server_error", None, "The server had an error while processing your request"
    else:
        kind, code, message = "invalid_request_error", None, "The request was rejected"
    return {
        "error": {
            "message": f"{message} (HTTP {status} injected by sse-check serve).",
            "type": kind,
            "param": None,
            "code": code,
        }
    }


def retry_after(faults: Faults) -> str | None:
    """The Retry-After header value for a status fault, if any."""
    if faults.retry_after is not None:
        return None if faults.retry_after.lower() == "none" else faults.retry_after
    return "1" if faults.status in (429, 503) else None
