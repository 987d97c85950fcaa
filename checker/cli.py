"""Argument parsing for ``sse-check``: one sub-command per module.

Each command module (``checker/commands/``) exposes ``HELP`` (one line),
``add_arguments(parser)``, ``options(namespace)`` (its typed options dataclass,
built from the parser's result) and ``run(options) -> int``. Parsing lives
here and in ``options``; past it no ``argparse.Namespace`` travels, and the
command modules hand plain data to the engine. Every failure the user can cause
reaches them as one line on stderr and exit code 2, never a traceback
(set ``SSE_CHECK_DEBUG=1`` to see one).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from checker.version import __version__
from checker.errors import UsageError

# Command name -> module. Imported lazily so `sse-check rules` does not pay for
# httpx or uvicorn.
COMMANDS: dict[str, str] = {
    "lint": "checker.commands.lint",
    "rules": "checker.commands.rules",
    "serve": "checker.commands.serve",
    "probe": "checker.commands.probe",
    "replay": "checker.commands.replay",
    "diff": "checker.commands.diff",
    "proxy": "checker.commands.proxy",
}

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2


class Parser(argparse.ArgumentParser):
    """argparse, with every mistake reported as one line naming the command and where its help is (not the
    usage block, which hides the one line that matters at 80 columns)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: {message} (see `{self.prog} --help`)\n")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; given a known ``command``, only that command's module is imported (a lint of a big capture
    should not carry httpx and uvicorn in its memory)."""
    parser = Parser(
        prog="sse-check",
        description="Conformance checker for streamed OpenAI Responses API (SSE) captures and servers.",
        epilog="`sse-check COMMAND --help` shows a command's options and examples; `sse-check rules CODE` "
               "explains a rule.",
    )
    parser.add_argument("--version", action="version", version=f"sse-check {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    chosen = {command: COMMANDS[command]} if command in COMMANDS else COMMANDS
    for name, module_name in chosen.items():
        module = importlib.import_module(module_name)
        cmd = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(cmd)
        cmd.set_defaults(_run=module.run, _options=module.options, _parser=cmd)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run sse-check on ``argv`` (default: the process's arguments) and return its exit code."""
    words = list(sys.argv[1:] if argv is None else argv)
    # Top-level options come before the command, and none takes a value: the first word is the command.
    command = next((w for w in words if not w.startswith("-")), None)
    return _main(words, command)


def entry() -> int:
    """The ``sse-check`` console script and ``python -m checker``."""
    return main(None)


def _main(words: list[str], command: str | None) -> int:
    parser = build_parser(command)
    args, unknown = parser.parse_known_args(words)
    if unknown:  # named by the command they were given to, not by the top-level parser
        getattr(args, "_parser", parser).error(f"unrecognized arguments: {' '.join(unknown)}")
    if not getattr(args, "_run", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        if hasattr(args, "isolated"):  # a command that runs the engine: [tool.sse-check] fills what is unset
            from checker.commands import config

            config.apply(args)
            if getattr(args, "show_settings", False):
                print("\n".join(config.show_settings(args)))
                return EXIT_OK
        return int(args._run(args._options(args)))
    except UsageError as exc:
        print(f"sse-check: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # `sse-check lint ... | head`: the reader has what it wanted (before OSError)
        return _quiet_broken_pipe()
    except OSError as exc:
        where = f": {exc.filename}" if getattr(exc, "filename", None) else ""
        print(f"sse-check: {exc.strerror or exc}{where}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("sse-check: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - the last line of defence: no traceback for users
        if os.environ.get("SSE_CHECK_DEBUG"):
            raise
        print(
            f"sse-check: internal error: {type(exc).__name__}: {exc} "
            "(please report it; SSE_CHECK_DEBUG=1 shows the traceback)",
            file=sys.stderr,
        )
        return EXIT_USAGE


def _quiet_broken_pipe() -> int:
    """Exit 0 without "Broken pipe" or "Exception ignored": Python flushes stdout once more at exit, which
    would fail again on the closed pipe, so stdout is pointed at /dev/null first (as the Python docs advise)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout without a file descriptor (a test's StringIO)
        pass
    return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(entry())
