"""The WHATWG decoder, fed whole, one byte at a time and in random chunks."""

from __future__ import annotations

import random

import httpx_sse
import pytest

from checker.findings import Finding
from checker.sse import SSEDecoder, SSEEvent


def feed(data: bytes, sizes: list[int] | None, **limits: int) -> list[SSEEvent | Finding]:
    decoder = SSEDecoder(**limits)
    out: list[SSEEvent | Finding] = []
    if sizes is None:
        out += decoder.feed(data)
    else:
        i = 0
        for size in sizes:
            if i >= len(data):
                break
            out += decoder.feed(data[i : i + size])
            i += size
        out += decoder.feed(data[i:])
    out += decoder.close()
    return out


def three_ways(data: bytes, **limits: int) -> list[SSEEvent | Finding]:
    """Decode whole, byte by byte and in random chunks; all three must agree."""
    whole = feed(data, None, **limits)
    assert feed(data, [1] * len(data), **limits) == whole, "byte-by-byte differs from whole"
    rng = random.Random(len(data))
    for _ in range(20):
        sizes = [rng.randint(1, 13) for _ in range(len(data))]
        assert feed(data, sizes, **limits) == whole, f"chunking {sizes[:10]}… differs from whole"
    return whole


def events(items: list[SSEEvent | Finding]) -> list[SSEEvent]:
    return [i for i in items if isinstance(i, SSEEvent)]


def codes(items: list[SSEEvent | Finding]) -> list[str]:
    return [i.code for i in items if isinstance(i, Finding)]


def simple(items: list[SSEEvent | Finding]) -> list[tuple[str | None, bytes]]:
    return [(e.event, e.data) for e in events(items)]


STREAM = b'event: a\ndata: {"x":1}\n\nevent: b\ndata: {"y":2}\n\n'


@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"])
def test_every_line_ending_gives_the_same_events(eol: bytes) -> None:
    got = three_ways(STREAM.replace(b"\n", eol))
    assert simple(got) == [("a", b'{"x":1}'), ("b", b'{"y":2}')]
    assert codes(got) == (["SSE002"] if eol == b"\r" else [])


def test_crlf_split_across_chunks_is_one_line_end() -> None:
    decoder = SSEDecoder()
    out = decoder.feed(b"data: 1\r") + decoder.feed(b"\n\r") + decoder.feed(b"\n") + decoder.close()
    assert simple(out) == [(None, b"1")]
    assert codes(out) == []


def test_mixed_line_endings_reported_once() -> None:
    got = three_ways(b"data: 1\r\n\r\ndata: 2\n\ndata: 3\n\n")
    assert [e.data for e in events(got)] == [b"1", b"2", b"3"]
    assert codes(got) == ["SSE003"]


def test_one_bom_is_stripped_and_reported() -> None:
    got = three_ways(b"\xef\xbb\xbfevent: a\ndata: 1\n\n")
    assert simple(got) == [("a", b"1")]
    assert codes(got) == ["SSE001"]
    assert events(got)[0].byte == 3


def test_bom_split_across_chunks() -> None:
    decoder = SSEDecoder()
    out = decoder.feed(b"\xef") + decoder.feed(b"\xbb") + decoder.feed(b"\xbfdata: 1\n\n") + decoder.close()
    assert simple(out) == [(None, b"1")] and codes(out) == ["SSE001"]


def test_only_one_bom_is_stripped() -> None:
    got = three_ways(b"\xef\xbb\xbf\xef\xbb\xbfdata: 1\n\n")
    # The second BOM belongs to the field name, which is then unknown; a block of an unknown field alone is
    # dispatched by no decoder (WHATWG's nor the SDKs'), so SSE016 says what is lost, not SSE013.
    assert codes(got) == ["SSE001", "SSE016"]
    assert events(got) == []


def test_comments_are_ignored_and_do_not_start_an_event() -> None:
    got = three_ways(b": keepalive\n\n: another\ndata: 1\n\n")
    assert simple(got) == [(None, b"1")]
    assert events(got)[0].line == 4
    assert codes(got) == []


def test_multi_line_data_is_joined_with_lf() -> None:
    got = three_ways(b"data: a\ndata: b\n\n")
    assert events(got)[0].data == b"a\nb" and events(got)[0].data_lines == 2


def test_field_without_colon_has_empty_value() -> None:
    # "data" alone appends an empty line: the buffer is "\n", not empty, so an
    # event with empty data is dispatched (WHATWG checks emptiness before
    # removing the trailing LF).
    got = three_ways(b"data\n\n")
    assert [e.data for e in events(got)] == [b""]


def test_only_one_leading_space_is_removed() -> None:
    got = three_ways(b"data:x\n\ndata:  y\n\n")
    assert [e.data for e in events(got)] == [b"x", b" y"]


def test_event_without_data_is_not_dispatched() -> None:
    got = three_ways(b"event: ping\n\ndata: 1\n\n")
    assert simple(got) == [(None, b"1")]
    assert codes(got) == ["SSE013"]


def test_id_persists_and_nul_id_is_ignored() -> None:
    got = three_ways(b"id: 7\ndata: 1\n\ndata: 2\n\nid: a\x00b\ndata: 3\n\n")
    assert [e.last_event_id for e in events(got)] == ["7", "7", "7"]
    assert codes(got) == ["SSE019", "SSE017"]


@pytest.mark.parametrize(
    ("value", "parsed", "finding"),
    [(b"3000", 3000, []), (b"+5", None, ["SSE014"]), (b"-1", None, ["SSE014"]), (b"1.5", None, ["SSE014"])],
)
def test_retry_counts_only_when_all_ascii_digits(value: bytes, parsed: int | None, finding: list[str]) -> None:
    got = three_ways(b"retry: " + value + b"\ndata: 1\n\n")
    assert events(got)[0].retry == parsed
    assert codes(got) == finding


@pytest.mark.parametrize("tail", [b"data: 2", b"data: 2\n", b"event: x\ndata: 2\n"])
def test_trailing_event_without_blank_line_is_discarded(tail: bytes) -> None:
    got = three_ways(b"data: 1\n\n" + tail)
    assert [e.data for e in events(got)] == [b"1"]
    assert codes(got) == ["SSE004"]


def test_positions_of_events() -> None:
    data = b": c\nevent: a\ndata: 1\n\nevent: b\r\ndata: 22\r\n\r\n"
    got = three_ways(data)
    first, second = events(got)
    assert (first.index, first.line, first.byte) == (0, 2, 4)
    assert (second.index, second.line, second.byte) == (1, 5, data.index(b"event: b"))
    assert second.end_byte == len(data)


def test_invalid_utf8_reported_with_offset_and_replaced() -> None:
    data = b"data: ok\n\ndata: a\xffb\n\n"
    got = three_ways(data)
    assert [e.data for e in events(got)] == [b"ok", "a\ufffdb".encode()]
    (finding,) = [i for i in got if isinstance(i, Finding)]
    assert finding.code == "SSE005" and finding.details["offset"] == data.index(b"\xff")


def test_multibyte_character_split_across_chunks_is_valid() -> None:
    data = "data: héllo – ✓\n\n".encode()
    got = three_ways(data)
    assert codes(got) == [] and events(got)[0].data.decode() == "héllo – ✓"


def test_unknown_field_is_reported() -> None:
    got = three_ways(b"Data: 1\ndata: 2\n\n")
    assert codes(got) == ["SSE016"] and events(got)[0].data == b"2"


def test_line_over_the_limit_is_skipped_not_buffered() -> None:
    long = b"data: " + b"x" * 5000 + b"\n\n"
    data = long + b"data: 2\n\n"
    decoder = SSEDecoder(max_line_bytes=1000)
    out: list[SSEEvent | Finding] = []
    for i in range(0, len(data), 100):
        out += decoder.feed(data[i : i + 100])
        assert len(decoder._buf) + len(decoder._parts) <= 1100  # memory stays bounded by the limit
    out += decoder.close()
    assert codes(out) == ["SSE020"] and [e.data for e in events(out)] == [b"2"]
    assert three_ways(data, max_line_bytes=1000) == out


@pytest.mark.parametrize("eol", [b"\n", b"\r\n"])
def test_a_line_over_the_limit_is_not_read_for_utf8_or_nul_however_it_arrives(eol: bytes) -> None:
    # Whole, the long line is in one block; in pieces, it is dropped while buffering. Neither reads its bytes,
    # so an invalid byte or a NUL inside it gives no finding of its own either way (found by the fuzz harness
    # on a real OpenAI capture).
    long = b"data: " + b"x" * 1500 + b"\xff\x00" + b"y" * 1500 + eol + eol
    data = long + b"data: 2" + eol + eol
    got = three_ways(data, max_line_bytes=1000)
    assert "SSE005" not in codes(got) and "SSE019" not in codes(got)
    assert "SSE020" in codes(got) and [e.data for e in events(got)] == [b"2"]


@pytest.mark.parametrize("before", [b"", b"data: 1\n\n", b"data: 1\r\n\r\n"])
@pytest.mark.parametrize("eol", [b"\r", b"\n", b"\r\n"])
def test_the_end_of_a_line_over_the_limit_counts_however_it_arrives(before: bytes, eol: bytes) -> None:
    # Its end is a line end like any other: a lone CR there is SSE002, a new kind is SSE003 (mixed), reported
    # after SSE020 and at the line's start, whether the line came whole or was skipped in pieces (found by the
    # fuzz harness: in pieces, a skipped line's CR was not seen at all).
    data = before + b"data: " + b"x" * 3000 + eol + b"data: 2\n\n"
    got = three_ways(data, max_line_bytes=1000)
    assert "SSE020" in codes(got)
    assert ("SSE002" in codes(got)) == (eol == b"\r")
    assert codes(got).index("SSE020") < min((codes(got).index(c) for c in ("SSE002", "SSE003") if c in codes(got)),
                                             default=len(codes(got)))


def test_event_over_the_limit_is_dropped() -> None:
    data = b"data: aaaa\ndata: bbbb\ndata: cccc\n\ndata: 2\n\n"
    got = three_ways(data, max_event_bytes=8)
    assert codes(got) == ["SSE021"] and [e.data for e in events(got)] == [b"2"]


def test_nul_byte_is_reported() -> None:
    got = three_ways(b"data: a\x00b\n\n")
    assert codes(got) == ["SSE019"]


def test_httpx_sse_deviation_event_without_data() -> None:
    # httpx-sse dispatches a block with no data (docs/spec.md §1); WHATWG and we do not.
    data = b"data: 1\n\nevent: ping\n\n"
    decoder = httpx_sse._decoders.SSEDecoder()
    theirs = [sse for line in data.decode().splitlines() if (sse := decoder.decode(line)) is not None]
    assert [(s.event, s.data) for s in theirs] == [("message", "1"), ("ping", "")]
    got = three_ways(data)
    assert [e.data for e in events(got)] == [b"1"] and codes(got) == ["SSE013"]


def test_feed_after_close_is_a_programming_error() -> None:
    decoder = SSEDecoder()
    decoder.close()
    with pytest.raises(RuntimeError):
        decoder.feed(b"x")


@pytest.mark.parametrize(
    "data",
    [
        STREAM,
        b'event: response.created\ndata: {"a":1}\nid: 5\n\n: c\ndata: {"b":2}\n\n',
        b"data: x\n\ndata: y\ndata: z\n\n",
    ],
)
def test_agrees_with_httpx_sse_on_well_formed_streams(data: bytes) -> None:
    decoder = httpx_sse._decoders.SSEDecoder()
    theirs = []
    for line in data.decode().splitlines():
        sse = decoder.decode(line)
        if sse is not None:
            theirs.append((sse.event if sse.event != "message" else None, sse.data.encode(), sse.id))
    ours = [(e.event, e.data, e.last_event_id) for e in events(three_ways(data))]
    assert ours == theirs


def reference_decode(text: str) -> list[tuple[str | None, str, str]]:
    """WHATWG's algorithm, transcribed literally, on a whole decoded string."""
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    # The last element is what follows the last line end: an unterminated line.
    complete, tail = lines[:-1], lines[-1]
    out: list[tuple[str | None, str, str]] = []
    data, event, last_id = "", "", ""
    for line in complete + ([tail] if tail else []):
        if line == "":
            if data == "":
                event = ""
                continue
            out.append((event or None, data[:-1] if data.endswith("\n") else data, last_id))
            data, event = "", ""
            continue
        if line.startswith(":"):
            continue
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "data":
            data += value + "\n"
        elif name == "event":
            event = value
        elif name == "id" and "\0" not in value:
            last_id = value
    return out


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

TOKENS = ["event: a", "event:b", "data: x", "data:y", "data:  z", "data", "id: 7", "id", ": c", "retry: 5",
          "retry: x", "evt: q", "", "data: {\"type\":\"t\"}", "event: response.created"]
EOLS = ["\n", "\r\n", "\r"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(TOKENS), st.sampled_from(EOLS)), max_size=30), st.booleans())
def test_matches_a_literal_transcription_of_whatwg(lines: list[tuple[str, str]], bom: bool) -> None:
    text = ("\ufeff" if bom else "") + "".join(token + eol for token, eol in lines)
    data = text.encode()
    got = three_ways(data)
    ours = [(e.event, e.data.decode(), e.last_event_id) for e in events(got)]
    assert ours == reference_decode(text)


@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"])
@pytest.mark.parametrize("oddity", [b"", b"\x00", b"\xff", b"\xc3", b"\xc3\xa9"])
def test_a_long_data_line_in_pieces_reads_as_when_whole(eol: bytes, oddity: bytes) -> None:
    """A data line that arrives in many pieces (its value built from them in one copy) gives the same events
    and findings as the line read whole: line ends, a NUL, bad or split UTF-8, an unspaced `data:`, a limit."""
    value = b"x" * 700 + oddity + "é".encode() * 300 + b"y" * 200
    data = (b"event: a" + eol + b"data: " + value + eol + eol + b"data:" + value + eol + b":c" + eol + eol
            + b"data: short" + eol + eol)
    for limits in ({}, {"max_line_bytes": 1500}, {"max_event_bytes": 1000}):
        whole = feed(data, None, **limits)
        for size in (7, 64, 100, 333):
            assert feed(data, [size] * len(data), **limits) == whole, (size, limits)
    assert [e.data for e in events(feed(data, None))] == (
        [value.decode("utf-8", "replace").encode()] * 2 + [b"short"])
