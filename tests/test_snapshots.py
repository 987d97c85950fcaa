"""Golden snapshots of the whole capture corpus: the safety net for restructuring.

For every ``*.sse`` under captures/ and every profile, the JSON report record of
``sse-check lint --clients`` (each finding's code, severity, position, message,
occurrences and details, and the client matrix) is kept in tests/snapshots/,
one file per capture. A run compares the corpus with them; a difference fails
and names the captures and profiles that changed.

Snapshots change only on purpose: ``make snapshots`` (or
``pytest tests/test_snapshots.py --update-snapshots``) rewrites them, and the
commit that does so says why. The lint runs in-process through the CLI, with
each capture's sidecars (request, meta) read as ``sse-check lint`` reads them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from checker.cli import main
from checker.profiles import PROFILES

ROOT = Path(__file__).resolve().parents[1]
CAPTURES = ROOT / "captures"
SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"
ALL_CAPTURES = sorted(CAPTURES.rglob("*.sse"))


def _lint_corpus(profile: str, out: Path) -> dict[str, dict[str, Any]]:
    """The JSON report records of every capture under ``profile``, by path relative to captures/."""
    main(["lint", *map(str, ALL_CAPTURES), "--profile", profile, "--clients", "--format", "json", "-o", str(out)])
    report = json.loads(out.read_text("utf-8"))
    records: dict[str, dict[str, Any]] = {}
    for record in report["files"]:
        name = Path(record.pop("path")).resolve().relative_to(CAPTURES).as_posix()
        records[name] = record
    return records


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """capture -> profile -> its report record."""
    folder = tmp_path_factory.mktemp("snapshots")
    by_capture: dict[str, dict[str, Any]] = {}
    for profile in PROFILES:
        for name, record in _lint_corpus(profile, folder / f"{profile}.json").items():
            by_capture.setdefault(name, {})[profile] = record
    return by_capture


def _snapshot_file(name: str) -> Path:
    return SNAPSHOTS / (name[: -len(".sse")] + ".json")


def _render(record: dict[str, Any]) -> str:
    """One profile a block, one finding and one client a line: a change reads as a one-line diff."""

    def line(value: Any) -> str:
        return json.dumps(value, sort_keys=True, ensure_ascii=False)

    blocks = []
    for profile, rec in sorted(record.items()):
        rest = {k: v for k, v in rec.items() if k not in ("findings", "clients")}
        rows = [f'  "summary": {line(rest)}']
        rows.append('  "findings": [' + ",".join(f"\n   {line(f)}" for f in rec.get("findings", [])) + "]")
        clients = rec.get("clients") or {}
        rows.append('  "clients": {' + ",".join(f"\n   {line(c)}: {line(v)}" for c, v in sorted(clients.items())) + "}")
        blocks.append(f" {line(profile)}: {{\n" + ",\n".join(rows) + "\n }")
    return "{\n" + ",\n".join(blocks) + "\n}\n"


def test_every_capture_is_linted(corpus: dict[str, dict[str, Any]]) -> None:
    expected = {p.relative_to(CAPTURES).as_posix() for p in ALL_CAPTURES}
    assert set(corpus) == expected
    assert all(set(profiles) == set(PROFILES) for profiles in corpus.values())


def test_corpus_matches_snapshots(corpus: dict[str, dict[str, Any]], request: pytest.FixtureRequest) -> None:
    if request.config.getoption("--update-snapshots"):
        wanted = {_snapshot_file(name): _render(record) for name, record in corpus.items()}
        for stale in set(SNAPSHOTS.rglob("*.json")) - set(wanted):
            stale.unlink()
        for path, text in wanted.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            if not path.is_file() or path.read_text("utf-8") != text:
                path.write_text(text, "utf-8")
        return
    changed: list[str] = []
    for name, record in sorted(corpus.items()):
        path = _snapshot_file(name)
        if not path.is_file():
            changed.append(f"{name}: no snapshot")
            continue
        kept = json.loads(path.read_text("utf-8"))
        for profile in sorted(set(kept) | set(record)):
            now = record.get(profile)
            if now is not None:
                now = {"summary": {k: v for k, v in now.items() if k not in ("findings", "clients")},
                       "findings": now.get("findings", []), "clients": now.get("clients") or {}}
            if kept.get(profile) != now:
                changed.append(f"{name} [{profile}]: {_first_difference(kept.get(profile), now)}")
    orphans = sorted(
        p.relative_to(SNAPSHOTS).as_posix() for p in SNAPSHOTS.rglob("*.json")
        if not (CAPTURES / p.relative_to(SNAPSHOTS)).with_suffix(".sse").is_file()
    )
    changed += [f"{o}: snapshot of a capture that no longer exists" for o in orphans]
    assert not changed, (
        f"{len(changed)} snapshot(s) differ (run `make snapshots` if the change is intended, and say why "
        "in the commit):\n  " + "\n  ".join(changed[:40])
    )


def _first_difference(kept: Any, now: Any, where: str = "") -> str:
    """Where two JSON values first differ, as a pointer and the two values, short."""
    if isinstance(kept, dict) and isinstance(now, dict):
        for key in sorted(set(kept) | set(now), key=str):
            if kept.get(key) != now.get(key):
                return _first_difference(kept.get(key), now.get(key), f"{where}/{key}")
    if isinstance(kept, list) and isinstance(now, list) and len(kept) == len(now):
        for i, (a, b) in enumerate(zip(kept, now)):
            if a != b:
                return _first_difference(a, b, f"{where}/{i}")
    if isinstance(kept, list) and isinstance(now, list):
        return f"{where or '/'}: {len(kept)} entries were kept, {len(now)} now"
    return f"{where or '/'}: was {json.dumps(kept)[:120]}, now {json.dumps(now)[:120]}"
