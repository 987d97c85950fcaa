"""Baselines of Chat Completions and Anthropic Messages captures, through the CLI as a CI gate runs it.

The real llama-server's captures have known findings (its chat stream's vendor reasoning field and changing
``created``; its Anthropic stream's ``chatcmpl-`` message id, empty signature, overlapping blocks). Today's build
is baselined; the next build streams the same answers with new ids, other text and other positions, which must
stay hidden, and one regression each, which must be the only finding reported.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import string
import subprocess
import sys
from pathlib import Path

from checker.baseline import fingerprint
from checker.captures import request_for
from checker.engine import lint_bytes

ROOT = Path(__file__).resolve().parents[1]
CHAT = ROOT / "captures" / "chat" / "llama.cpp" / "reasoning.sse"
MESSAGES = ROOT / "captures" / "messages" / "llama.cpp" / "reasoning_one_call.sse"
# The ids of the three dialects and llama-server's 32-character tool call ids.
IDS = re.compile(rb"\b(msg_|toolu_|chatcmpl-|call_)([A-Za-z0-9]{6,})|(?<=\"id\":\")([A-Za-z0-9]{32})(?=\")")


def new_ids(data: bytes, seed: int) -> bytes:
    """The same stream from another run: every id replaced, the same one the same way."""
    rnd = random.Random(seed)
    chosen: dict[bytes, bytes] = {}

    def other(match: re.Match[bytes]) -> bytes:
        whole = match.group(0)
        if whole not in chosen:
            prefix = match.group(1) or b""
            body = match.group(2) or match.group(3)
            chosen[whole] = prefix + "".join(rnd.choice(string.ascii_letters + string.digits)
                                             for _ in body).encode()
        return chosen[whole]

    return IDS.sub(other, data)


def copy(capture: Path, folder: Path, data: bytes | None = None) -> Path:
    """The capture (or ``data`` in its place) with its request sidecar, in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / capture.name
    target.write_bytes(capture.read_bytes() if data is None else data)
    request = capture.with_name(capture.name.removesuffix(".sse") + ".request.json")
    if request.is_file():
        shutil.copy(request, folder / request.name)
    return target


def lint(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "checker", "lint", *args, "--format", "json"], cwd=cwd,
                          capture_output=True, text=True, check=False, env={**os.environ, "NO_COLOR": "1"})


def codes(proc: subprocess.CompletedProcess[str]) -> dict[str, list[str]]:
    report = json.loads(proc.stdout)
    return {Path(record["path"]).name: [f["code"] for f in record["findings"]] for record in report["files"]}


def test_ids_of_another_run_keep_every_fingerprint() -> None:
    for capture in (CHAT, MESSAGES):
        data = capture.read_bytes()
        other = new_ids(data, 7)
        assert other != data
        request = request_for(capture)
        old = lint_bytes(data, request=request).findings
        new = lint_bytes(other, request=request).findings
        assert old and sorted(fingerprint(f, "s") for f in old) == sorted(fingerprint(f, "s") for f in new)


def test_chat_and_messages_findings_are_baselined(tmp_path: Path) -> None:
    today, tomorrow = tmp_path / "today", tmp_path / "tomorrow"
    copy(CHAT, today)
    copy(MESSAGES, today)
    baseline = tmp_path / "known.json"
    wrote = lint("today", "--write-baseline", str(baseline), cwd=tmp_path)
    assert wrote.returncode == 0, wrote.stderr
    document = json.loads(baseline.read_text())
    recorded = sorted({(Path(e["scenario"]).name, e["code"]) for e in document["findings"]})
    assert recorded == [("reasoning.sse", "CHT025"), ("reasoning.sse", "CHT027"),
                        ("reasoning_one_call.sse", "ANT004"), ("reasoning_one_call.sse", "ANT013"),
                        ("reasoning_one_call.sse", "ANT026"), ("reasoning_one_call.sse", "SCH001")]
    assert "chatcmpl-*" in baseline.read_text()  # ids are kept by kind, not by value

    gated = lint("today", "--baseline", str(baseline), cwd=tmp_path)
    assert gated.returncode == 0 and codes(gated) == {"reasoning.sse": [], "reasoning_one_call.sse": []}


def test_the_next_build_in_the_same_place_shows_only_its_new_findings(tmp_path: Path) -> None:
    builds = tmp_path / "streams"
    copy(CHAT, builds)
    copy(MESSAGES, builds)
    baseline = tmp_path / "known.json"
    assert lint("streams", "--write-baseline", str(baseline), cwd=tmp_path).returncode == 0
    chat = new_ids(CHAT.read_bytes(), 1).replace(b'"reasoning_content":"', b'"reasoning_content":"Hmm. ', 1)
    chat = chat.replace(b'"delta":{"content":', b'"delta":{"role":"assistant","content":', 2)
    messages = new_ids(MESSAGES.read_bytes(), 2)
    messages = messages.replace(b"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n", b"")
    assert messages != MESSAGES.read_bytes()
    copy(CHAT, builds, chat)
    copy(MESSAGES, builds, messages)
    proc = lint("streams", "--baseline", str(baseline), cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert codes(proc) == {"reasoning.sse": ["CHT004"], "reasoning_one_call.sse": ["ANT022"]}
    text = subprocess.run([sys.executable, "-m", "checker", "lint", "streams", "--baseline", str(baseline),
                           "--color", "never"], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert "6 of 6 baseline entries matched" in text.stdout + text.stderr
