"""One capture's lint as a self-contained, picklable job: what ``sse-check lint`` runs per capture, in this
process, in a process pool (``-j``) or on a Dask worker (``--dask``), and what :mod:`checker.api` runs for
other engines (Spark, Ray, Beam).

A :class:`Job` names its capture (a path or a URL) and carries the engine options; :func:`run_job` reads
the capture and its sidecars, lints it and returns a :class:`Done` (the result, or the one-line reason the
capture could not be read). Nothing here writes a report: results go back to the caller, in input order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from checker.captures import capture_sidecars, is_url, read_chunks
from checker.engine import EngineOptions, LintResult, StreamLinter
from checker.errors import UsageError

if TYPE_CHECKING:  # imported where a probe's capture needs it: a plain lint does not pay for the HTTP checks
    from pathlib import Path

    from checker.http_checks import ExchangeLinter
    from checker.ws_checks import WebSocketLinter


@dataclass(slots=True, frozen=True)
class Job:
    """One capture to lint and how: its source, the engine's options, a forced request, an oracle to run."""

    source: Path | str  # a path, a URL, or "-" (stdin: only in the calling process)
    options: EngineOptions = EngineOptions()  # checker.commands.common.engine_options
    request: dict[str, Any] | None = None  # --request: the same request body for every capture
    forced_request: bool = False  # True when ``request`` replaces the sidecar (even when it is None)
    keep_body: bool = False  # --oracle: the capture's bytes go back too, for the real clients to be run on


@dataclass(slots=True)
class Done:
    """What a job gives back: the capture's name and result, or the one line saying why it was not read."""

    name: str
    result: LintResult | None = None
    error: str | None = None  # the capture could not be read: one line
    exchange: dict[str, Any] | None = None  # a saved probe exchange's facts (X.meta.json), for the text report
    body: bytes | None = None  # the capture's bytes (Job.keep_body)


def source_name(source: Path | str) -> str:
    return "<stdin>" if source == "-" else str(source)


def sidecars(source: Path | str) -> tuple[dict[str, Any] | None, Any]:
    """The request body (``X.request.json``, else the ``request`` of ``X.meta.json``) and the meta sidecar
    (``X.meta.json``, None when absent) of a capture on disk or at a URL."""
    if source == "-":
        return None, None
    if isinstance(source, str) and is_url(source):
        from checker.remote import load_url_sidecar, url_sidecar

        request = load_url_sidecar(url_sidecar(source, "request"))
        meta = load_url_sidecar(url_sidecar(source, "meta"))
        if not isinstance(request, dict):
            request = meta.get("request") if isinstance(meta, dict) and isinstance(meta.get("request"), dict) else None
        return request, meta
    return capture_sidecars(source)  # the meta sidecar first: an unreadable one is the error named, as before


def make_linter(request: dict[str, Any] | None, meta: Any, options: EngineOptions,
                source: Path | str | None = None) -> StreamLinter | ExchangeLinter | WebSocketLinter:
    """The engine for one capture; for a capture saved by ``sse-check probe`` (an ``X.meta.json`` recording
    its HTTP exchange), the engine plus the HTTP checks, so that lint reports what the probe reported; for
    a WebSocket transcript (``X.ws.jsonl``, named by ``source``), the WebSocket checks."""
    if source is not None and str(source).endswith(".ws.jsonl"):
        from checker.ws_checks import WebSocketLinter

        return WebSocketLinter(options, name=source_name(source))
    if meta is not None:
        from checker.http_checks import ExchangeLinter, is_probe_meta  # a sidecar: maybe a probe's capture

        if is_probe_meta(meta):
            return ExchangeLinter(meta, options, request=request)
    return StreamLinter.from_options(options, request=request)


def linter_for(source: Path | str, request: dict[str, Any] | None,
               options: EngineOptions) -> StreamLinter | ExchangeLinter | WebSocketLinter:
    """The engine for one capture as ``sse-check lint`` runs it (with the HTTP checks for a capture saved by
    ``sse-check probe``): for the commands and the pytest plugin that lint a capture themselves."""
    meta = None if source == "-" else sidecars(source)[1]
    return make_linter(request, meta, options, source)


def exchange_info(meta: Any) -> dict[str, Any]:
    """What the text report needs of a probe's recorded exchange (``X.meta.json``), read through its typed
    contract (checker.exchange_meta): a value of the wrong type in a hand-edited sidecar reads as absent."""
    from checker.exchange_meta import ExchangeMeta  # only for a capture saved with its exchange

    record = ExchangeMeta.from_json(meta)
    if record is None:
        return {}
    return {"status": record.status, "content_type": record.header("content-type"), "expect": record.expect,
            "ending": {"kind": record.ending.kind, "detail": record.ending.detail, "bytes": record.ending.bytes}}


def run_job(job: Job) -> Done:
    """Read, lint and (with an oracle) run the real client on one capture; never raises for a bad capture."""
    name = source_name(job.source)
    try:
        request, meta = sidecars(job.source)
        if job.forced_request:
            request = job.request
        linter = make_linter(request, meta, job.options, job.source)
        held = bytearray() if job.keep_body else None  # the real clients are run on the whole capture
        for chunk in read_chunks(job.source):
            linter.feed(chunk)
            if held is not None:
                held += chunk
    except (OSError, UsageError) as exc:
        return Done(name, error=io_message(name, exc))
    except Exception as exc:  # a remote back-end's own errors (botocore, aiohttp): still one line, no traceback
        if not (isinstance(job.source, str) and is_url(job.source)):
            raise
        return Done(name, error=f"{name}: {type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}")
    done = Done(name, result=linter.close())
    if hasattr(linter, "meta"):  # an ExchangeLinter: the text report words a saved probe's answer as probe did
        done.exchange = exchange_info(linter.meta)
    if held is not None:
        done.body = bytes(held)
    return done


def io_message(name: str, exc: Exception) -> str:
    if isinstance(exc, OSError):
        reason = exc.strerror or str(exc)
        return f"{name}: {reason}" if reason else f"{name}: {type(exc).__name__}"
    return str(exc)
