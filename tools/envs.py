"""Pinned environments for the test suites: the package's installer with the test suites' own pins added.

The installer is ``checker/oracles/envs.py`` (read its docstring): Python venvs and npm folders named by pin
files, installed once into ``~/.cache/sse-check/envs/NAME-HASH`` and reused while the pins are unchanged. It
ships with sse-check for the real clients the oracles run (``checker/oracles/pins/``); this file adds
``tools/envs/``, the pins of the real servers the test suites start (gpt-oss, ``transformers serve``, vLLM),
which are not the product's.

Used by the tests (``from envs import ensure``, with ``tools/`` on ``sys.path``) and by ``.ci/run``:
``python3 tools/envs.py install NAME...`` installs (exit 1 and one line per failure), ``python3 tools/envs.py
path NAME`` prints the folder, ``python3 tools/envs.py list`` the names. Standard library only: the installer is
loaded by its path, without importing the package (whose dependencies this interpreter may not have).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PINS = ROOT / "tools" / "envs"


def _core():  # type: ignore[no-untyped-def]
    name = "checker.oracles.envs"
    if name in sys.modules:  # the package is imported already: share its module (its PIN_DIRS)
        return sys.modules[name]
    loaded = importlib.util.spec_from_file_location("sse_check_envs", ROOT / "checker" / "oracles" / "envs.py")
    assert loaded is not None and loaded.loader is not None
    module = importlib.util.module_from_spec(loaded)
    sys.modules["sse_check_envs"] = module  # dataclasses look their module up by name
    loaded.loader.exec_module(module)
    return module


_envs = _core()
if PINS not in _envs.PIN_DIRS:
    _envs.PIN_DIRS.insert(0, PINS)

EnvUnavailable = _envs.EnvUnavailable
Spec = _envs.Spec
cache_root = _envs.cache_root
names = _envs.names
spec = _envs.spec
find_python = _envs.find_python
location = _envs.location
ensure = _envs.ensure
installed = _envs.installed


def main(argv: list[str] | None = None) -> int:
    return int(_envs.main(argv, prog="tools/envs.py"))


if __name__ == "__main__":
    sys.exit(main())
