"""The live replay, I/O part: ``sse-check replay --live URL`` and ``sse-check probe URL --replay``.

Sends the pairs of :mod:`checker.replay.live` (turn 1, then one turn 2, six times) one after the other
through the probe (:func:`checker.live.probe.probe_scenario`: the same HTTP client settings, timeouts,
redaction, engine verdict and ``--save`` files as ``sse-check probe``), reads each answer's usage, and
reports the cache table per family with the RPL1xx findings and each request's stream verdict.

The probe marks every request with ``X-SSE-Check-Scenario``; the live replay removes that header (an
httpx request hook), so that a replay server (``sse-check serve captures/replay/llama.cpp``) picks its
answers by the request body, which is what shows that the turn-2 bodies are built deterministically.
With ``--save DIR`` the exchanges are saved as ``replay-FAMILY-VARIANT[-turn1].sse`` + ``.meta.json``;
``sse-check serve DIR`` replays them (by body) and ``sse-check lint DIR`` gives the same stream verdicts.

Exit codes, as lint: 0 no finding at or above ``--fail-on``; 1 at least one; 2 a usage error, a server
that cannot be reached, or one that answered no turn 1 at all.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

import httpx
from rich.table import Table
from rich.text import Text

from checker import __version__
from checker.commands.common import check_output, open_output
from checker.console import make_console
from checker.errors import UsageError
from checker.findings import Finding, Severity
from checker.live import probe as prober
from checker.live.outcome import OutcomeCollector
from checker.live.scenarios import Scenario
from checker.profiles import OPENAI, Profile, get_profile
from checker.replay import live
from checker.replay.live import Counts, Measurement, Pair

REPORT_VERSION = 1
LIVE_FORMATS = ("text", "json")
# A control (dropped, altered) that is rejected is an RPL106 info, not the HTTP family's status error.
# What the HTTP checks call a refused request (failed, invalid, a feature unsupported): RPL106 says it better.
_REFUSED = frozenset({"HTP001", "HTP021", "HTP022"})

OnRequest = Callable[[str], None]


# --- running -----------------------------------------------------------------------------------------


@dataclass(slots=True, kw_only=True)
class Exchange:
    """One request of the run and its verdict (the engine's and the HTTP checks', profile applied)."""

    name: str
    family: str
    variant: str
    turn: int
    outcome: prober.ScenarioResult
    findings: list[Finding] = field(default_factory=list)

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


def chat_endpoint(responses_url: str) -> str:
    """``…/v1/chat/completions`` for a ``…/v1/responses`` endpoint (see :func:`checker.live.probe.endpoint`)."""
    base = responses_url.split("?", 1)[0]
    return base.removesuffix("/responses") + "/chat/completions"


async def _select_by_body(request: httpx.Request) -> None:
    """Requests go without the probe's scenario header: a replay server picks its answer by the body."""
    if prober.SCENARIO_HEADER in request.headers:
        del request.headers[prober.SCENARIO_HEADER]


def _turn1_facts(dialect: str, outcome: prober.ScenarioResult) -> tuple[Counts, dict[str, Any] | None, str | None]:
    """(turn 1's counts, its output for turn 2, why turn 2 cannot be built from it)."""
    if outcome.skipped or outcome.meta is None:
        return Counts(skipped=outcome.skipped), None, "the server has no answer to turn 1 (a replay server " \
                                                      "without a capture of this request)"
    meta = outcome.meta
    status = meta.get("status")
    ending = meta["ending"]["kind"]
    if not isinstance(status, int):
        detail = meta["ending"].get("detail") or ending
        return Counts(error=detail), None, f"turn 1 got no answer ({ending}: {detail})"
    if not 200 <= status < 300:
        message = live.error_message(outcome.body)
        return Counts(status=status, error=message), None, f"turn 1 failed: HTTP {status}" + (
            f" ({message})" if message else "")
    api = "chat" if dialect == "openai-chat" else "responses"
    collector = OutcomeCollector(api)  # type: ignore[arg-type]
    collector.feed(outcome.body)
    answer = collector.close()
    turn1 = live.turn1_output(dialect, answer.output, answer.reasoning_field)
    counts = live.counts_from_stream(dialect, status, outcome.body, turn1)
    if ending not in ("complete", "kept-open"):
        return dataclasses.replace(counts, error=f"ended early: {ending}"), None, f"turn 1 ended early ({ending})"
    if not live.has_reasoning(dialect, turn1):
        what = "reasoning item" if dialect == "responses" else "reasoning_content or reasoning field"
        return counts, None, (f"turn 1 produced no reasoning (no {what} in its answer: the model did not "
                              "reason, or the server does not return its reasoning)")
    return counts, turn1, None


def _turn2_counts(dialect: str, outcome: prober.ScenarioResult) -> Counts:
    if outcome.skipped or outcome.meta is None:
        return Counts(skipped="the replay server has no capture of this request")
    meta = outcome.meta
    status = meta.get("status")
    ending = meta["ending"]["kind"]
    if not isinstance(status, int):
        return Counts(error=f"{ending}: {meta['ending'].get('detail') or 'no answer'}")
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


async def run_pairs(config: prober.ProbeConfig, dialect: str, *, on_request: OnRequest | None = None) -> LiveRun:
    """Send the six pairs, one request at a time; the measurement and every exchange."""
    if dialect not in live.LIVE_DIALECTS:
        raise UsageError(f"the live replay speaks {' and '.join(live.LIVE_DIALECTS)}, not {dialect}")
    engine = dict(config.engine)
    url = config.url
    if dialect == "openai-chat":
        url = chat_endpoint(config.url)
        # A chat stream is not a Responses stream: only the HTTP exchange around it is judged.
        engine["ignore"] = [*(engine.get("ignore") or ()), "SCH010"]
    config = dataclasses.replace(config, url=url, engine=engine)
    limits = config.limits
    timeout = httpx.Timeout(connect=limits.connect_timeout, read=None, write=limits.idle_timeout, pool=None)
    exchanges: list[Exchange] = []
    pairs: list[Pair] = []
    unmeasured = aborted = None
    async with httpx.AsyncClient(timeout=timeout, verify=config.verify, follow_redirects=True, max_redirects=5,
                                 event_hooks={"request": [_select_by_body]}) as client:

        async def send(name: str, family: str, variant: str, turn: int, body: Mapping[str, Any]) -> Exchange:
            if on_request is not None:
                on_request(name)
            scenario = Scenario(name=name, summary=f"live replay: {family}, {live.VARIANT_ABOUT[variant]}, "
                                                   f"turn {turn}", body=body, replay=(name,))
            outcome = await prober.probe_scenario(client, scenario, config)
            exchange = Exchange(name=name, family=family, variant=variant, turn=turn, outcome=outcome)
            exchange.findings = _verdict(exchange)
            if outcome.result is not None:
                exchanges.append(exchange)
            return exchange

        for family, variant in live.PAIRS:
            name = f"replay-{family}-{variant}"
            first = await send(f"{name}-turn1", family, variant, 1, live.turn1_body(dialect))
            counts1, turn1, why = _turn1_facts(dialect, first.outcome)
            if why is not None:
                if not pairs:  # the first turn 1: nothing can be measured
                    ending = first.outcome.ending
                    if first.outcome.skipped or ending in ("connect-error", "tls-error"):
                        aborted = why if first.outcome.skipped else \
                            f"cannot connect to {config.redactor.url(url)}: {counts1.error}"
                    unmeasured = why
                    break
                pairs.append(Pair(family=family, variant=variant, turn1=counts1, turn2=Counts(skipped=why)))
                continue
            assert turn1 is not None
            body = live.turn2_body(dialect, turn1, family, variant)
            if body is None:
                pairs.append(Pair(family=family, variant=variant, turn1=counts1,
                                  turn2=Counts(skipped="turn 1's reasoning has no text to alter "
                                                       "(only encrypted content)")))
                continue
            second = await send(name, family, variant, 2, body)
            pairs.append(Pair(family=family, variant=variant, turn1=counts1,
                              turn2=_turn2_counts(dialect, second.outcome)))
    measurement = Measurement(dialect=dialect, pairs=tuple(pairs), unmeasured=unmeasured)
    return LiveRun(url=config.redactor.url(url), model=config.redactor.text(config.model), dialect=dialect,
                   measurement=measurement, exchanges=exchanges, aborted=aborted)


def run_live(config: prober.ProbeConfig, dialect: str, *, on_request: OnRequest | None = None) -> LiveRun:
    """The synchronous entry point: :func:`run_pairs` in a fresh event loop."""
    return asyncio.run(run_pairs(config, dialect, on_request=on_request))


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


def settle(findings: Sequence[Finding], profile: Profile, select: Sequence[str] | None,
           ignore: Sequence[str] | None) -> list[Finding]:
    """The profile and --select/--ignore applied to the replay findings, as the engine applies them."""
    chosen = tuple(s.upper() for s in select or ())
    skipped = tuple(s.upper() for s in ignore or ())
    out = []
    for finding in findings:
        if not profile.is_enabled(finding.code):
            continue
        if chosen and not finding.code.startswith(chosen):
            continue
        if skipped and finding.code.startswith(skipped):
            continue
        out.append(profile.apply(finding))
    return out


def judge(run: LiveRun, engine: Mapping[str, Any], fail_on: Severity) -> Verdict:
    profile = engine.get("profile") or OPENAI
    analysis = live.analyse(run.measurement)
    findings = settle(analysis.findings, profile, engine.get("select"), engine.get("ignore"))
    return Verdict(analysis=analysis, findings=findings, fail_on=fail_on, profile=profile.name)


# --- reports -----------------------------------------------------------------------------------------


def _counts(findings: Sequence[Finding]) -> dict[str, int]:
    return {"errors": sum(f.severity == Severity.ERROR for f in findings),
            "warnings": sum(f.severity == Severity.WARNING for f in findings),
            "infos": sum(f.severity == Severity.INFO for f in findings)}


def _exchange(run: LiveRun, family: str, variant: str, turn: int) -> Exchange | None:
    return next((e for e in run.exchanges if (e.family, e.variant, e.turn) == (family, variant, turn)), None)


def report_document(run: LiveRun, verdict: Verdict) -> dict[str, Any]:
    """The JSON report of a live replay: one versioned document."""
    analysis = verdict.analysis
    families = []
    for family in live.FAMILIES:
        variants = []
        for row in analysis.rows:
            if row.family != family:
                continue
            entry = row.as_dict()
            exchange = _exchange(run, row.family, row.variant, 2)
            findings = exchange.findings if exchange else []
            entry["request"] = exchange.name if exchange else None
            entry["verdict"] = {"failed": any(f.severity >= verdict.fail_on for f in findings), **_counts(findings)}
            variants.append(entry)
        families.append({"family": family, "about": live.FAMILY_ABOUT[family], "variants": variants,
                         "template": analysis.template if family == "new_user" else None})
    requests = []
    for exchange in run.exchanges:
        requests.append({"name": exchange.name, "family": exchange.family, "variant": exchange.variant,
                         "turn": exchange.turn, "http": exchange.http,
                         "findings": [f.as_dict() for f in exchange.findings],
                         "failed": any(f.severity >= verdict.fail_on for f in exchange.findings)})
    every = [*verdict.findings, *(f for e in run.exchanges for f in e.findings)]
    return {
        "version": REPORT_VERSION,
        "tool": {"name": "sse-check", "version": __version__},  # the same shape in every command's report
        "command": "replay",
        "mode": "live",
        "target": {"url": run.url, "model": run.model, "dialect": run.dialect},
        "profile": verdict.profile,
        "fail_on": str(verdict.fail_on),
        "aborted": run.aborted,
        "unmeasured": analysis.unmeasured,
        "families": families,
        "findings": [f.as_dict() for f in verdict.findings],
        "requests": requests,
        "measurement": run.measurement.as_dict(),
        "summary": {"requests": len(run.exchanges), **_counts(every), "failed": verdict.failed(run)},
    }


def _cell(value: Any) -> str:
    return "–" if value is None else str(value)


def _span(values: Sequence[int | None]) -> str:
    known = sorted({v for v in values if v is not None})
    if not known:
        return "–"
    return str(known[0]) if len(known) == 1 else f"{known[0]}–{known[-1]}"


def _verdict_text(findings: Sequence[Finding], fail_on: Severity) -> Text:
    counts = _counts(findings)
    tail = f" {counts['errors']}/{counts['warnings']}/{counts['infos']}"
    if any(f.severity >= fail_on for f in findings):
        return Text.assemble(("FAIL", "bold red"), (tail, "dim"))
    return Text.assemble(("ok", "green"), (tail, "dim"))


_SEVERITY_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}


def _finding_grid(rows: Sequence[tuple[str, Severity, Text]]) -> Table:
    """Findings as lint shows them: code, severity, then the message wrapped under itself."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(width=1)
    grid.add_column(no_wrap=True, style="bold")
    grid.add_column(no_wrap=True, width=7)
    grid.add_column(overflow="fold")
    for code, severity, message in rows:
        grid.add_row("", code, Text(str(severity), style=_SEVERITY_STYLE[severity]), message)
    return grid


def render_text(run: LiveRun, verdict: Verdict, stream: IO[str], *, color: str = "auto") -> None:
    console = make_console(stream, color)
    analysis = verdict.analysis
    console.print(Text.assemble(("live replay ", "bold"), run.url, f" · model {run.model} · dialect {run.dialect}"
                                f" · profile {verdict.profile}"))
    firsts = [e for e in run.exchanges if e.turn == 1]
    pairs = run.measurement.pairs
    if firsts:
        t1 = [p.turn1 for p in pairs] or []
        statuses = sorted({e.http["status"] for e in firsts if isinstance(e.http.get("status"), int)})
        answers = "/".join([*(f"HTTP {s}" for s in statuses)] + (
            ["no answer"] if any(not isinstance(e.http.get("status"), int) for e in firsts) else []))
        after = t1[0].after_reasoning if t1 else ()
        calls = sum(kind == "function_call" for kind in after)
        then = f"then {calls} function call{'s' if calls != 1 else ''}" if calls else "then " + (
            ", ".join(after) or "nothing")
        source = {"usage": "usage", "deltas": "one per delta"}.get(t1[0].reasoning_source or "", "") if t1 else ""
        worst = [f for e in firsts for f in e.findings]
        line = Text(f"turn 1 (sent before each turn 2): {len(firsts)}× {answers}")
        if t1:
            line.append(f" · input_tokens {_span([c.input_tokens for c in t1])}"
                        f" · output_tokens {_span([c.output_tokens for c in t1])}"
                        f" · reasoning ≈{_span([c.reasoning_tokens for c in t1])} tokens"
                        + (f" ({source})" if source else "") + f", {then} · verdict ")
            line.append_text(_verdict_text(worst, verdict.fail_on))
        console.print(line)
    for family in live.FAMILIES:
        rows = [r for r in analysis.rows if r.family == family]
        if not rows:
            continue
        console.print()
        console.print(Text.assemble((family, "bold"), f": {live.FAMILY_ABOUT[family]}"))
        # One space between columns: at 80 columns every header stays whole and "reuse stopped" wraps.
        table = Table(box=None, pad_edge=False, padding=(0, 1, 0, 0))
        table.add_column("variant", no_wrap=True)
        table.add_column("HTTP", no_wrap=True)
        for column in ("input_tokens", "cached_tokens", "cache_n"):
            table.add_column(column, justify="right", no_wrap=True)
        table.add_column("reuse", justify="right", no_wrap=True)
        table.add_column("reuse stopped", overflow="fold")
        table.add_column("verdict", no_wrap=True)
        for row in rows:
            t2 = row.turn2
            exchange = _exchange(run, row.family, row.variant, 2)
            if t2.skipped:
                table.add_row(row.variant, "–", "–", "–", "–", "–", Text(f"not sent: {t2.skipped}", style="yellow"),
                              "")
                continue
            http = _cell(t2.status)
            if not t2.ok:
                stop = Text(t2.error or "no answer", style="red")
            else:
                stop = Text(row.stop.text if row.stop else "not reported")
                if t2.error:
                    stop.append(f" ({t2.error})", style="yellow")
            reuse = f"{row.reuse * 100:.0f}%" if row.reuse is not None else "–"
            table.add_row(row.variant, http, _cell(t2.input_tokens), _cell(t2.cached_tokens), _cell(t2.cache_n),
                          reuse, stop, _verdict_text(exchange.findings if exchange else [], verdict.fail_on))
        console.print(table)
        exact = next((r for r in rows if r.variant == "exact" and r.bounds is not None), None)
        if exact is not None and exact.bounds is not None:
            b = exact.bounds
            console.print(Text(f"boundaries: previous prompt {b.previous_prompt} · + reasoning "
                               f"≈{_cell(b.reasoning_end)} · + whole output ≈{_cell(b.output_end)} "
                               "(reuse: cached tokens ÷ the previous prompt)", style="dim"))
        if family == "new_user" and analysis.template is not None:
            console.print(Text(live.TEMPLATE_TEXT[analysis.template], style="dim"))
    if run.aborted or (analysis.unmeasured and not pairs):
        console.print(Text(f"\nnothing measured: {run.aborted or analysis.unmeasured}", style="yellow"))
    console.print()
    if verdict.findings:
        console.print(Text("replay findings", style="bold"))
        console.print(_finding_grid([(f.code, f.severity, Text(f.message)) for f in verdict.findings]))
    else:
        console.print(Text("replay findings: none", style="green"))
    # Stream findings by rule: the first message, and in how many requests (--format json has them all).
    grouped: dict[tuple[str, Severity], tuple[str, list[str]]] = {}
    for exchange in run.exchanges:
        for finding in exchange.findings:
            if finding.severity >= verdict.fail_on:
                _, names = grouped.setdefault((finding.code, finding.severity), (finding.message, []))
                if exchange.name not in names:
                    names.append(exchange.name)
    if grouped:
        console.print(Text(f"stream findings at or above --fail-on {verdict.fail_on} (the first of each rule)",
                           style="bold"))
        lines: list[tuple[str, Severity, Text]] = []
        for (code, severity), (message, names) in grouped.items():
            where = names[0] if len(names) == 1 else f"{len(names)} requests: {names[0]}, …"
            lines.append((code, severity, Text.assemble(message, (f"  ({where})", "dim"))))
        console.print(_finding_grid(lines))
    every = [*verdict.findings, *(f for e in run.exchanges for f in e.findings)]
    counts = _counts(every)
    failed = sum(any(f.severity >= verdict.fail_on for f in e.findings) for e in run.exchanges)
    console.print(f"{len(run.exchanges)} request(s), {failed} failed at --fail-on {verdict.fail_on}; "
                  f"{counts['errors']} error(s), {counts['warnings']} warning(s), {counts['infos']} info")


# --- the commands --------------------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``sse-check replay``'s live options (its --dialect, --format and --color are shared)."""
    group = parser.add_argument_group("live replay", "--live URL measures a server's prefix cache instead of "
                                                     "checking case files.")
    group.add_argument("--live", metavar="URL", help="the server, e.g. http://127.0.0.1:8080 (…/v1 optional)")
    group.add_argument("--model", "-m", help="the model to ask for (required with --live)")
    group.add_argument("--save", metavar="DIR", help="save every exchange as NAME.sse + NAME.meta.json in DIR")
    group.add_argument("--profile", default="openai", metavar="NAME",
                       help="the profile the streams are held to (default: openai; llama.cpp for llama-server)")
    group.add_argument("--fail-on", default="warning", choices=["error", "warning", "info"],
                       help="lowest severity that makes the exit code 1 (default: warning)")
    group.add_argument("--api-key-env", metavar="NAME", default=None,
                       help="environment variable holding the API key (default: OPENAI_API_KEY, if set)")
    group.add_argument("--header", "-H", action="append", default=[], metavar="'NAME: VALUE'",
                       help="an extra request header; repeatable; sensitive values are redacted")
    group.add_argument("--insecure", action="store_true", help="do not verify TLS certificates")
    group.add_argument("--total-timeout", type=float, default=prober.DEFAULT_TOTAL_TIMEOUT, metavar="S",
                       help=f"longest exchange in seconds (default {prober.DEFAULT_TOTAL_TIMEOUT:g})")


def run_replay_command(args: argparse.Namespace) -> int:
    """``sse-check replay --live URL --model M [--dialect responses|openai-chat] [--format text|json]``."""
    from checker.engine import Limits
    from checker.live import probe_command

    if args.files:
        raise UsageError("--live measures a server; give case files or --live, not both")
    if getattr(args, "impl", None) or getattr(args, "cmd", None) or getattr(args, "field", None):
        raise UsageError("--impl, --cmd and --field check case files; they do not apply to --live")
    if not args.model:
        raise UsageError("--live needs --model (the model name the server should use)")
    try:
        profile = get_profile(args.profile)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if not (args.total_timeout > 0):
        raise UsageError("--total-timeout must be a positive number of seconds")
    defaults = prober.ProbeLimits()
    options = argparse.Namespace(
        base_url=args.live, model=args.model, header=args.header, api_key_env=args.api_key_env,
        insecure=args.insecure, save=args.save, connect_timeout=defaults.connect_timeout,
        first_byte_timeout=min(defaults.first_byte_timeout, args.total_timeout),
        idle_timeout=defaults.idle_timeout, total_timeout=args.total_timeout, close_timeout=defaults.close_timeout,
        max_bytes=Limits().max_bytes, max_events=Limits().max_events,
    )
    config = dataclasses.replace(probe_command._config(options), engine={"profile": profile})
    return execute(config, args.dialect or "responses", fmt=args.format, color=args.color,
                   fail_on=Severity.parse(args.fail_on), output=args.output)


def run_probe_replay(args: argparse.Namespace, config: prober.ProbeConfig, engine: Mapping[str, Any]) -> int:
    """``sse-check probe URL --model M --replay [DIALECT]``: the probe's connection and engine options."""
    if args.scenario or args.scenario_file:
        raise UsageError("--replay sends its own requests: --scenario and --scenario-file do not apply")
    if getattr(args, "baseline", None) or getattr(args, "write_baseline", None):
        raise UsageError("--replay keeps no baseline (--baseline, --write-baseline apply to the scenarios)")
    engine = {k: engine[k] for k in ("profile", "select", "ignore", "limits", "collapse") if k in engine}
    return execute(dataclasses.replace(config, engine=engine), args.replay, fmt=args.format, color=args.color,
                   fail_on=Severity.parse(args.fail_on), output=getattr(args, "output", None))


def execute(config: prober.ProbeConfig, dialect: str, *, fmt: str, color: str, fail_on: Severity,
            output: str | None = None) -> int:
    if dialect not in live.LIVE_DIALECTS:
        raise UsageError(f"the live replay speaks {' and '.join(live.LIVE_DIALECTS)} (--dialect), not {dialect}")
    if fmt not in LIVE_FORMATS:
        raise UsageError(f"the live replay reports as {' or '.join(LIVE_FORMATS)}, not {fmt}")
    check_output(output)
    with _status(enabled=sys.stderr.isatty()) as on_request:
        run = run_live(config, dialect, on_request=on_request)
    if run.aborted:  # nothing listening, or nothing to replay: one line, not a report of nothing
        print(f"sse-check: nothing replayed: {run.aborted}", file=sys.stderr)
        return 2
    verdict = judge(run, config.engine, fail_on)
    with open_output(output) as stream:
        if fmt == "json":
            json.dump(report_document(run, verdict), stream, indent=2, ensure_ascii=False)
            stream.write("\n")
        else:
            render_text(run, verdict, stream, color=color)
    return 1 if verdict.failed(run) else 0


@contextlib.contextmanager
def _status(*, enabled: bool) -> Iterator[OnRequest | None]:
    """A one-line status on stderr (the request being sent); nothing off a terminal."""
    if not enabled:
        yield None
        return
    console = make_console(sys.stderr, "auto")
    with console.status("live replay") as status:
        yield lambda name: status.update(f"live replay: {name}")
