"""Reading `sse-check … --format json` reports in the live and real-server tests: the lint of a saved probe,
its entries by name, an entry's rule codes."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

from checker.cli import main


def lint_json(*args: str) -> dict[str, Any]:
    """`sse-check lint ARGS --format json`, run in this process (the probes are the real processes)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["lint", *args, "--format", "json", "--color", "never"])
    assert code in (0, 1), err.getvalue()
    return json.loads(out.getvalue())


def by_name(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Report entries by scenario: probe entries are named by scenario, lint entries by NAME.sse path."""
    return {Path(entry["path"]).name.removesuffix(".sse"): entry for entry in report["files"]}


def codes(entry: dict[str, Any]) -> set[str]:
    """The rule codes of one report entry's findings."""
    return {f["code"] for f in entry["findings"]}
