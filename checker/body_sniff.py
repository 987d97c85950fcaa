"""Is this body an event stream at all?

A body that is not an event stream (a JSON error body, an HTML page, gzip that nobody inflated, a PNG linted
by mistake, a Markdown page) gets one finding (SSE022) instead of a cascade of protocol findings, one per
line. :class:`BodySniffer` looks at the first significant bytes once and holds them back until it can
judge; the engine feeds the decoder only what the sniffer lets through.

Which API an event stream speaks is told by its first event object, in the dialect registry
(checker/dialects: ``recognise``, and ``other_api`` for SCH010).

Sans-I/O: bytes in, a verdict out.
"""

from __future__ import annotations

import re
from typing import Any

from checker.findings import Finding, Position
from checker.json_scan import clip
from checker.rules import framing

_BOM = b"\xef\xbb\xbf"
_WHITE = b" \t\r\n"
# Magic numbers of files that get linted by mistake (a screenshot next to the captures).
_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "a PNG image"), (b"\xff\xd8\xff", "a JPEG image"), (b"GIF8", "a GIF image"),
    (b"%PDF-", "a PDF document"), (b"PK\x03\x04", "a ZIP archive"), (b"\x7fELF", "an ELF executable"),
    (b"RIFF", "a RIFF file (WebP, WAV)"), (b"\x28\xb5\x2f\xfd", "zstd-compressed data"),
    (b"BZh", "bzip2-compressed data"), (b"\xfd7zXZ\x00", "xz-compressed data"),
)
_BINARY_KINDS = ("binary", "a PNG", "a JPEG", "a GIF", "a PDF", "a ZIP", "an ELF", "a WebP")
# How much of the start is read to tell an event stream from other text.
SNIFF_BYTES = 4096
SNIFF_LINES = 32
# The start of an opaque body kept for the message.
SNIPPET_BYTES = 512
UNDECIDED: Any = object()
_STREAM_LINE = re.compile(rb"(?:data|event|id|retry)(?::|$)|:")
# Binary data by its bytes, before its lines: random or compressed bytes hold a line that starts with ":" (an SSE
# comment) about once in 256 lines, and without this test such a body went to the decoder and gave a finding per
# invalid byte (thousands for 5 KB). Judged on the first BINARY_SAMPLE significant bytes, so that the verdict does
# not depend on how the body was chunked.
BINARY_SAMPLE = 512
_CONTROL = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f]")  # not tab, line ends or ESC (coloured text)
_NOT_ASCII = re.compile(rb"[\x80-\xff]")
_GZIP = "gzip-compressed data"


class BodySniffer:
    """The first significant bytes of one body, judged once.

    ``sniff`` returns what the SSE decoder should get (nothing while it cannot judge yet); once ``decided``,
    an ``opaque`` body's later bytes go to ``swallow``, which counts them and keeps the start for the
    finding, given at close so that it does not depend on how the body was chunked.
    """

    __slots__ = ("head", "decided", "opaque", "kind", "opaque_bytes")

    def __init__(self) -> None:
        self.head = b""  # bytes held back while undecided; the snippet once opaque
        self.decided = False
        self.opaque = False  # not an event stream
        self.kind = ""  # what an opaque body is ("a JSON document", "gzip-compressed data", ...)
        self.opaque_bytes = 0

    def sniff(self, chunk: bytes, *, final: bool) -> bytes:
        """Look at the first significant bytes; return what the decoder should get.

        JSON, markup and gzip show in their first byte, and other binary formats in their magic number.
        Otherwise the first lines decide (up to ``SNIFF_LINES`` of them within ``SNIFF_BYTES``): if none
        is an event-stream line (``data``, ``event``, ``id``, ``retry`` or a ``:`` comment) the input is
        text or binary of another kind (a Markdown page, a PNG), reported once rather than line by line.
        ``final``: no more bytes will come."""
        self.head += chunk
        head = self.head
        significant = head.removeprefix(_BOM).lstrip(_WHITE)
        if not final and (not significant or (len(head) < 3 and _BOM.startswith(head))):
            return b""  # nothing to judge by yet (or half a BOM): hold the bytes back
        if len(significant) < 2 and significant[:1] == b"\x1f" and not final:
            return b""  # half a gzip magic number
        kind = body_kind(significant)
        if kind is None:
            kind = binary_kind(significant, final=final)
            if kind is UNDECIDED:
                return b""  # odd bytes in a short start: wait for the whole sample
        if kind is None:
            verdict = first_lines_kind(significant, final=final or len(head) >= SNIFF_BYTES)
            if verdict is UNDECIDED:
                return b""  # the first lines are not complete yet
            kind = verdict
        self.decided = True
        if kind is None:
            self.head = b""
            return head
        self.opaque = True
        self.kind = kind
        self.opaque_bytes = len(head)
        self.head = head[:SNIPPET_BYTES]
        return b""

    def swallow(self, chunk: bytes) -> None:
        """More bytes of an opaque body: counted, and the start kept for the finding."""
        self.opaque_bytes += len(chunk)
        if len(self.head) < SNIPPET_BYTES:
            self.head += chunk[: SNIPPET_BYTES - len(self.head)]

    def finding(self) -> Finding:
        """The one finding on an opaque body: what it is, and how it starts."""
        significant = self.head.removeprefix(_BOM).lstrip(_WHITE)
        kind = body_kind(significant) or self.kind
        if kind == _GZIP:
            snippet = "1f 8b …"
        elif kind.startswith(_BINARY_KINDS):
            snippet = " ".join(f"{b:02x}" for b in significant[:8]) + " …"
        elif kind.startswith("plain text"):
            snippet = repr(clip(significant.split(b"\n", 1)[0].rstrip(b"\r"), 60))
        else:  # JSON, markup: the start, its line breaks and indentation folded into single spaces
            snippet = clip(re.sub(rb"\s+", b" ", significant[:SNIPPET_BYTES]), 120)
        return framing.NOT_AN_EVENT_STREAM.finding(Position(line=1, byte=0), kind=kind, snippet=snippet)


def body_kind(head: bytes) -> str | None:
    """What a body is, from its first significant bytes, when they show it is no event stream."""
    if head.startswith(b"\x1f\x8b"):
        return _GZIP
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    first = head[:1]
    if first in (b"{", b"["):
        return "a JSON document"
    if first == b"<":
        return "an HTML page" if b"html" in head[:512].lower() else "markup (HTML/XML)"
    return None


def binary_kind(head: bytes, *, final: bool) -> Any:
    """``"binary data"`` when the first ``BINARY_SAMPLE`` bytes are not text, whatever their lines say; None when
    they are text (the lines decide); ``UNDECIDED`` while a start with odd bytes is shorter than the sample.

    Binary means control bytes (other than tab, line ends and ESC) in at least 2% of the sample and, with the
    bytes of invalid UTF-8, at least 12.5% of it: random and compressed data have about 11% and 55%, while an event
    stream with a stray NUL in an ``id`` or an invalid byte in a delta (SSE005's captures) has a handful, and text
    in a legacy encoding (Latin-1, GBK) has invalid UTF-8 but no control bytes."""
    sample = head[:BINARY_SAMPLE]
    controls = len(_CONTROL.findall(sample))
    if not controls:
        return None
    if len(sample) < BINARY_SAMPLE and not final:
        return UNDECIDED
    if controls * 50 < len(sample):
        return None
    odd = controls + _invalid_utf8_runs(sample) if _NOT_ASCII.search(sample) else controls
    return "binary data" if odd * 8 >= len(sample) else None


def _invalid_utf8_runs(data: bytes) -> int:
    """How many runs of invalid UTF-8 ``data`` holds (each decodes to one U+FFFD; in random bytes nearly one a byte)."""
    return data.decode("utf-8", "replace").count("\ufffd") - data.decode("utf-8", "ignore").count("\ufffd")


def first_lines_kind(head: bytes, *, final: bool) -> Any:
    """None when one of the first lines is an event-stream line; else what the input is ("text …", "binary
    data"); ``UNDECIDED`` while no line is complete and more may come."""
    lines = head.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
    complete = lines if final else lines[:-1]
    if not final and len(lines) > 1 and not any(lines[:-1]) and not lines[-1]:
        return UNDECIDED
    seen = 0
    for line in complete:
        if not line:
            continue
        if _STREAM_LINE.match(line.lstrip(_BOM)):
            return None
        seen += 1
        if seen >= SNIFF_LINES:
            break
    if seen == 0 or (not final and seen < SNIFF_LINES):
        return UNDECIDED if not final else None
    if b"\x00" in head or not _is_utf8(head):
        return "binary data"
    return "plain text (no line starts with data:, event:, id:, retry: or :)"


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start >= len(data) - 3  # a character cut at the end of the sample
    return True
