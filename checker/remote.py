"""Captures at fsspec URLs (``s3://``, ``gs://``, ``https://``, ``file://``, ``memory://``...): an archive
is a set of URLs. Imported only when a URL is given, so that linting local files never loads fsspec.

fsspec and its back-ends (s3fs, gcsfs) are the ``archive`` extra; a missing one is a one-line error naming
the extra. Sidecars are looked up beside each capture exactly as on disk (``X.request.json``,
``X.meta.json``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from checker.capture_format import CAPTURE_SUFFIX, COMPRESSED_SUFFIXES, READ_BLOCK, capture_stem, decompressed
from checker.errors import UsageError

EXTRA_HINT = "pip install 'sse-check[archive]'"


def _filesystem(url: str) -> tuple[Any, str]:
    """The fsspec file system of ``url`` and the path within it; a missing back-end is one line."""
    try:
        import fsspec
    except ImportError:
        raise UsageError(f"{url}: reading URLs needs fsspec: {EXTRA_HINT}") from None
    try:
        return fsspec.core.url_to_fs(url)  # type: ignore[no-any-return]
    except ImportError as exc:  # s3fs, gcsfs, aiohttp...: fsspec's message names the package it wanted
        raise UsageError(f"{url}: {_first_line(exc)}") from None
    except ValueError as exc:  # an unknown protocol
        raise UsageError(f"{url}: {_first_line(exc)}") from None


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _is_capture(path: str) -> bool:
    return path.endswith((CAPTURE_SUFFIX, *COMPRESSED_SUFFIXES))


def expand_url(url: str) -> list[str]:
    """A capture URL as given, or the captures below a "folder" URL (sorted, as URLs of the same scheme)."""
    fs, path = _filesystem(url)
    try:
        if fs.isdir(path):
            found = sorted(p for p in fs.find(path) if _is_capture(p))
            if not found:
                raise UsageError(f"no {CAPTURE_SUFFIX} captures found in {url}")
            return [fs.unstrip_protocol(p) for p in found]
        if not fs.exists(path):
            raise UsageError(f"{url}: No such file or directory")
    except (OSError, PermissionError) as exc:
        raise UsageError(f"{url}: {exc.strerror or _first_line(exc)}") from None
    return [url]


def read_url_chunks(url: str, block: int = READ_BLOCK) -> Iterator[bytes]:
    """The (decompressed) bytes of the capture at ``url`` in blocks."""
    fs, path = _filesystem(url)
    with fs.open(path, "rb", block_size=max(block, 5 * 2**20)) as handle:
        yield from decompressed(handle, path, block)


def url_sidecar(url: str, kind: str) -> str:
    """The URL of a capture's ``kind`` sidecar (``request``, ``meta``) beside it."""
    head, _, name = url.rpartition("/")
    return f"{head}/{capture_stem(name)}.{kind}.json"


def load_url_sidecar(url: str) -> Any:
    """The JSON at a sidecar URL, or None when there is none; an unreadable one is one line."""
    fs, path = _filesystem(url)
    try:
        if not fs.exists(path):
            return None
        with fs.open(path, "rb") as handle:
            raw = handle.read()
    except OSError as exc:
        raise UsageError(f"{url}: unreadable sidecar: {exc.strerror or _first_line(exc)}") from None
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise UsageError(f"{url}: unreadable sidecar: not UTF-8 ({exc.reason} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"{url}: unreadable sidecar: not JSON ({exc.msg} at line {exc.lineno}, "
                         f"column {exc.colno})") from None
