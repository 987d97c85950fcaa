"""The generated docs are in step with the code."""

from __future__ import annotations

from pathlib import Path

from checker.rules import RULES
from checker.rules.docs import render_all

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "rules"


def test_every_rule_has_a_committed_page_equal_to_the_registry() -> None:
    pages = render_all(ROOT / "captures")
    committed = {p.name: p.read_text(encoding="utf-8") for p in DOCS.glob("*.md")}
    assert set(committed) == set(pages), "run `make docs`"
    stale = [name for name, text in pages.items() if committed[name] != text]
    assert stale == [], f"stale rule docs (run `make docs`): {stale[:5]}"


def test_every_page_has_the_fixed_sections_and_real_examples() -> None:
    pages = render_all(ROOT / "captures")
    for code in RULES:
        page = pages[f"{code}.md"]
        for section in ("## What it does", "## Why is this bad?", "## Example", "## Use instead", "## References"):
            assert section in page, (code, section)
        assert "(missing example capture" not in page, code


def test_readme_tables_are_in_step_with_the_registry() -> None:
    from checker.rules.docs import render_readme_block

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert render_readme_block() in readme, "run `make docs`"
