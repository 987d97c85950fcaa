"""``sse-check replay CASES.json...``: check how a client sends reasoning back.

Runs the cases of one or more case files against a target and reports each
case as passed, failed (with the differences and a unified diff) or skipped
(a case of another dialect than the target speaks). Exit codes: 0 every case
run passed, 1 at least one failed, 2 usage or I/O error.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import IO, Any

from rich.table import Table
from rich.text import Text

from checker import __version__
from checker.commands.common import check_output, open_output, positive_seconds
from checker.console import make_console
from checker.errors import UsageError
from checker.replay.cases import (
    DEFAULT_DIALECT,
    DEFAULT_TIMEOUT_S,
    CaseResult,
    Program,
    PythonFunction,
    Reference,
    Target,
    load_case_file,
    run_cases,
)
from checker.replay.dialects import DEFAULT_FIELD, DIALECTS, FIELDS

HELP = "check the messages a client sends back (reasoning replay) against case files"
REPORT_VERSION = 1
FORMATS = ("text", "json", "junit", "markdown", "github")  # the CI ones: checker/replay/formats.py


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
    parser.add_argument("--format", default="text", choices=FORMATS, help="report format (default: text)")
    parser.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE instead of stdout")
    parser.add_argument("--color", default="auto", choices=["auto", "always", "never"],
                        help="colour in the text report (NO_COLOR is honoured)")
    from checker.replay import live_command  # the live replay's options: --live URL --model M ...

    live_command.add_arguments(parser)



def make_target(args: argparse.Namespace) -> Target:
    if args.field is not None and (args.impl or args.cmd):
        raise UsageError("--field applies to the built-in reference, not to --impl or --cmd")
    if args.field is not None and args.dialect not in (None, "openai-chat"):
        raise UsageError("--field applies to the openai-chat dialect only")
    dialect = args.dialect or DEFAULT_DIALECT
    if args.impl:
        return PythonFunction.load(args.impl, dialect=dialect)
    if args.cmd is not None:
        return Program.parse(args.cmd, timeout=args.timeout, dialect=dialect)
    return Reference(dialect=args.dialect, field=args.field or DEFAULT_FIELD)


def run(args: argparse.Namespace) -> int:
    if getattr(args, "live", None):
        from checker.replay import live_command

        return live_command.run_replay_command(args)
    if not args.files:
        raise UsageError("replay needs case files (CASES.json...) or --live URL")
    check_output(args.output)
    cases = []
    for name in args.files:
        loaded = load_case_file(Path(name))
        if not loaded:
            raise UsageError(f"{name}: no cases")
        cases.extend(loaded)
    target = make_target(args)
    results = run_cases(cases, target)
    with open_output(args.output) as stream:
        if args.format == "json":
            json.dump(report_document(results, target, args.files), stream, indent=2, ensure_ascii=False)
            stream.write("\n")
        elif args.format in ("junit", "markdown", "github"):
            from checker.replay.formats import RENDERERS

            RENDERERS[args.format](results, target, stream)
        else:
            render_text(results, target, stream, color=args.color)
    return 1 if any(r.status == "failed" for r in results) else 0


# --- reports ------------------------------------------------------------------


def summary(results: list[CaseResult]) -> dict[str, int]:
    return {
        "cases": len(results),
        "passed": sum(r.status == "passed" for r in results),
        "failed": sum(r.status == "failed" for r in results),
        "skipped": sum(r.status == "skipped" for r in results),
    }


def case_dict(result: CaseResult) -> dict[str, Any]:
    case = result.case
    return {
        "file": case.file,
        "case": case.number,
        "about": case.about,
        "dialect": case.dialect,
        "status": result.status,
        "passed": None if result.status == "skipped" else result.passed,
        "error": result.error,
        "diff": [d.as_dict() for d in result.differences],
        "unified_diff": result.unified or None,
        "actual": result.actual if result.status == "failed" else None,
    }


def report_document(results: list[CaseResult], target: Target, files: list[str]) -> dict[str, Any]:
    """The JSON report: one versioned document per run."""
    return {
        "version": REPORT_VERSION,
        "tool": {"name": "sse-check", "version": __version__},  # the same shape in every command's report
        "command": "replay",
        "target": {"kind": target.kind, "label": target.label},
        "files": files,
        "cases": [case_dict(r) for r in results],
        "summary": summary(results),
    }


DETAIL_INDENT = " " * 10  # under the "about" column
VERDICT = {"passed": ("ok  ", "bold green"), "failed": ("FAIL", "bold red"), "skipped": ("skip", "dim")}


def render_text(results: list[CaseResult], target: Target, stream: IO[str], *, color: str = "auto") -> None:
    console = make_console(stream, color)
    console.print(Text.assemble("replay against ", (target.label, "bold")))
    current_file = None
    for result in results:
        case = result.case
        if case.file != current_file:
            current_file = case.file
            console.print(Text(case.file, style="bold"))
        word, style = VERDICT[result.status]
        about = Text(case.about or "(no about)")
        if result.status == "skipped":
            about.append(f"  ({result.error}; the target speaks another dialect)", style="dim")
        row = Table.grid(padding=(0, 1))
        row.add_column(width=6)  # "  ok  " / "  FAIL"
        row.add_column(width=2, justify="right")
        row.add_column()
        row.add_row(Text.assemble("  ", (word, style)), Text(str(case.number), style="dim"), about)
        console.print(row)
        if result.status != "failed":
            continue
        if result.error:
            console.print(Text.assemble(DETAIL_INDENT, (result.error, "red")))
        for difference in result.differences:
            console.print(Text.assemble(DETAIL_INDENT, (difference.text, "yellow")))
        if result.unified:
            for diff_line in result.unified.splitlines():
                console.print(Text(DETAIL_INDENT + diff_line, style=_diff_style(diff_line)))
    counts = summary(results)
    tail = Text(f"\n{counts['cases']} cases: ")
    tail.append(f"{counts['passed']} passed", style="green" if counts["passed"] else "")
    tail.append(", ")
    tail.append(f"{counts['failed']} failed", style="bold red" if counts["failed"] else "")
    if counts["skipped"]:
        tail.append(f", {counts['skipped']} skipped", style="dim")
    console.print(tail)


def _diff_style(line: str) -> str:
    if line.startswith(("---", "+++")):
        return "bold"
    if line.startswith("@@"):
        return "cyan"
    if line.startswith("-"):
        return "red"
    if line.startswith("+"):
        return "green"
    return "dim"
