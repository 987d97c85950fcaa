"""How the HTTP checks quote what a server sent: one line, clipped, a JSON value's kind (pure functions)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit


def one_line(text: str) -> str:
    """White space (line breaks included) folded into single spaces: every finding is one line."""
    return " ".join(text.split())


def clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def json_kind(value: Any) -> str:
    """A parsed JSON value's kind as JSON names it ("object", "array", …)."""
    return {dict: "object", list: "array", str: "string", int: "number", float: "number", bool: "boolean",
            type(None): "null"}.get(type(value), type(value).__name__)


def host(url: str) -> str:
    """A URL's host and port, without credentials (a finding never shows a password)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    return parts.netloc.rpartition("@")[2] or url


def num(value: Any) -> str:
    """A recorded limit as the user typed it: 30, not 30.0; "?" when it was not recorded."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value) if value is not None else "?"
