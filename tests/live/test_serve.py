"""``sse-check serve`` as a real subprocess, driven with httpx, raw sockets and openai-python."""

from __future__ import annotations

import asyncio
import json
import random
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx
import openai
import pytest

from checker.live.faults import FAULTS, FaultError, Faults, body_chunks, parse_header, split_body
from checker.live.serve import Capture, Catalogue, parse_head

if TYPE_CHECKING:  # the fixtures `llama_server` and `serve` come from tests/live/conftest.py
    from conftest import ServerProcess

ROOT = Path(__file__).resolve().parents[2]
LLAMA_CAPTURES = ROOT / "captures" / "llama.cpp"
CAPTURES = sorted(LLAMA_CAPTURES.glob("*.sse"))
NAMES = [path.stem for path in CAPTURES]
SSE = {path.stem: path.read_bytes() for path in CAPTURES}
PLAIN = SSE["plain_text"]


def request_body(name: str) -> dict[str, Any]:
    return json.loads((LLAMA_CAPTURES / f"{name}.request.json").read_text())


def endpoint(name: str) -> str:
    return "/v1/chat/completions" if "messages" in request_body(name) else "/v1/responses"


@pytest.fixture
def client(llama_server: ServerProcess) -> httpx.Client:
    with httpx.Client(base_url=llama_server.url, timeout=10) as c:
        yield c


def stream_body(client: httpx.Client, *, scenario: str | None = None, fault: str | None = None,
                body: dict[str, Any] | None = None, path: str = "/v1/responses") -> tuple[httpx.Response, bytes]:
    headers = {}
    if scenario:
        headers["X-SSE-Check-Scenario"] = scenario
    if fault:
        headers["X-SSE-Check-Fault"] = fault
    response = client.post(path, json=body if body is not None else {"input": "hi", "stream": True}, headers=headers)
    return response, response.content


def read_until_error(client: httpx.Client, fault: str, scenario: str = "plain_text",
                     timeout: httpx.Timeout | None = None) -> tuple[bytes, Exception | None]:
    """Stream a faulted response; the bytes received and the exception that ended the read, if any."""
    got = bytearray()
    error: Exception | None = None
    try:
        with client.stream("POST", "/v1/responses", json={"stream": True},
                           headers={"X-SSE-Check-Scenario": scenario, "X-SSE-Check-Fault": fault},
                           timeout=timeout or client.timeout) as response:
            assert response.status_code == 200
            for chunk in response.iter_raw():
                got += chunk
    except httpx.HTTPError as exc:
        error = exc
    return bytes(got), error


def raw_post(server: ServerProcess, path: str, headers: dict[str, str], body: bytes) -> tuple[int, list[int], bytes]:
    """POST over a plain socket; (status, the HTTP chunk sizes, the de-chunked body)."""
    url = urlsplit(server.url)
    lines = [f"POST {path} HTTP/1.1", f"Host: {url.netloc}", "Content-Type: application/json",
             f"Content-Length: {len(body)}", "Connection: close", *(f"{k}: {v}" for k, v in headers.items())]
    with socket.create_connection((url.hostname, url.port), timeout=10) as sock:
        sock.sendall("\r\n".join(lines).encode() + b"\r\n\r\n" + body)
        data = bytearray()
        while chunk := sock.recv(65536):
            data += chunk
    head, _, rest = bytes(data).partition(b"\r\n\r\n")
    assert b"transfer-encoding: chunked" in head.lower()
    sizes, payload = [], bytearray()
    while True:
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            break
        sizes.append(size)
        payload += rest[:size]
        assert rest[size : size + 2] == b"\r\n"
        rest = rest[size + 2 :]
    return int(head.split()[1]), sizes, bytes(payload)


# --- the server answers -------------------------------------------------------------------------------


def test_announces_every_capture_and_health(llama_server: ServerProcess, client: httpx.Client) -> None:
    assert llama_server.count == len(CAPTURES) == 11
    assert urlsplit(llama_server.url).hostname == "127.0.0.1"
    assert client.get("/health").json() == {"status": "ok"}


def test_models_lists_the_scenarios(client: httpx.Client) -> None:
    listing = client.get("/v1/models").json()
    assert listing["object"] == "list"
    # The model the captures' answers came from (their recorded requests'), then every scenario by name.
    assert [model["id"] for model in listing["data"]] == ["tiny-qwen3-random", *NAMES]
    assert all(model["object"] == "model" for model in listing["data"])


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("chunk", [None, 7])
def test_replay_is_byte_exact(client: httpx.Client, name: str, chunk: int | None) -> None:
    response, body = stream_body(client, scenario=name, fault=f"chunk-size={chunk}" if chunk else None,
                                 body={**request_body(name), "stream": True}, path=endpoint(name))
    assert body == SSE[name]
    assert response.headers["x-sse-check-scenario"] == name


@pytest.mark.parametrize("name", ["plain_text", "reasoning_one_call"])
def test_replay_is_byte_exact_one_byte_at_a_time(client: httpx.Client, name: str) -> None:
    response, body = stream_body(client, scenario=name, fault="chunk-size=1")
    assert response.status_code == 200
    assert body == SSE[name]


def test_recorded_status_and_headers_are_answered(client: httpx.Client) -> None:
    response, body = stream_body(client, scenario="plain_text")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    assert response.headers["server"] == "llama.cpp"
    assert response.headers["x-accel-buffering"] == "no"
    assert response.headers["transfer-encoding"] == "chunked"  # computed by the server, not copied
    assert "keep-alive" not in response.headers


def test_http_chunks_follow_chunk_size_and_default_to_one_event(llama_server: ServerProcess) -> None:
    request = json.dumps({"stream": True}).encode()
    headers = {"X-SSE-Check-Scenario": "plain_text", "X-SSE-Check-Fault": "chunk-size=7"}
    status, sizes, payload = raw_post(llama_server, "/v1/responses", headers, request)
    assert status == 200 and payload == PLAIN
    assert set(sizes[:-1]) == {7} and 1 <= sizes[-1] <= 7
    status, sizes, payload = raw_post(llama_server, "/v1/responses", {"X-SSE-Check-Scenario": "plain_text"}, request)
    assert payload == PLAIN
    assert len(sizes) == PLAIN.count(b"\n\n")  # one chunk per event


# --- choosing the capture ---------------------------------------------------------------------------


def test_header_selects_and_wins_over_model(client: httpx.Client) -> None:
    response, body = stream_body(client, scenario="reasoning_one_call",
                                 body={"model": "plain_text", "input": "x", "stream": True})
    assert body == SSE["reasoning_one_call"]
    assert response.headers["x-sse-check-selected-by"] == "header"


def test_model_selects(client: httpx.Client) -> None:
    response, body = stream_body(client, body={"model": "reasoning_text", "input": "anything", "stream": True})
    assert body == SSE["reasoning_text"]
    assert response.headers["x-sse-check-selected-by"] == "model"


@pytest.mark.parametrize("name", [n for n in NAMES if (LLAMA_CAPTURES / f"{n}.request.json").exists()])
def test_request_body_selects_whatever_the_model(client: httpx.Client, name: str) -> None:
    body = {**request_body(name), "model": "some-other-model"}
    response, content = stream_body(client, body=body, path=endpoint(name))
    assert response.headers.get("x-sse-check-scenario") == name
    assert response.headers.get("x-sse-check-selected-by") == "request"
    assert content == SSE[name]


def test_request_body_match_distinguishes_max_output_tokens(client: httpx.Client) -> None:
    body = request_body("reasoning_text_truncated")
    assert body["max_output_tokens"] == 20
    response, _ = stream_body(client, body={**body, "model": "m", "temperature": 0.2, "stream_options": {}})
    assert response.headers["x-sse-check-scenario"] == "reasoning_text_truncated"  # sampling ignored
    response, _ = stream_body(client, body={**body, "model": "m", "max_output_tokens": 200})
    assert response.status_code == 404


def test_chat_capture_is_not_matched_on_the_responses_endpoint(client: httpx.Client) -> None:
    response, _ = stream_body(client, body={**request_body("chat-reasoning_text"), "model": "m"})
    assert response.status_code == 404


def test_unknown_scenario_is_a_404_json_listing_the_scenarios(client: httpx.Client) -> None:
    for response in (stream_body(client, scenario="nope")[0],
                     stream_body(client, body={"model": "nope", "input": "unmatched", "stream": True})[0]):
        assert response.status_code == 404
        assert response.headers["content-type"] == "application/json"
        error = response.json()["error"]
        assert error["type"] == "invalid_request_error"
        # the scenarios of the endpoint asked (POST /v1/responses): the folder's one chat capture is not one
        assert all(name in error["message"] for name in NAMES if not name.startswith("chat-"))
        assert "chat-reasoning_text" not in error["message"]
    assert "unknown scenario 'nope'" in stream_body(client, scenario="nope")[0].json()["error"]["message"]


def test_error_capture_answers_its_status_and_json(client: httpx.Client) -> None:
    body = request_body("error_previous_response_id")
    for stream in (True, False):
        response, content = stream_body(client, body={**body, "stream": stream})
        assert response.status_code == 400
        assert response.headers["content-type"] == "application/json; charset=utf-8"
        assert response.headers["content-length"] == str(len(SSE["error_previous_response_id"]))
        assert content == SSE["error_previous_response_id"]
        assert response.json()["error"]["type"] == "invalid_request_error"


def test_stream_false_gets_the_nonstream_json_or_404(client: httpx.Client) -> None:
    response, content = stream_body(client, scenario="plain_text", body={"input": "x", "stream": False})
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert content == (LLAMA_CAPTURES / "plain_text.nonstream.json").read_bytes()
    response, _ = stream_body(client, scenario="replay-turn1", body={"input": "x"})
    assert response.status_code == 404
    assert "nonstream" in response.json()["error"]["message"]


def test_unknown_path_is_a_json_404(client: httpx.Client) -> None:
    response = client.get("/v1/nothing")
    assert response.status_code == 404
    assert response.json()["error"]["message"].startswith("GET /v1/nothing")


# --- faults, per request ----------------------------------------------------------------------------


@pytest.mark.parametrize("fault, n", [("disconnect-after=100", 100), ("chunk-size=7;disconnect-after=1000", 1000),
                                      ("disconnect-after=0", 0), (f"disconnect-after={len(PLAIN)}", len(PLAIN))])
def test_disconnect_truncates_the_body_after_n_bytes(client: httpx.Client, fault: str, n: int) -> None:
    got, error = read_until_error(client, fault)
    assert isinstance(error, (httpx.RemoteProtocolError, httpx.ReadError)), error
    assert got == PLAIN[:n]


def test_disconnect_is_an_incomplete_chunked_body_on_the_wire(llama_server: ServerProcess) -> None:
    url = urlsplit(llama_server.url)
    with socket.create_connection((url.hostname, url.port), timeout=5) as sock:
        sock.sendall(b"POST /v1/responses HTTP/1.1\r\nHost: x\r\nContent-Length: 16\r\n"
                     b"X-SSE-Check-Scenario: plain_text\r\nX-SSE-Check-Fault: disconnect-after=50\r\n\r\n"
                     b'{"stream": true}')
        data = bytearray()
        while chunk := sock.recv(65536):
            data += chunk
    assert not data.endswith(b"0\r\n\r\n")  # no last chunk: not a clean end
    assert data.endswith(PLAIN[:50] + b"\r\n")


def test_stall_hangs_after_n_bytes_until_the_client_gives_up(client: httpx.Client) -> None:
    started = time.monotonic()
    got, error = read_until_error(client, "stall-after=120", timeout=httpx.Timeout(5, read=0.5))
    assert isinstance(error, httpx.ReadTimeout), error
    assert got == PLAIN[:120]
    assert time.monotonic() - started >= 0.5


def test_keep_open_leaves_the_body_open_after_the_last_byte(client: httpx.Client) -> None:
    got, error = read_until_error(client, "keep-open=5", timeout=httpx.Timeout(5, read=0.6))
    assert isinstance(error, httpx.ReadTimeout), error
    assert got == PLAIN  # every byte arrived, then the body did not end


def test_keep_open_ends_the_body_after_the_window(client: httpx.Client) -> None:
    started = time.monotonic()
    got, error = read_until_error(client, "keep-open=0.4")
    assert error is None and got == PLAIN
    assert time.monotonic() - started >= 0.4


def test_delays(client: httpx.Client) -> None:
    started = time.monotonic()
    headers = {"X-SSE-Check-Scenario": "plain_text", "X-SSE-Check-Fault": "first-byte-delay=300"}
    with client.stream("POST", "/v1/responses", json={"stream": True}, headers=headers) as r:
        assert time.monotonic() - started >= 0.3
        assert r.read() == PLAIN
    started = time.monotonic()
    response, body = stream_body(client, scenario="plain_text", fault="chunk-size=1000;delay=60")
    assert body == PLAIN
    assert time.monotonic() - started >= 0.06 * (len(PLAIN) // 1000)


def test_wrong_content_type(client: httpx.Client) -> None:
    response, body = stream_body(client, scenario="plain_text", fault="content-type=text/plain%3B charset=utf-8")
    assert response.headers["content-type"] == "text/plain; charset=utf-8"
    assert body == PLAIN


@pytest.mark.parametrize("fault, status, kind, retry", [
    ("status=500", 500, "server_error", None),
    ("status=429", 429, "requests", "1"),
    ("status=503;retry-after=7", 503, "server_error", "7"),
])
def test_status_fault_answers_a_json_error(client: httpx.Client, fault: str, status: int, kind: str,
                                           retry: str | None) -> None:
    response, _ = stream_body(client, scenario="plain_text", fault=fault)
    assert response.status_code == status
    assert response.headers["content-type"] == "application/json"
    assert response.headers.get("retry-after") == retry
    error = response.json()["error"]
    assert error["type"] == kind and set(error) == {"message", "type", "param", "code"}


def test_status_fault_needs_no_matching_capture(client: httpx.Client) -> None:
    response, _ = stream_body(client, fault="status=502", body={"model": "unknown", "stream": True})
    assert response.status_code == 502


def test_redirect(client: httpx.Client) -> None:
    response, _ = stream_body(client, scenario="plain_text", fault="redirect=/responses")
    assert response.status_code == 307
    assert response.headers["location"] == "/responses"
    followed = client.post("/v1/responses", json={"stream": True}, follow_redirects=True,
                           headers={"X-SSE-Check-Scenario": "plain_text", "X-SSE-Check-Fault": "redirect=/responses"})
    assert [r.status_code for r in followed.history] == [307]
    assert followed.url.path == "/responses" and followed.content == PLAIN


def test_bad_fault_header_is_a_400_json(client: httpx.Client) -> None:
    for fault in ("bogus=1", "chunk-size=0", "status=200", "chunk-size"):
        response, _ = stream_body(client, scenario="plain_text", fault=fault)
        assert response.status_code == 400, fault
        assert "X-SSE-Check-Fault" in response.json()["error"]["message"]


# --- real clients -------------------------------------------------------------------------------------


def test_openai_python_reads_the_raw_events(llama_server: ServerProcess) -> None:
    # responses.create(stream=True) yields the raw events; llama.cpp's lack of output_index does not
    # matter there. (responses.stream(), the accumulating helper, raises TypeError on this capture:
    # "list indices must be integers or slices, not NoneType", as the captures README says.)
    client = openai.OpenAI(base_url=f"{llama_server.url}/v1", api_key="x", max_retries=0)
    events = list(client.responses.create(model="plain_text", input="hi", stream=True))
    expected = [line[len(b"event: "):].decode() for line in PLAIN.splitlines() if line.startswith(b"event: ")]
    assert [event.type for event in events] == expected
    assert events[0].type == "response.created" and events[-1].type == "response.completed"
    with pytest.raises(openai.RateLimitError):
        client.responses.create(model="plain_text", input="hi", stream=True,
                                extra_headers={"X-SSE-Check-Fault": "status=429;retry-after=0"})


# --- command-line faults, default capture, process behaviour ----------------------------------------


def test_command_line_faults_and_default(serve) -> None:  # noqa: ANN001 - the conftest factory
    server = serve(str(LLAMA_CAPTURES), "--default", "plain_text", "--chunk-size", "5", "--content-type", "text/plain")
    status, sizes, payload = raw_post(server, "/v1/responses", {}, b'{"input": "unmatched", "stream": true}')
    assert status == 200 and payload == PLAIN and set(sizes[:-1]) == {5}
    with httpx.Client(base_url=server.url, timeout=5) as c:
        response = c.post("/v1/responses", json={"input": "unmatched", "stream": True})
        assert response.headers["x-sse-check-selected-by"] == "default"
        assert response.headers["content-type"] == "text/plain"
        response = c.post("/v1/responses", json={"stream": True},
                          headers={"X-SSE-Check-Fault": "content-type=text/html"})
        assert response.headers["content-type"] == "text/html"  # the header overrides the flag
        assert response.content == PLAIN
        response = c.post("/v1/responses", json={"stream": True}, headers={"X-SSE-Check-Fault": "content-type=off"})
        assert response.headers["content-type"] == "text/event-stream"  # the flag switched off: as recorded


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_stops_cleanly_even_with_a_stalled_stream(serve, sig: int) -> None:  # noqa: ANN001
    server = serve(str(LLAMA_CAPTURES / "plain_text.sse"))
    assert server.count == 1
    with httpx.Client(base_url=server.url, timeout=5) as c:
        with c.stream("POST", "/v1/responses", json={"stream": True},
                      headers={"X-SSE-Check-Fault": "stall-after=64", "X-SSE-Check-Scenario": "plain_text"}) as r:
            chunks = r.iter_raw()
            got = next(chunks)
            started = time.monotonic()
            assert server.stop(sig) == 0
            assert time.monotonic() - started < 2.5
            with pytest.raises((httpx.RemoteProtocolError, httpx.ReadError)):
                for chunk in chunks:
                    got += chunk
    assert got == PLAIN[:64]
    assert "Traceback" not in server.stderr() and server.stderr() == ""


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "checker", "serve", *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=30)


def test_usage_errors_are_one_line_and_exit_2() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        cases = {
            ("no/such/dir",): "no/such/dir: No such file or directory",
            (str(LLAMA_CAPTURES / "plain_text.request.json"),): "not a .sse capture",
            (str(LLAMA_CAPTURES), "--default", "nope"): "--default 'nope' is not a scenario",
            (str(LLAMA_CAPTURES), "--port", str(busy.getsockname()[1])): "cannot listen on 127.0.0.1",
        }
        for args, message in cases.items():
            proc = _run(*args)
            assert proc.returncode == 2, (args, proc.stderr)
            assert proc.stderr.count("\n") == 1 and message in proc.stderr, proc.stderr
            assert proc.stdout == ""
    proc = _run(str(LLAMA_CAPTURES), "--chunk-size", "0")
    assert proc.returncode == 2 and "must be at least 1" in proc.stderr and "Traceback" not in proc.stderr


def test_duplicate_scenario_names_are_refused(tmp_path: Path) -> None:
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "same.sse").write_bytes(PLAIN)
    proc = _run(str(tmp_path))
    assert proc.returncode == 2 and "two captures named 'same'" in proc.stderr


# --- the pieces, without a server ---------------------------------------------------------------------


def test_fault_header_parsing_and_rendering() -> None:
    parsed = parse_header(" chunk-size=1 ; delay=2.5;keep-open;content-type=text/plain%3B charset=utf-8 ;")
    assert parsed == {"chunk_size": 1, "delay_ms": 2.5, "keep_open_s": 30.0,
                      "content_type": "text/plain; charset=utf-8"}
    faults = Faults().with_overrides(parsed)
    assert parse_header(faults.header_value()) == parsed
    assert Faults().header_value() == ""
    assert parse_header("status=off;chunk-size=OFF") == {"status": None, "chunk_size": None}
    for bad in ("nope=1", "delay=-1", "delay=nan", "status=302", "disconnect-after=x", "redirect=/a b", "delay"):
        with pytest.raises(FaultError):
            parse_header(bad)


def test_faults_endings() -> None:
    assert (Faults().ending, Faults().limit) == ("end", None)
    for faults, ending, limit in [(Faults(stall_after=5, disconnect_after=9), "stall", 5),
                                  (Faults(stall_after=9, disconnect_after=9), "disconnect", 9),
                                  (Faults(stall_after=7), "stall", 7), (Faults(keep_open_s=1), "end", None)]:
        assert (faults.ending, faults.limit) == (ending, limit)


def test_split_body_is_exact_at_any_chunk_size() -> None:
    rng = random.Random(7)
    for body in (PLAIN, SSE["chat-reasoning_text"], b"", b"event: x\r\ndata: 1\r\n\r\ndata: 2\r\rdata: 3"):
        assert b"".join(split_body(body)) == body
        for size in (1, 2, 7, rng.randint(1, 5000), 10**6):
            writes = split_body(body, size)
            assert b"".join(writes) == body and all(0 < len(w) <= size for w in writes)
    assert split_body(b"data: 1\r\n\r\ndata: 2\r\rdata: 3") == [b"data: 1\r\n\r\n", b"data: 2\r\r", b"data: 3"]


def test_body_chunks_waits_between_writes_and_keeps_open() -> None:
    sleeps: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        sleeps.append(seconds)

    async def collect(faults: Faults) -> bytes:
        return b"".join([chunk async for chunk in body_chunks(PLAIN, faults, sleep=fake_sleep)])

    assert asyncio.run(collect(Faults(chunk_size=1000, delay_ms=20, keep_open_s=3))) == PLAIN
    assert sleeps == [0.02] * (len(PLAIN) // 1000) + [3]
    assert asyncio.run(collect(Faults(disconnect_after=10))) == PLAIN[:10]


def test_parse_head_drops_framing_headers() -> None:
    status, headers, sized = parse_head((LLAMA_CAPTURES / "error_previous_response_id.headers.txt").read_text())
    assert status == 400 and sized
    assert dict(headers) == {"server": "llama.cpp", "access-control-allow-origin": "",
                             "content-type": "application/json; charset=utf-8"}


def test_catalogue_selection_without_a_server() -> None:
    catalogue = Catalogue.from_paths([str(LLAMA_CAPTURES), str(LLAMA_CAPTURES / "plain_text.sse")])
    assert catalogue.names == NAMES  # a file given twice counts once
    chat = catalogue.get("chat-reasoning_text")
    assert isinstance(chat, Capture) and chat.kind == "chat"
    selection = catalogue.select(request_body("chat-reasoning_text"), "chat")
    assert selection is not None and (selection.capture.name, selection.by) == ("chat-reasoning_text", "request")
    assert catalogue.select({"input": "nothing like it"}, "responses") is None
    assert catalogue.select({}, "responses", default="plain_text").by == "default"


def test_docs_describe_every_fault() -> None:
    docs = (ROOT / "docs" / "serve.md").read_text()
    for spec in FAULTS:
        assert f"`{spec.name}`" in docs, spec.name


def test_a_capture_s_meta_gives_its_head_and_its_recorded_close_and_a_broken_one_is_named(tmp_path: Path) -> None:
    from checker.errors import UsageError
    from checker.live.serve import load_capture

    capture = tmp_path / "x.sse"
    capture.write_bytes(b"data: {}\n\n")
    meta = tmp_path / "x.meta.json"
    meta.write_text(json.dumps({"status": 200, "headers": [["content-type", "text/event-stream"]],
                                "connection": {"closed_by_server": True}}))
    loaded = load_capture(capture)
    assert (loaded.status, loaded.closes, dict(loaded.headers)["content-type"]) == (200, True, "text/event-stream")
    meta.write_text("{not json")
    with pytest.raises(UsageError, match="x.meta.json: unreadable sidecar"):
        load_capture(capture)
    (tmp_path / "x.headers.txt").write_text("HTTP/1.1 200 OK\ncontent-type: text/event-stream\n")
    (tmp_path / "x.request.json").write_text('{"input": "hi"}')
    assert load_capture(capture).closes is False  # its own head and request: the broken meta is not needed
