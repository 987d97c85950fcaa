"""What a person sees: the real CLI's text output, as a subprocess, at 80 and 120 columns, equal to the files
in tests/cli_snapshots/ (``make snapshots`` rewrites them: ``pytest tests/test_cli_snapshots.py
--update-snapshots``; say why in the commit). Each file starts with the command and its exit code.

A change of wording shows here as a diff a reviewer reads; the checks of meaning (no client named as broken
that the matrix calls ok, one finding for binary input) are in tests/test_cli_output.py and tests/report/.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOTS = Path(__file__).resolve().parent / "cli_snapshots"
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def random_bytes(seed: int = 3, size: int = 5000) -> bytes:
    """Random bytes whose first lines hold one starting with ":" (seed 3): once a flood of 4,000 lines."""
    rng = random.Random(seed)
    return bytes(rng.randrange(256) for _ in range(size))


# name -> (arguments, stdin)
CASES: dict[str, tuple[tuple[str, ...], bytes | None]] = {
    # CHT002 on a null system_fingerprint: the line under it named openai-python and openai-node (the rule's
    # static list) while the matrix, and the real clients, say ok.
    "lint-chat-null-fingerprint": (("lint", "captures/cassettes/openllmetry/azure-openai-chat_streaming-0.sse",
                                    "--clients"), None),
    "lint-random-bytes": (("lint", "-"), random_bytes()),
}
COLUMNS = (80, 120)


def run_cli(args: tuple[str, ...], stdin: bytes | None, columns: int | None) -> tuple[int, str, str]:
    env = {**os.environ, "NO_COLOR": "1"}
    env.pop("COLUMNS", None)
    if columns is not None:
        env["COLUMNS"] = str(columns)
    proc = subprocess.run([sys.executable, "-m", "checker", *args], capture_output=True, cwd=ROOT, env=env,
                          input=stdin, timeout=300)
    out, err = proc.stdout.decode(), proc.stderr.decode()
    assert "Traceback" not in out + err, err
    return proc.returncode, out, err


def rendered(args: tuple[str, ...], stdin: bytes | None, columns: int) -> str:
    code, out, _ = run_cli(args, stdin, columns)
    where = " < (bytes)" if stdin is not None else ""
    return f"$ COLUMNS={columns} sse-check {' '.join(args)}{where}\n(exit {code})\n{out}"


@pytest.mark.parametrize("columns", COLUMNS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_cli_text_output(name: str, columns: int, request: pytest.FixtureRequest) -> None:
    args, stdin = CASES[name]
    text = rendered(args, stdin, columns)
    body = text.splitlines()[2:]
    assert max(map(len, body), default=0) <= columns, name
    assert not CONTROL.search(text)
    path = SNAPSHOTS / f"{name}.{columns}.txt"
    if request.config.getoption("--update-snapshots"):
        path.write_text(text)
        return
    assert path.is_file(), f"no snapshot {path.name}: make snapshots"
    assert text == path.read_text(), f"{path.name} differs (an intended change: make snapshots)"


def test_every_snapshot_file_is_a_case() -> None:
    wanted = {f"{name}.{columns}.txt" for name in CASES for columns in COLUMNS}
    assert {p.name for p in SNAPSHOTS.glob("*.txt")} <= wanted
