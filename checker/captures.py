"""Finding capture files and their sidecars on disk (the CLI side; the engine never reads files).

A capture ``X.sse`` may have sidecars next to it:

* ``X.request.json``: the request body that produced the stream (its
  ``max_output_tokens`` lets the engine recognise truncation);
* ``X.meta.json``: what ``sse-check probe --save`` records (request, status,
  headers, timings, version, partial flag, profile);
* ``X.expect.json``: the findings a corpus capture is declared to produce.

``lint`` also reads compressed captures (``X.sse.gz``, ``X.sse.zst``, sidecars
still ``X.request.json``) and captures at any fsspec URL (``s3://``, ``gs://``,
``https://``, ``memory://``...): those go through :mod:`checker.remote`, which
imports fsspec only when a URL is given. What a capture's name and bytes look like (suffixes, stems,
compression) is :mod:`checker.capture_format`, which both use.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from checker.capture_format import (CAPTURE_SUFFIX, COMPRESSED_SUFFIXES, READ_BLOCK, capture_stem, decompressed,
                                    is_url)
from checker.errors import UsageError

# Callers import these names from here too.
__all__ = ["CAPTURE_SUFFIX", "COMPRESSED_SUFFIXES", "READ_BLOCK", "capture_stem", "decompressed", "expand", "is_url",
           "capture_sidecars", "load_json_sidecar", "meta_for", "read_chunks", "request_for", "sidecar"]


def expand(paths: list[str], *, compressed: bool = False, transcripts: bool = False) -> list[str]:
    """Files as given (as pathlib writes them: ``str(Path(raw))``), directories expanded to their ``*.sse``
    files (sorted as paths); ``-`` is stdin. With ``compressed``, directories also give their
    ``*.sse.gz``/``*.sse.zst``, with ``transcripts`` their WebSocket transcripts ``*.ws.jsonl``
    (checker/ws_transcript.py); a URL (``s3://bucket/dir``) is expanded the same way through fsspec."""
    found: list[str] = []
    for raw in paths:
        if raw == "-":
            found.append("-")
            continue
        if is_url(raw):
            from checker.remote import expand_url

            found.extend(expand_url(raw))
            continue
        path = Path(raw)
        if not path.exists():  # before any report: a run that checked nothing must not look like a pass
            raise UsageError(f"{raw}: No such file or directory")
        if not os.access(path, os.R_OK):
            raise UsageError(f"{raw}: Permission denied")
        if path.is_dir():
            patterns: tuple[str, ...] = (CAPTURE_SUFFIX, *COMPRESSED_SUFFIXES) if compressed else (CAPTURE_SUFFIX,)
            patterns += (".ws.jsonl",) if transcripts else ()
            files = _folder_captures(path, patterns)
            if not files:
                raise UsageError(f"no {CAPTURE_SUFFIX} captures found in {raw}")
            found.extend(files)
        else:
            found.append(str(path))
    return found


def _folder_captures(folder: Path, suffixes: tuple[str, ...]) -> list[str]:
    """The files under ``folder`` whose names end with one of ``suffixes`` (symlinked folders not entered,
    symlinked files kept), sorted as paths: one walk of the folder whatever the suffixes."""
    return [str(p) for p in sorted(p for p in folder.rglob("*") if p.name.endswith(suffixes) and p.is_file())]


def sidecar(capture: str | os.PathLike[str], kind: str) -> Path:
    """The ``X.{kind}.json`` next to capture ``X.sse`` (``X.sse.gz``, ``X.sse.zst``)."""
    path = Path(capture)
    return path.with_name(f"{capture_stem(path.name)}.{kind}.json")


def load_json_sidecar(path: str | os.PathLike[str], option: str | None = None) -> Any:
    """A JSON file next to a capture, or given by ``option`` (``--request``); a failure is one line naming it."""
    path = str(Path(path))
    try:
        with open(path, encoding="utf-8") as handle:
            return json.loads(handle.read())
    except OSError as exc:
        reason = exc.strerror or str(exc)
    except UnicodeDecodeError as exc:
        reason = f"not UTF-8 ({exc.reason} at byte {exc.start})"
    except json.JSONDecodeError as exc:
        reason = f"not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
    raise UsageError(f"{option} {path}: {reason}" if option else f"{path}: unreadable sidecar: {reason}")


def request_for(capture: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The request body recorded next to a capture, if any: ``X.request.json``, else the ``request`` of
    ``X.meta.json`` (read only then: a capture with its own request does not need its meta sidecar)."""
    request = _optional_sidecar(capture, "request")
    if request is not _ABSENT:
        return request if isinstance(request, dict) else None
    meta = _optional_sidecar(capture, "meta")
    return meta["request"] if isinstance(meta, dict) and isinstance(meta.get("request"), dict) else None


def meta_for(capture: str | os.PathLike[str]) -> Any:
    """A capture's ``X.meta.json`` (what ``sse-check probe --save`` recorded), None when it has none."""
    meta = _optional_sidecar(capture, "meta")
    return None if meta is _ABSENT else meta


def capture_sidecars(capture: str | os.PathLike[str]) -> tuple[dict[str, Any] | None, Any]:
    """The request body (``X.request.json``, else the ``request`` of ``X.meta.json``) and the meta sidecar
    (``X.meta.json``, None when absent) of a capture on disk, each file read at most once, the meta sidecar
    first (an unreadable one is the error named). Opened without a ``stat`` first: an archive's lint pays a
    few system calls per capture, not a dozen."""
    meta = _optional_sidecar(capture, "meta")
    request = _optional_sidecar(capture, "request")
    if request is not _ABSENT:
        return (request if isinstance(request, dict) else None), (None if meta is _ABSENT else meta)
    if meta is _ABSENT:
        return None, None
    return (meta["request"] if isinstance(meta, dict) and isinstance(meta.get("request"), dict) else None), meta


_ABSENT: Any = object()


def _optional_sidecar(capture: str | os.PathLike[str], kind: str) -> Any:
    """The JSON of ``X.{kind}.json`` beside ``capture``; ``_ABSENT`` when there is no such file (what
    ``is_file()`` is false for: nothing there, a directory, a dangling link); a file that cannot be read or
    parsed is load_json_sidecar's one-line error."""
    name = os.fspath(capture)
    path = os.path.join(os.path.dirname(name), f"{capture_stem(os.path.basename(name))}.{kind}.json")
    try:
        handle = open(path, encoding="utf-8")
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return _ABSENT
    except OSError:
        return load_json_sidecar(path)  # the same error as a file found and not read
    with handle:
        try:
            text = handle.read()
        except (OSError, UnicodeDecodeError):
            return load_json_sidecar(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return load_json_sidecar(path)


def read_chunks(source: str | os.PathLike[str], block: int = READ_BLOCK) -> Iterator[bytes]:
    """The bytes of a capture in blocks, never the whole file at once."""
    import sys

    if source == "-":
        stream = sys.stdin.buffer
        while chunk := stream.read(block):
            yield chunk
        return
    if isinstance(source, str) and is_url(source):
        from checker.remote import read_url_chunks

        yield from read_url_chunks(source, block)
        return
    path = Path(source)
    try:
        handle = open(path, "rb")  # no stat first: one system call less per capture of an archive
    except IsADirectoryError:
        raise UsageError(f"{path}: is a directory") from None
    with handle:
        yield from decompressed(handle, path.name, block)
