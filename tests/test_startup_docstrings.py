"""Every dataclass a lint defines has a docstring of its own: for a class without one, dataclasses writes one
from inspect.signature(cls) at every start-up (a millisecond of a small lint's, for 16 classes)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_a_lint_defines_no_dataclass_without_a_docstring() -> None:
    code = ("import dataclasses, json, sys\n"
            "missing = []\n"
            "process = dataclasses._process_class\n"
            "def spy(cls, *args, **kwargs):\n"
            "    if not cls.__dict__.get('__doc__') and cls.__module__.startswith('checker'):\n"
            "        missing.append(f'{cls.__module__}.{cls.__qualname__}')\n"
            "    return process(cls, *args, **kwargs)\n"
            "dataclasses._process_class = spy\n"
            "from checker.cli import main\n"
            "main(['lint', 'captures/conforming/text.sse', '--color', 'never'])\n"
            "print(json.dumps(missing))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []
