"""HTP024 from a real ``sse-check serve`` on loopback: the probe's malformed request (input given as an object)
failed with a 5xx is flagged, refused with serve's 400 it is not; the lint of the saved exchange agrees."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.live.conftest import LLAMA_CAPTURES, ROOT, ServerProcess


def probe(url: str, saved: Path, *args: str) -> dict:
    env = {**os.environ, "NO_COLOR": "1", "OPENAI_API_KEY": ""}
    proc = subprocess.run([sys.executable, "-m", "checker", "probe", url, "--model", "gpt-4.1", "--api", "responses",
                           "--scenario", "malformed_input", "--no-progress", "--format", "json", "--save",
                           str(saved), *args], capture_output=True, text=True, cwd=ROOT, timeout=120, env=env)
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    return json.loads(proc.stdout)


def linted(saved: Path) -> dict[str, list[str]]:
    lint = subprocess.run([sys.executable, "-m", "checker", "lint", str(saved), "--format", "json"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    return {Path(f["path"]).name: sorted(c["code"] for c in f["findings"]) for f in json.loads(lint.stdout)["files"]}


@pytest.mark.parametrize("status", ["500", "503"])
def test_a_malformed_request_failed_by_the_server(serve: Callable[..., ServerProcess], tmp_path: Path,
                                                  status: str) -> None:
    server = serve(str(LLAMA_CAPTURES), "--status", status)
    saved = tmp_path / "saved"
    # one answer (--retries 0): the SDKs would send this request twice more, as the finding says
    [entry] = probe(server.url, saved, "--retries", "0")["files"]
    assert [f["code"] for f in entry["findings"]] == ["HTP024"], entry["findings"]
    assert entry["http"]["status"] == int(status)
    assert linted(saved) == {"malformed_input.sse": ["HTP024"]}


def test_a_malformed_request_refused_is_not_flagged(serve: Callable[..., ServerProcess], tmp_path: Path) -> None:
    server = serve(str(LLAMA_CAPTURES))
    saved = tmp_path / "saved"
    [entry] = probe(server.url, saved)["files"]
    assert 400 <= entry["http"]["status"] < 500 and entry["findings"] == [], entry
    assert linted(saved) == {"malformed_input.sse": []}
