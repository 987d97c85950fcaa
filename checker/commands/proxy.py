"""``sse-check proxy --upstream URL``: watch a real client's traffic to a real server.

This module turns options into a :class:`checker.live.proxy.Proxy`, runs it under uvicorn, prints one
line per checked answer while it runs (stderr) and the report when it is stopped (stdout, or
``--output``): the findings of every answer, a summary table and the prompt-cache table
(checker.live.reports). The forwarding and the checks are ``checker.live.proxy`` and ``checker.live.history``.

Exit codes, as lint: 0 no finding at or above ``--fail-on``; 1 at least one; 2 a usage error.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from rich.text import Text

from checker.commands.common import (
    EngineArgs,
    add_engine_arguments,
    check_output,
    engine_options,
    open_output,
    positive_count,
    positive_seconds,
    report_options,
    save_dir,
)
from checker.console import make_console
from checker.errors import UsageError
from checker.live.history import Tracker
from checker.live.reports import live_line, reporter_for
from checker.live.server import configure_logging, make_server
from checker.report import ReportOptions, Summary

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
    add_engine_arguments(parser, baseline=False, quiet=False)  # answers are named by arrival order: nothing to match



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


@dataclass(frozen=True, slots=True, kw_only=True)
class ProxyOptions:
    upstream: str
    listen: str = DEFAULT_LISTEN
    save: str | None = None
    connect_timeout: float = 10.0
    quiet: bool = False  # no live line per answer
    log: bool = False
    metrics: str | None = None
    log_jsonl: str | None = None
    sample: float = 1.0
    check_queue: int = 64 * 1024 * 1024
    keep_answers: int = 10_000
    engine: EngineArgs = EngineArgs()


def options(args: argparse.Namespace) -> ProxyOptions:
    """The parser's result as proxy's typed options."""
    return ProxyOptions(upstream=args.upstream, listen=args.listen, save=args.save,
                        connect_timeout=args.connect_timeout, quiet=args.quiet, log=args.log, metrics=args.metrics,
                        log_jsonl=args.log_jsonl, sample=args.sample, check_queue=args.check_queue,
                        keep_answers=args.keep_answers, engine=EngineArgs.from_namespace(args))


# --- run -----------------------------------------------------------------------------------------------


def run(opts: ProxyOptions) -> int:
    try:
        import aiohttp  # noqa: F401 - the optional extra
        import uvicorn  # noqa: F401
        from checker.live.proxy import Proxy, ProxyConfig
        from checker.live.server import bind_socket, is_loopback
    except ImportError as exc:
        raise UsageError(f"proxy needs the optional dependencies ({exc.name} is missing): install sse-check "
                         "with its serve extra (pip install '.[serve]' in a checkout)") from None
    if opts.engine.baseline or opts.engine.write_baseline:
        raise UsageError("proxy does not take --baseline/--write-baseline (answers are named by arrival order); "
                         "save them with --save DIR and use `sse-check lint DIR --baseline FILE`")
    upstream = check_upstream(opts.upstream)
    host, port = parse_listen(opts.listen)
    check_output(opts.engine.output)  # now, not when the report is due after hours of traffic
    engine = engine_options(opts.engine)
    report = report_options(opts.engine, command="proxy")
    folder = save_dir(opts.save)
    if opts.sample < 1 and folder is None:
        raise UsageError("--sample chooses which answers --save keeps: give --save DIR too")
    watcher = _Watcher(opts, report)
    proxy = Proxy(ProxyConfig(upstream=upstream, engine=engine, save_dir=folder,
                              connect_timeout=opts.connect_timeout, check_queue=opts.check_queue,
                              keep=opts.keep_answers, sample=opts.sample, fail_on=report.fail_on),
                  on_record=watcher.on_record, on_passthrough=watcher.on_passthrough,
                  on_forward=watcher.metrics.forwarded if watcher.metrics is not None else None)
    sock = bind_socket(host, port)
    if watcher.metrics is not None:
        watcher.metrics.watch_queue(proxy.checking)
        bound = watcher.metrics.serve(*parse_listen(opts.metrics or ""))
        print(f"sse-check: metrics on http://{bound[0]}:{bound[1]}/metrics", file=sys.stderr, flush=True)
    bound_host, bound_port = sock.getsockname()[:2]
    if not is_loopback(bound_host):
        print(f"sse-check: warning: listening on {bound_host}, not a loopback address: anyone who can reach this "
              "machine can use the upstream through the proxy", file=sys.stderr)
    url_host = f"[{bound_host}]" if ":" in bound_host else bound_host
    configure_logging("sse-check proxy", verbose=opts.log)
    # The upstream's own Server and Date headers are passed on instead of uvicorn's.
    server = make_server(proxy, announce=f"proxying {upstream} on http://{url_host}:{bound_port}",
                         access_log=opts.log, on_shutdown=proxy.close, after_shutdown=proxy.aclose,
                         date_header=False)
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
        if watcher.jsonl is not None:
            watcher.jsonl.close()
    return _report(opts, report, proxy, watcher.summary, watcher.failed)


class _Watcher:
    """What the proxy tells while it runs: a live line per answer (stderr), the metrics, the JSON lines log,
    and the counts of every answer (the report shows the last --keep-answers of them)."""

    def __init__(self, opts: ProxyOptions, report: ReportOptions) -> None:
        self.quiet, self.fail_on, self.required = opts.quiet, report.fail_on, report.clients_required
        self.live = make_console(sys.stderr, opts.engine.color)
        self.summary = Summary()
        self.failed = False
        self.metrics: Any = None
        if opts.metrics:
            from checker.live.proxy_observe import ProxyMetrics

            parse_listen(opts.metrics)  # a usage error before anything starts
            self.metrics = ProxyMetrics(report.fail_on)
        self.jsonl: Any = None
        if opts.log_jsonl:
            from checker.live.proxy_observe import JsonlLog

            self.jsonl = JsonlLog(opts.log_jsonl, report)

    def on_record(self, record: Any) -> None:  # the checker thread, once per ended exchange
        if record.result is not None:
            self.failed |= self.summary.add(record.result, self.fail_on, self.required)
        for observer in (self.metrics, self.jsonl):
            if observer is not None:
                try:
                    observer.record(record)
                except Exception:  # noqa: BLE001,S110 - an observer's hiccup costs its line, not the answer
                    pass
        if not self.quiet:
            self.live.print(live_line(record, self.fail_on), soft_wrap=True)  # one line, however long

    def on_passthrough(self, method: str, path: str, status: int | None, note: str) -> None:
        if self.metrics is not None:
            self.metrics.passthrough()
        if not self.quiet:
            self.live.print(Text(f"--- {method} {path} {status if status is not None else '–'} · {note}",
                                 style="dim"), soft_wrap=True)


def _report(opts: ProxyOptions, report: ReportOptions, proxy: Any, summary: Summary, failed: bool) -> int:
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
    with open_output(opts.engine.output) as stream:
        reporter = reporter_for("proxy", opts.engine.format)(stream, report)
        reporter.start()
        for record in records:
            reporter.file(record.name, record.result)
        reporter.finish(summary)
    return 1 if failed else 0


def conversations(tracker: Tracker) -> list[dict[str, Any]]:
    return [{"id": c.id, "label": c.label, "exchanges": [e.number for e in c.exchanges]}
            for c in tracker.conversations()]
