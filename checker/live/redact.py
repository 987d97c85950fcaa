"""Secrets kept out of everything sse-check records: the API key, sensitive header values, URL credentials.

A :class:`Redactor` masks them in the meta, the findings and the saved body, where a secret is replaced by as
many ``*`` as it has characters, so that byte offsets stay true. Used by the probe and the proxy.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from checker.findings import Finding

_ALWAYS_SENSITIVE = frozenset({"authorization", "proxy-authorization", "api-key", "x-api-key", "cookie",
                               "set-cookie"})
_SENSITIVE_NAME = re.compile(r"auth|api[-_]?key|token|secret|cookie|session|password", re.IGNORECASE)
REDACTED = "<redacted>"


class Redactor:
    """Masks secrets: known secret values anywhere, sensitive headers by name, URL credentials."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self.secrets = tuple(sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True))

    def with_secrets(self, more: Iterable[str]) -> Redactor:
        return Redactor((*self.secrets, *more))

    def text(self, value: str) -> str:
        for secret in self.secrets:
            if secret in value:
                value = value.replace(secret, "*" * len(secret))
        return value

    def bytes(self, value: bytes) -> bytes:
        for secret in self.secrets:
            raw = secret.encode("utf-8", "replace")
            if raw in value:
                value = value.replace(raw, b"*" * len(raw))
        return value

    def value(self, obj: Any) -> Any:
        """A JSON-like value with every string masked."""
        if isinstance(obj, str):
            return self.text(obj)
        if isinstance(obj, dict):
            return {self.text(str(k)): self.value(v) for k, v in obj.items()}
        if isinstance(obj, (list, tuple)):
            return [self.value(v) for v in obj]
        return obj

    def url(self, url: str) -> str:
        try:
            parts = urlsplit(url)
        except ValueError:
            return self.text(url)
        if parts.username is not None or parts.password is not None:
            host = parts.netloc.rpartition("@")[2]
            parts = parts._replace(netloc=f"{REDACTED}@{host}")
        return self.text(urlunsplit(parts))

    def headers(self, pairs: Iterable[tuple[str, str]], *, request: bool = False) -> list[list[str]]:
        out = []
        for name, value in pairs:
            lower = name.lower()
            sensitive = lower in _ALWAYS_SENSITIVE or (request and bool(_SENSITIVE_NAME.search(lower)))
            out.append([name, REDACTED if sensitive else self.text(value)])
        return out

    def finding(self, finding: Finding) -> Finding:
        message = self.text(finding.message)
        details = self.value(finding.details)
        if message == finding.message and details == finding.details:
            return finding
        return dataclasses.replace(finding, message=message, details=details)


def secrets_of_headers(pairs: Iterable[tuple[str, str]]) -> list[str]:
    """The secret values among request headers: whole values of sensitive headers and their last word."""
    found = []
    for name, value in pairs:
        lower = name.lower()
        if lower in _ALWAYS_SENSITIVE or _SENSITIVE_NAME.search(lower):
            found.append(value)
            words = value.split()
            if len(words) > 1:
                found.append(words[-1])
    return found
