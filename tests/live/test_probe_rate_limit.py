"""A 429 with and without Retry-After, from a real ``sse-check serve`` on loopback: HTP023 only without it (the
first answer alone, ``--retries 0``; the retries are tests/live/test_probe_retry.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.live.conftest import LLAMA_CAPTURES, ROOT, ServerProcess


def probe(url: str, *args: str) -> dict:
    env = {**os.environ, "NO_COLOR": "1", "OPENAI_API_KEY": ""}
    proc = subprocess.run([sys.executable, "-m", "checker", "probe", url, "--model", "gpt-4.1", "--api", "responses",
                           "--scenario", "plain_text", "--no-progress", "--format", "json", "--retries", "0", *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=120, env=env)
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    assert proc.returncode == 1, proc.stdout + proc.stderr
    return json.loads(proc.stdout)


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
    lint = subprocess.run([sys.executable, "-m", "checker", "lint", str(saved), "--format", "json"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    [linted] = json.loads(lint.stdout)["files"]
    assert sorted(f["code"] for f in linted["findings"]) == codes  # the lint of the save agrees
