"""Finding capture files and their sidecars on disk (the CLI side; the engine never reads files).

A capture ``X.sse`` may have sidecars next to it:

* ``X.request.json``: the request body that produced the stream (its
  ``max_output_tokens`` lets the engine recognise truncation);
* ``X.meta.json``: what ``sse-check probe --save`` records (request, status,
  headers, timings, version, partial flag, profile);
* ``X.expect.json``: the findings a corpus capture is declared to produce.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from checker.errors import UsageError

CAPTURE_SUFFIX = ".sse"
READ_BLOCK = 64 * 1024


def expand(paths: list[str]) -> list[Path | str]:
    """Files as given, directories expanded to their ``*.sse`` files (sorted); ``-`` is stdin."""
    found: list[Path | str] = []
    for raw in paths:
        if raw == "-":
            found.append("-")
            continue
        path = Path(raw)
        if not path.exists():  # before any report: a run that checked nothing must not look like a pass
            raise UsageError(f"{raw}: No such file or directory")
        if not os.access(path, os.R_OK):
            raise UsageError(f"{raw}: Permission denied")
        if path.is_dir():
            files = sorted(p for p in path.rglob(f"*{CAPTURE_SUFFIX}") if p.is_file())
            if not files:
                raise UsageError(f"no {CAPTURE_SUFFIX} captures found in {raw}")
            found.extend(files)
        else:
            found.append(path)
    return found


def sidecar(capture: Path, kind: str) -> Path:
    name = capture.name
    stem = name[: -len(CAPTURE_SUFFIX)] if name.endswith(CAPTURE_SUFFIX) else name
    return capture.with_name(f"{stem}.{kind}.json")


def load_json_sidecar(path: Path, option: str | None = None) -> Any:
    """A JSON file next to a capture, or given by ``option`` (``--request``); a failure is one line naming it."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        reason = exc.strerror or str(exc)
    except UnicodeDecodeError as exc:
        reason = f"not UTF-8 ({exc.reason} at byte {exc.start})"
    except json.JSONDecodeError as exc:
        reason = f"not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
    raise UsageError(f"{option} {path}: {reason}" if option else f"{path}: unreadable sidecar: {reason}")


def request_for(capture: Path) -> dict[str, Any] | None:
    """The request body recorded next to a capture, if any."""
    request_file = sidecar(capture, "request")
    if request_file.is_file():
        body = load_json_sidecar(request_file)
        return body if isinstance(body, dict) else None
    meta_file = sidecar(capture, "meta")
    if meta_file.is_file():
        meta = load_json_sidecar(meta_file)
        if isinstance(meta, dict) and isinstance(meta.get("request"), dict):
            return meta["request"]
    return None


def read_chunks(source: Path | str, block: int = READ_BLOCK) -> Iterator[bytes]:
    """The bytes of a capture in blocks, never the whole file at once."""
    import sys

    if source == "-":
        stream = sys.stdin.buffer
        while chunk := stream.read(block):
            yield chunk
        return
    path = Path(source)
    if path.is_dir():
        raise UsageError(f"{path}: is a directory")
    with path.open("rb") as handle:
        while chunk := handle.read(block):
            yield chunk
