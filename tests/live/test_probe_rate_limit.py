"""A 429 with and without Retry-After, from a real ``sse-check serve`` on loopback: HTP023 only without it (the
first answer alone, ``--retries 0``; the retries are tests/live/test_probe_retry.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.live.conftest import LLAMA_CAPTURES, ServerProcess, sse_check_json


def probe(url: str, *args: str) -> dict:
    code, report = sse_check_json("probe", url, "--model", "gpt-4.1", "--api", "responses", "--scenario",
                                  "plain_text", "--no-progress", "--retries", "0", *args)
    assert code == 1, report
    return report


@pytest.mark.parametrize("fault, retry, codes", [
    (("--retry-after", "none"), None, ["HTP001", "HTP023"]),
    ((), "1", ["HTP001"]),  # serve's default Retry-After for a 429
    (("--retry-after", "Wed, 21 Oct 2037 07:28:00 GMT"), "Wed, 21 Oct 2037 07:28:00 GMT", ["HTP001"]),
])
def test_a_429_is_htp023_only_without_retry_after(serve: Callable[..., ServerProcess], tmp_path: Path,
                                                  fault: tuple[str, ...], retry: str | None, codes: list[str]) -> None:
    server = serve(str(LLAMA_CAPTURES), "--status", "429", *fault)
    saved = tmp_path / "saved"
    [entry] = probe(server.url, "--save", str(saved))["files"]
    assert sorted(f["code"] for f in entry["findings"]) == codes
    headers = dict((k.lower(), v) for k, v in entry["http"].get("headers") or [])
    if "headers" in entry["http"]:
        assert headers.get("retry-after") == retry
    [linted] = sse_check_json("lint", str(saved))[1]["files"]
    assert sorted(f["code"] for f in linted["findings"]) == codes  # the lint of the save agrees
