"""What the capture generators (captures/**/make_*.py) share: writing the files they render.

Each generator renders its files as ``{path relative to a folder: bytes}`` (what tests/generators.py compares
with the disk) and its ``main()`` writes them here. A generator imports it as ``captures.generated_files``
with the project root on ``sys.path``, which every generator puts there for ``checker`` already.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path


def write_files(files: Mapping[str, bytes], root: Path, *, prune: Iterable[Path] = ()) -> int:
    """Write each of ``files`` under ``root`` whose bytes differ from the disk (a file left as it is keeps its
    mtime, so that make and editors see no change); remove a file of a ``prune`` folder that ``files`` does
    not name (a case the generator no longer renders). Returns how many files were written."""
    for folder in prune:
        for stale in sorted(folder.glob("*")) if folder.is_dir() else ():
            if stale.is_file() and stale.relative_to(root).as_posix() not in files:
                stale.unlink()
    written = 0
    for name, data in files.items():
        path = root / name
        if path.is_file() and path.read_bytes() == data:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        written += 1
    return written
