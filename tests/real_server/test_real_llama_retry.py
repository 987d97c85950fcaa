"""The probe's retries against the real llama-server: while it loads its model, llama-server already listens and
answers every request 503 ("Loading model", no Retry-After). The probe, sent at that moment, must back off as
openai-python would (0.5 s, 1 s, …), keep each 503 as its own reported and saved answer, and judge the answer
that came once the model was loaded. Runs only in the real-server suite (``SSE_CHECK_REAL_SERVER=1``); its own
server, started here from the session's binary and model, since the session's server is loaded already. When the model loads before the server's first
answer there is nothing to retry, and the test says so (skip)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from typing import Any

import httpx
import pytest
from processes import free_port, stop_by_pid

ROOT = Path(__file__).resolve().parents[2]
MODEL = "tiny-qwen3"
FLAGS = ("--jinja", "-c", "4096", "-np", "1", "--seed", "42", "--reasoning-budget", "10")


def _first_answer(url: str, deadline: float) -> int | None:
    """The status of the first answer of ``/health`` (503 while loading, 200 once loaded), None if none came."""
    while time.monotonic() < deadline:
        try:
            return httpx.get(f"{url}/health", timeout=2).status_code
        except httpx.HTTPError:
            time.sleep(0.02)
    return None


def test_a_server_loading_its_model_is_retried_with_the_sdk_backoff(real_llama: Any, tmp_path: Path) -> None:
    binary, model = real_llama.binary, real_llama.model  # the session's binary and model, in a second server
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen([str(binary), "-m", str(model), *FLAGS, "--host", "127.0.0.1", "--port", str(port)],
                                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            first = _first_answer(url, time.monotonic() + 60)
            if first != 503:
                pytest.skip(f"llama-server answered {first} first: the model loaded before it could refuse")
            saved = tmp_path / "saved"
            proc_probe = subprocess.run(
                [sys.executable, "-m", "checker", "probe", url, "--model", MODEL, "--profile", "llama.cpp",
                 "--api", "responses", "-s", "plain_text", "--retries", "5", "--save", str(saved), "--format", "json",
                 "--no-progress"],
                capture_output=True, text=True, cwd=ROOT, timeout=600, env={**os.environ, "NO_COLOR": "1",
                                                                         "OPENAI_API_KEY": ""})
        finally:
            stop_by_pid(proc)
    assert "Traceback" not in proc_probe.stderr, proc_probe.stderr
    files = json.loads(proc_probe.stdout)["files"]
    *tries, last = files
    if not tries:
        pytest.skip("the model was loaded by the time the probe's request arrived")
    assert last["path"] == "plain_text" and last["http"]["status"] == 200
    backoffs = ["500 ms", "1 s", "2 s", "4 s", "8 s"]
    for k, entry in enumerate(tries, 1):
        assert entry["path"] == f"plain_text (try {k})" and entry["http"]["status"] == 503
        # retried as openai-python retries it: HTP025 (info), not HTP001; no Retry-After, yet no HTP023 (a 503)
        assert {f["code"] for f in entry["findings"]} == {"HTP025"}
        assert entry["http"]["retry"]["basis"] == f"no Retry-After: openai-python's backoff, {backoffs[k - 1]}"
    assert last["http"]["retry"]["line"].endswith("retried: 200")
    assert sorted(p.name for p in saved.glob("plain_text*.sse")) == sorted(
        ["plain_text.sse", *(f"plain_text.try{k}.sse" for k in range(1, len(tries) + 1))])
