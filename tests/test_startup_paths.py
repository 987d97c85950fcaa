"""A lint of files handles their paths by os.path and resolves schema references without urllib.parse (pathlib
imports urllib.parse and ipaddress: a twentieth of a small lint's start-up). The results are pathlib's and
urljoin's to the character: the paths in reports and messages, sidecars, and what is a file or a folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checker import captures
from checker.schema_files import BASE_URI, join

ROOT = Path(__file__).resolve().parent.parent


# -- paths ---------------------------------------------------------------------------------------------------

PATHS = ["a.sse", "./a.sse", "a//b.sse", "a/./b.sse/", "/a.sse", "//a.sse", "///a.sse", "////a/b", "/", "//", "///",
         ".", "./", "", "..", "../a.sse", "a/../b.sse", "a/b/", ".sse", "-", "a b/ c.sse", "s3://bucket/x.sse",
         "a\\b.sse", "é/ü.sse.gz", "x.sse.zst", "./.././a"]


@pytest.mark.parametrize("raw", PATHS)
def test_path_text_is_how_pathlib_writes_the_path(raw: str) -> None:
    assert captures.path_text(raw) == str(Path(raw))
    assert captures.path_text(Path(raw)) == str(Path(raw))


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="/.ab\\ -", max_size=12))
def test_path_text_on_any_path(raw: str) -> None:
    assert captures.path_text(raw) == str(Path(raw))


@pytest.mark.parametrize("raw", [p for p in PATHS if Path(p).name])
@pytest.mark.parametrize("kind", ["request", "meta"])
def test_sidecar_text_is_the_sidecar_path(raw: str, kind: str) -> None:
    assert captures.sidecar_text(raw, kind) == str(captures.sidecar(Path(raw), kind))
    assert captures.sidecar(raw, kind) == Path(raw).with_name(f"{captures.capture_stem(Path(raw).name)}.{kind}.json")


def test_file_and_folder_as_pathlib_sees_them(tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir()
    (tmp_path / "file.sse").write_text("")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    for name in ("dir", "file.sse", "loop", "dangling", "missing", "file.sse/below", "a\0b"):
        path = str(tmp_path / name) if "\0" not in name else name
        assert captures.is_file(path) == Path(path).is_file(), name
        assert captures.is_dir(path) == Path(path).is_dir(), name


def test_expand_writes_paths_as_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d" / "sub").mkdir(parents=True)
    for name in ("d/b.sse", "d/a.sse.gz", "d/sub/c.sse", "d/a-b.sse", "d/t.ws.jsonl", "one.sse"):
        (tmp_path / name).write_text("")
    found = captures.expand(["./one.sse", "d//", "-"], compressed=True, transcripts=True)
    assert found == ["one.sse", *[str(p) for p in sorted(
        p for pattern in (".sse", ".sse.gz", ".sse.zst", ".ws.jsonl") for p in Path("d").rglob(f"*{pattern}"))], "-"]
    with pytest.raises(captures.UsageError, match="nope.sse: No such file or directory"):
        captures.expand(["nope.sse"])


def test_a_folders_captures_are_what_rglob_finds_in_pathlibs_order(tmp_path: Path) -> None:
    # The order of parts, not of strings ("a/x.sse" after "a-b.sse"), hidden files, a folder named like a
    # capture, symlinked files kept and symlinked folders not entered, a dangling link left out.
    root, elsewhere = tmp_path / "root", tmp_path / "elsewhere"
    for folder in (root / "a", root / "B", root / "d.sse", elsewhere / "in"):
        folder.mkdir(parents=True)
    for name in ("a/x.sse", "a-b.sse", ".hidden.sse", "B/y.sse", "b.sse", "c.sse.zst", "note.txt"):
        (root / name).write_text("")
    (elsewhere / "in" / "z.sse").write_text("")
    (root / "linked").symlink_to(elsewhere, target_is_directory=True)
    (root / "alias.sse").symlink_to(elsewhere / "in" / "z.sse")
    (root / "dangling.sse").symlink_to(tmp_path / "nothing.sse")
    for suffixes in ((".sse",), (".sse", ".sse.gz", ".sse.zst", ".ws.jsonl")):
        expected = [str(p) for p in sorted(p for suffix in suffixes for p in root.rglob(f"*{suffix}") if p.is_file())]
        assert captures._folder_captures(str(root), suffixes) == expected
    assert captures._folder_captures(str(root), (".sse",))[:2] == [str(root / ".hidden.sse"), str(root / "B/y.sse")]


def test_sidecar_errors_name_the_path_as_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.sse").write_text("data: {}\n\n")
    (tmp_path / "x.request.json").write_text("{oops")
    with pytest.raises(captures.UsageError) as caught:
        captures.request_for(".//x.sse")
    assert str(caught.value) == "x.request.json: unreadable sidecar: not JSON (Expecting property name enclosed in " \
                                "double quotes at line 1, column 2)"
    with pytest.raises(captures.UsageError) as caught:
        captures.load_json_sidecar("./x.request.json", "--request")
    assert str(caught.value).startswith("--request x.request.json: not JSON")


# -- schema references ---------------------------------------------------------------------------------------


def _references() -> tuple[set[str], set[str]]:
    """Every $id (the bases) and every $ref of sse-check's schemas."""
    bases, refs = set(), set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "$id" and isinstance(value, str):
                    bases.add(value)
                elif key == "$ref" and isinstance(value, str):
                    refs.add(value)
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for path in (ROOT / "schemas").rglob("*.json"):
        walk(orjson.loads(path.read_bytes()))
    return bases, refs


def test_join_is_urljoin_on_the_schemas() -> None:
    bases, refs = _references()
    assert len(bases) > 100 and len(refs) > 100
    for base in sorted(bases)[::7] + [BASE_URI, ""]:
        for ref in sorted(refs | bases)[::3] + [""]:
            assert join(base, ref) == urljoin(base, ref), (base, ref)


ODD = ["", "#", "#/a", "?q", "a?q", "a;p", "/abs.json", "//host/x", "HTTPS://sse-check.dev/x", "https:x",
       "https:///x", "https://h/a/../b", "https://h/a b", "https://[::1]/x", "https://h/x#f", "https://h/x?",
       "http://other/x", "urn:x:y", "mailto:a@b", "../x.json", "a/b/../x.json", "./a/./b.json", "a\\b", "é.json",
       "a//b", "https://h", "https://h:8080/x;y", "ftp://h/x", "file:///x", "a:b/c", " https://h/x", "https://h/x\t"]
BASES = [BASE_URI + "openai/events/x.json", "https://sse-check.dev/schemas/a/", "https://h", "http://h/x/y",
         "", "urn:x", "file:///tmp/a.json", "HTTPS://H/A/B"]


@pytest.mark.parametrize("base", BASES)
def test_join_is_urljoin_on_odd_references(base: str) -> None:
    for ref in ODD:
        assert join(base, ref) == urljoin(base, ref), (base, ref)


def _outcome(function: Any, base: str, ref: str) -> str:
    try:
        return str(function(base, ref))
    except ValueError as exc:  # urljoin's own refusals ("Invalid IPv6 URL") are join's too
        return f"ValueError: {exc}"


@settings(max_examples=1000, deadline=None)
@given(st.sampled_from(BASES), st.text(alphabet="ahsH1:/.#?;[]%@ -\\", max_size=14))
def test_join_on_any_reference(base: str, ref: str) -> None:
    assert _outcome(join, base, ref) == _outcome(urljoin, base, ref)


# -- what a small lint imports -------------------------------------------------------------------------------


def test_a_small_lint_imports_neither_pathlib_nor_urllib() -> None:
    code = ("import sys; from checker.cli import main\n"
            "code = main(['lint', sys.argv[1], '--color', 'never'])\n"
            "print(code, sorted(m for m in ('pathlib', 'urllib.parse', 'ipaddress', 'fnmatch', 'tomllib') "
            "if m in sys.modules))")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([sys.executable, "-c", code, "captures/conforming/text.sse"], capture_output=True,
                          text=True, cwd=ROOT, timeout=60, env=env)
    assert proc.stdout.splitlines()[-1] == "0 []", proc.stdout + proc.stderr
