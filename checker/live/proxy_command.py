"""``sse-check proxy --upstream URL``: watch a real client's traffic to a real server.

This module turns options into a :class:`checker.live.proxy.Proxy`, runs it under uvicorn, prints one
line per checked answer while it runs (stderr) and the report when it is stopped (stdout, or
``--output``): the findings of every answer, a summary table and the prompt-cache table. The forwarding
and the checks are ``checker.live.proxy`` and ``checker.live.history``.

Exit codes, as lint: 0 no finding at or above ``--fail-on``; 1 at least one; 2 a usage error.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from rich.table import Table
from rich.text import Text

from checker.commands.common import (
    add_engine_arguments,
    check_output,
    engine_options,
    open_output,
    positive_count,
    positive_seconds,
    report_options,
)
from checker.console import make_console
from checker.errors import UsageError
from checker.findings import Finding, Severity
from checker.live.history import Tracker
from checker.live.server import configure_logging, make_server
from checker.live.probe_command import ProbeJsonReporter, ProbeTextReporter
from checker.report import ReportOptions, Summary, get_reporter
from checker.report.text import SEVERITY_STYLE

HELP = "a reverse proxy: forwards a client's requests unchanged, checks every answer"

DEFAULT_LISTEN = "127.0.0.1:8100"
# How long a shutdown waits for answers still being forwarded; open ones are ended at once by
# Proxy.close(), so this is only a safety net.

EPILOG = """\
examples:
  sse-check proxy --upstream http://127.0.0.1:8080 --profile llama.cpp
      then point the client at http://127.0.0.1:8100/v1
      instead of http://127.0.0.1:8080/v1
  sse-check proxy --upstream https://api.openai.com --listen 127.0.0.1:9000 \\
      --save traffic/
  sse-check proxy --upstream http://127.0.0.1:8000 --format json -o report.json

Every request is forwarded unchanged (method, path, query, headers, body) to
the upstream, whose path, if any, is put in front; answers come back byte for
byte as they arrive. POSTs to .../responses and .../chat/completions with a
JSON body are checked on the side: the findings of `sse-check lint`, plus
the replay checks (RPL) across the requests of one conversation and the
prompt-cache reuse.

On start it prints one line, "proxying UPSTREAM on http://HOST:PORT", to
stdout; then one line per checked answer to stderr. SIGINT (Ctrl-C) or
SIGTERM stops it and prints the report. --save DIR writes NNN.sse and
NNN.meta.json per checked answer (secrets redacted); `sse-check lint DIR`
reports the same stream and HTTP findings (the RPL ones need the
conversation: they are in this report). Baselines go there too
(`sse-check lint DIR --baseline FILE`): proxied answers have no stable names.

Exit codes: 0 no finding at or above --fail-on, 1 at least one, 2 a usage
error.
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EPILOG
    parser.add_argument("--upstream", "-u", required=True, metavar="URL",
                        help="the server to forward to, e.g. http://127.0.0.1:8080 (its path, if any, is a prefix)")
    parser.add_argument("--listen", "-l", default=DEFAULT_LISTEN, metavar="HOST:PORT",
                        help=f"where to listen (default: {DEFAULT_LISTEN}; port 0 picks a free one; "
                             "a warning if not loopback)")
    parser.add_argument("--save", metavar="DIR", help="save NNN.sse and NNN.meta.json per checked answer in DIR")
    parser.add_argument("--connect-timeout", type=positive_seconds, default=10.0, metavar="S",
                        help="seconds to connect to the upstream (default 10); no other timeout is imposed")
    parser.add_argument("--quiet", "-q", action="store_true", help="no live line per answer (only the report)")
    parser.add_argument("--log", action="store_true", help="log each request and server events to stderr")
    parser.add_argument("--metrics", metavar="HOST:PORT",
                        help="serve Prometheus metrics on http://HOST:PORT/metrics (needs the proxy-metrics extra)")
    parser.add_argument("--log-jsonl", metavar="FILE",
                        help="append one JSON line per checked answer to FILE (the JSON report's entry "
                             "and the exchange: method, path, status, timings)")
    parser.add_argument("--sample", type=_rate, default=1.0, metavar="RATE",
                        help="with --save: save this fraction (0-1) of the passing answers; failing ones always "
                             "(default 1)")
    parser.add_argument("--check-queue", type=_megabytes, default="64", metavar="MB",
                        help="body megabytes that may wait for the checker (default 64); an answer that would "
                             "overflow it is forwarded unchecked and counted")
    parser.add_argument("--keep-answers", type=positive_count, default=10_000, metavar="N",
                        help="the report shows the last N answers (default 10000; the totals count all), "
                             "so a proxy that runs for days keeps flat memory")
    add_engine_arguments(parser, baseline=False)  # answers are named by arrival order: nothing to match



def _rate(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r} (a fraction from 0 to 1)") from None
    if not math.isfinite(value) or not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"must be a fraction from 0 to 1: {text!r}")
    return value


def _megabytes(text: str) -> int:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of megabytes: {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of megabytes: {text!r}")
    return max(int(value * 1024 * 1024), 1)




def parse_listen(text: str) -> tuple[str, int]:
    """``HOST:PORT``, ``[V6]:PORT`` or ``:PORT`` (loopback) -> (host, port)."""
    host, sep, port = text.strip().rpartition(":")
    if not sep:
        raise UsageError(f"--listen {text!r}: expected HOST:PORT, e.g. 127.0.0.1:8100")
    host = host.strip("[]") or "127.0.0.1"
    try:
        number = int(port)
    except ValueError:
        raise UsageError(f"--listen {text!r}: not a port number: {port!r}") from None
    if not 0 <= number <= 65535:
        raise UsageError(f"--listen {text!r}: a port is 0-65535")
    return host, number


def check_upstream(url: str) -> str:
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError as exc:
        raise UsageError(f"--upstream {url!r}: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"--upstream {url!r}: not an http(s) URL (e.g. http://127.0.0.1:8080)")
    if parts.query or parts.fragment:
        raise UsageError(f"--upstream {url!r}: give a base URL without query or fragment")
    return url.strip().rstrip("/")


# --- run -----------------------------------------------------------------------------------------------


def run(args: argparse.Namespace) -> int:
    try:
        import uvicorn  # noqa: F401 - the optional extra
        from checker.live.proxy import Proxy, ProxyConfig
        from checker.live.server import bind_socket, is_loopback
    except ImportError as exc:
        raise UsageError(f"proxy needs the optional dependencies ({exc.name} is missing): install sse-check "
                         "with its serve extra (pip install '.[serve]' in a checkout)") from None
    if args.baseline or args.write_baseline:
        raise UsageError("proxy does not take --baseline/--write-baseline (answers are named by arrival order); "
                         "save them with --save DIR and use `sse-check lint DIR --baseline FILE`")
    upstream = check_upstream(args.upstream)
    host, port = parse_listen(args.listen)
    check_output(args.output)  # now, not when the report is due after hours of traffic
    engine = engine_options(args)
    report = report_options(args, command="proxy")
    save_dir = _save_dir(args.save)
    if args.sample < 1 and save_dir is None:
        raise UsageError("--sample chooses which answers --save keeps: give --save DIR too")
    live = make_console(sys.stderr, args.color)
    metrics = None
    if args.metrics:
        from checker.live.proxy_observe import ProxyMetrics

        metrics_host, metrics_port = parse_listen(args.metrics)
        metrics = ProxyMetrics(report.fail_on)
    jsonl = None
    if args.log_jsonl:
        from checker.live.proxy_observe import JsonlLog

        jsonl = JsonlLog(args.log_jsonl, report)
    summary = Summary()  # counts every answer; the report shows the last --keep-answers of them
    failed = [False]

    def on_record(record: Any) -> None:  # the checker thread, once per ended exchange
        if record.result is not None:
            failed[0] |= summary.add(record.result, report.fail_on)
        for observer in (metrics, jsonl):
            if observer is not None:
                try:
                    observer.record(record)
                except Exception:  # noqa: BLE001,S110 - an observer's hiccup costs its line, not the answer
                    pass
        if not args.quiet:
            live.print(live_line(record, report.fail_on), soft_wrap=True)  # one line, however long

    def on_passthrough(method: str, path: str, status: int | None, note: str) -> None:
        if metrics is not None:
            metrics.passthrough()
        if not args.quiet:
            live.print(Text(f"--- {method} {path} {status if status is not None else '–'} · {note}", style="dim"),
                       soft_wrap=True)

    proxy = Proxy(ProxyConfig(upstream=upstream, engine=engine, save_dir=save_dir,
                              connect_timeout=args.connect_timeout, check_queue=args.check_queue,
                              keep=args.keep_answers, sample=args.sample, fail_on=report.fail_on),
                  on_record=on_record, on_passthrough=on_passthrough,
                  on_forward=metrics.forwarded if metrics is not None else None)
    sock = bind_socket(host, port)
    if metrics is not None:
        metrics.watch_queue(proxy.checking)
        bound = metrics.serve(metrics_host, metrics_port)
        print(f"sse-check: metrics on http://{bound[0]}:{bound[1]}/metrics", file=sys.stderr, flush=True)
    bound_host, bound_port = sock.getsockname()[:2]
    if not is_loopback(bound_host):
        print(f"sse-check: warning: listening on {bound_host}, not a loopback address: anyone who can reach this "
              "machine can use the upstream through the proxy", file=sys.stderr)
    url_host = f"[{bound_host}]" if ":" in bound_host else bound_host
    configure_logging("sse-check proxy", verbose=args.log)
    # The upstream's own Server and Date headers are passed on instead of uvicorn's.
    server = make_server(proxy, announce=f"proxying {upstream} on http://{url_host}:{bound_port}",
                         access_log=args.log, on_shutdown=proxy.close, after_shutdown=proxy.aclose,
                         date_header=False)
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
        if jsonl is not None:
            jsonl.close()
    return _report(args, report, proxy, summary, failed[0])


def _save_dir(text: str | None) -> Path | None:
    if not text:
        return None
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise UsageError(f"--save {text}: not a directory")
    path.mkdir(parents=True, exist_ok=True)
    return path


def _report(args: argparse.Namespace, report: ReportOptions, proxy: Any, summary: Summary, failed: bool) -> int:
    records = [r for r in proxy.records if r.result is not None]
    report.extra = {
        "upstream": proxy.config.upstream,
        "passed_through": proxy.passed_through,
        "answers_not_shown": max(proxy.checked - len(proxy.records), 0),
        "skipped_queue_full": proxy.checking.overflows,
        "unchecked": [{"name": r.name, "note": r.note} for r in proxy.records if r.result is None],
        "conversations": conversations(proxy.tracker),
        "cache": [row.as_dict() for row in proxy.tracker.cache],
    }
    with open_output(args.output) as stream:
        reporter = _reporter(args.format)(stream, report)
        reporter.start()
        for record in records:
            reporter.file(record.name, record.result)
        reporter.finish(summary)
    return 1 if failed else 0


def conversations(tracker: Tracker) -> list[dict[str, Any]]:
    return [{"id": c.id, "label": c.label, "exchanges": [e.number for e in c.exchanges]}
            for c in tracker.conversations()]


# --- the live line -------------------------------------------------------------------------------------


def _worst(findings: list[Finding]) -> Finding | None:
    worst = None
    for finding in findings:
        if worst is None or finding.severity > worst.severity:
            worst = finding
    return worst


def live_line(record: Any, fail_on: Severity) -> Text:
    """One line per answer: number, request, status, events, conversation, cache, verdict, worst finding."""
    status = record.status if record.status is not None else "–"
    line = Text(f"{record.number:03d} {record.method} {record.path} {status}", style="bold")
    result = record.result
    if result is None:
        line.append(f" · {record.note or 'not checked'}", style="yellow")
        return line
    info = result.proxy
    parts = [f"{result.events} events" if record.streamed else "not streamed"]
    if info.get("conversation"):
        parts.append(f"{info['conversation']}#{info['step']}")
    usage = info.get("usage") or {}
    if usage.get("cached") is not None:
        parts.append(f"cached {usage['cached']}/{usage.get('prompt') if usage.get('prompt') is not None else '?'}")
    ending = (result.http.get("ending") or {}).get("kind")
    if ending and ending != "complete":
        parts.append(f"ended: {ending}")
    line.append(" · " + " · ".join(parts) + " · ")
    failed = any(f.severity >= fail_on for f in result.findings)
    line.append("FAIL" if failed else "ok", style="bold red" if failed else "bold green")
    worst = _worst(result.findings)
    if worst is not None:
        more = len(result.findings) - 1
        line.append(f" · {worst.code} ", style=SEVERITY_STYLE[worst.severity])
        line.append(worst.message)
        if more:
            line.append(f" (+{more} more)", style="dim")
    return line


# --- the report ----------------------------------------------------------------------------------------


def _reporter(name: str) -> Any:
    if name == "text":
        return ProxyTextReporter
    if name == "json":
        return ProxyJsonReporter
    return get_reporter(name)


def _tokens(value: Any) -> str:
    return str(value) if value is not None else "–"


class ProxyTextReporter(ProbeTextReporter):
    """Each answer as lint shows a capture (with its HTTP line), then the answers and cache tables."""

    noun = "answer"

    def finish(self, summary: Summary) -> None:
        c = self.console
        extra = self.options.extra
        # The findings set aside under each answer: the documented deviations grouped, then totals per rule.
        if self.deviations:
            self.print_deviations()
        if self.totals and len(self.rows) > 1:
            self.print_totals()
        if self.deviations or (self.totals and len(self.rows) > 1):
            c.print()
        if self.rows:
            table = Table(title="answers", box=None, pad_edge=False)
            for column in ("answer", "status", "conversation", "verdict", "ended", "error/warning/info", "worst"):
                table.add_column(column, no_wrap=True)
            for name, result in self.rows:
                info = getattr(result, "proxy", {}) or {}
                http = getattr(result, "http", {}) or {}
                failed = any(f.severity >= self.options.fail_on for f in result.findings)
                worst = _worst(result.findings)
                table.add_row(
                    name, _tokens(http.get("status")),
                    f"{info['conversation']}#{info['step']}" if info.get("conversation") else "–",
                    Text("FAIL", style="bold red") if failed else Text("ok", style="green"),
                    str((http.get("ending") or {}).get("kind", "–")),
                    f"{result.count(Severity.ERROR)}/{result.count(Severity.WARNING)}/{result.count(Severity.INFO)}",
                    worst.code if worst else "",
                )
            c.print(table)
        cache = extra.get("cache") or []
        if cache:
            table = Table(title="prompt cache (cached tokens vs. the previous prompt)", box=None, pad_edge=False)
            for column in ("answer", "conversation", "prompt", "cached", "previous prompt", "reuse", "from"):
                table.add_column(column, no_wrap=True, justify="right" if column in (
                    "prompt", "cached", "previous prompt", "reuse") else "left")
            for row in cache:
                reuse = row.get("reuse")
                table.add_row(f"{row['number']:03d}", f"{row['conversation']}#{row['step']}",
                              _tokens(row.get("prompt_tokens")), _tokens(row.get("cached_tokens")),
                              _tokens(row.get("previous_prompt_tokens")),
                              f"{reuse * 100:.0f}%" if reuse is not None else "–", row.get("source", ""))
            c.print(table)
        for entry in extra.get("unchecked") or []:
            c.print(Text(f"not checked {entry['name']}: {entry['note']}", style="yellow"))
        if extra.get("answers_not_shown"):
            c.print(Text(f"{extra['answers_not_shown']} earlier answer(s) not shown (--keep-answers); "
                         "the totals count them", style="dim"))
        if extra.get("skipped_queue_full"):
            c.print(Text(f"{extra['skipped_queue_full']} answer(s) forwarded unchecked: the checker's queue was "
                         "full (--check-queue)", style="yellow"))
        talks = extra.get("conversations") or []
        c.print(f"proxied {extra.get('upstream', '?')}: {summary.files} answer(s) checked in {len(talks)} "
                f"conversation(s), {extra.get('passed_through', 0)} other request(s) passed through")
        c.print(f"{summary.failed_files} failed at --fail-on {self.options.fail_on}; {summary.errors} error(s), "
                f"{summary.warnings} warning(s), {summary.infos} info")


class ProxyJsonReporter(ProbeJsonReporter):
    """lint's JSON document; each answer adds ``http`` and ``proxy`` (its request, conversation, usage)."""

    def entry(self, name: str, result: Any) -> dict[str, Any]:
        entry = super().entry(name, result)
        info = getattr(result, "proxy", None)
        if info is not None:
            entry["proxy"] = info
        return entry


# --- the server ----------------------------------------------------------------------------------------



