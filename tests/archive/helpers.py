"""Shared by the archive tests: the CLI as a subprocess, and a small generated archive."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from checker.synth import StreamBuilder, encode

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str, env: dict[str, str] | None = None, stdin: bytes | None = None,
        timeout: float = 300) -> subprocess.CompletedProcess[str]:
    environment = {"NO_COLOR": "1", "PATH": os.environ.get("PATH", "/usr/bin:/bin"), **(env or {})}
    return subprocess.run([sys.executable, "-m", "checker", *args], capture_output=True, text=True,
                          input=stdin.decode() if stdin is not None else None, cwd=ROOT, timeout=timeout,
                          env=environment)


def json_report(*args: str, **kwargs: Any) -> dict[str, Any]:
    out = run(*args, "--format", "json", **kwargs)
    assert out.returncode in (0, 1), out.stderr
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def small_capture(i: int) -> bytes:
    """Capture number ``i`` of a generated archive: every seventh has no terminal event (LIF006, error),
    every fifth mixes line endings (SSE003, warning); the others conform."""
    events = list(StreamBuilder().message([f"w{i}", " ", "x"]).events())
    if i % 7 == 0:
        del events[-1]
    data = encode(events)
    if i % 5 == 0:
        data = data.replace(b"\n", b"\r\n", 2)
    return data


def write_archive(folder: Path, count: int) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(count):
        path = folder / f"c{i:05d}.sse"
        path.write_bytes(small_capture(i))
        paths.append(path)
    return paths


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def by_name(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """files[] keyed by file name (the same capture linted from two places), without its path."""
    return {Path(f["path"]).name: {k: v for k, v in f.items() if k != "path"} for f in report["files"]}
