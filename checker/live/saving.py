"""Writing what the probe and the proxy received: the body as it arrives (:class:`BodySink`, secrets masked,
renamed into place at the end) and the ``X.meta.json`` sidecar, both atomically (a temporary file, then a
rename), so that no capture is ever half written.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from checker.exchange_meta import ExchangeMeta
from checker.live.redact import Redactor

# The body is kept in memory up to this size (for non-streaming parity and the result record); a saved
# capture is written to disk as it arrives, whatever its size.
KEEP_IN_MEMORY = 16 * 1024 * 1024


class BodySink:
    """Where the body goes as it arrives: memory (up to ``KEEP_IN_MEMORY``) and, when saving, a temporary
    file next to the capture, renamed into place at the end (so a capture is never half written).

    Secrets are masked on the way to the file; a few bytes are held back so that a secret split across two
    chunks is still masked (``*`` for each of its bytes, so offsets stay true).
    """

    def __init__(self, target: Path | None, redactor: Redactor) -> None:
        self.target = target
        self.redactor = redactor
        self.size = 0
        self.memory = bytearray()
        self._hold = max((len(s.encode("utf-8", "replace")) for s in redactor.secrets), default=1) - 1
        self._pending = b""
        self._file: Any = None
        self._tmp: str | None = None
        if target is not None:
            fd, self._tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
            os.fchmod(fd, _file_mode())
            self._file = os.fdopen(fd, "wb")

    @property
    def complete_in_memory(self) -> bool:
        return self.size == len(self.memory)

    def write(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if len(self.memory) < KEEP_IN_MEMORY:
            self.memory += chunk[: KEEP_IN_MEMORY - len(self.memory)]
        if self._file is not None:
            data = self.redactor.bytes(self._pending + chunk)
            cut = max(len(data) - self._hold, 0)
            self._file.write(data[:cut])
            self._pending = data[cut:]

    def masked_memory(self) -> bytes:
        return self.redactor.bytes(bytes(self.memory))

    def commit(self) -> Path | None:
        """Finish the file and move it into place; the capture's path (None when not saving)."""
        if self._file is None or self.target is None or self._tmp is None:
            return None
        try:
            self._file.write(self._pending)
            self._file.close()
            os.replace(self._tmp, self.target)
        except BaseException:
            self.discard()
            raise
        self._file = None
        return self.target

    def discard(self) -> None:
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()
            self._file = None
        if self._tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._tmp)


def save_sidecars(directory: Path, name: str, meta: ExchangeMeta, body: bytes | None, *,
                  pair: str | None = None) -> None:
    """Write ``NAME.meta.json`` atomically (the body, ``NAME.sse``, is written by the :class:`BodySink`); a
    complete non-streaming answer (``body``) to a scenario with a streaming ``pair`` also as
    ``PAIR.nonstream.json``, so that ``sse-check serve DIR`` can replay the saved set."""
    write_atomic(directory / f"{name}.meta.json", meta_json(meta).encode("utf-8"))
    if meta.expect == "nonstream" and pair and body is not None and meta.status == 200 and not meta.partial:
        write_atomic(directory / f"{pair}.nonstream.json", body)


_PAIR = re.compile(r'\[\s*("(?:[^"\\]|\\.)*"),\s*("(?:[^"\\]|\\.)*")\s*\]')


def meta_json(meta: ExchangeMeta | Mapping[str, Any]) -> str:
    """The meta as saved: indented JSON, with each [name, value] header pair on one line."""
    document = meta.to_json() if isinstance(meta, ExchangeMeta) else meta
    return _PAIR.sub(r"[\1, \2]", json.dumps(document, indent=2, ensure_ascii=False)) + "\n"


def _file_mode() -> int:
    """The mode a plain ``open()`` would give a new file (mkstemp's 0600 would hide captures from others)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file beside it, renamed into place."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, _file_mode())
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
