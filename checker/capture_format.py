"""What a capture file is called and how its bytes are stored: the ``.sse`` suffix, the compressed forms
(``X.sse.gz``, ``X.sse.zst``), a capture's stem, URLs, and reading a compressed capture's blocks.

:mod:`checker.captures` (local files) and :mod:`checker.remote` (fsspec URLs) both build on this module, so
neither imports the other's module for these names.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO

from checker.errors import UsageError

CAPTURE_SUFFIX = ".sse"
# Compressed captures lint reads (decompressed on the fly): gzip from the standard library, zstd from the
# `archive` extra's zstandard.
COMPRESSED_SUFFIXES = (".sse.gz", ".sse.zst")
READ_BLOCK = 64 * 1024


def is_url(text: str) -> bool:
    """``scheme://...`` (s3, gs, https, file, memory...): read through fsspec, not the local file system."""
    scheme, sep, _ = text.partition("://")
    return bool(sep) and scheme.replace("+", "").replace("-", "").isalnum() and len(scheme) > 1


def capture_stem(name: str) -> str:
    """``X`` of ``X.sse``, ``X.sse.gz``, ``X.sse.zst`` (a name without those suffixes is its own stem)."""
    for suffix in (*COMPRESSED_SUFFIXES, CAPTURE_SUFFIX):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def decompressed(handle: IO[bytes], name: str, block: int = READ_BLOCK) -> Iterator[bytes]:
    """The blocks of an open capture, gunzipped or unzstd'ed by its name (``.sse.gz``, ``.sse.zst``)."""
    errors: tuple[type[Exception], ...] = (EOFError, ValueError)  # a truncated or corrupt frame
    if name.endswith(".gz"):
        import gzip

        handle = gzip.GzipFile(fileobj=handle, mode="rb")  # type: ignore[assignment]
    elif name.endswith(".zst"):
        try:
            import zstandard
        except ImportError:
            raise UsageError(f"{name}: reading .zst captures needs zstandard: "
                             "pip install 'sse-check[archive]'") from None
        handle = zstandard.ZstdDecompressor().stream_reader(handle)  # type: ignore[assignment]
        errors += (zstandard.ZstdError,)
    try:
        while chunk := handle.read(block):
            yield chunk
    except errors as exc:
        raise UsageError(f"{name}: cannot decompress: {exc}") from None
