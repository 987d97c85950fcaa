"""The live replay, I/O part: ``sse-check replay --live URL`` and ``sse-check probe URL --replay``.

Sends the pairs of :mod:`checker.replay.live` (turn 1, then one turn 2, six times) one after the other
through the probe (:func:`checker.live.probe.probe_scenario`: the same HTTP client settings, timeouts,
redaction, engine verdict and ``--save`` files as ``sse-check probe``), reads each answer's usage, and
judges the measurement (:func:`judge`: the RPL1xx findings, profile applied). The report is
:mod:`checker.replay.live_report`; the command, :mod:`checker.commands.replay`.

The probe marks every request with ``X-SSE-Check-Scenario``; the live replay removes that header (an
httpx request hook), so that a replay server (``sse-check serve captures/replay/llama.cpp``) picks its
answers by the request body, which is what shows that the turn-2 bodies are built deterministically.
With ``--save DIR`` the exchanges are saved as ``replay-FAMILY-VARIANT[-turn1].sse`` + ``.meta.json``;
``sse-check serve DIR`` replays them (by body) and ``sse-check lint DIR`` gives the same stream verdicts.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from checker.engine_options import EngineOptions
from checker.errors import UsageError
from checker.findings import Finding, Severity
from checker.live import adapters
from checker.live.adapters import ReplayScript, RequestAdapter
from checker.live.history import Tracker
from checker.live.outcome import OutcomeCollector
from checker.live.probe import SCENARIO_HEADER, ProbeConfig, ScenarioResult, probe_scenario
from checker.live.scenarios import Scenario
from checker.live.settle import settle
from checker.replay import live
from checker.replay.live import Counts, Measurement, Pair

# A control (dropped, altered) that is rejected is an RPL106 info, not the HTTP family's status error.
# What the HTTP checks call a refused request (failed, invalid, a feature unsupported): RPL106 says it better.
_REFUSED = frozenset({"HTP001", "HTP021", "HTP022"})

OnRequest = Callable[[str], None]


@dataclass(slots=True, kw_only=True)
class Exchange:
    """One request of the run and its verdict (the engine's and the HTTP checks', profile applied)."""

    name: str
    family: str
    variant: str
    turn: int
    outcome: ScenarioResult
    findings: list[Finding] = field(default_factory=list)
    # turn 2: what the proxy's history checks (RPL0xx) say of the reasoning it sends back; the controls
    # break them on purpose, so these never fail the run
    sent_back: list[Finding] = field(default_factory=list)

    @property
    def http(self) -> dict[str, Any]:
        result = self.outcome.result
        return dict(getattr(result, "http", {}) or {}) if result is not None else {}


@dataclass(slots=True, kw_only=True)
class LiveRun:
    url: str  # redacted
    model: str
    dialect: str
    measurement: Measurement
    exchanges: list[Exchange]
    aborted: str | None = None  # why nothing could be measured at all (exit 2)
    notes: list[str] = field(default_factory=list)  # what the run changed on its way (a turn 1 sent again)


def dialect_endpoint(responses_url: str, adapter: RequestAdapter) -> str:
    """The endpoint of ``adapter``'s dialect beside a ``…/v1/responses`` one (checker.live.probe.endpoint):
    ``…/v1/chat/completions`` for chat."""
    base = responses_url.split("?", 1)[0]
    if base.endswith(adapter.endpoint):
        return responses_url
    return base.removesuffix("/responses") + adapter.endpoint


async def _select_by_body(request: httpx.Request) -> None:
    """Requests go without the probe's scenario header: a replay server picks its answer by the body."""
    if SCENARIO_HEADER in request.headers:
        del request.headers[SCENARIO_HEADER]


def _turn1_facts(dialect: str, outcome: ScenarioResult) -> tuple[Counts, dict[str, Any] | None, str | None]:
    """(turn 1's counts, its output for turn 2, why turn 2 cannot be built from it)."""
    if outcome.skipped or outcome.meta is None:
        return Counts(skipped=outcome.skipped), None, "the server has no answer to turn 1 (a replay server " \
                                                      "without a capture of this request)"
    meta = outcome.meta
    status = meta.status
    ending = meta.ending.kind
    if status is None:
        detail = meta.ending.detail or ending
        return Counts(error=detail), None, f"turn 1 got no answer ({ending}: {detail})"
    if not 200 <= status < 300:
        message = live.error_message(outcome.body)
        return Counts(status=status, error=message), None, f"turn 1 failed: HTTP {status}" + (
            f" ({message})" if message else "")
    adapter = adapters.get(dialect)
    collector = OutcomeCollector(adapter.name)
    collector.feed(outcome.body)
    answer = collector.close()
    turn1 = live.turn1_output(dialect, answer.output, answer.reasoning_field)
    counts = live.counts_from_stream(dialect, status, outcome.body, turn1)
    if ending not in ("complete", "kept-open"):
        return dataclasses.replace(counts, error=f"ended early: {ending}"), None, f"turn 1 ended early ({ending})"
    if not live.has_reasoning(dialect, turn1):
        what = adapter.reasoning_where
        return counts, None, (f"turn 1 produced no reasoning (no {what} in its answer: the model did not "
                              "reason, or the server does not return its reasoning)")
    return counts, turn1, None


def _turn2_counts(dialect: str, outcome: ScenarioResult) -> Counts:
    if outcome.skipped or outcome.meta is None:
        return Counts(skipped="the replay server has no capture of this request")
    meta = outcome.meta
    status = meta.status
    ending = meta.ending.kind
    if status is None:
        return Counts(error=f"{ending}: {meta.ending.detail or 'no answer'}")
    if not 200 <= status < 300:
        return Counts(status=status, error=live.error_message(outcome.body))
    counts = live.counts_from_stream(dialect, status, outcome.body)
    if ending not in ("complete", "kept-open"):
        counts = dataclasses.replace(counts, error=f"ended early: {ending}")
    return counts


def _verdict(exchange: Exchange) -> list[Finding]:
    result = exchange.outcome.result
    if result is None:
        return []
    findings = list(result.findings)
    status = exchange.http.get("status")
    if exchange.turn == 2 and exchange.variant != "exact" and isinstance(status, int) and status >= 400:
        findings = [f for f in findings if f.code not in _REFUSED]  # RPL106 says it
    return findings


class _Run:
    """One live replay's requests, sent one at a time through the probe (:func:`run_pairs`)."""

    def __init__(self, client: httpx.AsyncClient, config: ProbeConfig, dialect: str, conversation: ReplayScript,
                 on_request: OnRequest | None) -> None:
        self.client, self.config, self.dialect = client, config, dialect
        self.conversation, self.on_request = conversation, on_request
        self.headers = adapters.get(dialect).request_headers
        self.exchanges: list[Exchange] = []
        self.pairs: list[Pair] = []
        self.notes: list[str] = []
        self.turn1 = live.turn1_body(dialect, conversation)
        self.unmeasured: str | None = None
        self.aborted: str | None = None

    async def send(self, name: str, family: str, variant: str, turn: int, body: Mapping[str, Any],
                   keep: bool = True) -> Exchange:
        if self.on_request is not None:
            self.on_request(name)
        scenario = Scenario(name=name, summary=f"live replay: {family}, {live.VARIANT_ABOUT[variant]}, turn {turn}",
                            body=body, replay=(name,), headers=self.headers)
        outcome = await probe_scenario(self.client, scenario, self.config)
        exchange = Exchange(name=name, family=family, variant=variant, turn=turn, outcome=outcome)
        exchange.findings = _verdict(exchange)
        if outcome.result is not None and keep:
            self.exchanges.append(exchange)
        return exchange

    async def first_turn(self, name: str, family: str, variant: str) -> Exchange:
        """Turn 1; the first time, once more as the dialect's API allows if the server refuses it."""
        fallback = live.turn1_fallback(self.dialect, self.conversation) if not self.pairs else None
        first = await self.send(f"{name}-turn1", family, variant, 1, self.turn1, keep=fallback is None)
        meta = first.outcome.meta
        if fallback is None:
            return first
        if meta is not None and meta.status is not None and 400 <= meta.status < 500:
            message = live.error_message(first.outcome.body)
            self.notes.append(f"turn 1 refused (HTTP {meta.status}" + (f": {message}" if message else "") +
                              f"), sent as {_differs(self.turn1, fallback)} instead")
            self.turn1 = fallback
            return await self.send(f"{name}-turn1", family, variant, 1, self.turn1)
        if first.outcome.result is not None:
            self.exchanges.append(first)
        return first

    async def pair(self, family: str, variant: str) -> bool:
        """One pair; False when nothing can be measured at all (the first turn 1 failed)."""
        name = f"replay-{family}-{variant}"
        first = await self.first_turn(name, family, variant)
        counts1, turn1, why = _turn1_facts(self.dialect, first.outcome)
        if why is not None:
            if not self.pairs:  # the first turn 1: nothing can be measured
                ending = first.outcome.ending
                if first.outcome.skipped or ending in ("connect-error", "tls-error"):
                    self.aborted = why if first.outcome.skipped else \
                        f"cannot connect to {self.config.redactor.url(self.config.url)}: {counts1.error}"
                self.unmeasured = why
                return False
            self.pairs.append(Pair(family=family, variant=variant, turn1=counts1, turn2=Counts(skipped=why)))
            return True
        assert turn1 is not None
        body = live.turn2_body(self.dialect, turn1, family, variant, self.conversation)
        if body is None:
            self.pairs.append(Pair(family=family, variant=variant, turn1=counts1,
                                   turn2=Counts(skipped=live.unbuilt(self.dialect, turn1, family, variant))))
            return True
        second = await self.send(name, family, variant, 2, body)
        second.sent_back = sent_back(self.dialect, self.turn1, first.outcome.body, body)
        self.pairs.append(Pair(family=family, variant=variant, turn1=counts1,
                               turn2=_turn2_counts(self.dialect, second.outcome)))
        return True


def sent_back(dialect: str, turn1: Mapping[str, Any], answer: bytes, turn2: Mapping[str, Any]) -> list[Finding]:
    """The history checks of the proxy (checker.live.history) on turn 2, after turn 1 and its streamed answer:
    what a client sending turn 2 would be told of the reasoning it sends back."""
    name = adapters.get(dialect).name
    tracker = Tracker()
    first, _ = tracker.begin(1, name, turn1)
    collector = OutcomeCollector(name)
    collector.feed(answer)
    tracker.finish(first, collector.close())
    _, found = tracker.begin(2, name, turn2)
    return [f for f in found if f.code.startswith("RPL")]


def _differs(before: Mapping[str, Any], after: Mapping[str, Any]) -> str:
    """How a fallback request differs from the first: its changed fields, in JSON."""
    changed = [k for k in after if before.get(k) != after[k]]
    return ", ".join(f"{k} {json.dumps(after[k], separators=(',', ':'))}" for k in changed) or "the same request"


async def run_pairs(config: ProbeConfig, dialect: str, *, on_request: OnRequest | None = None,
                    thinking_budget: int | None = None) -> LiveRun:
    """Send the six pairs, one request at a time; the measurement and every exchange."""
    if not live.is_live_dialect(dialect):
        raise UsageError(f"the live replay speaks {', '.join(live.LIVE_DIALECTS)}, not {dialect}")
    engine = config.engine
    adapter = adapters.get(dialect)
    url = dialect_endpoint(config.url, adapter)
    if not adapter.linted:
        # A stream of a dialect the engine does not know: only the HTTP exchange around it is judged.
        engine = engine.ignoring("SCH010")
    config = dataclasses.replace(config, url=url, engine=engine)
    limits = config.limits
    timeout = httpx.Timeout(connect=limits.connect_timeout, read=None, write=limits.idle_timeout, pool=None)
    async with httpx.AsyncClient(timeout=timeout, verify=config.verify, follow_redirects=True, max_redirects=5,
                                 event_hooks={"request": [_select_by_body]}) as client:
        run = _Run(client, config, dialect, live.script(thinking_budget), on_request)
        for family, variant in live.PAIRS:
            if not await run.pair(family, variant):
                break
    measurement = Measurement(dialect=dialect, pairs=tuple(run.pairs), unmeasured=run.unmeasured)
    return LiveRun(url=config.redactor.url(url), model=config.redactor.text(config.model), dialect=dialect,
                   measurement=measurement, exchanges=run.exchanges, aborted=run.aborted, notes=run.notes)


def run_live(config: ProbeConfig, dialect: str, *, on_request: OnRequest | None = None,
             thinking_budget: int | None = None) -> LiveRun:
    """The synchronous entry point: :func:`run_pairs` in a fresh event loop."""
    return asyncio.run(run_pairs(config, dialect, on_request=on_request, thinking_budget=thinking_budget))


# --- the verdict ---------------------------------------------------------------------------------------


@dataclass(slots=True, kw_only=True)
class Verdict:
    analysis: live.Analysis
    findings: list[Finding]  # the RPL findings, profile and --select/--ignore applied
    fail_on: Severity
    profile: str

    def failed(self, run: LiveRun) -> bool:
        return any(f.severity >= self.fail_on for f in self.findings) or any(
            f.severity >= self.fail_on for e in run.exchanges for f in e.findings)


def judge(run: LiveRun, engine: EngineOptions, fail_on: Severity) -> Verdict:
    profile = engine.profile
    analysis = live.analyse(run.measurement)
    findings = settle(analysis.findings, engine)
    return Verdict(analysis=analysis, findings=findings, fail_on=fail_on, profile=profile.name)
