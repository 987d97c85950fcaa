"""The public API (checker.lint_bytes / checker.lint_path): the record is one JSON report's files[] entry,
and the example of docs/archive.md runs as written."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

import checker
from tests.archive.helpers import ROOT, json_report


def test_the_docs_example_runs_as_written() -> None:
    text = (ROOT / "docs/archive.md").read_text(encoding="utf-8")
    [example] = re.findall(r"```python\n(.*?)```", text, re.S)
    subprocess.run([sys.executable, "-c", example], cwd=ROOT, check=True, timeout=120)


@pytest.mark.parametrize("folder", ["captures/rules", "captures/http"])
def test_records_are_the_json_reports_entries(folder: str) -> None:
    report = json_report("lint", folder, "-j", "1", "--clients")
    for entry in report["files"][:40]:
        assert checker.lint_path(entry["path"], clients=True) == entry
        data = (ROOT / entry["path"]).read_bytes()
        request = sidecar(entry["path"], "request")
        meta = sidecar(entry["path"], "meta")
        if request is None and isinstance(meta, dict) and isinstance(meta.get("request"), dict):
            request = meta["request"]
        assert checker.lint_bytes(data, request=request, meta=meta, name=entry["path"], clients=True) == entry


def sidecar(path: str, kind: str) -> object:
    file = ROOT / (path.removesuffix(".sse") + f".{kind}.json")
    return json.loads(file.read_text()) if file.is_file() else None


def test_options_and_errors() -> None:
    path = "captures/rules/LIF006-missing-terminal-event.sse"
    assert checker.lint_path(path, ignore=["LIF006"])["counts"]["error"] == 0
    assert checker.lint_path(path, fail_on="error")["passed"] is False
    with pytest.raises(OSError, match="no-such.sse"):
        checker.lint_path("no-such.sse")
    with pytest.raises(ValueError, match="match no rule"):
        checker.lint_path(path, select=["NOPE99"])


def test_importing_checker_stays_light() -> None:
    code = ("import sys, checker; heavy = [m for m in ('checker.api', 'checker.engine', 'fsspec', 'distributed', "
            "'concurrent.futures.process') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_lint_of_one_capture_loads_no_pool_nor_fsspec() -> None:
    code = ("import sys\nfrom checker.cli import main\n"
            "try:\n    main(['lint', 'captures/conforming/text.sse', '--isolated', '-q'])\nexcept SystemExit:\n    pass\n"
            "print([m for m in ('fsspec', 'distributed', 'multiprocessing.pool', 'concurrent.futures.process', "
            "'zstandard') if m in sys.modules], file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.stderr.strip().splitlines()[-1] == "[]", out.stderr
