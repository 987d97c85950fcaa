"""A probe run: many scenarios, ``concurrency`` at a time, each one :func:`checker.live.probe.probe_scenario`.

A non-streaming scenario waits for its streaming pair (its final output is the parity reference); a server
that cannot be reached at all ends the run early (:data:`UNREACHABLE`); SIGINT and SIGTERM end it cleanly
(:class:`Interrupted`, with what finished).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar
from urllib.parse import urlsplit

import httpx

from checker.nonstream_checks import stream_reference
from checker.live.probe import Progress, ProbeConfig, ScenarioContext, ScenarioResult, no_progress
from checker.live.retry_run import probe_retrying
from checker.live.scenarios import Scenario

# The skip reason of the scenarios not sent once the server proved unreachable (run(stop_if_unreachable=True)).
UNREACHABLE = "not sent: the server could not be reached"
# How a skip reason starts when the server does not serve a dialect's endpoint (see endpoint_missing).
NOT_SERVED = "not served: "
# The statuses of an endpoint a server does not have: not found, method not allowed, not implemented.
MISSING_STATUSES = frozenset({404, 405, 501})
T = TypeVar("T")


def endpoint_missing(outcome: ScenarioResult) -> str | None:
    """Why ``outcome`` shows that its endpoint is not served (``POST /v1/messages: 404``), or None.

    A 404 whose JSON error is about the model (OpenAI answers an unknown model with 404 model_not_found) is an
    answer of the endpoint, not its absence; a replay server's 404 for a scenario it has no capture of never
    gets here (the scenario is skipped as not replayed)."""
    meta = outcome.meta
    if meta is None or meta.status not in MISSING_STATUSES:
        return None
    if meta.status == 404 and "model" in error_words(outcome.body):
        return None
    path = urlsplit(meta.url or "").path or "the endpoint"
    return f"POST {path}: {meta.status}"


def error_words(body: bytes) -> str:
    """The code, type and message of a JSON error body, lower-cased ('' when it is not one)."""
    try:
        error = json.loads(bytes(body)).get("error")
    except (ValueError, AttributeError, UnicodeDecodeError):
        return ""
    if isinstance(error, str):
        return error.lower()
    if not isinstance(error, dict):
        return ""
    return " ".join(str(error.get(k) or "") for k in ("code", "type", "message")).strip().lower()


def _forget(outcome: ScenarioResult) -> None:
    """Remove what ``--save`` wrote of an endpoint's absence: it is no capture of the dialect (lint of the
    folder would fail on a 404 the probe calls no failure)."""
    if outcome.saved is None:
        return
    folder = outcome.saved.parent
    for path in (outcome.saved, folder / f"{outcome.scenario.name.rpartition('/')[2]}.meta.json"):
        path.unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        folder.rmdir()  # the dialect's folder (chat/, messages/) when nothing else is in it


def _gates(scenarios: Sequence[Scenario]) -> dict[str | None, str]:
    """Per dialect, the scenario that finds out whether its endpoint is served: its first (the others start
    once its status is in, so the order of the suite is kept)."""
    gates: dict[str | None, str] = {}
    for scenario in scenarios:
        if scenario.api is not None:  # a scenario with a URL of its own (the live replay's) has no gate
            gates.setdefault(scenario.api, scenario.name)
    return gates


class _Endpoints:
    """Which dialects' endpoints the server serves, found out once per dialect by its first scenario (its
    *gate*): the others start once the gate's status is in, and are skipped when it showed the endpoint
    absent. Dialects go one after another, so that the report reads in their order."""

    def __init__(self, scenarios: Sequence[Scenario], finished: dict[str, asyncio.Event]) -> None:
        self.finished = finished
        self.gates = _gates(scenarios)
        self.missing: dict[str | None, str] = {}  # dialect -> why its endpoint is not served
        self.known = {api: asyncio.Event() for api in self.gates}  # its gate's status is in
        order = list(dict.fromkeys(s.api for s in scenarios))
        self.before = {api: [s.name for s in scenarios if s.api == order[i - 1]] if i else []
                       for i, api in enumerate(order)}

    def _is_gate(self, scenario: Scenario) -> bool:
        return self.gates.get(scenario.api) == scenario.name

    async def turn(self, scenario: Scenario) -> str | None:
        """Wait for the scenario's turn; the skip reason when its endpoint proved absent."""
        for name in self.before[scenario.api]:
            await self.finished[name].wait()
        if not self._is_gate(scenario) and scenario.api in self.known:
            await self.known[scenario.api].wait()  # the gate's status, not its end
        why = self.missing.get(scenario.api)
        return NOT_SERVED + why if why is not None else None

    def on_status(self, scenario: Scenario) -> Callable[[int], None] | None:
        """The gate's status hook: a status that is no absence lets the others go at once."""
        if not self._is_gate(scenario):
            return None
        known = self.known[scenario.api]
        return lambda status: known.set() if status not in MISSING_STATUSES else None

    def judge(self, outcome: ScenarioResult) -> ScenarioResult:
        """The gate's outcome, or a skip when it shows the endpoint absent (what it saved removed)."""
        why = endpoint_missing(outcome) if self._is_gate(outcome.scenario) else None
        if why is None:
            return outcome
        self.missing[outcome.scenario.api] = why
        _forget(outcome)
        return ScenarioResult(scenario=outcome.scenario, meta=outcome.meta, skipped=NOT_SERVED + why)

    def ended(self, scenario: Scenario) -> None:
        if self._is_gate(scenario):
            self.known[scenario.api].set()


async def run_scenarios(
    scenarios: Sequence[Scenario],
    config: ProbeConfig,
    *,
    concurrency: int = 1,
    progress: Progress = no_progress,
    stop_if_unreachable: bool = False,
    on_result: Callable[[ScenarioResult], None] | None = None,
    results: dict[str, ScenarioResult] | None = None,
    limit: asyncio.Semaphore | None = None,
) -> list[ScenarioResult]:
    """Probe the scenarios, ``concurrency`` at a time; a non-streaming scenario waits for its pair.
    ``on_result`` gets each result as its scenario ends; ``results`` (by name) holds those finished so far,
    also when the run is cancelled. Results in the order of ``scenarios``. ``limit``: the bound on exchanges
    in flight, shared with other runs (:func:`run_together`); by default this run's own, of ``concurrency``.
    With ``stop_if_unreachable``, once a connection fails before any has succeeded, the scenarios not yet
    sent are skipped (:data:`UNREACHABLE`): nothing listening is one fact, not one finding per scenario."""
    timeout = httpx.Timeout(connect=config.limits.connect_timeout, read=None, write=config.limits.idle_timeout,
                            pool=None)
    pool = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    results, finished = {} if results is None else results, {s.name: asyncio.Event() for s in scenarios}
    streaming = {s.name for s in scenarios if s.expect != "nonstream"}
    gate, served = limit if limit is not None else asyncio.Semaphore(concurrency), _Endpoints(scenarios, finished)
    reach = {"answered": False, "unreachable": False}

    def keep(outcome: ScenarioResult) -> None:
        results[outcome.scenario.name] = outcome
        if on_result is not None:
            on_result(outcome)

    async with httpx.AsyncClient(timeout=timeout, verify=config.verify, follow_redirects=True, limits=pool,
                                 max_redirects=5) as client:

        async def one(scenario: Scenario) -> None:
            try:
                absent = await served.turn(scenario)
                if absent is not None:
                    keep(ScenarioResult(scenario=scenario, skipped=absent))
                    return
                reference = None
                if scenario.pair is not None and scenario.expect == "nonstream" and scenario.pair in streaming:
                    await finished[scenario.pair].wait()
                    reference = _reference(results.get(scenario.pair))
                async with gate:
                    if stop_if_unreachable and reach["unreachable"] and not reach["answered"]:
                        keep(ScenarioResult(scenario=scenario, skipped=UNREACHABLE))
                        return
                    outcome = await probe_retrying(client, scenario, config, ScenarioContext(
                        reference, progress, on_interrupt=keep, on_status=served.on_status(scenario)))
                    if outcome.ending == "connect-error":  # a TLS error is a server answering: a finding
                        reach["unreachable"] = True
                    elif outcome.meta is not None:
                        reach["answered"] = True
                    keep(served.judge(outcome))
            finally:
                finished[scenario.name].set()
                served.ended(scenario)

        await asyncio.gather(*(one(s) for s in scenarios))
    return [results[s.name] for s in scenarios]


def _reference(paired: ScenarioResult | None) -> dict[str, Any] | None:
    """The parity reference of a non-streaming scenario: its streaming pair's final output, if it has one."""
    if paired is None or paired.result is None or not paired.result.terminal or not paired.complete_body:
        return None
    return stream_reference(paired.body, paired.scenario.name, paired.result.dialect)


class Interrupted(Exception):
    """The run was stopped by a signal (SIGINT, SIGTERM); ``results`` are the scenarios that ended, the one
    cut short among them (its ending ``interrupted``, its partial capture saved)."""

    def __init__(self, signum: int, results: list[ScenarioResult]) -> None:
        super().__init__(f"interrupted by signal {signum}")
        self.signum = signum
        self.results = results


def run(
    scenarios: Sequence[Scenario],
    config: ProbeConfig,
    *,
    concurrency: int = 1,
    progress: Progress = no_progress,
    stop_if_unreachable: bool = False,
    on_result: Callable[[ScenarioResult], None] | None = None,
) -> list[ScenarioResult]:
    """The synchronous entry point: :func:`run_scenarios` in a fresh event loop. SIGINT and SIGTERM cancel
    the run cleanly and raise :class:`Interrupted` with what finished."""
    results: dict[str, ScenarioResult] = {}

    def probing() -> Awaitable[list[ScenarioResult]]:
        return run_scenarios(scenarios, config, concurrency=concurrency, progress=progress,
                             stop_if_unreachable=stop_if_unreachable, on_result=on_result, results=results)

    return _in_a_loop(probing, lambda: [results[s.name] for s in scenarios if s.name in results])


def run_together(
    scenarios: Sequence[Scenario],
    configs: Sequence[ProbeConfig],
    *,
    concurrency: int,
    stop_if_unreachable: bool = False,
) -> list[list[ScenarioResult]]:
    """Several runs of the same scenarios (one per config: its own save folder) started together, with at most
    ``concurrency`` exchanges in flight across all of them: the load of that many clients at once, even for a
    suite of one scenario. At concurrency 1 the exchanges go one after another. The results per run, as
    :func:`run` gives them; SIGINT and SIGTERM raise :class:`Interrupted` with what finished in every run."""
    partial: list[dict[str, ScenarioResult]] = [{} for _ in configs]

    async def probing() -> list[list[ScenarioResult]]:
        shared = asyncio.Semaphore(concurrency)
        return list(await asyncio.gather(*(
            run_scenarios(scenarios, config, concurrency=concurrency, stop_if_unreachable=stop_if_unreachable,
                          results=partial[k], limit=shared) for k, config in enumerate(configs))))

    return _in_a_loop(probing, lambda: [p[s.name] for p in partial for s in scenarios if s.name in p])


def _in_a_loop(probing: Callable[[], Awaitable[T]], finished: Callable[[], list[ScenarioResult]]) -> T:
    """``probing()`` in a fresh event loop; SIGINT and SIGTERM cancel it cleanly and raise :class:`Interrupted`
    with ``finished()``."""
    caught: list[int] = []

    async def main() -> T:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        installed = []
        for signum in (signal.SIGINT, signal.SIGTERM):
            def stop(signum: int = signum) -> None:
                if not caught:
                    caught.append(signum)
                    if task is not None:
                        task.cancel()
            try:
                loop.add_signal_handler(signum, stop)
                installed.append(signum)
            except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signals here
                pass
        try:
            return await probing()
        finally:
            for signum in installed:
                loop.remove_signal_handler(signum)

    try:
        return asyncio.run(main())
    except (asyncio.CancelledError, KeyboardInterrupt):
        if not caught and not isinstance(sys.exc_info()[1], KeyboardInterrupt):
            raise
        raise Interrupted(caught[0] if caught else signal.SIGINT, finished()) from None
