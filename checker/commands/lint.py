"""``sse-check lint PATH...``: lint saved captures."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from checker.captures import expand, load_json_sidecar, read_chunks, request_for, sidecar
from checker.commands.common import (
    add_engine_arguments,
    baseline_run,
    engine_options,
    finish_baseline,
    warn_unmatched_baseline,
    open_output,
    report_options,
)
from checker.commands.config import override_for
from checker.engine import StreamLinter
from checker.errors import UsageError
from checker.http_checks import ExchangeLinter, is_probe_meta
from checker.oracles import ORACLES
from checker.report import Summary, get_reporter

HELP = "lint saved text/event-stream captures of Responses streams"

EPILOG = """\
examples:
  sse-check lint capture.sse            one capture (X.request.json beside it
                                        is read too)
  sse-check lint captures/ --profile llama.cpp
                                        every *.sse below a folder
  curl -sN … | sse-check lint -         a stream on stdin
  sse-check lint capture.sse --timeline --clients
                                        the events drawn per item, and which
                                        clients break and why
  sse-check lint captures/ --format html -o report.html
  sse-check lint captures/ --select ITM,CNT --ignore ITM011 --fail-on error
  sse-check lint captures/ --write-baseline known.json
  sse-check lint captures/ --baseline known.json   only new findings fail

A capture is a streamed response body as received (curl -N, or
`sse-check probe --save DIR`). Each finding names its rule (`sse-check rules
CODE` explains it), where it is (line:column, event) and the clients it
breaks. Formats: text, json, html, junit, sarif, github, markdown.

Exit codes: 0 no finding at or above --fail-on (default: warning), 1 at least
one, 2 a usage or I/O error (one line on stderr).
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EPILOG
    parser.add_argument("paths", nargs="+", metavar="PATH", help="capture files, directories of *.sse, or - for stdin")
    parser.add_argument(
        "--request", metavar="FILE",
        help="the request body (JSON) that produced the stream(s); default: the X.request.json sidecar",
    )
    parser.add_argument(
        "--oracle", metavar="CLIENT", choices=sorted(ORACLES),
        help="also run the real client on each capture and show its outcome next to the prediction "
             f"(implies --clients; one of: {', '.join(sorted(ORACLES))})",
    )
    add_engine_arguments(parser)


def run(args: argparse.Namespace) -> int:
    options = engine_options(args)
    report = report_options(args, command="lint")
    forced_request = None
    if args.request:
        forced_request = load_json_sidecar(Path(args.request), "--request")
    sources = expand(args.paths)
    oracle = _oracle(args.oracle) if getattr(args, "oracle", None) else None
    gate = baseline_run(args)
    summary = Summary()
    failed = False
    per_path: dict[int, dict[str, Any]] = {}  # the engine options of each matching [[overrides]] entry
    with open_output(args.output) as stream:
        reporter = get_reporter(args.format)(stream, report)
        reporter.start()
        for source in sources:
            name = "<stdin>" if source == "-" else str(source)
            try:
                request = forced_request if forced_request is not None else (
                    None if source == "-" else request_for(Path(source))
                )
                linter = _linter(source, request, _options_for(args, source, options, per_path))
                held = bytearray() if oracle is not None else None  # the oracle needs the whole capture
                for chunk in read_chunks(source):
                    linter.feed(chunk)
                    if held is not None:
                        held += chunk
            except (OSError, UsageError) as exc:
                summary.io_errors.append(_io_message(name, exc))
                continue
            result = gate.apply(gate.key(name), linter.close())
            if isinstance(linter, ExchangeLinter):  # the text report words a saved probe's answer as probe did
                report.extra.setdefault("exchanges", {})[name] = _exchange_info(linter.meta)
            if oracle is not None and held is not None:
                report.oracles[name] = {args.oracle: oracle(bytes(held))}
            failed |= summary.add(result, report.fail_on)
            reporter.file(name, result)
        summary.baselined = gate.hidden
        summary.baseline_note = gate.note()
        reporter.finish(summary)
    warn_unmatched_baseline(args, gate)
    for message in summary.io_errors:
        print(f"sse-check: {message}", file=sys.stderr)
    if summary.io_errors:
        return 2  # and no baseline written: it would miss the unreadable captures' findings
    if gate.recorded is not None:
        finish_baseline(args, gate)
        return 0  # recording today's findings is how a project adopts the gate: not a failure
    return 1 if failed else 0


def _exchange_info(meta: Any) -> dict[str, Any]:
    """What the text report needs of a probe's recorded exchange (``X.meta.json``)."""
    headers = meta.get("headers") if isinstance(meta, dict) else None
    content_type = next((v for k, v in headers or [] if isinstance(k, str) and k.lower() == "content-type"), None)
    return {"status": meta.get("status"), "content_type": content_type, "expect": meta.get("expect"),
            "ending": meta.get("ending") if isinstance(meta.get("ending"), dict) else {}}


def _options_for(args: argparse.Namespace, source: Path | str, options: dict[str, Any],
                 cache: dict[int, dict[str, Any]]) -> dict[str, Any]:
    """The run's engine options, or those of the configuration's per-path override matching ``source``."""
    if source == "-":
        return options
    override = override_for(args, Path(source))
    if override is None:
        return options
    if id(override) not in cache:
        cache[id(override)] = engine_options(args, override)
    return cache[id(override)]


def _linter(source: Path | str, request: dict[str, Any] | None, options: dict[str, Any]) -> Any:
    """The engine for one capture; for a capture saved by ``sse-check probe`` (an ``X.meta.json`` recording
    its HTTP exchange), the engine plus the HTTP checks, so that lint reports what the probe reported."""
    if source != "-":
        meta_file = sidecar(Path(source), "meta")
        if meta_file.is_file():
            meta = load_json_sidecar(meta_file)
            if is_probe_meta(meta):
                return ExchangeLinter(meta, request=request, **options)
    return StreamLinter(request=request, **options)


# Public name for the pytest plugin, which must lint a capture exactly as `sse-check lint` does.
linter_for = _linter


def _oracle(name: str) -> Any:
    from checker.oracles import OracleUnavailable, get_oracle

    try:
        return get_oracle(name)
    except (OracleUnavailable, ValueError) as exc:
        raise UsageError(str(exc)) from None


def _io_message(name: str, exc: Exception) -> str:
    if isinstance(exc, OSError):
        return f"{name}: {exc.strerror or exc}"
    return str(exc)
