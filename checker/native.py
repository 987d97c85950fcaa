"""The compiled hot path (checker/_speedups.c), or None: the pure-Python code it mirrors runs instead.

The extension is optional: hatch_build.py compiles it at install when a C compiler is there, and a machine
without one installs and lints the same (tests/test_native.py compares the two on the whole corpus).
``SSE_CHECK_PURE=1`` forces the pure-Python code, for those tests and for anyone who suspects the extension.
Read once, at import: the engine's modules bind what they use when they are imported.
"""

from __future__ import annotations

import os
from types import ModuleType


def _load() -> ModuleType | None:
    if os.environ.get("SSE_CHECK_PURE", "") not in ("", "0"):
        return None
    try:
        from checker import _speedups
    except ImportError:  # not built (no compiler at install), or built for another interpreter
        return None
    return _speedups


speedups: ModuleType | None = _load()


def implementation() -> str:
    """Which code the hot path runs, as the benchmark and ``--version``-like reports name it."""
    return "compiled (checker._speedups)" if speedups is not None else "pure Python"
