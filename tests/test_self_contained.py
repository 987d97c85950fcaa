"""The repository needs nothing beside it: no tracked file refers to a path outside the checkout.

A fresh clone on a machine with nothing else must run every command of the README and the docs, and every
test must run (not skip) for want of a sibling folder. So every tracked text file is searched for

* relative paths (``../x``) that climb out of the repository from the file's own folder,
* absolute paths into folders that are not part of it (``/work/…``, ``/home/…``, ``/Users/…``, ``/mnt/…``),
* code that builds a path beside the checkout (``ROOT.parent / "shared"``) and the old "SPEC §n" citations of
  a document that is not in the repository (the facts are in docs/spec.md);

and every citation of a section ("docs/spec.md §2.1", or "X.md §n" of any Markdown file) must name a heading
that exists.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
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


# Files given to the project and kept byte for byte: OpenAI's OpenAPI description (its examples name sandbox
# files) and the reasoning-replay case file (tests/replay/test_replay_cases.py checks its sha256; its `about`
# cites the notes it was written from, whose facts are docs/spec.md §5).
GIVEN = ("reference/openai-openapi.json", "cases/reasoning-replay.json")


def exempt(relative: str) -> bool:
    """Data written by others, kept byte for byte: what a real server sent (the model path it printed is on
    the recording machine) and the GIVEN files."""
    if relative.startswith("captures/"):
        return not relative.endswith((".md", ".py"))
    return relative in GIVEN


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


# A heading that numbers a section: "## §2 The Responses event stream", "### §2.1 Hosted-tool calls".
SECTION = re.compile(r"^#{2,6} (§\d+(?:\.\d+)*)(?=[\s.])", re.M)
# A citation of a document's sections: "docs/spec.md §2", "docs/spec.md §2.1", "docs/spec.md §4-§5",
# "docs/spec.md §1, §2 and §3". The document is any Markdown file, so a citation of one the repository does not
# hold ("context.md §8") is caught as well.
NUMBER = r"§\d+(?:\.\d+)*"
CITATION = re.compile(rf"([\w./-]*\w\.md),? ({NUMBER}(?:(?:-|, | and | or ){NUMBER})*)")


def sections_of(path: Path) -> set[str]:
    return set(SECTION.findall(path.read_text(encoding="utf-8")))


def unresolved_citations(relative: str, text: str, sections: Callable[[str], set[str] | None]) -> list[str]:
    """The citations in ``text`` (of the tracked file ``relative``) whose document or section does not exist.

    ``sections(document)`` gives the sections of a tracked Markdown file (a path from the repository's root),
    or None when the repository holds no such file. A document is looked up from the root first, then from
    the citing file's folder ("spec.md §2" in docs/x.md)."""
    found: list[str] = []
    folder = Path(relative).parent.as_posix()
    for number, line in enumerate(text.splitlines(), 1):
        if "§" not in line:  # the regular expression is slow on long lines of word characters (captures)
            continue
        for match in CITATION.finditer(line):
            document, cited = match.group(1), re.findall(NUMBER, match.group(2))
            known = sections(document)
            if known is None and folder != ".":
                known = sections(f"{folder}/{document}")
            missing = [n for n in cited if known is None or n not in known]
            if missing:
                what = "no such document" if known is None else "no section " + ", ".join(missing)
                found.append(f"{relative}:{number}: {match.group(0)} ({what})")
    return found


def test_docs_spec_numbers_its_sections() -> None:
    assert {"§1", "§2", "§2.1", "§3", "§4", "§5", "§6"} <= sections_of(ROOT / "docs" / "spec.md")


def test_every_section_citation_names_a_section_that_exists() -> None:
    """Every "docs/spec.md §n" in code, tests, docs, captures and cases resolves to a heading of docs/spec.md
    (subsections included: "§2.1" needs a "### §2.1" heading), and every other "X.md §n" to a heading of a
    Markdown file the repository holds."""
    files = tracked_files()
    markdown = {path.relative_to(ROOT).as_posix(): path for path in files if path.suffix == ".md"}
    cache: dict[str, set[str]] = {}

    def sections(document: str) -> set[str] | None:
        path = markdown.get(str(Path(document)))
        if path is None:
            return None
        if document not in cache:
            cache[document] = sections_of(path)
        return cache[document]

    found: list[str] = []
    cited = 0
    for path in files:
        relative = path.relative_to(ROOT).as_posix()
        text = text_of(path)
        if text is None or relative == SELF or relative in GIVEN or "§" not in text:
            continue
        cited += len(CITATION.findall(text))
        found += unresolved_citations(relative, text, sections)
    assert cited > 50, "the search finds the citations"
    assert not found, "citations of sections that do not exist:\n" + "\n".join(found[:40])


SPEC_SECTIONS = {"docs/spec.md": {"§1", "§2", "§2.1", "§4", "§5"}, "docs/other.md": {"§1"}}


@pytest.mark.parametrize("line", [
    "docs/spec.md §9",
    "(docs/spec.md §2.9)",
    "docs/spec.md §3",
    "docs/spec.md §4-§6",
    "docs/spec.md §1, §2 and §7",
    "what a request sends back (context.md §8)",
    "other.md §2",
])
def test_a_citation_of_a_missing_section_is_found(line: str) -> None:
    assert unresolved_citations("docs/x.md", line, SPEC_SECTIONS.get)


@pytest.mark.parametrize("line", [
    "as docs/spec.md §4 says",
    "(docs/spec.md §2.1).",
    "docs/spec.md §4-§5",
    "docs/spec.md §1, §2 and §5",
    "other.md §1",  # docs/other.md, from the citing file's folder
    "RFC 9110 §7.6.1",  # not a Markdown document
    "WHATWG HTML Living Standard, §9.2.6",
])
def test_a_citation_of_an_existing_section_passes(line: str) -> None:
    assert not unresolved_citations("docs/x.md", line, SPEC_SECTIONS.get)
