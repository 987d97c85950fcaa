"""``sse-check lint PATH...``: lint saved captures."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from checker.captures import expand, read_chunks, request_for
from checker.commands.common import add_engine_arguments, engine_options, open_output, report_options
from checker.engine import StreamLinter
from checker.errors import UsageError
from checker.report import Summary, get_reporter

HELP = "lint saved text/event-stream captures of Responses streams"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH", help="capture files, directories of *.sse, or - for stdin")
    parser.add_argument(
        "--request", metavar="FILE",
        help="the request body (JSON) that produced the stream(s); default: the X.request.json sidecar",
    )
    add_engine_arguments(parser)


def run(args: argparse.Namespace) -> int:
    options = engine_options(args)
    report = report_options(args, command="lint")
    forced_request = None
    if args.request:
        from checker.captures import load_json_sidecar

        forced_request = load_json_sidecar(Path(args.request))
    sources = expand(args.paths)
    summary = Summary()
    failed = False
    with open_output(args.output) as stream:
        reporter = get_reporter(args.format)(stream, report)
        reporter.start()
        for source in sources:
            name = "<stdin>" if source == "-" else str(source)
            try:
                request = forced_request if forced_request is not None else (
                    None if source == "-" else request_for(Path(source))
                )
                linter = StreamLinter(request=request, **options)
                for chunk in read_chunks(source):
                    linter.feed(chunk)
            except (OSError, UsageError) as exc:
                summary.io_errors.append(_io_message(name, exc))
                continue
            result = linter.close()
            failed |= summary.add(result, report.fail_on)
            reporter.file(name, result)
        reporter.finish(summary)
    for message in summary.io_errors:
        print(f"sse-check: {message}", file=sys.stderr)
    if summary.io_errors:
        return 2
    return 1 if failed else 0


def _io_message(name: str, exc: Exception) -> str:
    if isinstance(exc, OSError):
        return f"{name}: {exc.strerror or exc}"
    return str(exc)
