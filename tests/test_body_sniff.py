"""checker/body_sniff.py: whether a body is an event stream at all, and whether it is another API's."""

from __future__ import annotations

import pytest

from checker.body_sniff import SNIFF_LINES, UNDECIDED, BodySniffer, body_kind, first_lines_kind
from checker.rules import framing

STREAM = b'event: response.created\ndata: {"type": "response.created"}\n\n'


def _sniff_in(chunks: list[bytes]) -> tuple[BodySniffer, bytes]:
    """Feed ``chunks`` as the engine does, then end the body; what the decoder would have got."""
    sniffer, passed = BodySniffer(), b""
    for chunk in chunks:
        if not sniffer.decided:
            chunk = sniffer.sniff(chunk, final=False)
        if sniffer.opaque:
            sniffer.swallow(chunk)
        else:
            passed += chunk
    if not sniffer.decided:
        passed += sniffer.sniff(b"", final=True)
    return sniffer, passed


def _bytewise(data: bytes) -> list[bytes]:
    return [data[i:i + 1] for i in range(len(data))]


@pytest.mark.parametrize("data", [STREAM, b"\xef\xbb\xbf" + STREAM, b"\r\n\r\n" + STREAM, b": hi\n\n" + STREAM,
                                  b"retry: 10\n" + STREAM, b"data\n\n"])
def test_an_event_stream_passes_whole_however_it_is_chunked(data: bytes) -> None:
    for chunks in ([data], _bytewise(data)):
        sniffer, passed = _sniff_in(chunks)
        assert sniffer.decided and not sniffer.opaque
        assert passed == data  # held bytes are given back, not lost


def test_nothing_is_decided_on_white_space_half_a_bom_or_half_a_gzip_magic() -> None:
    for start in (b"\r\n  ", b"\xef", b"\xef\xbb", b"\x1f"):
        sniffer = BodySniffer()
        assert sniffer.sniff(start, final=False) == b""
        assert not sniffer.decided


@pytest.mark.parametrize(("data", "kind", "snippet"), [
    (b'{\n  "error": {\n    "message": "model not found"\n  }\n}', "a JSON document",
     '{ "error": { "message": "model not found" } }'),
    (b"<!DOCTYPE html><html><body>502</body></html>", "an HTML page", "<!DOCTYPE html><html><body>502</body></html>"),
    (b"\x1f\x8b\x08\x00rest", "gzip-compressed data", "1f 8b …"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "a PNG image", "89 50 4e 47 0d 0a 1a 0a …"),
])
def test_a_body_that_is_no_event_stream_is_one_finding(data: bytes, kind: str, snippet: str) -> None:
    for chunks in ([data], _bytewise(data)):
        sniffer, passed = _sniff_in(chunks)
        assert sniffer.opaque and passed == b""
        assert sniffer.opaque_bytes == len(data)
        finding = sniffer.finding()
        assert finding.code == framing.NOT_AN_EVENT_STREAM.code
        assert (finding.details["kind"], finding.details["snippet"]) == (kind, snippet)


def test_text_is_judged_by_its_first_lines() -> None:
    markdown = b"".join(b"line %d of a page\n" % n for n in range(SNIFF_LINES + 5))
    sniffer, _ = _sniff_in(_bytewise(markdown))
    assert sniffer.opaque and sniffer.kind.startswith("plain text")
    assert sniffer.finding().details["snippet"] == "'line 0 of a page'"
    # Fewer lines than the sniffer reads: undecided until the body ends.
    short = BodySniffer()
    assert short.sniff(b"# Title\nsome text\n", final=False) == b"" and not short.decided
    assert short.sniff(b"", final=True) == b"" and short.opaque
    # One event-stream line among the first ones makes it a stream (the rest is the decoder's to judge).
    mixed = b"garbage\n" * 3 + STREAM
    sniffer, passed = _sniff_in([mixed])
    assert not sniffer.opaque and passed == mixed


def test_first_lines_kind() -> None:
    assert first_lines_kind(b"hello\x00world\n" * SNIFF_LINES, final=False) == "binary data"
    assert first_lines_kind(b"caf\xc3\xa9\n" * SNIFF_LINES, final=False).startswith("plain text")
    assert first_lines_kind(b"caf\xc3", final=True).startswith("plain text")  # cut at the end of the sample
    assert first_lines_kind(b"no line end yet", final=False) is UNDECIDED
    assert first_lines_kind(b"\n\n", final=False) is UNDECIDED
    assert first_lines_kind(b"id: 1\n", final=False) is None


def test_body_kind_needs_the_first_significant_byte_only() -> None:
    assert body_kind(b"[1, 2]") == "a JSON document"
    assert body_kind(b"<rss version='2.0'>") == "markup (HTML/XML)"
    assert body_kind(b"%PDF-1.7") == "a PDF document"
    assert body_kind(b"data: {}") is None


def test_the_snippet_of_a_long_opaque_body_is_its_start() -> None:
    data = b'{"error": "' + b"x" * 5000 + b'"}'
    sniffer, _ = _sniff_in([data[:100], data[100:]])
    assert sniffer.opaque_bytes == len(data)
    assert sniffer.finding().details["snippet"] == ('{"error": "' + "x" * 109)[:120] + "…"


def _random_bytes(seed: int, size: int = 5000) -> bytes:
    import random

    rng = random.Random(seed)
    return bytes(rng.randrange(256) for _ in range(size))


def test_random_bytes_are_binary_even_when_a_line_starts_with_a_colon() -> None:
    # Seeds whose random bytes hold a line starting with ":" (an SSE comment) among their first lines: judged by
    # their lines alone they passed as an event stream and gave a finding per invalid byte.
    for seed in range(40):
        data = _random_bytes(seed)
        for chunks in ([data], [data[i:i + 7] for i in range(0, len(data), 7)]):
            sniffer, passed = _sniff_in(chunks)
            assert sniffer.opaque and passed == b"", seed
            assert sniffer.kind == "binary data" and sniffer.finding().details["snippet"].endswith(" …")
    lined = b"\n: comment\n" + _random_bytes(0)
    assert first_lines_kind(lined, final=True) is None  # the lines alone call it a stream
    sniffer, _ = _sniff_in([lined])
    assert sniffer.opaque and sniffer.kind == "binary data"


@pytest.mark.parametrize("data", [
    b"id: a\x00b\n" + STREAM,  # a NUL in an id (the spec ignores that id): a stream, the decoder's to judge
    STREAM.replace(b"response.created\"", b"response.cr\xffeated\""),  # an invalid byte (SSE005)
    b'data: {"delta": "' + "中文".encode("gbk") * 200 + b'"}\n\n',  # a legacy encoding: invalid UTF-8, no controls
    b"data: \x1b[31mred\x1b[0m\n\n" + STREAM,  # escape sequences are text
])
def test_a_stream_with_a_few_odd_bytes_is_still_a_stream(data: bytes) -> None:
    for chunks in ([data], _bytewise(data)):
        sniffer, passed = _sniff_in(chunks)
        assert not sniffer.opaque and passed == data
