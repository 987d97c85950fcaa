"""The repository needs nothing beside it: no tracked file refers to a path outside the checkout.

A fresh clone on a machine with nothing else must run every command of the README and the docs, and every
test must run (not skip) for want of a sibling folder. So every tracked text file is searched for

* relative paths (``../x``) that climb out of the repository from the file's own folder,
* absolute paths into folders that are not part of it (``/work/…``, ``/home/…``, ``/Users/…``, ``/mnt/…``),
* code that builds a path beside the checkout (``ROOT.parent / "shared"``) and the old "SPEC §n" citations of
  a document that is not in the repository (the facts are in docs/spec.md).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# ../ chains followed by at least one path segment: `../shared/tools`, `../../llama.cpp`.
RELATIVE = re.compile(r"(?<![\w.])((?:\.\./)+)([\w.@-][\w.@/-]*)")
# Absolute paths into folders that only exist on one machine.
ABSOLUTE = re.compile(r"(?<![\w.:/-])(/(?:work|home|Users|mnt|root|srv|data)/[\w.@-]+(?:/[\w.@-]*)*)")
# A path built in code beside the checkout, and a citation of the spec that used to live outside it.
OUTSIDE_CODE = re.compile(r"""\.parent\s*/\s*["']shared["']|\bSPEC\s*§|\bSPEC\.md\b|\bshared/(?:tools|reference|captures|cases)\b""")

# This file names the patterns it looks for.
SELF = Path(__file__).resolve().relative_to(ROOT).as_posix()


def exempt(relative: str) -> bool:
    """Data written by others, kept byte for byte: what a real server sent (the model path it printed is on
    the recording machine) and OpenAI's OpenAPI description (its examples name sandbox files)."""
    if relative.startswith("captures/"):
        return not relative.endswith((".md", ".py"))
    return relative == "reference/openai-openapi.json"


def tracked_files() -> list[Path]:
    try:
        proc = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=60)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the tracked files cannot be listed")
    return [ROOT / name for name in proc.stdout.decode().split("\0") if name]


def text_of(path: Path) -> str | None:
    try:
        data = path.read_bytes()
    except OSError:  # a tracked file deleted in the working tree
        return None
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def outside_references(relative: str, text: str, inside: tuple[str, ...] = ()) -> list[str]:
    """What ``text`` (the content of the tracked file ``relative``) refers to outside the repository.

    A relative path that climbs out of the file's folder but names what the repository holds (``inside``:
    the tracked paths) is one written for another place in it, such as a ``$ref`` that a generator writes
    into ``schemas/open-responses/events/``: that is not outside."""
    found: list[str] = []
    folder = (ROOT / relative).parent
    for number, line in enumerate(text.splitlines(), 1):
        for match in RELATIVE.finditer(line):
            target = (folder / (match.group(1) + match.group(2))).resolve()
            rest = "/" + match.group(2).rstrip("/.")
            if not target.is_relative_to(ROOT) and not any(rest in "/" + path for path in inside):
                found.append(f"{relative}:{number}: {match.group(0)}")
        for match in ABSOLUTE.finditer(line):
            if not Path(match.group(1)).resolve().is_relative_to(ROOT):
                found.append(f"{relative}:{number}: {match.group(1)}")
        for match in OUTSIDE_CODE.finditer(line):
            found.append(f"{relative}:{number}: {match.group(0)}")
    return found


def test_no_tracked_file_refers_to_a_path_outside_the_repository() -> None:
    files = tracked_files()
    assert len(files) > 100
    inside = tuple(path.relative_to(ROOT).as_posix() for path in files)
    found: list[str] = []
    for relative, path in zip(inside, files):
        if relative == SELF or exempt(relative):
            continue
        text = text_of(path)
        if text is not None:
            found += outside_references(relative, text, inside)
    assert not found, "paths outside the repository:\n" + "\n".join(found[:40])


@pytest.mark.parametrize("line", [
    "python ../shared/tools/tiny-llama/make_tiny.py",
    'TINY_DIR = ROOT.parent / "shared" / "tools"',
    'shared = Path("/work/shared/captures/llama.cpp")',
    "as documented in SPEC §4",
    "see ../../../sibling/README.md",
    "cp /home/someone/model.gguf .",
])
def test_the_search_finds_what_it_looks_for(line: str) -> None:
    assert outside_references("docs/example.md", line, ("tools/tiny-llama/make_tiny.py", "README.md"))


@pytest.mark.parametrize("line", [
    "the flags of `../llama.cpp`",  # docs/llama.cpp: inside
    "as docs/spec.md §4 says",
    "PATH=/usr/bin:/bin",
    "https://example.com/work/shared/x",
    "~/.cache/sse-check/tiny-llama",
    'rebase(sub, "../../openai/events/")',  # written into schemas/open-responses/events/
])
def test_the_search_lets_paths_inside_pass(line: str) -> None:
    assert not outside_references("docs/example.md", line, ("docs/llama.cpp.md", "schemas/openai/events/error.json"))


def test_what_the_docs_name_is_in_the_repository() -> None:
    for relative in ("tools/tiny-llama/make_tiny.py", "tools/tiny-llama/ggml-vocab-qwen2.gguf",
                     "tools/tiny-llama/qwen3-thinking-hermes.jinja", "tools/tiny-llama/LICENSE.llama.cpp",
                     "reference/openai-openapi.json", "reference/openai-openapi.LICENSE", "docs/spec.md"):
        assert (ROOT / relative).is_file(), relative


def test_every_spec_citation_names_a_section_of_docs_spec() -> None:
    sections = set(re.findall(r"^## (§\d+)", (ROOT / "docs" / "spec.md").read_text(encoding="utf-8"), re.M))
    assert sections >= {"§1", "§2", "§3", "§4", "§5", "§6"}
    cited: set[str] = set()
    for path in tracked_files():
        text = text_of(path)
        if text is None:
            continue
        for first, rest in re.findall(r"docs/spec\.md (§\d+)((?:(?:-|, | and )§\d+)*)", text):
            cited |= {first, *re.findall(r"§\d+", rest)}
    assert cited and cited <= sections, cited - sections
