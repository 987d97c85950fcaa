"""The record of one HTTP exchange: the *meta*, saved as ``X.meta.json`` beside the capture ``X.sse``.

``sse-check probe`` and ``sse-check proxy`` write it (:meth:`ExchangeMeta.to_json`); ``sse-check lint`` reads it
back and :mod:`checker.http_checks` judges the exchange from it, so that a live verdict equals the lint of
what was saved. This module is the contract between them: the fields, their types and the JSON form. No I/O.

:meth:`ExchangeMeta.from_json` is tolerant: a sidecar written by an older sse-check (a key missing, a value of
the wrong type, keys it does not know) still reads, with the defaults below in place of what is missing.
Only ``meta_version`` and an ``ending`` object are required (:func:`is_exchange_meta`): they tell a probe's
record from any other JSON beside a capture.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from checker.version import __version__

META_VERSION = 1

# How an exchange ended -> whether the body is complete.
ENDINGS: dict[str, bool] = {
    "complete": True,  # the body ended normally
    "kept-open": True,  # the terminal event arrived, the body did not end within --close-timeout
    "disconnect": False,  # the transport failed (an incomplete chunked body, a reset; before or after the headers)
    "first-byte-timeout": False,  # no headers, or no body byte, within --first-byte-timeout
    "idle-timeout": False,  # no byte for --idle-timeout after the first one
    "total-timeout": False,  # --total-timeout passed
    "byte-cap": False,  # more than --max-bytes arrived: reading stopped
    "event-cap": False,  # more than --max-events arrived: reading stopped
    "connect-error": False,  # no connection (refused, unknown host, connect timeout)
    "tls-error": False,  # the TLS handshake failed
    "interrupted": False,  # the user stopped the probe
}


@dataclass(frozen=True, slots=True)
class Ending:
    """How the exchange ended (one of :data:`ENDINGS`), why in words, and the body bytes received by then."""

    kind: str = "complete"
    detail: str = ""
    bytes: int = 0

    @property
    def complete(self) -> bool:
        return ENDINGS.get(self.kind, False)


@dataclass(slots=True, kw_only=True)
class ExchangeMeta:
    """One exchange as recorded. Values are stored already redacted (secrets masked by the writer)."""

    scenario: str | None = None  # the scenario's name (the proxy's: the exchange number, "001")
    summary: str = ""
    expect: str = "stream"  # "stream" | "nonstream" | "error": what the request asked for
    started_at: str | None = None  # ISO 8601, seconds
    url: str = ""  # the endpoint POSTed to (an empty URL: a Responses endpoint, as the first probes wrote)
    request: dict[str, Any] = field(default_factory=dict)
    request_headers: list[list[str]] = field(default_factory=list)  # [name, value] pairs, as sent
    status: int | None = None  # None: no answer (a connection error, a timeout before the headers)
    reason: str = ""
    http_version: str = "HTTP/1.1"
    headers: list[list[str]] = field(default_factory=list)  # the answer's [name, value] pairs
    redirects: list[dict[str, Any]] = field(default_factory=list)  # {"status", "url"} per redirect followed
    replayed_as: str | None = None  # the capture a replay server (sse-check serve) answered with
    ending: Ending = field(default_factory=Ending)
    events: int = 0
    # headers, first_byte, first_event, first_delta, terminal, largest_gap, largest_gap_at_byte,
    # closed_after_terminal, total: seconds from the request (largest_gap_at_byte: a byte offset)
    timings: dict[str, Any] = field(default_factory=dict)
    limits: dict[str, Any] = field(default_factory=dict)  # checker.live.probe.ProbeLimits.as_dict()
    # non-streaming parity: {"scenario", "terminal", "output": [digest, ...]} of the streaming pair
    reference: dict[str, Any] | None = None
    # keep-alive facts: closed_by_server, closed_after (seconds), retried (why the request was sent again)
    connection: dict[str, Any] = field(default_factory=dict)
    # a probe's retry after an error status (checker.live.retry_run): this answer's attempt number and the wait
    # before the next one, or the answers it retried; empty when the request was sent once (not saved then)
    retry: dict[str, Any] = field(default_factory=dict)
    sse_check: str = __version__  # the version that wrote it
    meta_version: int = META_VERSION

    @property
    def partial(self) -> bool:
        """Whether the body is incomplete (how it ended says so)."""
        return not self.ending.complete

    @property
    def bytes(self) -> int:
        return self.ending.bytes

    def header(self, name: str) -> str | None:
        """The first value of a response header (names compared case-insensitively)."""
        return header_of(self.headers, name)

    def to_json(self) -> dict[str, Any]:
        """The JSON object saved as ``X.meta.json`` (and read by checker.http_checks), keys in this order."""
        return {
            "meta_version": self.meta_version,
            "sse_check": self.sse_check,
            "scenario": self.scenario,
            "summary": self.summary,
            "expect": self.expect,
            "started_at": self.started_at,
            "url": self.url,
            "request": dict(self.request),
            "request_headers": [list(pair) for pair in self.request_headers],
            "status": self.status,
            "reason": self.reason,
            "http_version": self.http_version,
            "headers": [list(pair) for pair in self.headers],
            "redirects": [dict(r) for r in self.redirects],
            "replayed_as": self.replayed_as,
            "ending": {"kind": self.ending.kind, "detail": self.ending.detail, "bytes": self.ending.bytes},
            "partial": self.partial,
            "bytes": self.bytes,
            "events": self.events,
            "timings": {k: (round(v, 6) if isinstance(v, float) else v) for k, v in self.timings.items()},
            "limits": dict(self.limits),
            "reference": dict(self.reference) if self.reference is not None and self.expect == "nonstream" else None,
            "connection": {k: (round(v, 6) if isinstance(v, float) else v) for k, v in self.connection.items()},
            **({"retry": dict(self.retry)} if self.retry else {}),
        }

    @classmethod
    def from_json(cls, obj: Any) -> ExchangeMeta | None:
        """The record in a parsed ``X.meta.json``; None when it is not one (:func:`is_exchange_meta`).
        Missing or mistyped values take the defaults; unknown keys are ignored."""
        if not is_exchange_meta(obj):
            return None
        ending = obj["ending"]
        size = _int(ending.get("bytes"), _int(obj.get("bytes"), 0))
        return cls(
            scenario=_str(obj.get("scenario")),
            summary=_str(obj.get("summary")) or "",
            expect=_str(obj.get("expect")) or "stream",
            started_at=_str(obj.get("started_at")),
            url=_str(obj.get("url")) or "",
            request=dict(obj["request"]) if isinstance(obj.get("request"), Mapping) else {},
            request_headers=_pairs(obj.get("request_headers")),
            status=obj["status"] if type(obj.get("status")) is int else None,
            reason=_str(obj.get("reason")) or "",
            http_version=_str(obj.get("http_version")) or "",
            headers=_pairs(obj.get("headers")),
            redirects=[dict(r) for r in obj.get("redirects") or [] if isinstance(r, Mapping)]
            if isinstance(obj.get("redirects"), list) else [],
            replayed_as=_str(obj.get("replayed_as")),
            ending=Ending(kind=_str(ending.get("kind")) or "complete", detail=_str(ending.get("detail")) or "",
                          bytes=size),
            events=_int(obj.get("events"), 0),
            timings=dict(obj["timings"]) if isinstance(obj.get("timings"), Mapping) else {},
            limits=dict(obj["limits"]) if isinstance(obj.get("limits"), Mapping) else {},
            reference=dict(obj["reference"]) if isinstance(obj.get("reference"), Mapping) else None,
            connection=dict(obj["connection"]) if isinstance(obj.get("connection"), Mapping) else {},
            retry=dict(obj["retry"]) if isinstance(obj.get("retry"), Mapping) else {},
            sse_check=_str(obj.get("sse_check")) or "",
            meta_version=obj["meta_version"],
        )


def is_exchange_meta(obj: Any) -> bool:
    """Whether a parsed ``X.meta.json`` is an exchange record (of this version) that sse-check can judge."""
    return isinstance(obj, Mapping) and obj.get("meta_version") == META_VERSION and isinstance(obj.get("ending"), Mapping)


def header_of(pairs: Any, name: str) -> str | None:
    """The first value of header ``name`` among [name, value] pairs (or a {name: value} object)."""
    items = pairs.items() if isinstance(pairs, Mapping) else pairs if isinstance(pairs, Sequence) else ()
    wanted = name.lower()
    for pair in items:
        if isinstance(pair, (list, tuple)) and len(pair) == 2 and str(pair[0]).lower() == wanted:
            return str(pair[1])
    return None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: Any, default: int) -> int:
    return value if type(value) is int else default


def _pairs(value: Any) -> list[list[str]]:
    if not isinstance(value, list):
        return []
    return [[str(p[0]), str(p[1])] for p in value if isinstance(p, (list, tuple)) and len(p) == 2]
