"""Argument parsing for ``sse-check``: one sub-command per module.

Each command module exposes ``HELP`` (one line), ``add_arguments(parser)`` and
``run(args) -> int``. Parsing lives here; the work lives in the command
modules, which hand plain data to the engine. Every failure the user can cause
reaches them as one line on stderr and exit code 2, never a traceback
(set ``SSE_CHECK_DEBUG=1`` to see one).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from checker import __version__
from checker.errors import UsageError

# Command name -> module. Imported lazily so `sse-check rules` does not pay for
# httpx or uvicorn.
COMMANDS: dict[str, str] = {
    "lint": "checker.commands.lint",
    "rules": "checker.commands.rules",
    "serve": "checker.live.serve_command",
    "probe": "checker.live.probe_command",
    "replay": "checker.replay.command",
    "diff": "checker.commands.diff",
    "proxy": "checker.live.proxy_command",
}

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; given a known ``command``, only that command's module is imported (a lint of a big capture
    should not carry httpx and uvicorn in its memory)."""
    parser = argparse.ArgumentParser(
        prog="sse-check",
        description="Conformance checker for streamed OpenAI Responses API (SSE) captures and servers.",
    )
    parser.add_argument("--version", action="version", version=f"sse-check {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    chosen = {command: COMMANDS[command]} if command in COMMANDS else COMMANDS
    for name, module_name in chosen.items():
        module = importlib.import_module(module_name)
        cmd = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(cmd)
        cmd.set_defaults(_run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    # Top-level options come before the command, and none takes a value: the first word is the command.
    parser = build_parser(next((w for w in words if not w.startswith("-")), None))
    args = parser.parse_args(words)
    if not getattr(args, "_run", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return int(args._run(args))
    except UsageError as exc:
        print(f"sse-check: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:
        where = f": {exc.filename}" if getattr(exc, "filename", None) else ""
        print(f"sse-check: {exc.strerror or exc}{where}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("sse-check: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # pragma: no cover - `sse-check lint ... | head`
        return EXIT_OK
    except Exception as exc:  # noqa: BLE001 - the last line of defence: no traceback for users
        if os.environ.get("SSE_CHECK_DEBUG"):
            raise
        print(
            f"sse-check: internal error: {type(exc).__name__}: {exc} "
            "(please report it; SSE_CHECK_DEBUG=1 shows the traceback)",
            file=sys.stderr,
        )
        return EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
