"""Asking a live server the stored-response flow: each step one HTTP request, every answer kept whole.

The flow (:func:`checker.surface.stored.steps`) runs in order over one httpx client; each step is filled from
the answers so far (:func:`checker.surface.stored.resolve`) and its answer recorded as an
:class:`~checker.surface.stored_answers.Answer` (a stream's bytes whole: resumption is judged event for event).
Then the verdicts come from :func:`checker.surface.stored_flow.check_flow`, and the stream only this flow makes (the stateful
continuation) is linted by the engine with the probe's own options, so it gets every stream check; its errors
go to its feature's row.

Every wait is bounded by the probe's limits; a step that gets no answer (connection refused, timeout) is
recorded with no status, and what needs it is not checked. ``save_dir``: the flow is written as
``stored.flow.json`` there (:func:`checker.surface.stored_flow.flow_findings` judges it again).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from checker.engine import EngineOptions
from checker.findings import Finding, Severity
from checker.live.endpoints import endpoint, endpoint_for
from checker.surface import stored
from checker.surface.stored_answers import Answer, Verdict
from checker.surface.stored_flow import check_flow, lint_answer

SCENARIO_HEADER = "X-SSE-Check-Scenario"
MAX_BODY = 16 * 1024 * 1024
# The steps whose stream is new to the probe (the scenario suite asked the create's already), by the feature
# whose row their stream's errors join.
STREAM_FEATURES = {"continue": "stateful tool use"}


@dataclass(slots=True)
class StoredRun:
    answers: list[Answer] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)


async def _send(client: httpx.AsyncClient, url: str, step: stored.Step, headers: Mapping[str, str],
                timeout: float) -> Answer:
    split = urlsplit(step.path)
    target = endpoint_for(endpoint(url), split.path) + (f"?{split.query}" if split.query else "")
    # A connection per step: llama-server closes its connection after a stream without saying so (HTP019),
    # and a step sent on such a connection would get no answer.
    sent = dict(headers) | {"Connection": "close"} | ({SCENARIO_HEADER: step.scenario} if step.scenario else {})
    kwargs: dict[str, Any] = {"headers": sent, "timeout": timeout}
    if step.body is not None:
        kwargs["json"] = step.body
    path = urlsplit(target).path + (f"?{split.query}" if split.query else "")
    try:
        async with client.stream(step.method, target, **kwargs) as reply:
            data = bytearray()
            async for chunk in reply.aiter_raw():
                data.extend(chunk)
                if len(data) > MAX_BODY:
                    break
            streamed = reply.headers.get("content-type", "").startswith("text/event-stream")
            body = None
            if not streamed:
                try:
                    body = json.loads(bytes(data)) if data.strip() else None
                except (ValueError, UnicodeDecodeError):
                    body = None
            if reply.status_code == 404 and _replay_has_no_capture(body):
                return Answer(step=step.name, method=step.method, path=path, request=step.body)
            return Answer(step=step.name, method=step.method, path=path, request=step.body,
                          status=reply.status_code, body=body, stream=bytes(data) if streamed else None)
    except httpx.HTTPError:
        return Answer(step=step.name, method=step.method, path=path, request=step.body)


def _replay_has_no_capture(body: Any) -> bool:
    """``sse-check serve`` without a capture for the step: no answer about the server's feature."""
    error = body.get("error") if isinstance(body, dict) else None
    return isinstance(error, dict) and error.get("code") == "scenario_not_found"


async def run_stored(client: httpx.AsyncClient, url: str, model: str, tools_body: Mapping[str, Any], *,
                     headers: Mapping[str, str] = {}, timeout: float = 60.0,
                     lint_options: EngineOptions = EngineOptions(), save_dir: Path | None = None,
                     poll_wait: float = stored.POLL_WAIT_S) -> StoredRun:
    """Ask ``url``'s server (any dialect's endpoint URL, or the base) the stored-response flow; ``poll_wait``:
    the wait before the first background poll (doubled each time; 0 for a replay server)."""
    run = StoredRun()
    for template in stored.steps(model, tools_body):
        step = stored.resolve(template, run.answers)
        if step is None or stored.skip_poll(step, run.answers):
            continue
        await asyncio.sleep(stored.poll_wait(step, poll_wait))
        run.answers.append(await _send(client, url, step, headers, timeout))
    run.verdicts = verdicts(run.answers, lint_options)
    if save_dir is not None:
        save_dir.mkdir(parents=True, exist_ok=True)
        record = {"about": f"sse-check probe's stored-response flow, {model} at {url}",
                  "expect": sorted({f.code for v in run.verdicts for f in v.findings}),
                  "steps": [answer.to_json() for answer in run.answers]}
        (save_dir / "stored.flow.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return run


def verdicts(answers: Sequence[Answer], lint_options: EngineOptions) -> list[Verdict]:
    """The capability rows, with the findings of the flow's own new streams on their features' rows."""
    rows = check_flow(answers, lint_options=lint_options)
    by_feature = {row.feature: row for row in rows}
    for answer in answers:
        feature = STREAM_FEATURES.get(answer.step)
        row = by_feature.get(feature or "")
        if row is None or answer.stream is None or not answer.ok or row.state in ("unsupported", "not checked"):
            continue
        found = stream_errors(answer.stream, lint_options, answer.request)
        if found:
            row.findings.extend(found)
            row.state, row.why = "broken", row.findings[0].message
    return rows


def stream_errors(stream: bytes, lint_options: EngineOptions, request: Any) -> list[Finding]:
    """The error findings of a stream the flow made, as ``sse-check lint`` gives them."""
    found = lint_answer(lint_options, stream, request=request if isinstance(request, dict) else None).findings
    return [f for f in found if f.severity >= Severity.ERROR]

