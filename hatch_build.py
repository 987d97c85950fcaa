"""Build hook (hatchling): compiles checker/_speedups.c, the lint's hot path, into the wheel, or leaves it out.

The extension is optional (checker/native.py): without a C compiler, or when the compile fails, the wheel is the
pure-Python one and sse-check lints the same, slower; the build says so in one line and goes on. An editable
install (``pip install -e .``, what ``make`` and CI run) imports the package from the source tree, so the
extension is built there, beside its source. The compile is setuptools' (build_ext), which knows each platform's
compiler and flags. ``SSE_CHECK_PURE_BUILD=1`` builds without it (to check the fallback install).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

SOURCE = Path("checker") / "_speedups.c"


class SpeedupsBuildHook(BuildHookInterface):  # type: ignore[misc]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or os.environ.get("SSE_CHECK_PURE_BUILD", "") not in ("", "0"):
            return
        root = Path(self.root)
        self._tmp = tempfile.mkdtemp(prefix="sse-check-build-")
        try:
            built = compile_extension(root / SOURCE, Path(self._tmp))
        except Exception as exc:  # noqa: BLE001 - any failure means the pure-Python package, never no package
            print(f"sse-check: the compiled hot path was not built ({type(exc).__name__}: {exc}); "
                  "installing the pure-Python one", file=sys.stderr)
            return
        if version == "editable":
            shutil.copy2(built, root / "checker" / built.name)
            return
        build_data["force_include"][str(built)] = f"checker/{built.name}"
        build_data["pure_python"] = False
        build_data["infer_tag"] = True  # a wheel for this interpreter and platform

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        tmp = getattr(self, "_tmp", None)
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def compile_extension(source: Path, work: Path) -> Path:
    """checker._speedups built from ``source`` under ``work``; the path of the built module. The source's
    sha256 goes in as SOURCE_SHA, so that a test can tell a stale build in a source tree (tests/test_native.py)."""
    from setuptools import Distribution, Extension

    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    extension = Extension("checker._speedups", [str(source)], define_macros=[("SPEEDUPS_SOURCE_SHA", f'"{digest}"')])
    dist = Distribution({"name": "sse-check-speedups", "ext_modules": [extension]})
    command = dist.get_command_obj("build_ext")
    command.build_lib = str(work / "lib")
    command.build_temp = str(work / "temp")
    command.ensure_finalized()
    command.run()
    return Path(command.get_ext_fullpath("checker._speedups"))
