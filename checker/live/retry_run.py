"""A scenario sent again after a refusal (429, 503, …), as the SDK of its dialect would (checker.live.retry).

Every answer is kept. An answer that is retried becomes an *attempt*: reported under ``NAME (try K)`` with its
own findings (HTP001, HTP023 for a 429 without Retry-After, …, which count as any other), and with ``--save``
saved as ``NAME.tryK.sse`` and ``NAME.tryK.meta.json`` (so ``sse-check lint DIR`` judges it too, and its meta's
``retry`` says how long the probe waited and why). The last answer is the scenario's answer, linted and saved
as ``NAME.sse``; its meta's ``retry`` lists the attempts before it, and the report gives one line such as
``429, Retry-After 1 s honoured, retried: 200``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from checker.exchange_meta import ExchangeMeta
from checker.live.probe import ProbeConfig, ScenarioContext, ScenarioResult, probe_scenario
from checker.live.retry import Plan, client_of, plan, retried
from checker.live.saving import save_sidecars
from checker.live.scenarios import Scenario


async def probe_retrying(
    client: httpx.AsyncClient,
    scenario: Scenario,
    config: ProbeConfig,
    context: ScenarioContext = ScenarioContext(),
    *,
    sleep: Callable[[float], Any] = asyncio.sleep,
) -> ScenarioResult:
    """:func:`checker.live.probe.probe_scenario`, sent again after each refusal the SDK retries, up to
    ``config.retries`` times; the last answer, with the earlier ones as its ``attempts``."""
    attempts: list[ScenarioResult] = []
    who = client_of(scenario.api)
    step: Plan | None = None
    decided: list[Plan | None] = []

    def decide(meta: ExchangeMeta) -> None:
        """Before the verdict: whether the SDK retries this answer (then it is an attempt, HTP025 not HTP001)."""
        decided[:] = [plan(meta.status, meta.headers, retries_taken=len(attempts), retries=config.retries,
                           client=who, now=time.time())]
        if decided[0] is not None and decided[0].retry:
            meta.retry = retried(meta.status, len(attempts) + 1, decided[0])

    judged = dataclasses.replace(context, on_meta=decide)
    while True:
        decided.clear()
        outcome = await probe_scenario(client, scenario, config, judged)
        meta = outcome.meta
        if outcome.result is None or meta is None or not decided:
            break
        step = decided[0]
        if step is None or not step.retry:
            break
        attempts.append(_as_attempt(outcome, len(attempts) + 1, step, config))
        await sleep(step.wait)
    if attempts or (step is not None and config.retries > 0):  # --retries 0: the first answer, as it was
        _record(outcome, attempts, step, config)
    return outcome


def _attempt_name(name: str, k: int) -> str:
    return f"{name}.try{k}"


def _as_attempt(outcome: ScenarioResult, k: int, step: Plan, config: ProbeConfig) -> ScenarioResult:
    """The answer as attempt ``k``: renamed (report and files); its meta already tells the wait that followed
    (``decide`` wrote it before the verdict)."""
    assert outcome.meta is not None and outcome.result is not None
    name = outcome.scenario.name
    outcome.scenario = dataclasses.replace(outcome.scenario, name=f"{name} (try {k})")
    outcome.result.http["retry"] = {"attempt": k, "line": f"{outcome.meta.status}, {step.basis}, retried",
                                    **step.as_dict()}
    if config.save_dir is not None and outcome.saved is not None:
        saved = outcome.saved.with_name(f"{_attempt_name(Path(name).name, k)}.sse")
        outcome.saved.replace(saved)
        with contextlib.suppress(OSError):
            outcome.saved.with_name(f"{Path(name).name}.meta.json").unlink()
        save_sidecars(config.save_dir, _attempt_name(name, k), outcome.meta, None)
        outcome.saved = saved
        outcome.result.http["saved"] = str(saved)
    return outcome


def _record(outcome: ScenarioResult, attempts: list[ScenarioResult], step: Plan | None, config: ProbeConfig) -> None:
    """The last answer's account of the retries (its meta re-saved with it) and the report's line."""
    assert outcome.meta is not None and outcome.result is not None
    after = [{"status": a.meta.status if a.meta else None, "wait": round(a.meta.retry.get("wait", 0.0), 6)
              if a.meta else 0.0, "basis": a.meta.retry.get("basis") if a.meta else None,
              "saved": a.saved.name if a.saved is not None else None} for a in attempts]
    note: dict[str, Any] = {"attempt": len(attempts) + 1, "status": outcome.meta.status, "after": after}
    if step is not None and not step.retry:
        note.update(then="not retried", **step.as_dict())
    outcome.meta.retry = note
    outcome.attempts = attempts
    outcome.result.http["retry"] = {**note, "line": retry_line(outcome, attempts, step)}
    if config.save_dir is not None and outcome.saved is not None:
        save_sidecars(config.save_dir, outcome.scenario.name, outcome.meta,
                      outcome.body if outcome.complete_body else None, pair=outcome.scenario.pair)


def retry_line(outcome: ScenarioResult, attempts: list[ScenarioResult], step: Plan | None) -> str:
    """What happened, in one line: ``429, Retry-After 1 s honoured, retried: 200``; a retry that failed too
    and an answer not retried say so."""
    parts = [f"{a.meta.status}, {a.meta.retry.get('basis')}, retried" for a in attempts if a.meta is not None]
    meta = outcome.meta
    status = meta.status if meta is not None else None
    last = f"{status}" if status is not None else f"no response ({outcome.ending})"
    if attempts and attempts[-1].meta is not None and attempts[-1].meta.status == status:
        last += " again"
    if step is not None and not step.retry:
        last += f", not retried: {step.basis}"
        if attempts:
            last += " (the retry failed too)"
    elif attempts and (status is None or status >= 400):
        last += " (the retry failed too)"
    return ": ".join([*parts, last])
