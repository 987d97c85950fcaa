"""How ``probe`` and ``replay --live`` reach a server: typed connection options and the probe's configuration
built from them (the URL, the headers with the API key, the secrets to mask, the timeouts, ``--save``).

Both commands parse their own flags into :class:`ConnectionOptions`; :func:`probe_config` is the one place
that turns them into a :class:`checker.live.probe.ProbeConfig`.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from checker.commands.common import save_dir
from checker.engine_options import EngineOptions
from checker.errors import UsageError
from checker.live.probe import ProbeConfig, ProbeLimits, endpoint
from checker.live.redact import Redactor, secrets_of_headers

_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


@dataclass(frozen=True, slots=True, kw_only=True)
class ConnectionOptions:
    base_url: str
    model: str
    headers: tuple[str, ...] = ()  # --header values, 'Name: value'
    api_key_env: str | None = None  # None: OPENAI_API_KEY if it is set
    insecure: bool = False
    save: str | None = None  # --save DIR
    limits: ProbeLimits = field(default_factory=ProbeLimits)


def parse_headers(values: tuple[str, ...] | list[str]) -> list[tuple[str, str]]:
    """``--header 'Name: value'`` values as (name, value) pairs; a UsageError for a malformed one."""
    headers = []
    for value in values:
        name, colon, rest = value.partition(":")
        name, rest = name.strip(), rest.strip()
        if not colon or not _HEADER_NAME.fullmatch(name):
            raise UsageError(f"--header {value!r}: expected 'Name: value'")
        if any(ch in rest for ch in "\r\n\0"):
            raise UsageError(f"--header {name}: the value contains a line break or NUL")
        headers.append((name, rest))
    return headers


def probe_config(opts: ConnectionOptions, engine: EngineOptions = EngineOptions()) -> ProbeConfig:
    """The probe's configuration: the endpoint, the headers (the API key as a bearer token unless an
    Authorization header is given), every secret to mask, and the ``--save`` folder (created)."""
    url = endpoint(opts.base_url)
    headers = parse_headers(opts.headers)
    secrets = secrets_of_headers(headers)
    secrets += [s for s in (urlsplit(url).password,) if s]
    env_name = opts.api_key_env or "OPENAI_API_KEY"
    key = os.environ.get(env_name, "")
    if opts.api_key_env and not key:
        raise UsageError(f"--api-key-env {env_name}: the environment variable is not set")
    if key:
        secrets.append(key)
        if not any(name.lower() == "authorization" for name, _ in headers):
            headers.append(("Authorization", f"Bearer {key}"))
    if opts.insecure:
        print("sse-check: warning: --insecure: TLS certificates are not verified", file=sys.stderr)
    return ProbeConfig(url=url, model=opts.model, headers=tuple(headers), redactor=Redactor(secrets),
                       verify=not opts.insecure, limits=opts.limits, engine=engine,
                       save_dir=save_dir(opts.save))
