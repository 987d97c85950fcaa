"""docs/ci.md and .pre-commit-hooks.yaml stay true: every command line in them parses with the real CLI
(or names a real pytest-plugin option), every YAML block loads, and the pre-commit hook's entry runs."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from checker.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
CI_DOC = ROOT / "docs" / "ci.md"
SHELL_OPERATORS = {"||", "&&", "|", ";", ">>", ">", "&"}


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", CI_DOC.read_text(encoding="utf-8"), flags=re.S)


def run_lines() -> list[str]:
    """Shell lines: the sh blocks, the YAML blocks' `run:` values, and the table's inline commands."""
    lines: list[str] = []
    for block in blocks("sh"):
        lines += block.splitlines()
    for block in blocks("yaml"):
        lines += [line for value in _runs(yaml.safe_load(block)) for line in value.splitlines()]
    lines += re.findall(r"^\| [^|]+ \| `((?:sse-check|pytest) [^`]+)`", CI_DOC.read_text(encoding="utf-8"), re.M)
    return lines


def _runs(node: Any) -> list[str]:
    if isinstance(node, dict):
        return [v for k, v in node.items() if k == "run" and isinstance(v, str)] + \
            [r for v in node.values() for r in _runs(v)]
    if isinstance(node, list):
        return [r for v in node for r in _runs(v)]
    return []


def commands(program: str) -> list[list[str]]:
    found = []
    for line in run_lines():
        tokens = shlex.split(line, comments=True)
        if "install" in tokens:  # `pip install sse-check pytest`: a package name, not a command
            continue
        while program in tokens:
            tokens = tokens[tokens.index(program):]
            end = next((i for i, t in enumerate(tokens) if t in SHELL_OPERATORS), len(tokens))
            found.append(tokens[:end])
            tokens = tokens[end:]
    return found


def test_yaml_blocks_load() -> None:
    assert blocks("yaml")
    for block in blocks("yaml"):
        assert yaml.safe_load(block) is not None


def test_every_sse_check_command_in_the_doc_parses() -> None:
    found = commands("sse-check")
    assert {c[1] for c in found} >= {"probe", "lint", "diff"}
    for command in found:
        try:
            build_parser().parse_args(command[1:])
        except SystemExit as exc:  # argparse's way of refusing
            pytest.fail(f"docs/ci.md: `{' '.join(command)}` does not parse (exit {exc.code})")


def test_every_pytest_option_in_the_doc_exists() -> None:
    from checker import pytest_plugin

    names: set[str] = set()
    inis: set[str] = set()

    class Group:
        def addoption(self, name: str, **_: Any) -> None:
            names.add(name)

    class Parser:
        def getgroup(self, *_: Any) -> Group:
            return Group()

        def addini(self, name: str, *_: Any, **__: Any) -> None:
            inis.add(name)

    pytest_plugin.pytest_addoption(Parser())  # type: ignore[arg-type]
    text = CI_DOC.read_text(encoding="utf-8")
    used = set(re.findall(r"--sse-check-[a-z-]+", text))
    assert used and used <= names, used - names
    assert set(re.findall(r"`(sse_check_[a-z_]+)", text)) <= inis
    assert commands("pytest")


def test_pre_commit_hook() -> None:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    hook = next(h for h in hooks if h["id"] == "sse-check-lint")
    assert hook["entry"] == "sse-check lint" and hook["language"] == "python"
    pattern = re.compile(hook["files"])
    assert pattern.search("captures/x.sse") and not pattern.search("captures/x.sse.json")
    # pre-commit appends the staged file names to the entry.
    entry = shlex.split(hook["entry"])
    assert entry[0] == "sse-check"
    proc = subprocess.run([sys.executable, "-m", "checker", *entry[1:], "captures/conforming/text.sse"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={"NO_COLOR": "1", "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_install_lines_name_no_package_index_release_and_the_tag_is_this_version() -> None:
    """sse-check is not on PyPI: every install line names a git URL or a path, at the tag of this version."""
    from checker import __version__

    text = CI_DOC.read_text(encoding="utf-8")
    installs = [line for line in run_lines() if "pip install" in line]
    assert installs
    for line in installs:
        spec = line.split("pip install", 1)[1]
        assert "git+" in spec or "./" in spec, line
    tags = set(re.findall(r"@(v\d+\.\d+\.\d+)|rev: (v\d+\.\d+\.\d+)|`(v\d+\.\d+\.\d+)`", text))
    named = {t for group in tags for t in group if t}
    assert named == {f"v{__version__}"}, named


def test_the_local_pre_commit_hook_equals_the_shipped_one() -> None:
    shipped = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))[0]
    documents = [yaml.safe_load(block) for block in blocks("yaml")]
    local = next(repo for document in documents if isinstance(document, dict)
                 for repo in document.get("repos", []) if repo.get("repo") == "local")
    hook = local["hooks"][0]
    assert (hook["id"], hook["entry"], hook["files"]) == (shipped["id"], shipped["entry"], shipped["files"])
