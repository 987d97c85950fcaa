"""``sse-check replay CASES.json...``: check how a client sends reasoning back; ``--live URL``: measure how a
server's prefix cache takes it.

Runs the cases of one or more case files against a target and reports each
case as passed, failed (with the differences and a unified diff) or skipped
(a case of another dialect than the target speaks); the reports are the registry's
(checker.report.get_case_reporter). ``--live`` runs the live replay instead
(checker.replay.live_run, reported by checker.replay.live_report). Exit codes: 0
every case run passed, 1 at least one failed, 2 usage or I/O error.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from checker.commands.common import check_output, open_output, positive_seconds
from checker.commands.connection import ConnectionOptions, probe_config
from checker.console import make_console
from checker.engine import EngineOptions, Limits
from checker.errors import UsageError
from checker.findings import Severity
from checker.live.probe import DEFAULT_TOTAL_TIMEOUT, ProbeConfig, ProbeLimits
from checker.profiles import get_profile
from checker.replay.cases import (
    DEFAULT_DIALECT,
    DEFAULT_TIMEOUT_S,
    Program,
    PythonFunction,
    Reference,
    Target,
    load_case_file,
    run_cases,
)
from checker.replay.dialects import DEFAULT_FIELD, DIALECTS, FIELDS
from checker.report import CASE_REPORTERS, FormatNames, get_case_reporter

HELP = "check the messages a client sends back (reasoning replay) against case files"
FORMATS = tuple(CASE_REPORTERS)  # the registry's built-in case reporters (plugins are accepted too)
LIVE_FORMATS = ("text", "json")


EPILOG = """\
examples:
  sse-check replay cases/reasoning-replay.json      the built-in reference
  sse-check replay cases/*.json --impl myclient.replay:build_messages
  sse-check replay cases/reasoning-replay.json --cmd "node build.js" \\
      --timeout 5
  sse-check replay cases/anthropic-thinking.json --cmd "node build.js" \\
      --dialect anthropic --format junit -o replay.xml
  sse-check replay --live http://127.0.0.1:8080 --model qwen3 \\
      --profile llama.cpp
  sse-check replay --live https://api.anthropic.com --dialect anthropic \\
      --model claude-sonnet-4-5 -H "x-api-key: $ANTHROPIC_API_KEY"

A case file holds histories and the request messages expected from them: a
client's rule for sending reasoning back is checked against each case
(--impl: a Python function, --cmd: a program reading JSON on stdin). --live
measures instead whether a server's prefix cache survives reasoning sent back
exact, dropped or altered.

Exit codes: 0 every case passed (live: no finding at or above --fail-on), 1 a
case failed (a finding), 2 a usage or I/O error, or a server that could not
be reached (one line on stderr).
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EPILOG
    parser.add_argument("files", nargs="*", metavar="CASES.json",
                        help="case files (cases/reasoning-replay.json); none with --live")
    target = parser.add_mutually_exclusive_group()
    target.add_argument("--impl", metavar="MODULE:FUNCTION",
                        help="check a Python function: gets the history, returns the request messages "
                             "(importable from the working directory too)")
    target.add_argument("--cmd", metavar="COMMAND",
                        help="check a program: history JSON on stdin, request messages JSON on stdout "
                             "(split like a shell would, never run through one)")
    parser.add_argument("--dialect", choices=list(DIALECTS), default=None,
                        help="the dialect the target speaks; cases of other dialects are skipped "
                             f"(default: {DEFAULT_DIALECT} for --impl/--cmd, each case's own for the reference)")
    parser.add_argument("--field", choices=list(FIELDS), default=None,
                        help=f"the reference's openai-chat reasoning field (default {DEFAULT_FIELD}; "
                             "reasoning for vLLM/Ollama-style servers)")
    parser.add_argument("--timeout", type=positive_seconds, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
                        help=f"time allowed to --cmd per case (default {DEFAULT_TIMEOUT_S:g})")
    parser.add_argument("--format", default="text", choices=FormatNames(cases=True),
                        help="report format (default: text)")
    parser.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE instead of stdout")
    parser.add_argument("--color", default="auto", choices=["auto", "always", "never"],
                        help="colour in the text report (NO_COLOR is honoured)")
    _add_live_arguments(parser)


def _add_live_arguments(parser: argparse.ArgumentParser) -> None:
    """The live replay's options (its --dialect, --format and --color are the command's)."""
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
    group.add_argument("--total-timeout", type=float, default=DEFAULT_TOTAL_TIMEOUT, metavar="S",
                       help=f"longest exchange in seconds (default {DEFAULT_TOTAL_TIMEOUT:g})")
    group.add_argument("--thinking-budget", type=int, default=None, metavar="TOKENS",
                       help="--dialect anthropic: the thinking budget_tokens of every request (default 1024, "
                            "Anthropic's smallest; llama-server takes it as its reasoning budget)")


@dataclass(frozen=True, slots=True, kw_only=True)
class LiveOptions:
    """``--live URL`` and the options only the live replay takes."""

    url: str
    model: str | None = None
    save: str | None = None
    profile: str = "openai"
    fail_on: str = "warning"
    api_key_env: str | None = None
    headers: tuple[str, ...] = ()
    insecure: bool = False
    total_timeout: float = DEFAULT_TOTAL_TIMEOUT
    thinking_budget: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplayOptions:
    files: tuple[str, ...] = ()
    impl: str | None = None
    cmd: str | None = None
    dialect: str | None = None
    field: str | None = None
    timeout: float = DEFAULT_TIMEOUT_S
    format: str = "text"
    output: str | None = None
    color: str = "auto"
    live: LiveOptions | None = None


def options(args: argparse.Namespace) -> ReplayOptions:
    """The parser's result as replay's typed options."""
    live = None
    if args.live:
        live = LiveOptions(url=args.live, model=args.model, save=args.save, profile=args.profile,
                           fail_on=args.fail_on, api_key_env=args.api_key_env, headers=tuple(args.header),
                           insecure=args.insecure, total_timeout=args.total_timeout,
                           thinking_budget=args.thinking_budget)
    return ReplayOptions(files=tuple(args.files), impl=args.impl, cmd=args.cmd, dialect=args.dialect,
                         field=args.field, timeout=args.timeout, format=args.format, output=args.output,
                         color=args.color, live=live)


def make_target(opts: ReplayOptions) -> Target:
    if opts.field is not None and (opts.impl or opts.cmd):
        raise UsageError("--field applies to the built-in reference, not to --impl or --cmd")
    if opts.field is not None and opts.dialect not in (None, "openai-chat"):
        raise UsageError("--field applies to the openai-chat dialect only")
    dialect = opts.dialect or DEFAULT_DIALECT
    if opts.impl:
        return PythonFunction.load(opts.impl, dialect=dialect)
    if opts.cmd is not None:
        return Program.parse(opts.cmd, timeout=opts.timeout, dialect=dialect)
    return Reference(dialect=opts.dialect, field=opts.field or DEFAULT_FIELD)


def run(opts: ReplayOptions) -> int:
    if opts.live is not None:
        return _run_live_command(opts, opts.live)
    if not opts.files:
        raise UsageError("replay needs case files (CASES.json...) or --live URL")
    check_output(opts.output)
    cases = []
    for name in opts.files:
        loaded = load_case_file(Path(name))
        if not loaded:
            raise UsageError(f"{name}: no cases")
        cases.extend(loaded)
    target = make_target(opts)
    results = run_cases(cases, target)
    with open_output(opts.output) as stream:
        get_case_reporter(opts.format)(stream, color=opts.color).write(results, target, list(opts.files))
    return 1 if any(r.status == "failed" for r in results) else 0


# --- the live replay -----------------------------------------------------------------------------------


def _run_live_command(opts: ReplayOptions, live: LiveOptions) -> int:
    """``sse-check replay --live URL --model M [--dialect responses|openai-chat] [--format text|json]``."""
    if opts.files:
        raise UsageError("--live measures a server; give case files or --live, not both")
    if opts.impl or opts.cmd or opts.field:
        raise UsageError("--impl, --cmd and --field check case files; they do not apply to --live")
    if not live.model:
        raise UsageError("--live needs --model (the model name the server should use)")
    try:
        profile = get_profile(live.profile)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if not (live.total_timeout > 0):
        raise UsageError("--total-timeout must be a positive number of seconds")
    if live.thinking_budget is not None and live.thinking_budget < 1:
        raise UsageError("--thinking-budget must be a positive number of tokens")
    defaults = ProbeLimits()
    limits = replace(defaults, first_byte_timeout=min(defaults.first_byte_timeout, live.total_timeout),
                     total_timeout=live.total_timeout, max_bytes=Limits().max_bytes, max_events=Limits().max_events)
    connection = ConnectionOptions(base_url=live.url, model=live.model, headers=live.headers,
                                   api_key_env=live.api_key_env, insecure=live.insecure, save=live.save,
                                   limits=limits)
    config = probe_config(connection, engine=EngineOptions(profile=profile))
    return run_live(config, opts.dialect or "responses", fmt=opts.format, color=opts.color,
                    fail_on=Severity.parse(live.fail_on), output=opts.output, thinking_budget=live.thinking_budget)


def run_live(config: ProbeConfig, dialect: str, *, fmt: str, color: str, fail_on: Severity,
             output: str | None = None, thinking_budget: int | None = None) -> int:
    """The live replay with the probe's ``config`` (also ``sse-check probe URL --replay``): run, judge,
    report; the exit code."""
    from checker.replay import live, live_report, live_run

    if not live.is_live_dialect(dialect):
        raise UsageError(f"the live replay speaks {', '.join(live.LIVE_DIALECTS)} (--dialect), not {dialect}")
    if thinking_budget is not None and live.turn1_body(dialect, live.script(thinking_budget)) == \
            live.turn1_body(dialect):
        raise UsageError("--thinking-budget applies to --dialect anthropic (its thinking budget_tokens)")
    if fmt not in LIVE_FORMATS:
        raise UsageError(f"the live replay reports as {' or '.join(LIVE_FORMATS)}, not {fmt}")
    check_output(output)
    with _status(enabled=sys.stderr.isatty()) as on_request:
        result = live_run.run_live(config, dialect, on_request=on_request, thinking_budget=thinking_budget)
    if result.aborted:  # nothing listening, or nothing to replay: one line, not a report of nothing
        print(f"sse-check: nothing replayed: {result.aborted}", file=sys.stderr)
        return 2
    verdict = live_run.judge(result, config.engine, fail_on)
    with open_output(output) as stream:
        if fmt == "json":
            json.dump(live_report.report_document(result, verdict), stream, indent=2, ensure_ascii=False)
            stream.write("\n")
        else:
            live_report.render_text(result, verdict, stream, color=color)
    return 1 if verdict.failed(result) else 0


@contextlib.contextmanager
def _status(*, enabled: bool) -> Iterator[Callable[[str], None] | None]:
    """A one-line status on stderr (the request being sent); nothing off a terminal."""
    if not enabled:
        yield None
        return
    console = make_console(sys.stderr, "auto")
    with console.status("live replay") as status:
        yield lambda name: status.update(f"live replay: {name}")
