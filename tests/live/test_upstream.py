"""The proxy's upstream client (checker/live/upstream.py) against real sockets on loopback: each way an upstream
can fail comes out as the proxy's ending for it, and no byte that arrived before a failure is lost."""

from __future__ import annotations

import asyncio
import socket
import struct
from collections.abc import Awaitable, Callable

import pytest

from checker.live.upstream import Upstream, UpstreamError

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"


async def _read_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    return head + (await reader.readexactly(length) if length else b"")


def _answer_then_close(data: bytes) -> Handler:
    """A handler that answers ``data`` (a head and whatever body) and closes the connection."""
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(data)
        await writer.drain()
        writer.close()

    return answer


def _reset(writer: asyncio.StreamWriter) -> None:
    """Close with a TCP reset (SO_LINGER 0), as a crashed server does."""
    sock = writer.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


def _run(handler: Handler, scheme: str = "http",
         pause: float = 0.0) -> tuple[list[bytes], bytes, UpstreamError | None, list[bytes]]:
    """One POST to a loopback server running ``handler``: (chunks read, what the server got, the error, heads);
    ``pause``: seconds the reader spends on each chunk (as the proxy does, sending it to its client)."""
    received: list[bytes] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        received.append(await _read_request(reader))
        await handler(reader, writer)

    async def main() -> tuple[list[bytes], UpstreamError | None, list[bytes]]:
        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        upstream = Upstream(connect_timeout=5)
        chunks: list[bytes] = []
        heads: list[bytes] = []
        error = None
        try:
            answer = await upstream.send("POST", f"{scheme}://127.0.0.1:{port}/v1/responses?x=%2F",
                                         [(b"Content-Type", b"application/json")], b'{"stream":true}')
            heads.append(repr(answer.head).encode())
            try:
                async for chunk in answer.chunks():
                    chunks.append(chunk)
                    await asyncio.sleep(pause)
            finally:
                answer.close()
        except UpstreamError as exc:
            error = exc
        finally:
            await upstream.aclose()
            server.close()
        return chunks, error, heads

    chunks, error, heads = asyncio.run(main())
    return chunks, received[0] if received else b"", error, heads


def test_a_request_goes_as_given_and_the_body_comes_back_raw() -> None:
    chunks, request, error, _ = _run(_answer_then_close(HEAD + b"content-encoding: gzip\r\ncontent-length: 5\r\n\r\n"
                                                        b"abcde"))
    assert error is None and b"".join(chunks) == b"abcde"  # not decompressed: the bytes as sent
    head, _, sent = request.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    assert sent == b'{"stream":true}'
    assert lines[0] == b"POST /v1/responses?x=%2F HTTP/1.1"  # the path as given, still encoded
    names = {line.split(b":")[0].lower() for line in lines[1:] if b":" in line}
    assert names == {b"host", b"content-type", b"content-length"}  # no header of the client's own


def test_a_reset_after_some_chunks_delivers_them_then_a_disconnect() -> None:
    body = b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in (b"event: a\n\n", b"event: b\n\n"))

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(HEAD + b"transfer-encoding: chunked\r\n\r\n" + body)
        await writer.drain()
        await asyncio.sleep(0.05)  # the bytes are in the client's buffer before the reset
        _reset(writer)

    chunks, _, error, _ = _run(answer)
    assert b"".join(chunks) == b"event: a\n\nevent: b\n\n"
    assert error is not None and error.kind == "disconnect" and not error.unanswered
    assert error.detail in ("Connection reset by peer",
                            "peer closed connection without sending complete message body (incomplete chunked read)")


def test_a_close_right_after_the_last_chunks_loses_none_of_them() -> None:
    # The rest of the data and the close arrive while the reader is busy with the first chunk: aiohttp sets
    # the error before the reader has that data, and Upstream hands it out first (what a client connected
    # directly would have had).
    parts = [b"event: e%d\ndata: {}\n\n" % i for i in range(50)]
    body = b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in parts)

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(HEAD + b"transfer-encoding: chunked\r\n\r\n" + body[:40])
        await writer.drain()
        await asyncio.sleep(0.02)
        writer.write(body[40:])
        writer.close()  # no last chunk: the body is cut

    for _ in range(3):
        chunks, _, error, _ = _run(answer, pause=0.1)
        assert b"".join(chunks) == b"".join(parts)
        assert error is not None and error.kind == "disconnect"
        assert error.detail.endswith("(incomplete chunked read)")


def test_a_body_shorter_than_its_content_length_is_a_cut() -> None:
    chunks, _, error, _ = _run(_answer_then_close(HEAD + b"content-length: 100\r\n\r\nonly this"))
    assert b"".join(chunks) == b"only this"
    assert error is not None and error.kind == "disconnect"
    assert error.detail.startswith("peer closed connection without sending complete message body")


def test_a_close_before_any_answer_is_unanswered() -> None:
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()

    chunks, _, error, heads = _run(answer)
    assert chunks == [] and heads == []
    assert error is not None and error.unanswered and error.kind == "disconnect"


def test_nothing_listening_is_a_connect_error() -> None:
    with socket.create_server(("127.0.0.1", 0)) as sock:
        port = sock.getsockname()[1]

    async def main() -> UpstreamError:
        upstream = Upstream(connect_timeout=5)
        try:
            with pytest.raises(UpstreamError) as caught:
                await upstream.send("GET", f"http://127.0.0.1:{port}/v1/models", [], b"")
            return caught.value
        finally:
            await upstream.aclose()

    error = asyncio.run(main())
    assert (error.kind, error.detail) == ("connect-error", "Connection refused")


def test_tls_to_a_plain_http_server_is_a_tls_error() -> None:
    async def garbage(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(100)  # the TLS client hello
        writer.write(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")
        await writer.drain()
        writer.close()

    async def main() -> UpstreamError:
        server = await asyncio.start_server(garbage, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        upstream = Upstream(connect_timeout=5)
        try:
            with pytest.raises(UpstreamError) as caught:
                await upstream.send("GET", f"https://127.0.0.1:{port}/v1/models", [], b"")
            return caught.value
        finally:
            await upstream.aclose()
            server.close()

    assert asyncio.run(main()).kind == "tls-error"


def test_a_close_delimited_http_1_0_body_ends_complete() -> None:
    # the close is the body's end: no length, no chunks
    chunks, _, error, heads = _run(_answer_then_close(b"HTTP/1.0 200 OK\r\ncontent-type: text/event-stream\r\n\r\n"
                                                      b"data: {}\n\n"))
    assert error is None and b"".join(chunks) == b"data: {}\n\n"
    assert b"HTTP/1.0" in heads[0]


def test_the_upstream_url_keeps_the_prefix_the_raw_path_and_the_query() -> None:
    from checker.live.proxy import Proxy, ProxyConfig

    proxy = Proxy(ProxyConfig(upstream="http://127.0.0.1:9/base/"))
    scope = {"path": "/v1/responses/a b", "raw_path": b"/v1/responses/a%20b", "query_string": b"x=%2F&y=1"}
    assert proxy._url(scope) == "http://127.0.0.1:9/base/v1/responses/a%20b?x=%2F&y=1"
    assert Proxy(ProxyConfig(upstream="http://[::1]:8080"))._url({"path": "/v1/models", "query_string": b""}) \
        == "http://[::1]:8080/v1/models"
