"""``sse-check lint --oracle openai-python`` runs the real client by the call of the capture's dialect: a chat
capture through chat.completions.stream(). Run as a Responses stream, every chat capture "raised" RuntimeError
beside a matrix that said ok, a contradiction printed in red."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytest.importorskip("openai")


def lint(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}
    proc = subprocess.run([sys.executable, "-m", "checker", "lint", *args], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=120)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    return proc


def test_a_chat_capture_is_run_as_chat_and_agrees_with_the_matrix() -> None:
    ok = lint("captures/cassettes/openllmetry/azure-openai-chat_streaming-0.sse", "--oracle", "openai-python")
    assert "real openai-python 3.57.0: returns text 'Why did the Opentelemetry" in ok.stdout
    assert "(agrees: ok)" in ok.stdout and "≠ prediction" not in ok.stdout and "response.created" not in ok.stdout
    broken = lint("captures/chat/rules/CHT005-choice-index-invalid.sse", "--oracle", "openai-python")
    assert "real openai-python 3.57.0: raises IndexError" in broken.stdout and "(agrees: breaks)" in broken.stdout
