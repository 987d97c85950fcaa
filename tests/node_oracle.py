"""Install and run the openai-node oracle (tests/oracles/node); standard library only.

The oracle is pinned by tests/oracles/node/package.json and package-lock.json
and installed with ``npm ci`` into a cache folder outside the source tree
(``$SSE_CHECK_NODE_ORACLE_DIR``, default ``~/.cache/sse-check/node-oracle-<lock hash>``),
so a test run never writes node_modules next to the tests and a changed lock
file gets a fresh install. CI runs this file before the tests
(``python3 tests/node_oracle.py``) so that the install is part of the build.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

SOURCE = Path(__file__).resolve().parent / "oracles" / "node"
FILES = ("package.json", "package-lock.json", "oracle.mjs", "chat_oracle.mjs")
# Set in CI: a missing node/npm or a failed install is then an error, not a skip.
REQUIRE_ENV = "SSE_CHECK_REQUIRE_NODE_ORACLE"


class NodeOracleUnavailable(Exception):
    """node or npm is missing, or the pinned openai package could not be installed."""


def lock_hash() -> str:
    return hashlib.sha256((SOURCE / "package-lock.json").read_bytes()).hexdigest()[:12]


def target_dir() -> Path:
    configured = os.environ.get("SSE_CHECK_NODE_ORACLE_DIR")
    if configured:
        return Path(configured)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "sse-check" / f"node-oracle-{lock_hash()}"


def ensure_installed() -> Path:
    """The folder holding oracle.mjs and node_modules/openai; installs on first use."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node or not npm:
        raise NodeOracleUnavailable("node and npm are needed for the openai-node oracle (not on PATH)")
    target = target_dir()
    target.mkdir(parents=True, exist_ok=True)
    for name in FILES:  # copied every time: oracle.mjs edits apply without a reinstall
        shutil.copyfile(SOURCE / name, target / name)
    stamp = target / ".installed"
    if stamp.is_file() and stamp.read_text() == lock_hash() and (target / "node_modules" / "openai").is_dir():
        return target
    proc = subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=target,
                          capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        last = (proc.stderr.strip() or proc.stdout.strip()).splitlines()[-1:] or ["no output"]
        raise NodeOracleUnavailable(f"`npm ci` of the pinned openai-node failed: {last[0]}")
    stamp.write_text(lock_hash())
    return target


def run(paths: list[Path], target: Path) -> list[dict[str, Any]]:
    """The oracle's outcomes for ``paths``, in order (one node process for all of them)."""
    node = shutil.which("node") or "node"
    proc = subprocess.run([node, "oracle.mjs", *map(str, paths)], cwd=target, capture_output=True, text=True,
                          timeout=900)
    if proc.returncode != 0:
        raise RuntimeError(f"the node oracle failed (exit {proc.returncode}): {proc.stderr.strip()[-2000:]}")
    outcomes: list[dict[str, Any]] = json.loads(proc.stdout)
    return outcomes


def run_chat(cases: list[tuple[Path, dict[str, Any] | None]], target: Path) -> list[dict[str, Any]]:
    """The chat oracle's outcomes for (capture, request) pairs, in order (one node process for all)."""
    node = shutil.which("node") or "node"
    payload = json.dumps([{"path": str(path), "request": request} for path, request in cases])
    proc = subprocess.run([node, "chat_oracle.mjs"], cwd=target, input=payload, capture_output=True, text=True,
                          timeout=900)
    if proc.returncode != 0:
        raise RuntimeError(f"the node chat oracle failed (exit {proc.returncode}): {proc.stderr.strip()[-2000:]}")
    outcomes: list[dict[str, Any]] = json.loads(proc.stdout)
    return outcomes


def main() -> int:
    try:
        target = ensure_installed()
    except NodeOracleUnavailable as exc:
        print(f"node oracle: {exc}", file=sys.stderr)
        return 1 if os.environ.get(REQUIRE_ENV) else 0
    print(f"node oracle: openai-node installed in {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
