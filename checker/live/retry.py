"""When and how long the probe waits before it sends a refused request again, as the SDKs do (no I/O here).

A server that answers 429 (rate limited) or 503 (overloaded) is telling its clients to come back later, and
the official SDKs do: they retry 408, 409, 429 and every 5xx, after the delay the server asks for, or their
own backoff when it asks for none. A probe that stopped at the first refusal would judge an answer no user of
the SDK ever sees; a probe that retried blindly would hide that the server asked for nothing. So the probe
does what the SDK of the dialect does, once by default (``--retries``), and reports the wait:

* **openai-python** (Responses and Chat Completions; openai-node agrees on the statuses): ``x-should-retry:
  true/false`` decides first; then 408, 409, 429 and >= 500 are retried. The delay is ``retry-after-ms``
  (milliseconds), else ``Retry-After`` as seconds (a float is accepted), else ``Retry-After`` as an HTTP date
  (minus now). A delay in (0, 120] s is waited as given; one above 120 s means *do not retry* (the SDK raises
  at once); none, a malformed one or one <= 0 falls back to the backoff: 0.5 s · 2^k for the k-th retry
  (k from 0), at most 8 s, less a random 0-25 % (the probe waits the full amount: never earlier than the SDK).
* **anthropic-sdk-python** (Messages): the same statuses and headers; any positive delay is waited as given
  (no two-minute refusal). The probe waits at most :data:`MAX_WAIT` seconds all the same: a longer delay is
  reported and not waited (the SDK would sleep that long; a checker cannot).

501 Not Implemented is retried by both SDKs, but the probe reads it as "this endpoint is not served"
(checker.live.probe_run), so it is not retried here: the answer would be the same and only slower.

Sources: openai-python src/openai/_base_client.py (``_should_retry``, ``_parse_retry_after_header``,
``_calculate_retry_timeout``) and src/openai/_constants.py (``INITIAL_RETRY_DELAY``, ``MAX_RETRY_DELAY``,
``MAX_RETRY_AFTER_DELAY``); anthropic-sdk-python src/anthropic/_base_client.py (the same three methods);
openai-node src/client.ts (``shouldRetry``, ``retryRequest``); RFC 9110 §10.2.3 (Retry-After).
"""

from __future__ import annotations

import email.utils
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from checker.live import adapters

# What the probe does by default: one retry. It is enough to show both facts a checker is after (did the
# server say when to come back, and was it ready by then?) and keeps a probe of a server that is down short;
# the SDKs' own default is 2 (--retries 2 reproduces it); --retries 0 judges the first answer alone.
DEFAULT_RETRIES = 1
INITIAL_DELAY = 0.5  # openai-python / anthropic-sdk-python INITIAL_RETRY_DELAY
MAX_BACKOFF = 8.0  # MAX_RETRY_DELAY
MAX_WAIT = 120.0  # openai-python MAX_RETRY_AFTER_DELAY; also the longest the probe ever waits
# The statuses the probe reads as "not served" (checker.live.probe_run.MISSING_STATUSES) that are >= 500.
NOT_RETRIED = frozenset({501})

OPENAI = "openai-python"
ANTHROPIC = "anthropic-sdk-python"


def client_of(api: str | None) -> str:
    """The SDK whose retry behaviour the probe follows for a dialect (its adapter's; a scenario with a URL of
    its own and no dialect: openai-python's)."""
    return adapters.get(api).sdk if api is not None else OPENAI


@dataclass(frozen=True, slots=True)
class Delay:
    """What the server asked for: the header that said it, its value, and the seconds it means (None when the
    value cannot be read as either form)."""

    header: str  # "retry-after-ms" or "retry-after"
    value: str
    seconds: float | None
    form: str  # "ms", "seconds", "date", or "unreadable"

    def describe(self) -> str:
        name = "Retry-After" if self.header == "retry-after" else self.header
        if self.seconds is None:
            return f"{name}: {self.value!r} (unreadable)"
        if self.form == "date":
            return f"{name} {self.value} (in {_seconds(self.seconds)})"
        return f"{name} {_seconds(self.seconds)}"


@dataclass(frozen=True, slots=True)
class Plan:
    """Whether to send the request again and after how long; ``basis`` says why, in words."""

    retry: bool
    wait: float  # seconds (0 when not retried)
    basis: str  # "Retry-After 1 s honoured", "no Retry-After: backoff 0.5 s", …
    delay: Delay | None = None
    client: str = OPENAI

    def as_dict(self) -> dict[str, Any]:
        return {"retry": self.retry, "wait": round(self.wait, 6), "basis": self.basis, "client": self.client,
                "header": self.delay.header if self.delay else None, "value": self.delay.value if self.delay else None}


def _header(headers: Sequence[Sequence[str]] | Mapping[str, str], name: str) -> str | None:
    items = headers.items() if isinstance(headers, Mapping) else headers
    for pair in items:
        if len(pair) == 2 and str(pair[0]).lower() == name:
            return str(pair[1])
    return None


def _float(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return None if math.isnan(value) else value


def server_delay(headers: Sequence[Sequence[str]] | Mapping[str, str], now: float) -> Delay | None:
    """The delay the answer asks for, read as openai-python reads it: ``retry-after-ms``, then ``Retry-After``
    in seconds, then ``Retry-After`` as an HTTP date (``now`` is the Unix time); None when neither is there."""
    ms = _header(headers, "retry-after-ms")
    if ms is not None and (value := _float(ms)) is not None:
        return Delay("retry-after-ms", ms, value / 1000, "ms")
    after = _header(headers, "retry-after")
    if after is None:
        return Delay("retry-after-ms", ms, None, "unreadable") if ms is not None else None
    if (value := _float(after)) is not None:
        return Delay("retry-after", after, value, "seconds")
    try:
        parsed = email.utils.parsedate_tz(after)
        when = email.utils.mktime_tz(parsed) if parsed is not None else None
    except (TypeError, ValueError, OverflowError, OSError):
        when = None
    return Delay("retry-after", after, None if when is None else float(when - now),
                 "unreadable" if when is None else "date")


def retryable(status: int, headers: Sequence[Sequence[str]] | Mapping[str, str]) -> bool:
    """Whether the SDKs send a request again after this answer (before looking at any delay)."""
    should = _header(headers, "x-should-retry")
    if should == "true":
        return True
    if should == "false":
        return False
    return status in (408, 409, 429) or status >= 500


def backoff(retries_taken: int) -> float:
    """The SDKs' backoff before retry ``retries_taken + 1`` without a server delay, without its jitter (the
    jitter only shortens it, by up to a quarter)."""
    return min(INITIAL_DELAY * 2.0 ** min(retries_taken, 1000), MAX_BACKOFF)


def plan(status: int | None, headers: Sequence[Sequence[str]] | Mapping[str, str], *, retries_taken: int,
         retries: int, client: str, now: float) -> Plan | None:
    """What to do after an answer of ``status``: None when it is no refusal the SDKs retry (a success, a 4xx
    other than 408/409/429, no answer at all); else a :class:`Plan`, which may be not to retry (no retries
    left, a delay too long) with the reason."""
    if status is None or status < 400 or not retryable(status, headers) or status in NOT_RETRIED:
        return None
    delay = server_delay(headers, now)
    left = retries - retries_taken
    if delay is not None and delay.seconds is not None and math.isfinite(delay.seconds) and delay.seconds > MAX_WAIT:
        if client == OPENAI:
            why = f"{delay.describe()} is more than the {MAX_WAIT:g} s {client} waits: it does not retry"
        else:
            why = f"{delay.describe()} is more than the {MAX_WAIT:g} s the probe waits ({client} would wait)"
        return Plan(False, 0.0, why, delay, client)
    if delay is not None and delay.seconds is not None and math.isfinite(delay.seconds) and delay.seconds > 0:
        wait, basis = delay.seconds, f"{delay.describe()} honoured"
    else:
        wait = backoff(retries_taken)
        said = "no Retry-After" if delay is None else delay.describe()
        basis = f"{said}: {client}'s backoff, {_seconds(wait)}"
    if left <= 0:
        return Plan(False, 0.0, f"{basis.removesuffix(' honoured')}; no retry left (--retries {retries})", delay,
                    client)
    return Plan(True, wait, basis, delay, client)


def _seconds(value: float) -> str:
    return f"{value:g} s" if value >= 1 or value <= 0 else f"{value * 1000:.0f} ms"


# The SDKs count their retries in every request they send (openai-python _base_client._build_headers,
# openai-node, the anthropic SDKs: x-stainless-retry-count, 0 on the first attempt) and say their language
# (x-stainless-lang); each retries DEFAULT_MAX_RETRIES (2) times unless its caller set max_retries.
SDK_MAX_RETRIES = 2
_NODE = {OPENAI: "openai-node", ANTHROPIC: "anthropic-sdk-typescript"}


def client_retry(status: int | None, answer_headers: Sequence[Sequence[str]],
                 request_headers: Sequence[Sequence[str]], api: str | None, now: float) -> dict[str, Any] | None:
    """What ``sse-check proxy`` writes in an answer's meta (``retry``) when the SDK that sent the request will
    send it again by itself: a refusal it retries, on an attempt with retries left by the SDK's default. None
    when the request does not come from an SDK that counts its retries (a client whose retries are unknown is
    not assumed to retry) or when the SDK will not retry this answer."""
    count = _header(request_headers, "x-stainless-retry-count")
    if count is None or not count.strip().isdigit():
        return None
    client = client_of(api)
    if (_header(request_headers, "x-stainless-lang") or "").strip().lower() == "js":
        client = _NODE.get(client, client)
    step = plan(status, answer_headers, retries_taken=int(count), retries=SDK_MAX_RETRIES, client=client, now=now)
    if step is None or not step.retry:
        return None
    return {**retried(status, int(count) + 1, step), "by": "the client"}


def retried(status: int | None, attempt: int, step: Plan) -> dict[str, Any]:
    """An exchange meta's ``retry`` for an answer that is sent again (HTP025): its attempt number, its status and
    the wait that follows."""
    return {"attempt": attempt, "status": status, "then": "retried", **step.as_dict()}
