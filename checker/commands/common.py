"""Options shared by the commands that run the engine (lint, probe, proxy), and the helpers every command uses.

The parser side (argparse, and :func:`checker.commands.config.apply` filling in the configuration file) ends
in :meth:`EngineArgs.from_namespace`: from there on the commands hand typed options around, never an
``argparse.Namespace``.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING

from checker.engine import EngineOptions, Limits
from checker.errors import UsageError
from checker.findings import Severity
from checker.profiles import PROFILES, get_profile
from checker.report import FormatNames, ReportOptions

from checker.commands.config import Override, size

# Imported where used: a lint without a baseline does not load it, and pathlib (with urllib.parse and ipaddress,
# a twentieth of a small lint's start-up) is for the options that name a file or folder.
if TYPE_CHECKING:
    from pathlib import Path

    from checker.baseline import BaselineRun


@dataclass(frozen=True, slots=True, kw_only=True)
class EngineArgs:
    """The engine's and the report's options (:func:`add_engine_arguments`), once the configuration file has
    filled what the command line left unset (checker.commands.config.apply)."""

    profile: str = "openai"
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    fail_on: str = "warning"
    format: str = "text"
    output: str | None = None
    color: str = "auto"
    quiet: bool = False
    show: str = "info"
    timeline: bool = False
    clients: bool = False
    clients_required: tuple[str, ...] = ()  # --clients-required: their breakage fails the run (() : it does not)
    all_occurrences: bool = False
    baseline: str | None = None
    write_baseline: str | None = None
    limits: Limits = field(default_factory=Limits)
    overrides: tuple[Override, ...] = ()  # the configuration's [[overrides]] per path
    given: frozenset[str] = frozenset()  # the options given on the command line (they win over overrides)

    @classmethod
    def from_namespace(cls, args: argparse.Namespace) -> EngineArgs:
        """The parser's result, read once (after checker.commands.config.apply)."""
        defaults = Limits()

        def limit(name: str) -> int:
            value = getattr(args, name, None)
            return int(value) if value is not None else int(getattr(defaults, name))

        return cls(
            profile=getattr(args, "profile", None) or "openai",
            select=tuple(getattr(args, "select", None) or ()),
            ignore=tuple(getattr(args, "ignore", None) or ()),
            fail_on=getattr(args, "fail_on", None) or "warning",
            format=getattr(args, "format", None) or "text",
            output=getattr(args, "output", None),
            color=getattr(args, "color", None) or "auto",
            quiet=bool(getattr(args, "quiet", False)),
            show=getattr(args, "show", None) or "info",
            timeline=bool(getattr(args, "timeline", False)),
            clients=bool(getattr(args, "clients", False)),
            clients_required=tuple(getattr(args, "clients_required", None) or ()),
            all_occurrences=bool(getattr(args, "all_occurrences", False)),
            baseline=getattr(args, "baseline", None),
            write_baseline=getattr(args, "write_baseline", None),
            limits=Limits(max_line_bytes=limit("max_line_bytes"), max_event_bytes=limit("max_event_bytes"),
                          max_json_depth=limit("max_json_depth"), max_bytes=limit("max_bytes"),
                          max_events=limit("max_events")),
            overrides=tuple(getattr(args, "overrides", None) or ()),
            given=frozenset(getattr(args, "given_on_command_line", None) or ()),
        )


def add_engine_arguments(parser: argparse.ArgumentParser, *, baseline: bool = True, quiet: bool = True) -> None:
    """The engine's options; ``baseline=False`` for a command that refuses ``--baseline``/``--write-baseline``:
    they are still parsed (so the refusal can say why) but not listed in its ``--help``; ``quiet=False`` for a
    command with a ``--quiet`` of its own (proxy's: no live lines)."""
    # Unset (None) until checker.commands.config.apply fills them: from [tool.sse-check], else the defaults.
    parser.add_argument("--profile", default=None, choices=sorted(PROFILES), metavar="NAME",
                        help=f"which reference to hold the stream to: {', '.join(sorted(PROFILES))} (default: openai)")
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
    if quiet:
        parser.add_argument("--quiet", "-q", action="store_true",
                            help="text report: only failing captures and the summary")
    parser.add_argument("--show", choices=["error", "warning", "info"], default="info",
                        help="text report: lowest severity displayed (default: info); "
                             "counts and the exit code do not change")
    parser.add_argument("--timeline", action="store_true", help="draw an event timeline per capture (text format)")
    parser.add_argument("--clients", action="store_true",
                        help="show which clients break, degrade or work on each stream, and why (text and JSON)")
    parser.add_argument("--clients-required", type=client_names, default=None, metavar="CLIENTS",
                        help="exit 1 also when one of these clients breaks on a stream (the client matrix's "
                             "verdict), whatever the profile accepts: names, comma-separated, or all "
                             "(default: none; breakage alone does not change the exit code)")
    parser.add_argument("--all-occurrences", action="store_true",
                        help="report every occurrence instead of the first one with a count")
    parser.add_argument("--baseline", metavar="FILE",
                        help="hide the findings recorded in FILE (known debt): report and fail only on new ones"
                        if baseline else argparse.SUPPRESS)
    parser.add_argument("--write-baseline", metavar="FILE",
                        help="record today's findings in FILE (by rule, scenario and fingerprint); exits 0"
                        if baseline else argparse.SUPPRESS)
    parser.add_argument("--max-line-bytes", type=size, default=None, metavar="N",
                        help="longest line accepted (default 16 MiB); longer lines are skipped with a finding")
    parser.add_argument("--max-event-bytes", type=size, default=None, metavar="N",
                        help="largest event data accepted (default 64 MiB)")
    parser.add_argument("--max-json-depth", type=int, default=None, metavar="N",
                        help="deepest JSON nesting accepted (default 64)")
    parser.add_argument("--max-bytes", type=size, default=None, metavar="N",
                        help="bytes checked per stream (default 2 GiB); the rest is counted, not checked")
    parser.add_argument("--max-events", type=int, default=None, metavar="N",
                        help="events checked per stream (default 10,000,000)")
    parser.add_argument("--config", metavar="FILE",
                        help="read the options from FILE (a pyproject.toml with [tool.sse-check], or a sse-check.toml) "
                             "instead of the nearest one upward from the first path (or the working directory)")
    parser.add_argument("--isolated", action="store_true", help="ignore every configuration file")
    parser.add_argument("--show-settings", action="store_true",
                        help="print the settings in force and where each came from (the command line, the "
                             "configuration file, the default), then exit 0 without checking anything")


def client_names(text: str) -> tuple[str, ...]:
    """An argparse type: ``--clients-required``'s client names (checker.clients), comma-separated, or ``all``."""
    from checker.clients import CLIENTS

    names = tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    if not names:
        raise argparse.ArgumentTypeError("no client named")
    if "all" in names:
        return ("all",)
    unknown = [name for name in names if name not in CLIENTS]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown client {unknown[0]!r} (one of: all, {', '.join(CLIENTS)})")
    return names


def positive_seconds(text: str) -> float:
    """An argparse type: a finite number of seconds above zero (timeouts)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds: {text!r}")
    return value


def _whole_number(text: str, least: int, too_small: str) -> int:
    """``text`` as a whole number of at least ``least``; else argparse's error, ``too_small`` when it is below."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"{too_small}: {text!r}")
    return value


def positive_count(text: str) -> int:
    """An argparse type: a whole number of at least 1 (jobs, concurrency, answers kept)."""
    return _whole_number(text, 1, "must be at least 1")


def concurrency_levels(text: str) -> tuple[int, ...]:
    """An argparse type: one whole number of at least 1, or several, comma-separated (``1,8``), each once."""
    levels = tuple(dict.fromkeys(positive_count(part.strip()) for part in text.split(",") if part.strip()))
    if not levels:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}")
    return levels


def nonnegative_count(text: str) -> int:
    """An argparse type: a whole number of at least 0 (retries)."""
    return _whole_number(text, 0, "must be 0 or more")


def selectors(values: Sequence[str]) -> list[str]:
    """The rule codes that ``--select``/``--ignore`` values name (codes, family prefixes, names; comma-separated),
    or a UsageError naming the one that matches no rule."""
    chosen: list[str] = []
    if not values:
        return chosen
    from checker.rules import RULES  # every family: a selector may name any rule (a run without one loads only its own)

    for value in values:
        for part in value.split(","):
            part = part.strip()
            if not part:
                continue
            if not any(code.startswith(part.upper()) or RULES[code].name == part for code in RULES):
                raise UsageError(f"--select/--ignore: {part!r} matches no rule (see `sse-check rules`)")
            chosen.extend(code for code in RULES if code.startswith(part.upper()) or RULES[code].name == part)
    return chosen


def engine_options(opts: EngineArgs, override: Override | None = None, *, dialect: str | None = None) -> EngineOptions:
    """The engine's options from the command line and the configuration; ``override`` is a per-path entry of
    the configuration (checker.commands.config.Override) that applies to one capture, below the command line;
    ``dialect`` the one --dialect forces."""
    profile_name, select, ignore = opts.profile, opts.select, opts.ignore
    if override is not None:
        if override.profile is not None and "profile" not in opts.given:
            profile_name = override.profile
        if override.select is not None and "select" not in opts.given:
            select = override.select
        if override.ignore is not None and "ignore" not in opts.given:
            ignore = override.ignore
    try:
        profile = get_profile(profile_name)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return EngineOptions(
        profile=profile,
        select=tuple(selectors(select)) or None,
        ignore=tuple(selectors(ignore)) or None,
        limits=opts.limits,
        collapse=not opts.all_occurrences,
        # The HTML report draws every event, so it needs the trace too.
        trace=opts.timeline or opts.format == "html",
        dialect=dialect,
    )


def report_options(opts: EngineArgs, *, command: str, clients: bool = False, compact: bool = False) -> ReportOptions:
    """The report's options; ``clients`` turns the client matrix on whatever --clients says (lint --oracle);
    ``compact``: probe's short text report (its --verbose turns it off)."""
    return ReportOptions(
        command=command,
        profile=opts.profile,
        fail_on=Severity.parse(opts.fail_on),
        color=opts.color,
        timeline=opts.timeline,
        quiet=opts.quiet and command != "proxy",
        show=Severity.parse(opts.show or "info"),
        clients=opts.clients or clients,
        clients_required=opts.clients_required,
        compact=compact,
    )


def save_dir(text: str | None) -> Path | None:
    """``--save DIR``: the folder, created if needed; a UsageError when it is a file."""
    from pathlib import Path

    if not text:
        return None
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise UsageError(f"--save {text}: not a directory")
    path.mkdir(parents=True, exist_ok=True)
    return path


def check_output(path: str | None) -> None:
    """Refuse ``-o PATH`` before any work is done when the report could not be written there."""
    if path is None or path == "-":
        return
    from pathlib import Path

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
    from pathlib import Path

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


def baseline_run(opts: EngineArgs) -> BaselineRun:
    """The run's baseline use from ``--baseline`` / ``--write-baseline`` (inactive when neither is given).

    Callers pass every result through ``run.apply(scenario, result)`` before
    reporting and counting it, then call :func:`finish_baseline`.
    """
    from pathlib import Path

    from checker.baseline import BaselineRun
    from checker.baseline import load as load_baseline

    known = load_baseline(Path(opts.baseline)) if opts.baseline else None
    anchor = opts.write_baseline or opts.baseline
    base = Path(anchor).parent if anchor else None
    return BaselineRun(known, record=bool(opts.write_baseline), profile=opts.profile,
                       base=base if base is not None and str(base) else Path("."))


def finish_baseline(opts: EngineArgs, run: BaselineRun) -> None:
    """Write ``--write-baseline FILE`` (atomically) and say so on stderr."""
    from pathlib import Path

    if run.recorded is None or opts.write_baseline is None:
        return
    from checker.baseline import save as save_baseline

    path = Path(opts.write_baseline)
    save_baseline(path, run.recorded)
    print(f"sse-check: wrote {path}: {run.recorded.total()} finding(s), "
          f"{len(run.recorded.entries)} fingerprint(s); --baseline {path} now reports only new ones",
          file=sys.stderr)


def warn_unmatched_baseline(opts: EngineArgs, run: BaselineRun) -> None:
    """A baseline none of whose entries matched is a mistake (other captures, or named differently): say so."""
    if run.matched_none:
        print(f"sse-check: warning: --baseline {opts.baseline}: {run.note()}: was it written for these captures "
              "(or with another profile)?", file=sys.stderr)
