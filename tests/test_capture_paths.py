"""Capture paths as the reports and messages show them: files as given (as pathlib writes them), a folder's
captures in path order, sidecar errors naming the sidecar."""

from __future__ import annotations

from pathlib import Path

import pytest

from checker import captures


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


def test_a_folders_captures_come_in_path_order(tmp_path: Path) -> None:
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
    for compressed, transcripts in ((False, False), (True, True)):
        suffixes = (".sse", ".sse.gz", ".sse.zst", ".ws.jsonl") if compressed else (".sse",)
        expected = [str(p) for p in sorted(p for suffix in suffixes for p in root.rglob(f"*{suffix}") if p.is_file())]
        assert captures.expand([str(root)], compressed=compressed, transcripts=transcripts) == expected
    assert captures.expand([str(root)])[:2] == [str(root / ".hidden.sse"), str(root / "B/y.sse")]


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
