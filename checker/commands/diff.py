"""``sse-check diff OLD NEW``: what changed between two builds' streams.

OLD and NEW are two captures, or two directories of captures paired by
scenario name (the path below the directory, without ``.sse``). Prints the
changes in words; exit 1 when anything changed (grammar, fields, findings,
final output, a scenario missing on one side), 0 when nothing did, 2 on
usage or I/O errors.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from rich.text import Text

from checker import dialects
from checker.captures import CAPTURE_SUFFIX, read_chunks, request_for
from checker.commands.common import open_output
from checker.dialects.base import Dialect
from checker.diff import Change, ShapeBuilder, StreamShape, compare
from checker.engine import EngineOptions, LintResult
from checker.errors import UsageError
from checker.profiles import PROFILES, get_profile
from checker.version import __version__

HELP = "compare two builds' captures of the same scenarios: grammar, findings, output"

EPILOG = """\
examples:
  sse-check diff old.sse new.sse
  sse-check diff streams-main/ streams-pr/          paired by scenario name
  sse-check diff streams-main/ streams-pr/ --format json -o changes.json

Two directories are paired by scenario (the path below the directory,
without .sse); a scenario on one side only is a change too.

Exit codes: 0 nothing changed, 1 something did, 2 a usage or I/O error.
"""
REPORT_VERSION = 1
ASPECTS = {"dialect": "dialect", "grammar": "event grammar", "fields": "fields", "findings": "findings",
           "http": "HTTP exchange (the probe's X.meta.json)", "output": "final output", "scenario": "scenarios"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EPILOG
    parser.add_argument("old", metavar="OLD", help="the earlier build's capture, or a directory of them")
    parser.add_argument("new", metavar="NEW", help="the later build's capture, or a directory of them")
    parser.add_argument("--profile", default="openai", choices=sorted(PROFILES), metavar="NAME",
                        help="the profile both sides are linted under for the findings: "
                             f"{', '.join(sorted(PROFILES))} (default: openai)")
    parser.add_argument("--dialect", metavar="NAME", choices=dialects.names(), default=None,
                        help="read both sides as this API's streams (one of: " + ", ".join(dialects.names())
                             + "); default: each capture's own, as lint decides it")
    parser.add_argument("--format", default="text", choices=["text", "json"], help="report format (default: text)")
    parser.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE instead of stdout")
    parser.add_argument("--color", default="auto", choices=["auto", "always", "never"],
                        help="colour in the text report (NO_COLOR is honoured)")


@dataclass(slots=True)
class ScenarioDiff:
    name: str
    old: str | None
    new: str | None
    changes: list[Change] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"scenario": self.name, "old": self.old, "new": self.new, "changed": bool(self.changes),
                "changes": [c.as_dict() for c in self.changes]}


def pair(old: Path, new: Path) -> list[tuple[str, Path | None, Path | None]]:
    """(scenario, old file, new file): one pair for two files, by scenario name for two directories."""
    if old.is_dir() != new.is_dir():
        raise UsageError("OLD and NEW must both be captures or both be directories")
    if not old.is_dir():
        for path in (old, new):
            if not path.is_file():
                raise UsageError(f"{path}: no such capture")
        return [(old.name.removesuffix(CAPTURE_SUFFIX), old, new)]
    a, b = _scenarios(old), _scenarios(new)
    if not a and not b:
        raise UsageError(f"no {CAPTURE_SUFFIX} captures in {old} or {new}")
    return [(name, a.get(name), b.get(name)) for name in sorted(a.keys() | b.keys())]


def _scenarios(directory: Path) -> dict[str, Path]:
    return {
        p.relative_to(directory).as_posix().removesuffix(CAPTURE_SUFFIX): p
        for p in sorted(directory.rglob(f"*{CAPTURE_SUFFIX}")) if p.is_file()
    }


def read(path: Path, options: EngineOptions) -> tuple[StreamShape, LintResult]:
    """One pass over a capture: its shape and its lint, as ``sse-check lint`` lints it (with the HTTP findings
    of the exchange recorded in ``X.meta.json`` for a capture saved by ``sse-check probe --save``)."""
    from checker.lint_job import linter_for

    linter = linter_for(path, request_for(path), options)
    builder = ShapeBuilder(_decided(linter, options))
    for chunk in read_chunks(path):
        builder.feed(chunk)
        linter.feed(chunk)
    return builder.close(), linter.close()


def _decided(linter: Any, options: EngineOptions) -> Dialect | None:
    """The dialect lint decided before the stream (``--dialect``, or the endpoint a probe's ``X.meta.json``
    recorded); None: the first event object decides, for the shape as for the lint."""
    if options.dialect is not None:
        return dialects.get(options.dialect)
    from checker.http_checks import ExchangeLinter

    return linter.dialect if isinstance(linter, ExchangeLinter) else None


def diff_pair(name: str, old: Path | None, new: Path | None, options: EngineOptions) -> ScenarioDiff:
    result = ScenarioDiff(name, str(old) if old else None, str(new) if new else None)
    if old is None or new is None:
        side = "NEW" if new is None else "OLD"
        kind = "missing" if new is None else "added"
        text = f"scenario {name} is missing in {side}" if new is None else f"scenario {name} is new (not in OLD)"
        result.changes.append(Change(aspect="scenario", kind=kind, text=text, details={"scenario": name}))
        return result
    old_shape, old_lint = read(old, options)
    new_shape, new_lint = read(new, options)
    result.changes = compare(old_shape, new_shape, old_lint.findings, new_lint.findings)
    return result


@dataclass(frozen=True, slots=True, kw_only=True)
class DiffOptions:
    old: str
    new: str
    profile: str = "openai"
    dialect: str | None = None
    format: str = "text"
    output: str | None = None
    color: str = "auto"


def options(args: argparse.Namespace) -> DiffOptions:
    """The parser's result as diff's typed options."""
    return DiffOptions(old=args.old, new=args.new, profile=args.profile, dialect=args.dialect, format=args.format,
                       output=args.output, color=args.color)


def run(opts: DiffOptions) -> int:
    # Both sides under the same profile, with the engine's default limits.
    options = EngineOptions(profile=get_profile(opts.profile), dialect=opts.dialect)
    pairs = pair(Path(opts.old), Path(opts.new))
    diffs = [diff_pair(name, a, b, options) for name, a, b in pairs]
    with open_output(opts.output) as stream:
        if opts.format == "json":
            json.dump(document(diffs, opts), stream, indent=2, ensure_ascii=False)
            stream.write("\n")
        else:
            render_text(diffs, stream, color=opts.color)
    return 1 if any(d.changes for d in diffs) else 0


def document(diffs: list[ScenarioDiff], opts: DiffOptions) -> dict[str, Any]:
    return {
        "version": REPORT_VERSION,
        "tool": {"name": "sse-check", "version": __version__},
        "command": "diff",
        "profile": opts.profile,
        "old": opts.old,
        "new": opts.new,
        "changed": any(d.changes for d in diffs),
        "scenarios": [d.as_dict() for d in diffs],
        "summary": {"scenarios": len(diffs), "changed": sum(bool(d.changes) for d in diffs)},
    }


STYLE = {"new": "red", "gone": "green", "moved": "yellow", "renamed": "yellow", "dropped": "red",
         "added": "cyan", "disappeared": "red", "appeared": "cyan", "missing": "red"}


def render_text(diffs: list[ScenarioDiff], stream: IO[str], *, color: str = "auto") -> None:
    from checker.console import make_console

    console = make_console(stream, color)
    for d in diffs:
        verdict = Text("changed", style="bold yellow") if d.changes else Text("same", style="bold green")
        sides = f"{d.old or '(none)'} → {d.new or '(none)'}"
        console.print(Text.assemble(verdict, " ", (d.name, "bold"), f"  ({sides})"))
        for aspect, title in ASPECTS.items():
            changes = [c for c in d.changes if c.aspect == aspect]
            if not changes:
                continue
            console.print(Text(f"  {title}", style="bold"))
            for change in changes:
                console.print(Text(f"    - {change.text}", style=STYLE.get(change.kind, "")))
    changed = sum(bool(d.changes) for d in diffs)
    console.print(f"{len(diffs)} scenario(s): {changed} changed, {len(diffs) - changed} the same")
