"""The capture generators (captures/**/make_*.py) as the corpus tests load them: each is a script, not a module
of the package, so a test loads it from its file and compares what it renders with what is on disk."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import ModuleType


def load_generator(path: Path) -> ModuleType:
    """The script at ``path`` as a module (registered while it runs: dataclasses look their module up there)."""
    spec = importlib.util.spec_from_file_location(f"generator_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


def assert_written(files: Mapping[str, bytes], root: Path, on_disk: Iterable[Path], script: str) -> None:
    """Every file the generator renders is on disk as rendered, and every file of its folders is one of them."""
    for name, data in files.items():
        assert (root / name).read_bytes() == data, f"{name} differs: run python {script}"
    stale = sorted({path.relative_to(root).as_posix() for path in on_disk} - set(files))
    assert not stale, f"not written by the generator: {stale}"
