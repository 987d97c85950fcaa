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

import errno
import json
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from checker.capture_format import (CAPTURE_SUFFIX, COMPRESSED_SUFFIXES, READ_BLOCK, capture_stem, decompressed,
                                    is_url)
from checker.errors import UsageError

if TYPE_CHECKING:
    from pathlib import Path

# Callers import these names from here too.
__all__ = ["CAPTURE_SUFFIX", "COMPRESSED_SUFFIXES", "READ_BLOCK", "capture_stem", "decompressed", "expand", "is_url",
           "is_dir", "is_file", "load_json_sidecar", "meta_for", "path_text", "read_chunks", "request_for", "sidecar", "sidecar_text"]

# A capture's path is handled as the text pathlib would write it (str(Path(raw))), by os.path: pathlib imports
# urllib.parse and ipaddress, a twentieth of a small lint's start-up. Windows paths (drives, backslashes) are
# left to pathlib itself, and a folder of captures is searched with it (Path.rglob).
_POSIX = os.name == "posix"
# What pathlib's is_file/is_dir/exists take for "no such file"; any other OSError is raised, as pathlib does.
_MISSING = (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)


def path_text(raw: str | os.PathLike[str]) -> str:
    """``str(Path(raw))``: the path without empty and ``.`` parts or a trailing slash (``./a//b.sse/`` is
    ``a/b.sse``), two leading slashes kept and more made one, as pathlib writes it."""
    text = os.fspath(raw)
    if not _POSIX:
        from pathlib import Path

        return str(Path(text))
    root = ""
    if text.startswith("/"):
        stripped = text.lstrip("/")
        root = "//" if len(text) - len(stripped) == 2 else "/"
        text = stripped
    return (root + "/".join(part for part in text.split("/") if part and part != ".")) or "."


def _mode(path: str) -> int | None:
    """The file's stat mode, None when it does not exist (pathlib's rule: other errors are raised)."""
    try:
        return os.stat(path).st_mode
    except OSError as exc:
        if exc.errno in _MISSING:
            return None
        raise
    except ValueError:  # an embedded NUL: no such file
        return None


def is_file(path: str) -> bool:
    """``Path(path).is_file()``, by os.path."""
    mode = _mode(path)
    return mode is not None and (mode & 0o170000) == 0o100000  # stat.S_ISREG


def is_dir(path: str) -> bool:
    """``Path(path).is_dir()``, by os.path."""
    mode = _mode(path)
    return mode is not None and (mode & 0o170000) == 0o040000  # stat.S_ISDIR


def expand(paths: list[str], *, compressed: bool = False, transcripts: bool = False) -> list[str]:
    """Files as given (as pathlib writes them: :func:`path_text`), directories expanded to their ``*.sse``
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
        path = path_text(raw)
        if _mode(path) is None:  # before any report: a run that checked nothing must not look like a pass
            raise UsageError(f"{raw}: No such file or directory")
        if not os.access(path, os.R_OK):
            raise UsageError(f"{raw}: Permission denied")
        if is_dir(path):
            patterns: tuple[str, ...] = (CAPTURE_SUFFIX, *COMPRESSED_SUFFIXES) if compressed else (CAPTURE_SUFFIX,)
            patterns += (".ws.jsonl",) if transcripts else ()
            files = _folder_captures(path, patterns)
            if not files:
                raise UsageError(f"no {CAPTURE_SUFFIX} captures found in {raw}")
            found.extend(files)
        else:
            found.append(path)
    return found


def _folder_captures(folder: str, suffixes: tuple[str, ...]) -> list[str]:
    """The files under ``folder`` whose names end with one of ``suffixes``, in pathlib's order: what
    ``sorted(p for p in Path(folder).rglob("*" + suffix) if p.is_file())`` gives (symlinked folders not
    entered, symlinked files kept), without a ``stat`` per file or a Path per name: on an archive of a
    million captures, this list is the serial part of ``-j`` before the first worker starts."""
    if not _POSIX:
        from pathlib import Path

        return [str(p) for p in sorted(p for suffix in suffixes for p in Path(folder).rglob(f"*{suffix}")
                                       if p.is_file())]
    found: list[str] = []
    pending = [folder]
    while pending:
        try:
            entries = os.scandir(pending.pop())
        except OSError:  # a folder that cannot be listed is skipped, as rglob skips it
            continue
        with entries:
            for entry in entries:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        pending.append(entry.path)
                    elif entry.name.endswith(suffixes) and entry.is_file():
                        found.append(entry.path)
                except OSError:
                    continue
    found.sort(key=lambda text: text.split("/"))  # PurePosixPath orders by parts, case-sensitively
    return found


def sidecar_text(capture: str | os.PathLike[str], kind: str) -> str:
    """The path of a capture's ``X.{kind}.json`` sidecar, as :func:`sidecar` writes it."""
    text = path_text(capture)
    if not _POSIX:
        return str(sidecar(text, kind))
    folder, sep, name = text.rpartition("/")
    return f"{folder}{sep}{capture_stem(name)}.{kind}.json"


def sidecar(capture: str | os.PathLike[str], kind: str) -> Path:
    """The ``X.{kind}.json`` next to capture ``X.sse`` (``X.sse.gz``, ``X.sse.zst``)."""
    from pathlib import Path

    path = Path(capture)
    return path.with_name(f"{capture_stem(path.name)}.{kind}.json")


def load_json_sidecar(path: str | os.PathLike[str], option: str | None = None) -> Any:
    """A JSON file next to a capture, or given by ``option`` (``--request``); a failure is one line naming it."""
    path = path_text(path)
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
    """The request body recorded next to a capture, if any."""
    request_file = sidecar_text(capture, "request")
    if is_file(request_file):
        body = load_json_sidecar(request_file)
        return body if isinstance(body, dict) else None
    meta_file = sidecar_text(capture, "meta")
    if is_file(meta_file):
        meta = load_json_sidecar(meta_file)
        if isinstance(meta, dict) and isinstance(meta.get("request"), dict):
            return meta["request"]
    return None


def meta_for(capture: str | os.PathLike[str]) -> Any:
    """A capture's ``X.meta.json`` (what ``sse-check probe --save`` recorded), None when it has none."""
    meta_file = sidecar_text(capture, "meta")
    return load_json_sidecar(meta_file) if is_file(meta_file) else None


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
    path = path_text(source)
    if is_dir(path):
        raise UsageError(f"{path}: is a directory")
    with open(path, "rb") as handle:
        yield from decompressed(handle, path.rpartition("/")[2] if _POSIX else os.path.basename(path), block)
