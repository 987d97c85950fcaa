"""The input-form flows (checker/surface/inputs.py, rules INP) against a real replay server (``sse-check serve``)
on loopback: each form taken, refused, declined as unsupported; a forced tool honoured and ignored.

The replay folder answers each step by its name (``system_message.answer``, ``named_tool_choice.force_get_time``)
with a capture of the real llama-server (captures/llama.cpp), or with an error body and its status line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.live.conftest import LLAMA_CAPTURES

MODEL = "tiny-qwen3-random"
FLOWS = "system_message,assistant_history,image_input,file_input"
TEXT = LLAMA_CAPTURES / "plain_text.sse"
# OpenAI's stream of a request with the web_search tool: a web_search_call, then the message.
SEARCHED = LLAMA_CAPTURES.parent / "real-openai" / "pydantic-openai-responses-model-web-search-tool-stream.sse"


def probe(url: str, *args: str, flows: str = FLOWS, profile: str = "llama.cpp",
          ) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    proc = subprocess.run([sys.executable, "-m", "checker", "probe", url, "--model", MODEL, "--api", "responses",
                           "--no-progress", "--format", "json", "--profile", profile, "-s", flows, *args],
                          capture_output=True, text=True, timeout=120)
    return proc, json.loads(proc.stdout) if proc.stdout.strip() else {}


def row(report: dict[str, Any], feature: str) -> dict[str, Any]:
    return next(r for r in report["capabilities"] if r["feature"] == feature)


def codes(report: dict[str, Any], name: str) -> list[str]:
    entry = next(f for f in report["files"] if f["path"] == name)
    return [f["code"] for f in entry["findings"] if f["severity"] != "info"]


def _error(folder: Path, name: str, status: int, message: str, kind: str) -> None:
    body = json.dumps({"error": {"code": status, "message": message, "type": kind}})
    (folder / f"{name}.sse").write_text(body)
    (folder / f"{name}.headers.txt").write_text(f"HTTP/1.1 {status}\nContent-Type: application/json\n")


def _answers(folder: Path, *, refuse_roles: bool = False, ignore_search: bool = False) -> Path:
    """A replay folder: text answers to the two forms a server must take (or a 400 to the roles), a 500 "not
    supported" to the image and a 400 to the file (as the real llama-server answers without a vision model),
    and the forced web_search answered by OpenAI's recorded search (or by a text answer: the hosted tool
    ignored)."""
    folder.mkdir()
    if refuse_roles:
        _error(folder, "system_message.answer", 400, "Invalid role 'developer'", "invalid_request_error")
    else:
        (folder / "system_message.answer.sse").write_bytes(TEXT.read_bytes())
    (folder / "assistant_history.answer.sse").write_bytes(TEXT.read_bytes())
    _error(folder, "image_input.answer", 500, "image input is not supported - hint: provide the mmproj",
           "server_error")
    _error(folder, "file_input.answer", 400, "'input_file' is not supported by llamacpp at this moment",
           "invalid_request_error")
    (folder / "hosted_web_search.answer.sse").write_bytes((TEXT if ignore_search else SEARCHED).read_bytes())
    return folder


def test_every_form_taken_is_supported(serve: Any, tmp_path: Path) -> None:
    server = serve(str(_answers(tmp_path / "set")))
    proc, report = probe(server.url)
    assert [f["path"] for f in report["files"]] == [
        "system_message.answer", "assistant_history.answer"]  # the declined image and file: one line each
    for feature in ("system_message", "assistant_history"):
        assert row(report, f"inputs.{feature}")["status"] == "supported"
    assert all(not codes(report, f["path"]) for f in report["files"])
    assert proc.returncode == 0


def test_an_image_or_file_declined_is_one_unsupported_line_even_with_a_500(serve: Any, tmp_path: Path) -> None:
    server = serve(str(_answers(tmp_path / "set")))
    _, report = probe(server.url)
    image, file = row(report, "inputs.image_input"), row(report, "inputs.file_input")
    assert image["status"] == "unsupported" and image["why"].startswith("POST /v1/responses: 500 (")
    assert file["status"] == "unsupported" and "input_file" in file["why"]
    agents = next(r for r in report["readiness"] if r["client"] == "openai-agents")
    assert agents["verdict"] == "ready"


def test_a_refused_system_or_developer_message_is_inp001(serve: Any, tmp_path: Path) -> None:
    server = serve(str(_answers(tmp_path / "set", refuse_roles=True)))
    proc, report = probe(server.url)
    assert proc.returncode == 1
    assert "INP001" in codes(report, "system_message.answer")
    system = row(report, "inputs.system_message")
    assert system["status"] == "broken" and system["finding"]["code"] == "INP001"
    assert "system and developer messages was refused: HTTP 400 Invalid role 'developer'" in system["why"]


def test_a_forced_hosted_tool_that_ran_is_supported(serve: Any, tmp_path: Path) -> None:
    server = serve(str(_answers(tmp_path / "set")))
    _, report = probe(server.url, flows="hosted_web_search", profile="openai")  # OpenAI's own answer
    # (recorded for a request without the step's max_output_tokens 200, it used more: LIF017, no INP finding)
    assert not [c for c in codes(report, "hosted_web_search.answer") if c.startswith("INP")]
    assert row(report, "inputs.hosted_web_search")["status"] == "supported"


def test_a_forced_hosted_tool_answered_without_its_call_is_inp002(serve: Any, tmp_path: Path) -> None:
    server = serve(str(_answers(tmp_path / "set", ignore_search=True)))
    proc, report = probe(server.url, flows="hosted_web_search")
    assert proc.returncode == 1
    assert codes(report, "hosted_web_search.answer") == ["INP002"]
    search = row(report, "inputs.hosted_web_search")
    assert search["status"] == "broken" and search["finding"]["code"] == "INP002"
    assert "web_search_call" in search["why"]
