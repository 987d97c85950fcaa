"""Where a probe POSTs: the endpoint of each dialect beside the base URL a user gives.

``http://h:8080``, ``http://h:8080/v1`` and any dialect's full endpoint URL (``…/v1/responses``,
``…/v1/chat/completions``, ``…/v1/messages``) name the same server; each dialect's request adapter
(checker.live.adapters) says its endpoint's path suffix.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit, urlunsplit

from checker.errors import UsageError
from checker.live import adapters

__all__ = ["endpoint", "endpoint_for", "probe_target"]


def endpoint(base_url: str) -> str:
    """``POST`` target for a base URL given with or without ``/v1`` (or as the full ``…/responses`` URL)."""
    text = base_url.strip()
    try:
        parts = urlsplit(text)
    except ValueError as exc:
        raise UsageError(f"not a URL: {base_url!r} ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"not an http(s) base URL: {base_url!r} "
                         "(e.g. http://127.0.0.1:8080 or https://api.openai.com/v1)")
    try:
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError as exc:
        raise UsageError(f"bad port in {base_url!r}: {exc}") from None
    path = parts.path.rstrip("/")
    other = next((a.endpoint for a in adapters.ADAPTERS.values() if path.endswith(a.endpoint)), None)
    if other is not None:  # a dialect's own endpoint given: the others are beside it
        path = path.removesuffix(other) + "/responses"
    elif not path.endswith("/responses"):
        path += "/responses" if path.endswith("/v1") else "/v1/responses"
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def endpoint_for(url: str, suffix: str) -> str:
    """``url`` (a ``…/responses`` endpoint, or another dialect's) with its endpoint path replaced by ``suffix``."""
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    for known in sorted((a.endpoint for a in adapters.ADAPTERS.values()), key=len, reverse=True):
        if path.endswith(known):
            path = path.removesuffix(known)
            break
    return urlunsplit((parts.scheme, parts.netloc, path + suffix, parts.query, ""))


def probe_target(shown_url: str, model: str, apis: list[str]) -> dict[str, Any]:
    """The report's ``target``: the URL probed (one dialect's own endpoint when only it was probed: `--api
    chat` never touched ``…/responses``), the base all endpoints share, the model and the dialects probed."""
    url = endpoint_for(shown_url, adapters.ADAPTERS[apis[0]].endpoint) if len(apis) == 1 else shown_url
    return {"url": url, "base": endpoint_for(shown_url, ""), "model": model, "apis": apis}
