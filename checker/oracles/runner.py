"""Run a real client on captures: one loopback server and one client process per batch, not per capture.

``run_batch(client, jobs)`` serves every job's exchange from ONE loopback server (``serve_exchanges``) and runs
the client once per batch: an in-process client is called once per job; a ``--batch`` driver is started once
and fed one line per job (a job that overruns its deadline kills that process, is reported as a failure of the
oracle, and a fresh process takes the jobs after it); any other driver is one process per job. ``job_for``
builds a job from a capture file and its sidecars. What a run returns is the protocol's
:class:`~checker.oracles.protocol.Outcome`; nothing here predicts or compares.
"""

from __future__ import annotations

import importlib
import json
import os
import selectors
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from checker.oracles.loopback import serve_exchanges
from checker.oracles.protocol import QUIET_ENV, DriverCall, Exchange, Job, Outcome
from checker.oracles.registry import RealClient, command, get, unavailable

# Beyond the client's own timeout: the time a driver process may take to start and to report.
GRACE_S = 15.0


class ClientUnavailable(Exception):
    """The client is not installed here (the message says how to install it)."""


def run_batch(name: str, jobs: Sequence[Job]) -> list[Outcome]:
    """The outcome of client ``name`` on each job, in order; ClientUnavailable when it is not installed."""
    client = get(name)
    why = unavailable(client)
    if why is not None:
        raise ClientUnavailable(f"{name}: {why}")
    if not jobs:
        return []
    with serve_exchanges([job.exchange for job in jobs]) as served:
        calls = [DriverCall(base_url=url, model=job.model, dialect=job.dialect, tools=job.tools, request=job.request,
                            timeout_s=job.timeout_s) for url, job in zip(served.base_urls, jobs, strict=True)]
        if client.in_process is not None:
            module, _, attr = client.in_process.partition(":")
            run: Callable[[DriverCall], Outcome] = getattr(importlib.import_module(module), attr)
            outcomes = [_checked(client, call, _in_process(run, call)) for call in calls]
        elif client.driver is not None and client.driver.batch:
            outcomes = _batched(client, calls)
        else:
            outcomes = [_one(client, call) for call in calls]
    return outcomes


def _in_process(run: Callable[[DriverCall], Outcome], call: DriverCall) -> Outcome | str:
    try:
        return run(call)
    except Exception as exc:  # noqa: BLE001 - the oracle's own failure, reported as such
        return f"the in-process oracle failed: {type(exc).__name__}: {exc}"


def _checked(client: RealClient, call: DriverCall, got: Outcome | str) -> Outcome:
    """The outcome with its client, version and dialect filled in, or a failure outcome for an oracle error."""
    if isinstance(got, str):
        return Outcome(client=client.name, version=client.version, dialect=call.dialect, failure=got)
    if got.client != client.name or got.version in ("", "?") or got.dialect != call.dialect:
        from dataclasses import replace

        return replace(got, client=client.name, version=got.version if got.version not in ("", "?") else
                       client.version, dialect=call.dialect)
    return got


def _environment(client: RealClient, call: DriverCall) -> dict[str, str]:
    return {**os.environ, **QUIET_ENV, **client.env, "SSE_CHECK_ORACLE_TIMEOUT": f"{call.timeout_s:g}",
            "SSE_CHECK_ORACLE_REQUEST": json.dumps(call.request, separators=(",", ":"))}


def _parse(client: RealClient, call: DriverCall, stdout: str, code: int | None, stderr: str) -> Outcome:
    lines = [line for line in stdout.splitlines() if line.strip()]
    if code not in (0, None) or not lines:
        tail = (stderr.strip().splitlines() or ["no output"])[-1][:300]
        return _checked(client, call, f"the driver exited {code} without an outcome: {tail}")
    try:
        return _checked(client, call, Outcome.from_json(lines[-1]))
    except ValueError as exc:
        return _checked(client, call, f"the driver printed no JSON outcome ({exc}): {lines[-1][:200]!r}")


def _one(client: RealClient, call: DriverCall) -> Outcome:
    try:
        proc = subprocess.run([*command(client), *call.argv()], capture_output=True, text=True,
                              timeout=call.timeout_s + GRACE_S, env=_environment(client, call),
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return _checked(client, call, f"no outcome within {call.timeout_s + GRACE_S:g}s (the driver was stopped)")
    except OSError as exc:
        return _checked(client, call, f"the driver could not start: {exc}")
    return _parse(client, call, proc.stdout, proc.returncode, proc.stderr)


def _batched(client: RealClient, calls: list[DriverCall]) -> list[Outcome]:
    """One process per run of jobs with the same timeout (the process's SSE_CHECK_ORACLE_TIMEOUT), a fresh one
    after a job it did not answer."""
    outcomes: list[Outcome] = []
    while len(outcomes) < len(calls):
        rest = calls[len(outcomes):]
        same = next((n for n, call in enumerate(rest) if call.timeout_s != rest[0].timeout_s), len(rest))
        outcomes += _batch_process(client, rest[:same])
    return outcomes


def _batch_process(client: RealClient, calls: list[DriverCall]) -> list[Outcome]:
    """Run one --batch process over ``calls`` until it finishes them or one overruns (then it is stopped and
    that job reported as the oracle's failure); the outcomes it gave, in order."""
    env = _environment(client, calls[0])
    env.pop("SSE_CHECK_ORACLE_REQUEST")  # per job, on its line
    try:
        proc = subprocess.Popen([*command(client), "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env, bufsize=1)
    except OSError as exc:
        return [_checked(client, call, f"the driver could not start: {exc}") for call in calls]
    assert proc.stdin is not None and proc.stdout is not None
    outcomes: list[Outcome] = []
    selector = selectors.DefaultSelector()
    selector.register(proc.stdout, selectors.EVENT_READ)
    try:
        for call in calls:
            try:
                proc.stdin.write(call.batch_line())
                proc.stdin.flush()
            except OSError:
                pass  # it died: read what it said, below
            line = _read_line(proc, selector, call.timeout_s + GRACE_S)
            if line is None:
                code = proc.poll()
                stderr = _stop(proc)
                what = (f"no outcome within {call.timeout_s + GRACE_S:g}s (the driver was stopped)" if code is None
                        else f"the driver exited {code} without an outcome: "
                             f"{(stderr.strip().splitlines() or ['no output'])[-1][:300]}")
                outcomes.append(_checked(client, call, what))
                return outcomes
            outcomes.append(_parse(client, call, line, 0, ""))
    finally:
        selector.close()
        _stop(proc)
    return outcomes


def _read_line(proc: subprocess.Popen[str], selector: selectors.BaseSelector, timeout: float) -> str | None:
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not selector.select(left):
            return None
        line = proc.stdout.readline()
        if not line:
            return None  # end of its output: it exited
        if line.strip():
            return line


def _stop(proc: subprocess.Popen[str]) -> str:
    """Stop the driver process we started (by its handle), and what it wrote on stderr."""
    if proc.stdin is not None and not proc.stdin.closed:
        try:
            proc.stdin.close()
        except OSError:
            pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    return proc.stderr.read() if proc.stderr is not None and not proc.stderr.closed else ""


# --- jobs from capture files ------------------------------------------------------------------------------


def exchange_of(path: Path, body: bytes | None = None) -> Exchange:
    """What the loopback server sends for the capture at ``path``: its X.meta.json's status, headers and ending
    (a probe's or proxy's saved exchange), else ``200 text/event-stream`` with the body."""
    from checker.exchange_meta import ExchangeMeta

    data = path.read_bytes() if body is None else body
    meta_file = path.with_name(path.name.removesuffix(".sse") + ".meta.json")
    meta = None
    if meta_file.is_file():
        try:
            meta = ExchangeMeta.from_json(json.loads(meta_file.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            meta = None
    if meta is None:
        return Exchange(body=data)
    if meta.status is None:
        return Exchange(body=b"", status=None, refused=meta.ending.kind in ("connect-error", "tls-error"))
    headers = tuple((str(n).lower(), str(v)) for n, v in meta.headers) or Exchange(body=b"").headers
    return Exchange(body=data, status=meta.status, reason=meta.reason, headers=headers,
                    cut=meta.ending.kind == "disconnect",
                    kept_open=meta.ending.kind in ("kept-open", "idle-timeout", "total-timeout"))


def request_of(path: Path) -> dict[str, Any]:
    """The capture's recorded request (X.request.json, else the one its X.meta.json recorded), or {}."""
    stem = path.name.removesuffix(".sse")
    sidecars = ((path.with_name(stem + ".request.json"), None), (path.with_name(stem + ".meta.json"), "request"))
    for sidecar, key in sidecars:
        if not sidecar.is_file():
            continue
        try:
            raw = json.loads(sidecar.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        raw = raw.get(key) if key and isinstance(raw, dict) else raw
        if isinstance(raw, dict) and raw:
            return raw
    return {}


def tool_names(request: dict[str, Any], body: bytes, dialect: str) -> tuple[str, ...]:
    """The tools the user's call declares: the request's, else those the stream calls (a user whose model
    calls a tool declared it)."""
    names: list[str] = []
    for tool in request.get("tools") or ():
        if isinstance(tool, dict):
            name = tool.get("name") or (tool.get("function") or {}).get("name")
            if isinstance(name, str):
                names.append(name)
    if names or request.get("tools"):
        return tuple(dict.fromkeys(names))
    return tuple(dict.fromkeys(_called(body, dialect)))


def _called(body: bytes, dialect: str) -> list[str]:
    from checker.sse import SSEDecoder, SSEEvent

    decoder = SSEDecoder()
    found: list[str] = []
    for event in [*decoder.feed(body), *decoder.close()]:
        if not isinstance(event, SSEEvent):
            continue
        try:
            obj = json.loads(event.data)
        except ValueError:
            continue
        found += _names_in(obj, dialect)
    return found


def _names_in(obj: Any, dialect: str) -> list[str]:
    if not isinstance(obj, dict):
        return []
    if dialect == "responses":
        # An item event's item, and the items of a snapshot (a call the stream lists only in response.completed
        # is still one the user's agent declared).
        response = obj.get("response")
        items = [obj.get("item"), *((response.get("output") or []) if isinstance(response, dict) else [])]
        return [item["name"] for item in items if isinstance(item, dict) and item.get("type") == "function_call"
                and isinstance(item.get("name"), str)]
    if dialect == "messages":
        block = obj.get("content_block")
        if isinstance(block, dict) and block.get("type") == "tool_use" and isinstance(block.get("name"), str):
            return [block["name"]]
        return []
    out = []
    for choice in obj.get("choices") or ():
        delta = choice.get("delta") if isinstance(choice, dict) else None
        for call in (delta or {}).get("tool_calls") or () if isinstance(delta, dict) else ():
            name = (call.get("function") or {}).get("name") if isinstance(call, dict) else None
            if isinstance(name, str) and name:
                out.append(name)
    return out


def job_for(path: Path, dialect: str, *, body: bytes | None = None, timeout_s: float | None = None) -> Job:
    """A job for the capture at ``path`` read as ``dialect`` (its sidecars give the request and the exchange)."""
    exchange = exchange_of(path, body)
    request = request_of(path)
    model = request.get("model") if isinstance(request.get("model"), str) else "oracle"
    extra = {"timeout_s": timeout_s} if timeout_s is not None else {}
    return Job(exchange=exchange, dialect=dialect, model=model or "oracle",
               tools=tool_names(request, exchange.body, dialect), request=request, name=path.name, **extra)
