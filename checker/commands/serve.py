"""``sse-check serve CAPTURES --port P``: replay saved captures as a real HTTP server.

This module only turns options into a :class:`checker.live.serve.Replayer` and runs it under uvicorn;
what the server answers is decided in ``checker.live.serve`` and ``checker.live.faults``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from checker.errors import UsageError
from checker.live.server import bind_socket, configure_logging, is_loopback, make_server
from checker.live.faults import FAULTS, FaultError, Faults, FaultSpec, parse_value

HELP = "serve saved captures byte for byte as a real HTTP server, with faults"

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000

EPILOG = """\
examples:
  sse-check serve captures/llama.cpp --port 8000
  sse-check serve captures/rules --default ITM011-interleaved-items --port 0
  sse-check serve captures/llama.cpp --chunk-size 1 --delay 5 --log

endpoints:
  POST /v1/responses, /responses        replay a Responses capture
  POST /v1/chat/completions, /chat/completions
                                        replay a chat capture
  GET  /v1/models                       the scenario names as models
  GET  /health                          {"status":"ok"}

which capture answers a request (the first that applies):
  1. the header X-SSE-Check-Scenario: NAME (NAME is the capture's file stem)
  2. the body's "model" equal to a scenario name
  3. a recorded NAME.request.json with the same input, instructions,
     messages, tools, tool_choice, max_output_tokens, reasoning, ...
     (model, stream and sampling are ignored)
  4. --default NAME
  otherwise 404 with a JSON error listing the scenarios. "stream": false
  gets NAME.nonstream.json (404 if absent); NAME.headers.txt gives the
  status and headers.

faults: the flags above apply to every response; one request can set or
override them with
  X-SSE-Check-Fault: name=value;name=value
  e.g. chunk-size=1;delay=5;disconnect-after=300
  (values are percent-decoded: write a ";" inside a value as %3B;
  "keep-open" alone means 30 s; "name=off" switches a command-line fault
  off for that request). Every replayed response says which capture it is
  in X-SSE-Check-Scenario and how it was chosen in X-SSE-Check-Selected-By.

On start it prints one line, "serving N captures on http://HOST:PORT", to
stdout. SIGINT or SIGTERM stops it (exit 0), ending open streams.
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EPILOG
    parser.add_argument("captures", nargs="+", metavar="CAPTURES",
                        help="capture files (*.sse) or directories of them (searched recursively)")
    parser.add_argument("--host", default=DEFAULT_HOST,
                        help=f"address to listen on (default: {DEFAULT_HOST}; a warning if not loopback)")
    parser.add_argument("--port", type=_port, default=DEFAULT_PORT,
                        help=f"port to listen on; 0 picks a free one (default: {DEFAULT_PORT})")
    parser.add_argument("--default", metavar="NAME", help="the capture for requests that select no scenario")
    parser.add_argument("--log", action="store_true", help="log each request (and server events) to stderr")
    group = parser.add_argument_group("faults (for every response; X-SSE-Check-Fault sets them per request)")
    for spec in FAULTS:
        group.add_argument(spec.flag, dest=_dest(spec), metavar=spec.metavar, type=_fault_type(spec), help=spec.help)


def _dest(spec: FaultSpec) -> str:
    return f"fault_{spec.field}"


def _fault_type(spec: FaultSpec) -> Callable[[str], Any]:
    def convert(text: str) -> Any:
        try:
            return parse_value(spec.name, text)
        except FaultError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = spec.name  # argparse names the type in its error message
    return convert


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0-65535: {text!r}")
    return value


@dataclass(frozen=True, slots=True, kw_only=True)
class ServeOptions:
    captures: tuple[str, ...]
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    default: str | None = None
    log: bool = False
    faults: Faults = field(default_factory=Faults)  # for every response (X-SSE-Check-Fault adds per request)


def options(args: argparse.Namespace) -> ServeOptions:
    """The parser's result as serve's typed options."""
    given = {spec.field: getattr(args, _dest(spec)) for spec in FAULTS}
    faults = Faults(**{name: value for name, value in given.items() if value is not None})
    return ServeOptions(captures=tuple(args.captures), host=args.host, port=args.port, default=args.default,
                        log=args.log, faults=faults)


def run(opts: ServeOptions) -> int:
    try:
        import uvicorn  # noqa: F401 - the optional extra
        from checker.live.serve import Catalogue, Replayer
    except ImportError as exc:
        raise UsageError(f"serve needs the optional dependencies ({exc.name} is missing): install sse-check "
                         "with its serve extra (pip install '.[serve]' in a checkout)") from None

    catalogue = Catalogue.from_paths(list(opts.captures))
    replayer = Replayer(catalogue, faults=opts.faults, default=opts.default)
    sock = bind_socket(opts.host, opts.port)
    host, port = sock.getsockname()[:2]
    if not is_loopback(host):
        print(f"sse-check: warning: listening on {host}, not a loopback address: anyone who can reach "
              "this machine can read the captures", file=sys.stderr)
    url_host = f"[{host}]" if ":" in host else host
    announce = f"serving {len(catalogue)} captures on http://{url_host}:{port}"
    configure_logging("sse-check serve", verbose=opts.log)
    server = make_server(replayer.app, announce=announce, access_log=opts.log, on_shutdown=replayer.close,
                         websocket=True)
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
    return 0
