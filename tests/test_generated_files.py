"""captures/generated_files.py: how every capture generator's main() writes what it rendered."""

from __future__ import annotations

from pathlib import Path

from generators import assert_written, load_generator

ROOT = Path(__file__).resolve().parents[1]
write_files = load_generator(ROOT / "captures" / "generated_files.py").write_files


def test_only_changed_files_are_written_and_a_pruned_folder_keeps_only_what_was_rendered(tmp_path: Path) -> None:
    files = {"rules/A.sse": b"a\n", "rules/B.sse": b"b\n", "conforming/c.sse": b"c\n"}
    assert write_files(files, tmp_path) == 3
    assert (tmp_path / "conforming" / "c.sse").read_bytes() == b"c\n"
    (tmp_path / "rules" / "OLD.sse").write_bytes(b"gone\n")  # a case the generator no longer renders
    (tmp_path / "notes.txt").write_bytes(b"kept\n")  # outside the pruned folder
    files["rules/B.sse"] = b"b2\n"
    assert write_files(files, tmp_path, prune=[tmp_path / "rules", tmp_path / "missing"]) == 1
    assert sorted(p.name for p in (tmp_path / "rules").iterdir()) == ["A.sse", "B.sse"]
    assert (tmp_path / "rules" / "B.sse").read_bytes() == b"b2\n"
    assert (tmp_path / "notes.txt").read_bytes() == b"kept\n"
    assert write_files(files, tmp_path) == 0


def test_the_real_world_corpus_is_what_its_generator_writes() -> None:
    # The declared client matrices are corrected against the real SDKs (tests/test_client_oracles.py): a
    # generator left behind would undo a correction the next time it runs.
    folder = ROOT / "captures" / "real-world"
    on_disk = [p for p in folder.iterdir() if p.name.endswith((".sse", ".expect.json", ".clients.json"))]
    files = load_generator(folder / "make_real_world.py").render()
    assert_written(files, folder, on_disk, "captures/real-world/make_real_world.py")
