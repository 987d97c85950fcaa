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
import gc
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from checker import dataclass_cache
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

    # argparse makes a help formatter at every add_argument only to check the metavar against nargs; the
    # formatter's width (shutil's terminal size, and shutil's import, a tenth of a small lint's start-up beyond
    # the interpreter's) matters only when help is written, so the check gets a formatter of a fixed width.
    _checking_metavar = False

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        self._checking_metavar = True
        try:
            return super().add_argument(*args, **kwargs)
        finally:
            self._checking_metavar = False

    def _get_formatter(self) -> argparse.HelpFormatter:
        if self._checking_metavar:
            return self.formatter_class(prog=self.prog, width=80)  # type: ignore[call-arg]  # argparse's all take it
        return super()._get_formatter()


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
    # prog as argparse would make it (the usage of a parser with no positional yet: its name), without the
    # formatter it would make for that (see Parser._get_formatter)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser, prog=parser.prog)
    chosen = {command: COMMANDS[command]} if command in COMMANDS else COMMANDS
    for name, module_name in chosen.items():
        module = importlib.import_module(module_name)
        cmd = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(cmd)
        cmd.set_defaults(_run=module.run, _options=module.options, _parser=cmd)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run sse-check on ``argv`` (default: the process's arguments) and return its exit code. A program that calls
    it gets its process back as it was: its own dataclasses, its garbage collector."""
    return _program(argv, exiting=False)


def entry() -> int:
    """The ``sse-check`` console script and ``python -m checker``: :func:`main` for a process that ends when it
    returns, so the start-up's objects stay frozen (see :class:`_StartupCollector`)."""
    return _program(None, exiting=True)


def _program(argv: Sequence[str] | None, *, exiting: bool) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    # Top-level options come before the command, and none takes a value: the first word is the command.
    command = next((w for w in words if not w.startswith("-")), None)
    # The dataclasses' generated methods compiled once per installation, not at every start-up (a quarter of a
    # small lint's start-up otherwise; checker/dataclass_cache.py), in a table per command: before any command
    # module is imported.
    dataclass_cache.install(command if command in COMMANDS else "help")
    collector = _StartupCollector()
    try:
        return _main(words, command, collector)
    finally:
        collector.restore(exiting=exiting)
        dataclass_cache.save()
        dataclass_cache.uninstall()  # a program that called main() keeps its own dataclasses afterwards


class _StartupCollector:
    """The cyclic garbage collector during start-up. Importing a command allocates tens of thousands of objects
    that live as long as the process (functions, classes, module dicts, the rule registry); the collector
    traversed them at each collection while they were made, at every full one afterwards and once more when
    the interpreter exits: a sixth of a small lint's instructions. So it is off while the command is imported
    and its arguments parsed, and what exists then is frozen (gc.freeze: left out of every later collection)
    before the command runs with the collector on, as it does for any big archive.

    For a process that ends with the command (:func:`entry`) the frozen objects stay frozen: the interpreter's
    last collection at exit skips them. A program that called :func:`main` gets them back into its collections
    (gc.unfreeze), so garbage of its own made before the call is still collected; one that froze objects
    itself, or had the collector off, is left as it was."""

    def __init__(self) -> None:
        self.enabled = gc.isenabled()
        self.freezing = self.enabled and gc.get_freeze_count() == 0
        gc.disable()

    def started(self) -> None:
        """The command is imported and its arguments parsed: what exists now lives as long as the run."""
        if self.freezing:
            gc.freeze()
        if self.enabled:
            gc.enable()

    def restore(self, *, exiting: bool) -> None:
        if self.freezing and not exiting:
            gc.unfreeze()
        self.freezing = False
        if self.enabled:
            gc.enable()


def _main(words: list[str], command: str | None, collector: _StartupCollector) -> int:
    parser = build_parser(command)
    args, unknown = parser.parse_known_args(words)
    if unknown:  # named by the command they were given to, not by the top-level parser
        getattr(args, "_parser", parser).error(f"unrecognized arguments: {' '.join(unknown)}")
    if not getattr(args, "_run", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    collector.started()
    try:
        if hasattr(args, "isolated"):  # a command that runs the engine: [tool.sse-check] fills what is unset
            from checker.commands import config

            config.apply(args)
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
