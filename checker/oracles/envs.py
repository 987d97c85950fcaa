"""Pinned environments: Python venvs and npm folders, installed once into a cache outside any source tree.

The real clients sse-check's oracles run (codex, Claude Code, the Agents SDKs, the Vercel AI SDK, LangChain)
and the real servers the test suites start each pin releases that must never change what the checker itself
runs with, so each gets an environment of its own, named by its pin files in one of the folders of
``PIN_DIRS``: this package's ``checker/oracles/pins/`` (the clients: they ship with sse-check, so that
``--oracle codex`` works wherever sse-check is installed) and, in a source checkout, ``tools/envs/`` (the test
suites' servers; ``tools/envs.py`` adds it).

* ``NAME.txt``: a pip requirements file of exact pins (``==``). Lines that start with ``#:`` set how it is
  installed: ``#: python 3.12`` (the interpreter: ``python3.12`` on PATH, else pyenv's newest 3.12.x),
  ``#: uninstall torchvision torchaudio`` (removed after the install: packages a dependency drags in that do
  not load beside another pin), ``#: editable`` (this project too, ``pip install -e ROOT``).
* ``NAME/package.json`` with ``package-lock.json``: an npm folder, installed with ``npm ci``.

An environment is installed once into ``$SSE_CHECK_CACHE/envs/NAME-HASH`` (default ``~/.cache/sse-check``),
where HASH is taken over its pin files and the interpreter's version: a changed pin gets a fresh install, an
unchanged one is reused in seconds (a warm CI run). An install that fails leaves no stamp, so the next call
starts again from nothing. Two processes asking for the same environment at once take turns (a file lock).
``installed(NAME)`` finds an installed environment without installing it (what ``--oracle`` asks).

``python -m checker.oracles.envs install NAME...`` installs (exit 1 and one line per failure), ``... path
NAME`` prints the folder, ``... list`` the names. Standard library only: ``tools/envs.py`` loads this file by
its path, without importing the package.
"""


from __future__ import annotations

import argparse
import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the source checkout (``#: editable`` installs it)
# The folders of pin files, searched in order; tools/envs.py puts tools/envs/ first.
PIN_DIRS: list[Path] = [Path(__file__).resolve().parent / "pins"]
STAMP = ".sse-check-installed"
INSTALL_TIMEOUT_S = 3600


class EnvUnavailable(Exception):
    """The environment cannot be installed here (no such interpreter, no npm, the install failed)."""


@dataclass(frozen=True, slots=True)
class Spec:
    """One environment's pin files and how to install them."""

    name: str
    kind: str  # "python" or "npm"
    files: tuple[Path, ...]
    python: str | None = None  # a version prefix such as "3.12"; None: the interpreter running this
    uninstall: tuple[str, ...] = ()
    editable: bool = False


def cache_root() -> Path:
    configured = os.environ.get("SSE_CHECK_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "sse-check"


def names() -> list[str]:
    """Every environment the pin folders define."""
    found: set[str] = set()
    for pins in PIN_DIRS:
        found |= {p.stem for p in pins.glob("*.txt")} | {p.parent.name for p in pins.glob("*/package.json")}
    return sorted(found)


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def spec(name: str) -> Spec:
    for pins in PIN_DIRS:  # the first folder that defines it
        if (pins / f"{name}.txt").is_file() or (pins / name / "package.json").is_file():
            return _spec_in(pins, name)
    raise EnvUnavailable(f"no environment {name!r} (have: {', '.join(names()) or 'none'})")


def _spec_in(pins: Path, name: str) -> Spec:
    requirements, package = pins / f"{name}.txt", pins / name / "package.json"
    if requirements.is_file():
        python: str | None = None
        uninstall: tuple[str, ...] = ()
        editable = False
        for line in requirements.read_text().splitlines():
            if not line.startswith("#:"):
                continue
            word, _, rest = line[2:].strip().partition(" ")
            if word == "python":
                python = rest.strip()
            elif word == "uninstall":
                uninstall = tuple(rest.split())
            elif word == "editable":
                editable = True
            else:
                raise EnvUnavailable(f"{_shown(requirements)}: unknown directive '#: {word}'")
        return Spec(name, "python", (requirements,), python, uninstall, editable)
    if package.is_file():
        lock = package.parent / "package-lock.json"
        if not lock.is_file():
            raise EnvUnavailable(f"{_shown(package.parent)} has no package-lock.json")
        return Spec(name, "npm", (package, lock))
    raise EnvUnavailable(f"no environment {name!r} in {_shown(pins)}")


def _interpreter_version(python: str) -> str:
    proc = subprocess.run([python, "-c", "import sys; print(sys.version.split()[0])"], capture_output=True,
                          text=True)
    return proc.stdout.strip()


def find_python(version: str | None) -> str:
    """The interpreter for ``version`` ("3.12"): pyenv's newest X.Y.z, else pythonX.Y on PATH (a pyenv shim
    on PATH answers only for the version pyenv has selected, so each candidate is asked to run)."""
    if version is None:
        return sys.executable
    candidates: list[str] = []
    roots = [os.environ.get("PYENV_ROOT"), str(Path.home() / ".pyenv")]
    for root in dict.fromkeys(filter(None, roots)):
        versions = sorted((p for p in Path(root, "versions").glob(f"{version}.*")
                           if re.fullmatch(rf"{re.escape(version)}\.\d+", p.name)),
                          key=lambda p: int(p.name.rsplit(".", 1)[1]), reverse=True)
        candidates += [str(p / "bin" / f"python{version}") for p in versions]
    on_path = shutil.which(f"python{version}")
    if on_path:
        candidates.append(on_path)
    for candidate in candidates:
        if Path(candidate).is_file() and _interpreter_version(candidate).startswith(version + "."):
            return candidate
    raise EnvUnavailable(f"no Python {version} here (neither in pyenv's versions nor python{version} on PATH)")


def location(env: Spec) -> Path:
    digest = hashlib.sha256()
    for path in env.files:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    if env.kind == "python":
        digest.update(_interpreter_version(find_python(env.python)).encode())
    return cache_root() / "envs" / f"{env.name}-{digest.hexdigest()[:12]}"


def _run(argv: list[str], cwd: Path | None = None) -> None:
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S,
                          env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    if proc.returncode != 0:
        lines = [line for line in (proc.stderr + proc.stdout).splitlines()
                 if line.strip() and "is ignored: it is neither a file nor a directory" not in line]
        raise EnvUnavailable(f"`{' '.join(Path(argv[0]).name if i == 0 else a for i, a in enumerate(argv))}` "
                             f"failed (exit {proc.returncode}): {(lines or ['no output'])[-1].strip()}")


def _install(env: Spec, target: Path) -> None:
    if env.kind == "python":
        _run([find_python(env.python), "-m", "venv", str(target)])
        pip = [str(target / "bin" / "python"), "-m", "pip", "install", "--quiet"]
        _run([*pip, "-r", str(env.files[0])])
        if env.editable:
            _run([*pip, "--no-deps", "-e", str(ROOT)])
        if env.uninstall:
            _run([str(target / "bin" / "python"), "-m", "pip", "uninstall", "--quiet", "-y", *env.uninstall])
        return
    npm = shutil.which("npm")
    if npm is None:
        raise EnvUnavailable(f"npm is needed for the {env.name} environment (not on PATH)")
    target.mkdir(parents=True)
    for path in env.files:
        shutil.copyfile(path, target / path.name)
    _run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=target)


def ensure(name: str) -> Path:
    """The environment's folder, installed on first use (a venv: its ``bin/`` holds the commands; an npm
    folder: its ``node_modules/``)."""
    env = spec(name)
    target = location(env)
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f".{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a second installer waits here, then finds the stamp
        if (target / STAMP).is_file():
            return target
        shutil.rmtree(target, ignore_errors=True)  # a half-made install from a run that died
        try:
            _install(env, target)
        except BaseException:
            shutil.rmtree(target, ignore_errors=True)
            raise
        (target / STAMP).write_text(name + "\n")
    return target


def installed(name: str) -> Path | None:
    """The environment's folder when it is installed (its stamp is there), else None; never installs."""
    try:
        target = location(spec(name))
    except EnvUnavailable:
        return None
    return target if (target / STAMP).is_file() else None


def main(argv: list[str] | None = None, prog: str = "python -m checker.oracles.envs") -> int:
    parser = argparse.ArgumentParser(prog=prog, description=(__doc__ or "").split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="the environments the pin folders define")
    install = sub.add_parser("install", help="install (or reuse) environments")
    install.add_argument("names", nargs="*", help="default: all of them")
    path = sub.add_parser("path", help="print an environment's folder, installing it first")
    path.add_argument("name")
    args = parser.parse_args(argv)
    if args.command == "list":
        print("\n".join(names()))
        return 0
    if args.command == "path":
        try:
            print(ensure(args.name))
        except EnvUnavailable as exc:
            print(f"{prog}: {exc}", file=sys.stderr)
            return 1
        return 0
    failed = 0
    for name in args.names or names():
        try:
            print(f"{name}: {ensure(name)}")
        except EnvUnavailable as exc:
            print(f"{prog}: {name}: {exc}", file=sys.stderr)
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
