"""``sse-check proxy`` watches all three endpoints: a Chat Completions and an Anthropic Messages answer
passing through are checked as their endpoint's dialect, saved, and ``lint`` of the saved folder agrees.
Real processes on loopback: ``sse-check serve`` as the upstream, the proxy in front, httpx as the client."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import httpx

from tests.live.conftest import ROOT, ServerProcess
from tests.live.test_probe_dialects import capture_set, chat_stream, messages_stream


def _post(base: str, path: str, body: dict[str, Any]) -> httpx.Response:
    with httpx.Client(base_url=base, timeout=10) as client:
        return client.post(path, json=body, headers={"X-SSE-Check-Scenario": "plain_text"})


def test_chat_and_messages_answers_are_watched_as_their_dialects(serve: Any, proxy: Callable[..., ServerProcess],
                                                                 tmp_path: Path) -> None:
    upstream = serve(str(capture_set(tmp_path / "replay", messages=True, faulty="chat")))
    saved, report = tmp_path / "saved", tmp_path / "report.json"
    px = proxy(upstream.url, "--save", str(saved), "--format", "json", "-o", str(report), "--profile", "llama.cpp")
    chat = _post(px.url, "/v1/chat/completions", {"model": "m", "stream": True,
                                                  "messages": [{"role": "user", "content": "hi"}]})
    messages = _post(px.url, "/v1/messages", {"model": "m", "stream": True, "max_tokens": 20,
                                              "messages": [{"role": "user", "content": "hi"}]})
    assert chat.content == chat_stream() and messages.content == messages_stream()  # passed on untouched
    assert px.stop(signal.SIGINT) == 1  # the chat answer was recorded as JSON: HTP002
    document = json.loads(report.read_text())
    apis = [entry["proxy"]["api"] for entry in document["files"]]
    assert apis == ["chat", "messages"]
    by_api = {entry["proxy"]["api"]: entry for entry in document["files"]}
    assert "HTP002" in {f["code"] for f in by_api["chat"]["findings"]}
    assert by_api["messages"]["passed"]
    assert "SCH010" not in {f["code"] for entry in document["files"] for f in entry["findings"]}
    lint = subprocess.run([sys.executable, "-m", "checker", "lint", str(saved), "--profile", "llama.cpp",
                           "--format", "json"], capture_output=True, text=True, cwd=ROOT, timeout=60)
    linted = {Path(f["path"]).name: f for f in json.loads(lint.stdout)["files"]}
    for number, entry in enumerate(document["files"], start=1):
        mine = linted[f"{number:03d}.sse"]
        assert sorted(f["code"] for f in mine["findings"]) == sorted(f["code"] for f in entry["findings"])
        assert mine.get("dialect") == entry.get("dialect")
