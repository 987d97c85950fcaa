"""A refusal that the client's SDK retries by itself, seen through ``sse-check proxy`` (real processes on loopback):
the real openai-python retries a 429 and gets its stream, so the refused answer is HTP025 and no predicted
breakage; a client that does not count its retries (no ``x-stainless-retry-count``) gets HTP001 as before; an SDK
on its last retry gets HTP001 too. The saved captures lint the same."""

from __future__ import annotations

import json
import signal
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import openai

from conftest import ROOT, sse_check

if TYPE_CHECKING:
    from conftest import ServerProcess

LLAMA = ROOT / "captures" / "llama.cpp"


def _entries(report: Path) -> list[dict[str, Any]]:
    return json.loads(report.read_text())["files"]


def _codes(entry: dict[str, Any]) -> list[str]:
    return sorted(f["code"] for f in entry["findings"] if f["code"].startswith("HTP"))


def test_openai_python_retries_a_429_through_the_proxy_and_the_refusal_is_htp025(
        serve: Callable[..., ServerProcess], proxy: Callable[..., ServerProcess], tmp_path: Path) -> None:
    server = serve(str(LLAMA), "--status", "429", "--first", "1")
    report, saved = tmp_path / "report.json", tmp_path / "saved"
    px = proxy(server.url, "--format", "json", "-o", str(report), "--save", str(saved), "--profile", "llama.cpp")
    client = openai.OpenAI(base_url=f"{px.url}/v1", api_key="sk-test")  # the SDK's default: 2 retries
    events = [event.type for event in client.responses.create(model="plain_text", input="hi", stream=True)]
    assert events[-1] == "response.completed"  # the SDK waited the Retry-After, sent it again and got its stream
    assert px.stop(signal.SIGINT) == 0  # nothing failing: the refusal was absorbed by the SDK
    first, second = _entries(report)
    assert first["http"]["status"] == 429 and _codes(first) == ["HTP025"]
    assert second["http"]["status"] == 200 and _codes(second) == []
    finding = next(f for f in first["findings"] if f["code"] == "HTP025")
    assert "retried as openai-python does (Retry-After 1 s honoured)" in finding["message"]
    # the saved refusal lints the same (its meta says the client retries it)
    lint = sse_check("lint", str(saved / "001.sse"), "--format", "json", "--profile", "llama.cpp")
    assert _codes(json.loads(lint.stdout)["files"][0]) == ["HTP025"]


def test_a_refusal_to_a_client_that_does_not_count_retries_or_has_none_left_is_htp001(
        serve: Callable[..., ServerProcess], proxy: Callable[..., ServerProcess], tmp_path: Path) -> None:
    server = serve(str(LLAMA), "--status", "503")
    report = tmp_path / "report.json"
    px = proxy(server.url, "--format", "json", "-o", str(report))
    body = json.loads((LLAMA / "plain_text.request.json").read_text())
    with httpx.Client(base_url=px.url, timeout=10) as client:
        for extra in ({}, {"x-stainless-retry-count": "2", "x-stainless-lang": "python"},
                      {"x-stainless-retry-count": "0", "x-stainless-lang": "js"}):
            response = client.post("/v1/responses", json=body, headers={"X-SSE-Check-Scenario": "plain_text", **extra})
            assert response.status_code == 503
    assert px.stop(signal.SIGINT) == 1
    plain, last_retry, node = _entries(report)
    assert _codes(plain) == ["HTP001"]  # curl, or any client whose retries are unknown
    assert _codes(last_retry) == ["HTP001"]  # the SDK's third attempt: it raises now
    assert _codes(node) == ["HTP025"]
    assert "as openai-node does" in next(f["message"] for f in node["findings"] if f["code"] == "HTP025")
