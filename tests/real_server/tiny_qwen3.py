"""The scripted tiny Qwen3 of tools/tiny-qwen3 (a Hugging Face checkpoint folder), for the real servers that
load one: ``transformers serve`` (transformers_serve.py here) and any other that reads safetensors.

``ensure_tiny_qwen3()`` generates it once into ``$SSE_CHECK_CACHE/tiny-qwen3/`` (default
``~/.cache/sse-check``) with the standard library alone, checks the digest of what was written against
``TREE_SHA256`` (the generator writes the same bytes on every run and machine) and reuses a cached copy whose
digest still matches. A folder is written beside the target and renamed into place, so a killed run leaves
no half model behind.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GENERATOR = ROOT / "tools" / "tiny-qwen3" / "make_tiny.py"
NAME = "tiny-qwen3-scripted"  # the folder's name: transformers serve names the model by it
# make_tiny.py's tree digest (its last line of output; tree_sha256 there). A change of the script or the chat
# template changes it: run the generator and put its digest here.
TREE_SHA256 = "907ffddfdb33af281fb89541ff04baef2f39e35c9db096c2afc10bfde66543fe"


class TinyQwen3Unavailable(Exception):
    """The generator failed or wrote other bytes than TREE_SHA256 says."""


def cache_dir() -> Path:
    configured = os.environ.get("SSE_CHECK_CACHE")
    return (Path(configured) if configured else Path.home() / ".cache" / "sse-check") / "tiny-qwen3"


def tree_sha256(folder: Path) -> str:
    """The digest make_tiny.py prints: each file's name and sha256, in name order."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.iterdir() if p.is_file()):
        digest.update(path.name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).hexdigest().encode() + b"\n")
    return digest.hexdigest()


def ensure_tiny_qwen3() -> Path:
    """The checkpoint folder (``.../tiny-qwen3/tiny-qwen3-scripted``), generated on first use."""
    target = cache_dir() / NAME
    if target.is_dir() and tree_sha256(target) == TREE_SHA256:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.parent / f".{NAME}.{os.getpid()}.part"
    shutil.rmtree(partial, ignore_errors=True)
    proc = subprocess.run([sys.executable, str(GENERATOR), str(partial)], capture_output=True, text=True,
                          timeout=300)
    if proc.returncode != 0:
        shutil.rmtree(partial, ignore_errors=True)
        raise TinyQwen3Unavailable(f"make_tiny.py failed (exit {proc.returncode}): {proc.stderr[-1000:]}")
    got = tree_sha256(partial)
    if got != TREE_SHA256:
        shutil.rmtree(partial, ignore_errors=True)
        raise TinyQwen3Unavailable(f"make_tiny.py wrote a model with tree sha256 {got}, expected {TREE_SHA256}")
    shutil.rmtree(target, ignore_errors=True)
    os.replace(partial, target)
    return target
