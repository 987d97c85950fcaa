"""The WebSocket mode against the real ``llama-server`` (the real-server suite, ``make test-all``): it has no
WebSocket endpoint, so ``probe --transport websocket`` must say so in one "unsupported" line (exit 0, nothing
saved), exactly what openai-python's ``client.responses.connect()`` meets: the upgrade refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import openai
import pytest

ROOT = Path(__file__).resolve().parents[2]
MODEL = "tiny-qwen3-random"


def test_probe_over_websocket_says_unsupported_in_one_line(real_llama: Any, tmp_path: Path) -> None:
    saved = tmp_path / "saved"
    proc = subprocess.run(
        [sys.executable, "-m", "checker", "probe", real_llama.url, "--model", MODEL, "--transport", "websocket",
         "--save", str(saved), "--no-progress"],
        capture_output=True, text=True, cwd=ROOT, timeout=120, env={**os.environ, "NO_COLOR": "1"},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("websocket: unsupported: HTTP "), proc.stdout
    assert not list(saved.glob("*.ws.jsonl"))


def test_openai_python_meets_the_same_refusal(real_llama: Any) -> None:
    from websockets.exceptions import InvalidStatus

    client = openai.OpenAI(base_url=real_llama.url + "/v1", api_key="sk-test", max_retries=0)
    with pytest.raises(InvalidStatus) as refused:
        with client.responses.connect() as connection:
            connection.send({"type": "response.create", "model": MODEL, "input": "hi"})
            next(iter(connection))
    assert refused.value.response.status_code >= 400  # websockets' InvalidStatus: the upgrade's HTTP answer


def test_a_default_probe_names_the_mode_unsupported_in_its_capability_table(real_llama: Any) -> None:
    """The default (SSE) probe tries the upgrade once (checker/surface/websocket.py): the row says what
    openai-python meets, and no client is worse for it (the mode is optional to those that can use it)."""
    proc = subprocess.run(
        [sys.executable, "-m", "checker", "probe", real_llama.url, "--model", MODEL, "--profile", "llama.cpp",
         "--api", "responses", "-s", "plain_text,websocket", "--format", "json", "--no-progress"],
        capture_output=True, text=True, cwd=ROOT, timeout=300, env={**os.environ, "NO_COLOR": "1"},
    )
    report = json.loads(proc.stdout)
    (row,) = [r for r in report["capabilities"] if r["feature"] == "websocket.responses"]
    assert row["status"] == "unsupported" and row["why"].startswith("HTTP 404 "), row
    assert "websocket.ws.jsonl" not in [f["path"] for f in report["files"]]
    codex = next(r for r in report["readiness"] if r["client"] == "codex")
    assert codex["verdict"] == "ready" and row["title"] in codex["without"]
