"""probe of all three endpoints against a real replay server (``sse-check serve``) on loopback: each
dialect's suite is POSTed to its own endpoint, answered from that dialect's captures, checked, summed up per
dialect; an endpoint the server does not serve is one line, not a failure."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from checker.live import adapters
from checker.live.scenarios import builtin, pick, suite
from tests.live.conftest import ROOT, sse_check

LLAMA = ROOT / "captures" / "llama.cpp"


def _sse(events: list[dict[str, Any]], *, named: bool = False, done: bool = False) -> bytes:
    out = b""
    for event in events:
        head = f"event: {event['type']}\n" if named else ""
        out += f"{head}data: {json.dumps(event, separators=(',', ':'))}\n\n".encode()
    return out + (b"data: [DONE]\n\n" if done else b"")


def chat_stream() -> bytes:
    base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    chunks = [{**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]},
              {**base, "choices": [{"index": 0, "delta": {"content": "Sunny."}, "finish_reason": None}]},
              {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
              # the probe asks for usage (stream_options.include_usage): the last chunk carries it (CHT023)
              {**base, "choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}}]
    return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks).encode() + b"data: [DONE]\n\n"


def messages_stream() -> bytes:
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [],
               "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 5, "output_tokens": 1}}
    return _sse([
        {"type": "message_start", "message": message},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Sunny."}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
         "usage": {"output_tokens": 3}},
        {"type": "message_stop"},
    ], named=True)


def capture_set(root: Path, *, chat: bool = True, messages: bool = False, faulty: str | None = None) -> Path:
    """A replay folder: Responses' plain_text from the real llama-server, a chat and/or a Messages one; the
    ``faulty`` dialect's answer says it is JSON (HTP002 for a stream, whatever the dialect)."""
    root.mkdir()
    for path in LLAMA.glob("plain_text.*"):
        shutil.copy(path, root / path.name)
    for name, body, wanted in (("chat", chat_stream(), chat), ("messages", messages_stream(), messages)):
        if not wanted:
            continue
        folder = root / name
        folder.mkdir()
        (folder / "plain_text.sse").write_bytes(body)
        kind = "application/json" if faulty == name else "text/event-stream"
        (folder / "plain_text.headers.txt").write_text(f"HTTP/1.1 200 OK\ncontent-type: {kind}\n")
    return root


def probe(url: str, *args: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    proc = sse_check("probe", url, "--model", "m", "-s", "plain_text", "--profile", "llama.cpp", "--format", "json",
                     *args)
    return proc, json.loads(proc.stdout) if proc.stdout.strip().startswith("{") else {}


def test_every_dialect_gets_the_suite_in_its_own_requests() -> None:
    for api in ("responses", "chat", "messages"):
        adapter = adapters.get(api)
        for scenario in builtin(api):
            request = scenario.request("m")
            assert request["stream"] is (scenario.expect != "nonstream")
            assert scenario.api == adapter.name
    chat = {s.name: s.request("m") for s in builtin("chat")}
    assert chat["chat/plain_text"]["stream_options"] == {"include_usage": True}
    assert "stream_options" not in chat["chat/plain_text_nonstream"]
    assert chat["chat/reasoning_text_truncated"]["max_tokens"] == 16
    messages = {s.name: s for s in builtin("messages")}
    body = messages["messages/reasoning_text"].request("m")
    assert body["thinking"]["budget_tokens"] < body["max_tokens"]
    assert "thinking" not in messages["messages/reasoning_one_call"].request("m")  # forced tool: no thinking
    assert ("anthropic-version", "2023-06-01") in messages["messages/plain_text"].headers
    assert adapters.for_request(messages["messages/reasoning_one_call"].request("m")).name == "messages"
    # a bare name picks it in every dialect; a qualified one only there
    everything = suite(apis=("responses", "chat", "messages"))
    assert [s.name for s in pick(everything, ["plain_text"])] == ["plain_text", "chat/plain_text",
                                                                  "messages/plain_text"]
    assert [s.name for s in pick(everything, ["chat/plain_text"])] == ["chat/plain_text"]


def test_all_three_endpoints_and_one_line_for_the_one_not_served(serve: Any, tmp_path: Path) -> None:
    server = serve(str(capture_set(tmp_path / "replay")))
    proc, report = probe(server.url, "--save", str(tmp_path / "saved"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    urls = {f["path"]: f["http"]["url"] for f in report["files"]}
    assert urls == {"plain_text": server.url + "/v1/responses", "chat/plain_text": server.url + "/v1/chat/completions"}
    assert report["not_served"] == [{"api": "messages", "reason": "POST /v1/messages: 404",
                                     "scenarios": 1}]
    rows = {row["api"]: row for row in report["dialects"]}
    assert rows["chat"]["passed"] == 1 and rows["messages"]["not_served"] is not None
    # nothing of the absent endpoint is saved; lint of the saved folder reports what the probe did
    saved = tmp_path / "saved"
    assert (saved / "chat" / "plain_text.sse").read_bytes() == chat_stream()
    assert not (saved / "messages").exists()
    lint = sse_check("lint", str(saved), "--profile", "llama.cpp", "--format", "json")
    assert lint.returncode == 0, lint.stdout
    text = sse_check("probe", server.url, "--model", "m", "-s", "plain_text", "--profile", "llama.cpp")
    lines = text.stdout.splitlines()
    assert "messages: not served (POST /v1/messages: 404); its 1 scenario(s) not run" in lines
    assert max(len(line) for line in lines) <= 80
    assert any(line.split()[:2] == ["chat", "/chat/completions"] for line in lines)  # the table across dialects


def test_a_faulty_answer_of_one_dialect_fails_that_dialect(serve: Any, tmp_path: Path) -> None:
    # a dialect is checked by its own machine once registered (checker.dialects); before, its stream is
    # another API's to the default one, so only the HTTP fault is common ground
    from checker import dialects

    for faulty in [d for d in ("chat", "messages") if d in dialects.names()] or ["chat"]:
        folder = capture_set(tmp_path / faulty, messages="messages" in dialects.names(), faulty=faulty)
        server = serve(str(folder))
        proc, report = probe(server.url)
        assert proc.returncode == 1, proc.stdout
        failed = {f["path"] for f in report["files"] if not f["passed"]}
        assert failed == {f"{faulty}/plain_text"}
        codes = {c["code"] for f in report["files"] if not f["passed"] for c in f["findings"]}
        assert "HTP002" in codes
        rows = {row["api"]: row for row in report["dialects"]}
        assert rows[faulty]["failed"] == 1 and all(rows[a]["failed"] == 0 for a in rows if a != faulty)
    # --api responses: as before the option existed, one dialect
    proc, report = probe(server.url, "--api", "responses")
    assert [f["path"] for f in report["files"]] == ["plain_text"] and proc.returncode == 0


def test_one_dialect_probed_names_its_own_endpoint(serve: Any, tmp_path: Path) -> None:
    # `--api chat` posts to /v1/chat/completions only: the report's target and the text's last line say so,
    # not the /v1/responses URL the base was turned into
    server = serve(str(capture_set(tmp_path / "replay")))
    proc, report = probe(server.url, "--api", "chat")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert report["target"]["url"] == server.url + "/v1/chat/completions"
    assert report["target"]["apis"] == ["chat"] and report["target"]["base"] == server.url + "/v1"
    text = sse_check("probe", server.url, "--model", "m", "--api", "chat", "-s", "plain_text", "--profile", "llama.cpp")
    assert f"probed {server.url}/v1/chat/completions (model m, profile llama.cpp)" in text.stdout.splitlines()
