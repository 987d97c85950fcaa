"""The probe's retry policy (checker.live.retry) against the real SDKs' own code: for each answer, the installed
openai-python and anthropic-sdk-python decide whether to retry and how long to wait, and the probe must agree
(the SDKs' backoff has a random jitter of up to -25 %: the probe waits its upper bound)."""

from __future__ import annotations

import email.utils
import time

import httpx2
import pytest
from anthropic import Anthropic
from openai import OpenAI
from openai._models import FinalRequestOptions

from checker.live.retry import (ANTHROPIC, MAX_WAIT, OPENAI, SDK_MAX_RETRIES, backoff, client_of, client_retry, plan,
                                 retryable, server_delay)

SDKS = {OPENAI: OpenAI(api_key="x", base_url="http://127.0.0.1:9"),
        ANTHROPIC: Anthropic(api_key="x", base_url="http://127.0.0.1:9")}


# A date's test id names its offset, not the date: xdist's workers each import this module and must collect the
# same ids, which a clock read at import time would not give them.
_DATE_LABELS: dict[str, str] = {}


def _date(seconds_from_now: float) -> str:
    value = email.utils.formatdate(time.time() + seconds_from_now, usegmt=True)
    _DATE_LABELS[value] = f"<now{seconds_from_now:+g}s>"
    return value


def _header_id(headers: dict[str, str]) -> str:
    return ";".join(f"{k}={_DATE_LABELS.get(v, v)}" for k, v in headers.items()) or "none"


HEADER_SETS: list[dict[str, str]] = [
    {}, {"retry-after": "1"}, {"retry-after": "0.25"}, {"retry-after": "30"}, {"retry-after": "0"},
    {"retry-after": "-3"}, {"retry-after-ms": "1500"}, {"retry-after-ms": "250", "retry-after": "9"},
    {"retry-after-ms": "soon", "retry-after": "2"}, {"retry-after": "soon"}, {"retry-after": _date(5)},
    {"retry-after": _date(-60)}, {"x-should-retry": "false"}, {"x-should-retry": "true"},
]
STATUSES = [400, 404, 408, 409, 422, 429, 500, 502, 503, 504]


@pytest.mark.parametrize("headers", HEADER_SETS, ids=_header_id)
def test_the_delay_is_read_as_openai_python_reads_it(headers: dict[str, str]) -> None:
    sdk = SDKS[OPENAI]._parse_retry_after_header(httpx2.Headers(headers))
    mine = server_delay(list(headers.items()), time.time())
    if sdk is None:
        assert mine is None or mine.seconds is None
    else:
        assert mine is not None and mine.seconds == pytest.approx(sdk, abs=1.5)  # a date is read at another now


@pytest.mark.parametrize("client", [OPENAI, ANTHROPIC])
@pytest.mark.parametrize("status", STATUSES)
@pytest.mark.parametrize("headers", HEADER_SETS[:3] + HEADER_SETS[-2:], ids=_header_id)
def test_whether_to_retry_agrees_with_the_sdk(client: str, status: int, headers: dict[str, str]) -> None:
    sdk = SDKS[client]._should_retry(httpx2.Response(status, headers=headers))
    assert retryable(status, list(headers.items())) is sdk
    step = plan(status, list(headers.items()), retries_taken=0, retries=2, client=client, now=time.time())
    assert (step is not None and step.retry) is (sdk and status != 501)


@pytest.mark.parametrize("client", [OPENAI, ANTHROPIC])
@pytest.mark.parametrize("headers", [h for h in HEADER_SETS if "x-should-retry" not in h], ids=_header_id)
@pytest.mark.parametrize("taken", [0, 1, 5])
def test_the_wait_agrees_with_the_sdk(client: str, headers: dict[str, str], taken: int) -> None:
    options = FinalRequestOptions.construct(method="post", url="/responses")
    sdk = SDKS[client]._calculate_retry_timeout(2 - taken, options, httpx2.Headers(headers))
    step = plan(429, list(headers.items()), retries_taken=taken, retries=9, client=client, now=time.time())
    assert step is not None and step.retry
    if "honoured" in step.basis:
        assert step.wait == pytest.approx(sdk, abs=1.5)
    else:  # the backoff: the SDK's is 75-100 % of it
        assert step.wait == backoff(taken) and 0.75 * step.wait - 1e-9 <= sdk <= step.wait + 1e-9


def test_a_delay_beyond_two_minutes_is_not_waited() -> None:
    far = [("retry-after", _date(3600))]
    assert SDKS[OPENAI]._should_retry(httpx2.Response(429, headers=dict(far))) is False
    step = plan(429, far, retries_taken=0, retries=1, client=OPENAI, now=time.time())
    assert step is not None and not step.retry and "does not retry" in step.basis
    step = plan(429, [("retry-after", str(MAX_WAIT + 1))], retries_taken=0, retries=1, client=ANTHROPIC,
                now=time.time())
    assert step is not None and not step.retry and "anthropic-sdk-python would wait" in step.basis


def test_no_retry_left_and_what_is_never_retried() -> None:
    step = plan(503, [("retry-after", "1")], retries_taken=1, retries=1, client=OPENAI, now=0.0)
    assert step is not None and not step.retry and "no retry left (--retries 1)" in step.basis
    assert plan(200, [], retries_taken=0, retries=1, client=OPENAI, now=0.0) is None
    assert plan(None, [], retries_taken=0, retries=1, client=OPENAI, now=0.0) is None
    assert plan(501, [], retries_taken=0, retries=1, client=OPENAI, now=0.0) is None  # "not served", not a refusal
    assert plan(400, [("x-should-retry", "true")], retries_taken=0, retries=1, client=OPENAI, now=0.0) is not None
    assert client_of("messages") == ANTHROPIC and client_of("chat") == client_of("responses") == OPENAI


def test_the_proxy_counts_on_an_sdks_retries_from_its_own_headers() -> None:
    # What the SDK itself sends: its retry count (0 on the first attempt) and, for the default, its max_retries.
    assert SDK_MAX_RETRIES == OpenAI(api_key="x").max_retries == Anthropic(api_key="x").max_retries
    refused = [("retry-after", "1")]
    python = [("x-stainless-lang", "python"), ("x-stainless-retry-count", "0")]
    now = time.time()
    found = client_retry(429, refused, python, "responses", now)
    assert found is not None and found["client"] == OPENAI and found["attempt"] == 1 and found["wait"] == 1.0
    assert found["then"] == "retried" and found["by"] == "the client"
    node = client_retry(503, [], [("x-stainless-lang", "js"), ("x-stainless-retry-count", "1")], "messages", now)
    assert node is not None and node["client"] == "anthropic-sdk-typescript" and node["attempt"] == 2
    assert client_retry(429, refused, [("x-stainless-retry-count", "2")], "responses", now) is None  # the last try
    assert client_retry(429, refused, [], "responses", now) is None  # not an SDK: its retries are unknown
    assert client_retry(400, refused, python, "responses", now) is None  # not retried by any SDK
    assert client_retry(200, [], python, "chat", now) is None
    assert client_retry(429, [("retry-after", "3600")], python, "responses", now) is None  # too long: raised at once
    assert client_retry(429, refused, [("x-stainless-retry-count", "x")], "responses", now) is None
