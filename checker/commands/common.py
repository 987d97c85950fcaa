"""Options shared by the commands that run the engine (lint, probe, and later proxy)."""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from checker.baseline import BaselineRun
from checker.baseline import load as load_baseline
from checker.baseline import save as save_baseline
from checker.engine import Limits
from checker.errors import UsageError
from checker.findings import Severity
from checker.profiles import PROFILES, get_profile
from checker.report import FormatNames, ReportOptions
from checker.rules import RULES


def add_engine_arguments(parser: argparse.ArgumentParser, *, baseline: bool = True) -> None:
    """The engine's options; ``baseline=False`` for a command that refuses ``--baseline``/``--write-baseline``:
    they are still parsed (so the refusal can say why) but not listed in its ``--help``."""
    # Unset (None) until checker.commands.config.apply fills them: from [tool.sse-check], else the defaults.
    parser.add_argument("--profile", default=None, choices=sorted(PROFILES), help="which reference to hold the stream to (default: openai)")
    parser.add_argument("--select", action="append", default=[], metavar="CODES",
                        help="only these rules: codes, family prefixes (ITM) or names, comma-separated; repeatable")
    parser.add_argument("--ignore", action="append", default=[], metavar="CODES",
                        help="skip these rules (codes, prefixes or names); repeatable")
    parser.add_argument("--fail-on", default=None, choices=["error", "warning", "info"],
                        help="lowest severity that makes the exit code 1 (default: warning)")
    parser.add_argument("--format", default="text", choices=FormatNames(), metavar="FORMAT",
                        help="report format: %(choices)s (default: text)")
    parser.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE instead of stdout")
    parser.add_argument("--color", default="auto", choices=["auto", "always", "never"],
                        help="colour in the text report (NO_COLOR is honoured)")
    if "--quiet" not in parser._option_string_actions:  # proxy's --quiet is its own (no live lines)
        parser.add_argument("--quiet", "-q", action="store_true",
                            help="text report: only failing captures and the summary")
    parser.add_argument("--show", choices=["error", "warning", "info"], default="info",
                        help="text report: lowest severity displayed (default: info); "
                             "counts and the exit code do not change")
    parser.add_argument("--timeline", action="store_true", help="draw an event timeline per capture (text format)")
    parser.add_argument("--clients", action="store_true",
                        help="show which clients break, degrade or work on each stream, and why (text and JSON)")
    parser.add_argument("--all-occurrences", action="store_true",
                        help="report every occurrence instead of the first one with a count")
    parser.add_argument("--baseline", metavar="FILE",
                        help="hide the findings recorded in FILE (known debt): report and fail only on new ones"
                        if baseline else argparse.SUPPRESS)
    parser.add_argument("--write-baseline", metavar="FILE",
                        help="record today's findings in FILE (by rule, scenario and fingerprint); exits 0"
                        if baseline else argparse.SUPPRESS)
    parser.add_argument("--max-line-bytes", type=_size, default=None, metavar="N",
                        help="longest line accepted (default 16 MiB); longer lines are skipped with a finding")
    parser.add_argument("--max-event-bytes", type=_size, default=None, metavar="N",
                        help="largest event data accepted (default 64 MiB)")
    parser.add_argument("--max-json-depth", type=int, default=None, metavar="N",
                        help="deepest JSON nesting accepted (default 64)")
    parser.add_argument("--max-bytes", type=_size, default=None, metavar="N",
                        help="bytes checked per stream (default 2 GiB); the rest is counted, not checked")
    parser.add_argument("--max-events", type=int, default=None, metavar="N",
                        help="events checked per stream (default 10,000,000)")
    parser.add_argument("--config", metavar="FILE",
                        help="read the options from FILE (a pyproject.toml with [tool.sse-check], or a sse-check.toml) "
                             "instead of the nearest one upward from the first path (or the working directory)")
    parser.add_argument("--isolated", action="store_true", help="ignore every configuration file")


def positive_seconds(text: str) -> float:
    """An argparse type: a finite number of seconds above zero (timeouts)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds: {text!r}")
    return value


def positive_count(text: str) -> int:
    """An argparse type: a whole number of at least 1 (jobs, concurrency, answers kept)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text!r}")
    return value


def size(text: str) -> int:
    """An argparse type: a size in bytes, with an optional k/m/g (KiB, MiB, GiB) suffix."""
    return _size(text)


def _size(text: str) -> int:
    units = {"k": 1024, "m": 1024**2, "g": 1024**3}
    text = text.strip().lower().removesuffix("b").removesuffix("i")
    factor = units.get(text[-1:], 1)
    number = text[:-1] if text[-1:] in units else text
    try:
        value = int(number) * factor
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError("must be positive")
    return value


def _selectors(values: list[str]) -> list[str]:
    chosen: list[str] = []
    for value in values:
        for part in value.split(","):
            part = part.strip()
            if not part:
                continue
            if not any(code.startswith(part.upper()) or RULES[code].name == part for code in RULES):
                raise UsageError(f"--select/--ignore: {part!r} matches no rule (see `sse-check rules`)")
            chosen.extend(code for code in RULES if code.startswith(part.upper()) or RULES[code].name == part)
    return chosen


def engine_options(args: argparse.Namespace, override: Any = None) -> dict[str, Any]:
    """The engine's options from the command line and the configuration; ``override`` is a per-path entry of
    the configuration (checker.commands.config.Override) that applies to one capture, below the command line."""
    given: set[str] = getattr(args, "given_on_command_line", set())
    profile_name, select, ignore = args.profile, args.select, args.ignore
    if override is not None:
        if override.profile is not None and "profile" not in given:
            profile_name = override.profile
        if override.select is not None and "select" not in given:
            select = list(override.select)
        if override.ignore is not None and "ignore" not in given:
            ignore = list(override.ignore)
    try:
        profile = get_profile(profile_name)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return {
        "profile": profile,
        "select": _selectors(select) or None,
        "ignore": _selectors(ignore) or None,
        "limits": Limits(
            max_line_bytes=args.max_line_bytes,
            max_event_bytes=args.max_event_bytes,
            max_json_depth=args.max_json_depth,
            max_bytes=args.max_bytes,
            max_events=args.max_events,
        ),
        "collapse": not args.all_occurrences,
        # The HTML report draws every event, so it needs the trace too.
        "trace": bool(args.timeline) or getattr(args, "format", None) == "html",
    }


def report_options(args: argparse.Namespace, *, command: str) -> ReportOptions:
    return ReportOptions(
        command=command,
        profile=args.profile,
        fail_on=Severity.parse(args.fail_on),
        color=args.color,
        timeline=args.timeline,
        quiet=bool(getattr(args, "quiet", False)) and command != "proxy",
        show=Severity.parse(getattr(args, "show", None) or "info"),
        clients=bool(getattr(args, "clients", False) or getattr(args, "oracle", None)),
    )


def check_output(path: str | None) -> None:
    """Refuse ``-o PATH`` before any work is done when the report could not be written there."""
    if path is None or path == "-":
        return
    target = Path(path)
    folder = target.parent
    if target.is_dir():
        raise UsageError(f"-o {path}: is a directory (give a file name)")
    if not folder.is_dir():
        raise UsageError(f"-o {path}: no such folder: {folder}")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"-o {path}: cannot write in {folder}: permission denied")


@contextlib.contextmanager
def open_output(path: str | None) -> Iterator[IO[str]]:
    """stdout, or a file written atomically (temp file + rename) so no half report is left behind."""
    if path is None or path == "-":
        yield sys.stdout
        return
    check_output(path)
    target = Path(path)
    try:
        import tempfile  # only for -o FILE

        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    except OSError as exc:  # named by the file the user asked for, not by the temporary one
        raise UsageError(f"-o {path}: cannot write: {exc.strerror or exc}") from None
    # mkstemp creates the file 0600; a report is meant to be opened and shared like any file the user writes.
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            yield handle
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def baseline_run(args: argparse.Namespace) -> BaselineRun:
    """The run's baseline use from ``--baseline`` / ``--write-baseline`` (inactive when neither is given).

    Callers pass every result through ``run.apply(scenario, result)`` before
    reporting and counting it, then call :func:`finish_baseline`.
    """
    known = load_baseline(Path(args.baseline)) if getattr(args, "baseline", None) else None
    written = getattr(args, "write_baseline", None)
    anchor = written or getattr(args, "baseline", None)
    base = Path(anchor).parent if anchor else None
    return BaselineRun(known, record=bool(written), profile=getattr(args, "profile", None),
                       base=base if base is not None and str(base) else Path("."))


def finish_baseline(args: argparse.Namespace, run: BaselineRun) -> None:
    """Write ``--write-baseline FILE`` (atomically) and say so on stderr."""
    if run.recorded is None:
        return
    path = Path(args.write_baseline)
    save_baseline(path, run.recorded)
    print(f"sse-check: wrote {path}: {run.recorded.total()} finding(s), "
          f"{len(run.recorded.entries)} fingerprint(s); --baseline {path} now reports only new ones",
          file=sys.stderr)


def warn_unmatched_baseline(args: argparse.Namespace, run: BaselineRun) -> None:
    """A baseline none of whose entries matched is a mistake (other captures, or named differently): say so."""
    if run.matched_none:
        print(f"sse-check: warning: --baseline {args.baseline}: {run.note()}: was it written for these captures "
              "(or with another profile)?", file=sys.stderr)
