"""``sse-check proxy`` as a real process between real clients and a real upstream.

The upstream is ``sse-check serve captures/llama.cpp`` (the session's ``llama_server``) or, where the
test must watch the upstream's own socket, a small raw-socket server on loopback. The clients are httpx
and openai-python. What is asserted: the client gets exactly the upstream's bytes, status and end-to-end
headers (also when the upstream cuts the body, and also for a client that fails on the stream, which
fails the same way); the proxy's findings are those of ``sse-check lint`` on the same captures; a
two-turn conversation gets its replay findings and its cache table; a client that leaves closes the
upstream request; concurrent streams do not mix.
"""

from __future__ import annotations

import asyncio
import copy
import gzip
import json
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import jsonschema
import openai
import pytest

from conftest import start_proxy

if TYPE_CHECKING:
    from conftest import ServerProcess

ROOT = Path(__file__).resolve().parents[2]
LLAMA = ROOT / "captures" / "llama.cpp"
NAMES = sorted(path.stem for path in LLAMA.glob("*.sse"))
SSE = {name: (LLAMA / f"{name}.sse").read_bytes() for name in NAMES}
# Headers that belong to one connection, or that each server stack writes itself.
PER_CONNECTION = {"date", "transfer-encoding", "content-length", "connection", "keep-alive"}
SECRET = "sk-live-proxy-test-0123456789"


def request_body(name: str) -> dict[str, Any]:
    return json.loads((LLAMA / f"{name}.request.json").read_text())


def endpoint(name: str) -> str:
    return "/v1/chat/completions" if "messages" in request_body(name) else "/v1/responses"


def post(base: str, name: str, *, fault: str | None = None, body: dict[str, Any] | None = None,
         scenario: str | None = None, extra: dict[str, str] | None = None) -> httpx.Response:
    headers = {"X-SSE-Check-Scenario": scenario or name, **(extra or {})}
    if fault:
        headers["X-SSE-Check-Fault"] = fault
    with httpx.Client(base_url=base, timeout=10) as client:
        return client.post(endpoint(name), json=body if body is not None else request_body(name), headers=headers)


def end_to_end(response: httpx.Response) -> list[tuple[str, str]]:
    return sorted((k.lower(), v) for k, v in response.headers.multi_items() if k.lower() not in PER_CONNECTION)


def stop(process: ServerProcess) -> int:
    return process.stop(signal.SIGINT)


def codes(entry: dict[str, Any]) -> set[str]:
    return {f["code"] for f in entry["findings"]}


@pytest.fixture(scope="module")
def shared_proxy(llama_server: ServerProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """One proxy in front of the session's llama.cpp replay server, for the byte-level tests."""
    report = tmp_path_factory.mktemp("proxy") / "report.json"
    process = start_proxy(llama_server.url, "--quiet", "--format", "json", "-o", str(report))
    try:
        yield process
    finally:
        process.stop()
        process._stderr.close()


# --- transparency -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("fault", [None, "chunk-size=7"])
def test_httpx_gets_exactly_the_upstream_answer(llama_server: ServerProcess, shared_proxy: ServerProcess,
                                               name: str, fault: str | None) -> None:
    direct = post(llama_server.url, name, fault=fault)
    proxied = post(shared_proxy.url, name, fault=fault)
    assert proxied.status_code == direct.status_code
    assert proxied.content == direct.content == SSE[name]
    assert end_to_end(proxied) == end_to_end(direct)
    assert len(proxied.headers.get_list("date")) == 1  # the upstream's, none added


def test_openai_python_works_through_the_proxy_as_without_it(llama_server: ServerProcess,
                                                              shared_proxy: ServerProcess) -> None:
    def client(base: str) -> openai.OpenAI:
        return openai.OpenAI(base_url=f"{base}/v1", api_key=SECRET, max_retries=0)

    through, direct = client(shared_proxy.url), client(llama_server.url)
    with through.responses.with_streaming_response.create(model="reasoning_text", input="hi", stream=True) as raw:
        assert b"".join(raw.iter_bytes()) == SSE["reasoning_text"]
    events = [e.type for e in through.responses.create(model="reasoning_one_call", input="hi", stream=True)]
    assert events == [e.type for e in direct.responses.create(model="reasoning_one_call", input="hi", stream=True)]
    assert events[0] == "response.created" and events[-1] == "response.completed"

    def accumulate(api: openai.OpenAI) -> str:
        # responses.stream() fails on llama.cpp's streams (no output_index): it must fail the same way.
        try:
            with api.responses.stream(model="reasoning_text", input="hi") as stream:
                for _ in stream:
                    pass
        except Exception as exc:  # noqa: BLE001 - the outcome is the point
            return f"{type(exc).__name__}: {exc}"
        return "ok"

    assert accumulate(through) == accumulate(direct) != "ok"


def test_concurrent_streams_do_not_mix(shared_proxy: ServerProcess) -> None:
    names = ["plain_text", "reasoning_text", "reasoning_one_call", "replay-turn1", "chat-reasoning_text"]

    async def one(client: httpx.AsyncClient, name: str) -> bytes:
        got = bytearray()
        async with client.stream("POST", endpoint(name), json=request_body(name),
                                 headers={"X-SSE-Check-Scenario": name,
                                          "X-SSE-Check-Fault": "chunk-size=97;delay=1"}) as response:
            async for chunk in response.aiter_raw():
                got += chunk
        return bytes(got)

    async def all_at_once() -> list[bytes]:
        async with httpx.AsyncClient(base_url=shared_proxy.url, timeout=20) as client:
            return await asyncio.gather(*(one(client, name) for name in names * 2))

    assert asyncio.run(all_at_once()) == [SSE[name] for name in names * 2]


# --- the findings -----------------------------------------------------------------------------------------


def _lint(*paths: Path) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, "-m", "checker", "lint", *map(str, paths), "--format", "json"],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def _comparable(findings: list[dict[str, Any]], drop: set[str] = frozenset()) -> list[tuple[Any, ...]]:
    return [(f["code"], f["severity"], f["message"], json.dumps(f["position"]), f["occurrences"])
            for f in findings if f["code"] not in drop and not f["code"].startswith("RPL")]


def test_the_proxy_reports_what_lint_reports_on_the_same_captures(llama_server: ServerProcess,
                                                                    proxy: Callable[..., ServerProcess],
                                                                    tmp_path: Path) -> None:
    saved, report = tmp_path / "saved", tmp_path / "report.json"
    px = proxy(llama_server.url, "--save", str(saved), "--format", "json", "-o", str(report))
    for name in NAMES:
        post(px.url, name, extra={"Authorization": f"Bearer {SECRET}"})
    assert stop(px) == 1  # llama.cpp's streams have errors under the default (openai) profile
    document = json.loads(report.read_text())
    jsonschema.validate(document, json.loads((ROOT / "docs" / "report-schema.json").read_text()))
    assert document["command"] == "proxy" and document["upstream"] == llama_server.url
    linted = {Path(f["path"]).name: f for f in _lint(saved)["files"]}
    originals = {Path(f["path"]).stem: f for f in _lint(*(LLAMA / f"{n}.sse" for n in NAMES))["files"]}
    assert [f["path"] for f in document["files"]] == [
        f"{n:03d}-{endpoint(name).strip('/').replace('/', '-')}" for n, name in enumerate(NAMES, start=1)]
    for number, (entry, name) in enumerate(zip(document["files"], NAMES), start=1):
        chat = entry["proxy"]["api"] == "chat"
        lint_entry = linted[f"{number:03d}.sse"]
        # The same findings, also for a chat answer: the proxy and lint of what it saved check it as Chat
        # Completions (the saved meta names the chat endpoint), and so does lint of the bare body (its first chunk).
        assert _comparable(entry["findings"]) == _comparable(lint_entry["findings"]), name
        if chat:
            codes = {f["code"] for f in entry["findings"]}
            assert codes == {f["code"] for f in originals[name]["findings"]} == {"CHT025"}, codes
        assert (entry["events"], entry["bytes"], entry["terminal"]) == (
            lint_entry["events"], lint_entry["bytes"], lint_entry["terminal"])
        if entry["http"]["status"] == 200 and not chat:  # a plain capture has no HTTP record to lint
            assert _comparable(entry["findings"]) == _comparable(originals[name]["findings"]), name
    assert (saved / "001.sse").read_bytes() == SSE[NAMES[0]]
    for path in saved.iterdir():
        assert SECRET not in path.read_text(errors="replace"), path
    lines = [line for line in px.stderr().splitlines() if line[:3].isdigit()]
    assert len(lines) == len(NAMES)
    assert lines[0].startswith(f"001 POST {endpoint(NAMES[0])} 200 · ")


def _completed_output(body: bytes) -> list[dict[str, Any]]:
    for block in body.decode().split("\n\n"):
        if block.startswith("event: response.completed"):
            return json.loads(block.split("data: ", 1)[1])["response"]["output"]
    raise AssertionError("no response.completed")


def _turn2(output: list[dict[str, Any]]) -> dict[str, Any]:
    """The replay-continue-exact request as a client builds it from what turn 1 emitted."""
    body = request_body("replay-continue-exact")
    results = [item for item in body["input"] if item.get("type") == "function_call_output"]
    for result, call in zip(results, [item for item in output if item["type"] == "function_call"]):
        result["call_id"] = call["call_id"]
    body["input"] = [{"role": "user", "content": request_body("replay-turn1")["input"]}, *output, *results]
    return body


def test_a_two_turn_conversation_gets_its_replay_findings_and_cache_table(
        llama_server: ServerProcess, proxy: Callable[..., ServerProcess], tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    px = proxy(llama_server.url, "--profile", "llama.cpp", "--format", "json", "-o", str(report))
    turn1 = post(px.url, "replay-turn1")
    output = _completed_output(turn1.content)
    altered = copy.deepcopy(output)
    altered[0]["content"][0]["text"] += " (edited)"
    dropped = [item for item in output if item["type"] != "reasoning"]
    for body, scenario in ((_turn2(copy.deepcopy(output)), "replay-continue-exact"),
                           (_turn2(altered), "replay-continue-exact"),
                           (_turn2(dropped), "replay-continue-dropped"),
                           (request_body("replay-continue-exact"), "replay-continue-exact")):
        assert post(px.url, "replay-continue-exact", body=body, scenario=scenario).content == SSE[scenario]
    stop(px)
    document = json.loads(report.read_text())
    replay = [{c for c in codes(entry) if c.startswith("RPL")} for entry in document["files"]]
    # exact replay: nothing; altered: RPL001; dropped: RPL003; the recorded turn 2 replays the reasoning of
    # another recording of turn 1 (other ids): RPL002.
    assert replay == [set(), set(), {"RPL001"}, {"RPL003"}, {"RPL002"}]
    assert {entry["proxy"]["conversation"] for entry in document["files"]} == {"c1"}
    assert [entry["proxy"]["predecessor"] for entry in document["files"]][:2] == [None, 1]
    rows = {row["number"]: row for row in document["cache"]}
    assert (rows[1]["prompt_tokens"], rows[1]["cached_tokens"], rows[1]["previous_prompt_tokens"]) == (275, 0, None)
    assert (rows[2]["prompt_tokens"], rows[2]["cached_tokens"], rows[2]["previous_prompt_tokens"]) == (384, 284, 275)
    assert [row["number"] for row in document["cache"]] == [1, 2, 3, 4, 5]
    live = px.stderr()
    assert "RPL001" in live and "c1#2" in live


# --- endings --------------------------------------------------------------------------------------------


class HangingUpstream(threading.Thread):
    """A raw-socket HTTP upstream: answers the head of a stream, then waits and notes when its client leaves."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.closed = threading.Event()
        self.head = b"event: response.created\ndata: {\"type\":\"response.created\"}\n\n"

    def run(self) -> None:
        conn, _ = self.sock.accept()
        with conn:
            conn.settimeout(20)
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(4096)
            conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
                         + f"{len(self.head):x}\r\n".encode() + self.head + b"\r\n")
            try:
                while conn.recv(4096):
                    pass  # the rest of the request body, if any
            except OSError:
                pass
            self.closed.set()


def test_a_client_that_leaves_closes_the_upstream_request(proxy: Callable[..., ServerProcess],
                                                          tmp_path: Path) -> None:
    upstream = HangingUpstream()
    upstream.start()
    report = tmp_path / "report.json"
    px = proxy(upstream.url, "--format", "json", "-o", str(report))
    with httpx.Client(base_url=px.url, timeout=10) as client:
        with client.stream("POST", "/v1/responses", json={"input": "hi", "stream": True}) as response:
            assert next(response.iter_raw()) == upstream.head
            assert not upstream.closed.is_set()
        # leaving the block closes the client's connection mid-stream
    assert upstream.closed.wait(5), "the proxy kept the upstream request open"
    stop(px)
    (entry,) = json.loads(report.read_text())["files"]
    assert entry["http"]["ending"] == {"kind": "interrupted", "detail": "the client disconnected",
                                       "bytes": len(upstream.head)}


def test_an_upstream_that_cuts_the_body_still_delivers_every_byte(llama_server: ServerProcess,
                                                                  proxy: Callable[..., ServerProcess],
                                                                  tmp_path: Path) -> None:
    report = tmp_path / "report.txt"
    px = proxy(llama_server.url, "--format", "text", "-o", str(report))

    def read(base: str) -> tuple[bytes, type[Exception] | None]:
        got, error = bytearray(), None
        try:
            with httpx.Client(base_url=base, timeout=10) as client:
                with client.stream("POST", "/v1/responses", json=request_body("plain_text"),
                                   headers={"X-SSE-Check-Scenario": "plain_text",
                                            "X-SSE-Check-Fault": "chunk-size=100;disconnect-after=700"}) as r:
                    for chunk in r.iter_raw():
                        got += chunk
        except httpx.HTTPError as exc:
            error = type(exc)
        return bytes(got), error

    assert read(px.url) == read(llama_server.url) == (SSE["plain_text"][:700], httpx.RemoteProtocolError)
    post(px.url, "replay-turn1")  # a whole answer too, for the cache table
    assert stop(px) == 1
    text = report.read_text()
    assert "HTP012" in text and "LIF006" in text  # the cut is reported, as lint reports it
    assert "answers" in text and "prompt cache" in text
    assert "001-v1-responses" in text and "disconnect" in text


# --- the checker never touches the traffic -----------------------------------------------------------------


def _through_app(app: Any, name: str) -> httpx.Response:
    async def go() -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://proxy") as client:
            response = await client.post(endpoint(name), json=request_body(name),
                                         headers={"X-SSE-Check-Scenario": name})
        await app.aclose()
        return response

    return asyncio.run(go())


def test_a_checker_error_is_reported_and_the_bytes_still_pass(llama_server: ServerProcess,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from checker.http_checks import ExchangeLinter
    from checker.live import proxy as proxy_module

    def broken(self: Any, chunk: bytes) -> list[Any]:
        raise RuntimeError("boom")

    monkeypatch.setattr(ExchangeLinter, "feed", broken)
    app = proxy_module.Proxy(proxy_module.ProxyConfig(upstream=llama_server.url))
    response = _through_app(app, "reasoning_text")
    assert response.content == SSE["reasoning_text"]
    (record,) = app.records
    (finding,) = [f for f in record.result.findings if f.code == "SSE099"]
    assert "RuntimeError: boom" in finding.message


def test_a_history_error_costs_only_the_replay_checks(llama_server: ServerProcess,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from checker.live import proxy as proxy_module

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise KeyError("history")

    app = proxy_module.Proxy(proxy_module.ProxyConfig(upstream=llama_server.url))
    monkeypatch.setattr(app.tracker, "begin", broken)
    response = _through_app(app, "plain_text")
    assert response.content == SSE["plain_text"]
    (record,) = app.records
    found = {f.code for f in record.result.findings}
    assert "SSE099" in found and "ITM001" in found  # the stream was still linted
    assert any("history checks" in f.message for f in record.result.findings)


def test_an_unreachable_upstream_is_a_502_and_a_finding(proxy: Callable[..., ServerProcess], tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as sock:
        port = sock.getsockname()[1]  # free once closed: nothing listens there
    report = tmp_path / "report.json"
    px = proxy(f"http://127.0.0.1:{port}", "--format", "json", "-o", str(report))
    started = time.monotonic()
    response = post(px.url, "plain_text")
    assert time.monotonic() - started < 5
    assert response.status_code == 502 and response.json()["error"]["code"] == "upstream_unreachable"
    assert stop(px) == 1
    (entry,) = json.loads(report.read_text())["files"]
    assert "HTP007" in codes(entry)


def test_stopping_the_proxy_ends_open_streams_and_reports_them(llama_server: ServerProcess,
                                                               proxy: Callable[..., ServerProcess],
                                                               tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    px = proxy(llama_server.url, "--format", "json", "-o", str(report))
    with httpx.Client(base_url=px.url, timeout=10) as client:
        with client.stream("POST", "/v1/responses", json={"stream": True},
                           headers={"X-SSE-Check-Scenario": "plain_text", "X-SSE-Check-Fault": "stall-after=300"}) as r:
            chunks = r.iter_raw()
            got = next(chunks)
            started = time.monotonic()
            assert stop(px) == 1
            assert time.monotonic() - started < 3
            with pytest.raises((httpx.RemoteProtocolError, httpx.ReadError)):
                for chunk in chunks:
                    got += chunk
    assert SSE["plain_text"].startswith(got)
    (entry,) = json.loads(report.read_text())["files"]
    assert entry["http"]["ending"]["kind"] == "interrupted"
    assert entry["http"]["ending"]["detail"] == "the proxy was stopped"


class EncodedUpstream(threading.Thread):
    """A raw-socket upstream that answers one request with a body under a Content-Encoding."""

    def __init__(self, payload: bytes, encoding: str) -> None:
        super().__init__(daemon=True)
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.payload, self.encoding = payload, encoding

    def run(self) -> None:
        conn, _ = self.sock.accept()
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(4096)
            conn.sendall(f"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-encoding: {self.encoding}\r\n"
                         f"content-length: {len(self.payload)}\r\nconnection: close\r\n\r\n".encode() + self.payload)


def _raw_through_proxy(upstream: EncodedUpstream) -> tuple[bytes, Any]:
    from checker.live.proxy import Proxy, ProxyConfig

    upstream.start()
    app = Proxy(ProxyConfig(upstream=upstream.url))

    async def go() -> bytes:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://proxy") as client:
            async with client.stream("POST", "/v1/responses", json={"stream": True}) as response:
                raw = b"".join([chunk async for chunk in response.aiter_raw()])
        await app.aclose()
        return raw

    raw = asyncio.run(go())
    (record,) = app.records
    return raw, record


def test_a_compressed_answer_is_passed_on_compressed_and_checked_decompressed() -> None:
    from checker.engine import lint_bytes

    upstream = EncodedUpstream(gzip.compress(SSE["reasoning_one_call"]), "gzip")
    raw, record = _raw_through_proxy(upstream)
    assert raw == upstream.payload and gzip.decompress(raw) == SSE["reasoning_one_call"]
    expected = lint_bytes(SSE["reasoning_one_call"], request={"stream": True}).findings
    assert [(f.code, f.message) for f in record.result.findings] == [(f.code, f.message) for f in expected]


def test_an_answer_in_an_encoding_the_checker_cannot_read_is_passed_on_unchecked() -> None:
    upstream = EncodedUpstream(b"\x8b\x00not really brotli", "br")
    raw, record = _raw_through_proxy(upstream)
    assert raw == upstream.payload
    assert record.result is None and "Content-Encoding 'br'" in record.note


# --- the endpoint and the request decide what an answer must be (issue 14) ---------------------------------


def test_refusals_chat_answers_and_a_client_that_leaves_are_judged_right(llama_server: ServerProcess,
                                                                         proxy: Callable[..., ServerProcess],
                                                                         tmp_path: Path) -> None:
    saved, report = tmp_path / "saved", tmp_path / "report.json"
    px = proxy(llama_server.url, "--save", str(saved), "--format", "json", "-o", str(report))
    client = openai.OpenAI(base_url=f"{px.url}/v1", api_key=SECRET, max_retries=0)
    refuse = {"X-SSE-Check-Fault": "status=400"}  # the replay server answers as a server refusing the request
    # Invalid requests, as openai-python sends them unchecked: HTTP 400 is the right answer (HTP021, no HTP001).
    with pytest.raises(openai.BadRequestError):
        client.responses.create(model="m", input=1, extra_headers=refuse)  # type: ignore[arg-type]
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model="m", messages=1, extra_headers=refuse)  # type: ignore[arg-type]
    # A valid request that the real llama-server refuses for previous_response_id (its recorded answer): HTP022.
    with pytest.raises(openai.BadRequestError, match="previous_response_id"):
        client.responses.create(model="m", input="hi", previous_response_id="resp_abc", stream=True,
                                extra_headers={"X-SSE-Check-Scenario": "error_previous_response_id"})
    # A non-streamed chat answer is a chat completion, not a Response object (no HTP018).
    completion = client.chat.completions.create(
        model="m", messages=request_body("chat-reasoning_text")["messages"],
        extra_headers={"X-SSE-Check-Scenario": "chat-reasoning_text"})
    assert completion.choices[0].message.content
    # A client that leaves mid-stream: reported as what happened (HTP020), not as a missing terminal event.
    with httpx.Client(base_url=px.url, timeout=10) as http:
        with http.stream("POST", "/v1/responses", json={"input": "hi", "stream": True},
                         headers={"X-SSE-Check-Scenario": "plain_text", "X-SSE-Check-Fault": "chunk-size=64;delay=50"}) \
                as response:
            assert next(response.iter_raw())
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and len(list(saved.glob("*.meta.json"))) < 5:
        time.sleep(0.05)  # the proxy records the abandoned exchange once it has seen the client leave
    stop(px)
    entries = json.loads(report.read_text())["files"]
    found = [codes(entry) for entry in entries]
    # The chat answer is llama-server's recorded completion: a chat completion (no HTP018) that lacks
    # choices[].logprobs and message.refusal, which CreateChatCompletionResponse requires (CHT002; the llama.cpp
    # profile documents it).
    assert found[:4] == [{"HTP021"}, {"HTP021"}, {"HTP022"}, {"CHT002"}], found
    assert "HTP020" in found[4] and "LIF006" not in found[4], found[4]
    assert entries[4]["http"]["ending"]["detail"] == "the client disconnected"
    assert "previous_response_id" in next(f["message"] for f in entries[2]["findings"])
    # sse-check lint of what the proxy saved says the same.
    linted = sorted(_lint(saved)["files"], key=lambda f: f["path"])
    assert [_comparable(f["findings"]) for f in linted] == [_comparable(e["findings"]) for e in entries]


def test_the_report_groups_the_documented_deviations(llama_server: ServerProcess,
                                                     proxy: Callable[..., ServerProcess], tmp_path: Path) -> None:
    report = tmp_path / "report.txt"
    px = proxy(llama_server.url, "--profile", "llama.cpp", "--format", "text", "-o", str(report))
    post(px.url, "plain_text")
    post(px.url, "replay-turn1")
    assert stop(px) == 0
    text = report.read_text()
    assert "known deviations of profile llama.cpp, as documented" in text
    assert text.count("no event carries sequence_number") == 1 and "· 2 answers ·" in text
