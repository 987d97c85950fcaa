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
# The Anthropic SDK's oracle: a package of its own (its own lock, so its own cache folder).
ANTHROPIC = Path(__file__).resolve().parent / "oracles" / "node-anthropic"
# The files each oracle folder needs beside its node_modules, and the package it runs.
FILES = {SOURCE: ("package.json", "package-lock.json", "oracle.mjs", "chat_oracle.mjs"),
         ANTHROPIC: ("package.json", "package-lock.json", "oracle.mjs")}
PACKAGES = {SOURCE: "openai", ANTHROPIC: "@anthropic-ai/sdk"}
# Set in CI: a missing node/npm or a failed install is then an error, not a skip.
REQUIRE_ENV = "SSE_CHECK_REQUIRE_NODE_ORACLE"


class NodeOracleUnavailable(Exception):
    """node or npm is missing, or the pinned openai package could not be installed."""


def lock_hash(source: Path = SOURCE) -> str:
    return hashlib.sha256((source / "package-lock.json").read_bytes()).hexdigest()[:12]


def target_dir(source: Path = SOURCE) -> Path:
    configured = os.environ.get("SSE_CHECK_NODE_ORACLE_DIR")
    if configured:
        return Path(configured) if source == SOURCE else Path(configured) / source.name
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "sse-check" / f"node-oracle-{lock_hash(source)}"


def ensure_installed(source: Path = SOURCE) -> Path:
    """The folder holding the oracle scripts and the pinned package (node_modules/openai for openai-node,
    node_modules/@anthropic-ai/sdk for ``ANTHROPIC``); installs on first use."""
    package = PACKAGES[source]
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node or not npm:
        raise NodeOracleUnavailable(f"node and npm are needed for the {package} oracle (not on PATH)")
    target = target_dir(source)
    target.mkdir(parents=True, exist_ok=True)
    for name in FILES[source]:  # copied every time: oracle.mjs edits apply without a reinstall
        shutil.copyfile(source / name, target / name)
    stamp = target / ".installed"
    if stamp.is_file() and stamp.read_text() == lock_hash(source) and (target / "node_modules" / package).is_dir():
        return target
    proc = subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=target,
                          capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        last = (proc.stderr.strip() or proc.stdout.strip()).splitlines()[-1:] or ["no output"]
        raise NodeOracleUnavailable(f"`npm ci` of the pinned {package} failed: {last[0]}")
    stamp.write_text(lock_hash(source))
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


# The registry's Node drivers (checker/oracles/registry.py) run in pinned environments of tools/envs/.
NODE_ENVS = ("openai-node", "anthropic-ts")


def ensure_env(name: str) -> Path:
    """The tools/envs environment ``name``, installed on first use; NodeOracleUnavailable when it cannot be."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
    import envs

    if not shutil.which("node") or not shutil.which("npm"):
        raise NodeOracleUnavailable(f"node and npm are needed for the {name} driver (not on PATH)")
    try:
        return envs.ensure(name)
    except envs.EnvUnavailable as exc:
        raise NodeOracleUnavailable(f"{name}: {exc}") from None


def main() -> int:
    for source, package in PACKAGES.items():
        try:
            target = ensure_installed(source)
        except NodeOracleUnavailable as exc:
            print(f"node oracle: {exc}", file=sys.stderr)
            return 1 if os.environ.get(REQUIRE_ENV) else 0
        print(f"node oracle: {package} installed in {target}")
    for name in NODE_ENVS:
        try:
            target = ensure_env(name)
        except NodeOracleUnavailable as exc:
            print(f"node oracle: {exc}", file=sys.stderr)
            return 1 if os.environ.get(REQUIRE_ENV) else 0
        print(f"node oracle: {name} installed in {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
