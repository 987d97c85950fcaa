"""The package type-checks: every public function is annotated, and mypy agrees with the annotations."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_mypy_finds_no_error_in_the_package() -> None:
    if shutil.which("mypy", path=str(Path(sys.executable).parent)) is None:
        pytest.fail("mypy is not installed: pip install -e '.[test]'")
    proc = subprocess.run([sys.executable, "-m", "mypy", "checker", "--ignore-missing-imports",
                           "--cache-dir", str(ROOT / ".mypy_cache")],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-2000:]
