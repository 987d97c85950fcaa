"""The uvicorn server behind ``sse-check serve`` and ``sse-check proxy``: one setup for both.

Both announce their address on stdout once listening (tests and scripts read it), end
their open streams before uvicorn's graceful shutdown, and treat SIGINT/SIGTERM as the
normal way to stop (exit 0, no KeyboardInterrupt, no -15).
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import signal
import socket
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any

from checker.errors import UsageError

# How long a shutdown waits for responses still being written before it cancels them. Open
# streams (stalls, keep-open, proxied answers) are ended at once by the owner's on_shutdown,
# so this is only a safety net.
SHUTDOWN_GRACE_S = 3

# The ASGI scope key by which an application (the replay server's ``close`` fault) asks that the connection be
# closed the moment its response has been written. The protocol of :func:`make_server` reads it in the very
# step that writes the last chunk, so that the FIN follows the chunk at once, as from a server that closes after
# each answer (llama-server): the probe watches for the close only briefly (checker.live.connection
# CLOSE_WATCH_S), and a close left to the application's unwinding (its tasks, the middleware, the server's error
# path) came later than that when the machine was loaded.
CLOSE_AFTER_RESPONSE = "sse_check.close_after_response"


class ClosingOnPurpose(Exception):
    """Raised after a complete response to make the server close the connection (the ``close`` fault)."""


class OnPurposeFilter(logging.Filter):
    """Drops uvicorn's complaint about a response left unfinished or failed: the replay server does that on
    purpose (``disconnect-after``, a shutdown during a stall, :class:`ClosingOnPurpose`)."""

    _MESSAGES = (
        "ASGI callable returned without completing response.",
        "ASGI callable returned without starting response.",
    )

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and isinstance(record.exc_info[1], ClosingOnPurpose):
            return False
        return record.msg not in self._MESSAGES


def configure_logging(prefix: str, *, verbose: bool) -> None:
    """uvicorn's log on stderr as one-line ``prefix: message`` records, warnings only unless verbose."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(f"{prefix}: %(message)s"))
    # Connections dropped on purpose (an injected disconnect, an upstream cut) are not errors.
    handler.addFilter(OnPurposeFilter())
    logger = logging.getLogger("uvicorn")
    logger.handlers = [handler]
    logger.setLevel(logging.INFO if verbose else logging.WARNING)
    logger.propagate = False


def make_server(
    app: Any,
    *,
    announce: str,
    access_log: bool,
    on_shutdown: Callable[[], None],
    after_shutdown: Callable[[], Awaitable[None]] | None = None,
    date_header: bool = True,
    websocket: bool = False,
) -> Any:
    """A uvicorn server for ``app`` (h11, no lifespan, no Server header: the recorded or upstream one is sent);
    with ``websocket``, WebSocket upgrades too (the websockets package; serve's WebSocket mode)."""
    import uvicorn
    from uvicorn.config import WS_PROTOCOLS

    class Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if self.started and not self.should_exit:
                print(announce, flush=True)

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            on_shutdown()
            await super().shutdown(sockets)
            if after_shutdown is not None:
                await after_shutdown()

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            # uvicorn re-raises the signal after a graceful shutdown (SIGTERM would end the process with
            # status -15, SIGINT with a KeyboardInterrupt); stopping these servers is how they are used.
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            previous = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
            try:
                yield
            finally:
                for sig, handler in previous.items():
                    signal.signal(sig, handler)

    config = uvicorn.Config(
        app,
        http=_h11_protocol(),
        # asyncio's own loop, never uvloop when it happens to be installed (uvicorn's "auto"): the replayed close
        # and the proxy's forwarding are written and tested against asyncio's transports.
        loop="asyncio",
        ws=("websockets-sansio" if "websockets-sansio" in WS_PROTOCOLS else "websockets") if websocket else "none",
        lifespan="off",
        log_config=None,
        access_log=access_log,
        server_header=False,
        date_header=date_header,
        timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
    )
    return Server(config)


def _h11_protocol() -> type[Any]:
    """uvicorn's h11 protocol, which closes the connection as soon as a response whose scope asks for it
    (:data:`CLOSE_AFTER_RESPONSE`) is complete."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class ClosingH11Protocol(H11Protocol):
        def on_response_complete(self) -> None:
            # uvicorn calls this in the same step that wrote the response's last chunk. write_eof() sends the FIN
            # now if the kernel has taken every byte, else as soon as it has (close() alone would wait for
            # the event loop's next turn, which a loaded machine delays); close() then ends the connection.
            scope: Mapping[str, object] = self.scope  # an ASGI scope takes extra keys
            if scope.get(CLOSE_AFTER_RESPONSE) and not self.transport.is_closing():
                if self.transport.can_write_eof():
                    with contextlib.suppress(OSError):  # the client has gone already: nothing to tell it
                        self.transport.write_eof()
                self.transport.close()
            super().on_response_complete()

    return ClosingH11Protocol


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening-ready socket on host:port (port 0: any free one); a UsageError says why not."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return sock


def is_loopback(host: str) -> bool:
    """Whether a listen address is loopback only (anything else exposes the server to the network)."""
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False
