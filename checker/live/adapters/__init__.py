"""The request adapters, one per dialect, looked up by the dialect's name (checker.dialects' names).

Adding a dialect to the live side (probe, proxy, serve, the live replay) is adding a
:class:`~checker.live.adapters.base.RequestAdapter` here; no module branches on a dialect's name.
"""

from __future__ import annotations

from checker.live.adapters.base import Accumulator, ReplayScript, RequestAdapter
from checker.live.adapters.chat import ChatAdapter
from checker.live.adapters.messages import MessagesAdapter
from checker.live.adapters.responses import ResponsesAdapter

__all__ = ["ADAPTERS", "Accumulator", "ReplayScript", "RequestAdapter", "for_path", "for_request", "for_stream",
           "get", "names"]

# By name. Responses is the default: a request or stream that no other adapter recognises is taken as one
# (as a server of the Responses API would take it); the others are tried first, in this order.
DEFAULT = ResponsesAdapter()
# Messages before chat: both have `messages`; Messages claims a request only by what chat lacks.
ADAPTERS: dict[str, RequestAdapter] = {adapter.name: adapter for adapter in (DEFAULT, MessagesAdapter(),
                                                                             ChatAdapter())}
_ALIASES = {alias: adapter for adapter in ADAPTERS.values() for alias in adapter.aliases}


def get(name: str) -> RequestAdapter:
    """The adapter of dialect ``name`` (or of one of its aliases: the replay's ``openai-chat``)."""
    adapter = ADAPTERS.get(name) or _ALIASES.get(name)
    if adapter is None:
        raise ValueError(f"no request adapter for the dialect {name!r} (known: {', '.join(names())})")
    return adapter


def names() -> list[str]:
    return list(ADAPTERS)


def for_path(path: str) -> RequestAdapter | None:
    """The adapter whose endpoint a request path is (``/v1/responses``, ``/v1/chat/completions``), if any."""
    path = path.rstrip("/")
    return next((a for a in ADAPTERS.values() if path.endswith(a.endpoint)), None)


def _others() -> list[RequestAdapter]:
    return [a for a in ADAPTERS.values() if a is not DEFAULT]


def for_request(request: object) -> RequestAdapter:
    """The adapter a request body belongs to, when no endpoint says (the default: Responses)."""
    if isinstance(request, dict):
        return next((a for a in _others() if a.is_request(request)), DEFAULT)
    return DEFAULT


def for_stream(head: bytes) -> RequestAdapter:
    """The adapter a streamed answer belongs to, from its first bytes (the default: Responses)."""
    return recognise_stream(head) or DEFAULT


def recognise_stream(head: bytes) -> RequestAdapter | None:
    """The adapter whose stream a body's first bytes show, if any (None: no stream of a known dialect)."""
    return next((a for a in ADAPTERS.values() if a.is_stream(head)), None)
