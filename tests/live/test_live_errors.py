"""The live commands' errors: one line on stderr, exit 2, and never Python's ``None`` in a report.

Real ``sse-check serve`` processes on loopback (tests/live/conftest.py), the CLI as a subprocess.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CONFORMING = ROOT / "captures" / "conforming"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "checker", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=120, env={"NO_COLOR": "1", "PATH": "/usr/bin:/bin"})


def test_a_server_that_answered_then_stops_still_gets_findings(serve: Any) -> None:
    """Only a server never reached is an error line: one that answers is reported as usual."""
    server = serve(str(ROOT / "captures" / "llama.cpp"))
    proc = run("probe", server.url, "--model", "m", "-s", "plain_text", "--profile", "llama.cpp")
    assert proc.returncode == 0, proc.stderr
    assert "plain_text" in proc.stdout


def test_replay_live_never_prints_none_or_broken_grammar(serve: Any) -> None:
    # A server whose answers carry no reasoning: the live replay can measure nothing and says why in words.
    server = serve(str(CONFORMING), "--default", "text")
    proc = run("replay", "--live", server.url, "--model", "m")
    assert proc.returncode in (0, 1), proc.stderr
    text = proc.stdout + proc.stderr
    assert "no reasoning item in its answer" in text
    assert "None" not in text and "no a " not in text
    # A server that answers too late: turn 1 has no HTTP status at all.
    slow = serve(str(ROOT / "captures" / "replay" / "llama.cpp"), "--first-byte-delay", "3000")
    proc = run("replay", "--live", slow.url, "--model", "m", "--total-timeout", "1")
    text = proc.stdout + proc.stderr
    assert "None" not in text and "HTTP None" not in text, text
    assert "no answer" in text
