"""Modules small with one job, functions short (BRIEF "Rules of work"; issue 15's measures).

Every module in checker/ is at most ``MAX_MODULE_LINES`` lines and every function (methods and nested
functions included, decorators counted) at most ``MAX_FUNCTION_LINES``, read with ``ast``. A module or
function may exceed them only when it is listed below with its reason:

* ``DATA_TABLES``: modules and functions that are mostly a data table, where splitting would scatter one
  table; a listed entry that no longer exceeds the limit fails, so the list only shrinks.
* ``HOT_PATHS``: functions inlined on purpose because they run once per event, where every call costs
  speed (issue 19); like the data tables, a listed entry that no longer exceeds the limit fails.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "checker"

MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 60

# path (relative to the repository) or "path::qualified.name" -> why it may exceed the limit
DATA_TABLES: dict[str, str] = {
    "checker/dialects/responses/effects.py": "the client-effects table (rule code -> client -> effect, ~310 "
                                             "lines of data) with the conditions its entries name",
}
HOT_PATHS: dict[str, str] = {
    # Every call it makes is paid once per event (issue 19's speed target): its steps are locals in one loop.
    "checker/engine.py::StreamLinter._feed_admitted": "the inlined per-event hot path (a call per step costs speed)",
}


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _functions(tree: ast.AST, prefix: str = "") -> Iterator[tuple[str, int]]:
    """(qualified name, lines from its first decorator to its last line) of every function in ``tree``."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            end = node.end_lineno if node.end_lineno is not None else node.lineno
            yield prefix + node.name, end - start + 1
            yield from _functions(node, f"{prefix}{node.name}.<locals>.")
        elif isinstance(node, ast.ClassDef):
            yield from _functions(node, f"{prefix}{node.name}.")
        else:
            yield from _functions(node, prefix)


def _measure() -> dict[str, tuple[int, int]]:
    """Every module and function over its limit: key (as in the allow-lists) -> (lines, limit)."""
    over: dict[str, tuple[int, int]] = {}
    for path in _modules():
        rel = path.relative_to(ROOT).as_posix()
        text = path.read_text("utf-8")
        lines = len(text.splitlines())
        if lines > MAX_MODULE_LINES:
            over[rel] = (lines, MAX_MODULE_LINES)
        for name, length in _functions(ast.parse(text, filename=rel)):
            if length > MAX_FUNCTION_LINES:
                over[f"{rel}::{name}"] = (length, MAX_FUNCTION_LINES)
    return over


@pytest.fixture(scope="module")
def over() -> dict[str, tuple[int, int]]:
    return _measure()


def test_modules_and_functions_are_within_their_limits(over: dict[str, tuple[int, int]]) -> None:
    unlisted = [f"{key}: {lines} lines (limit {limit})" for key, (lines, limit) in sorted(over.items())
                if key not in DATA_TABLES and key not in HOT_PATHS]
    assert not unlisted, "split these (one job per module, functions short):\n" + "\n".join(unlisted)


def test_listed_data_tables_still_need_their_exception(over: dict[str, tuple[int, int]]) -> None:
    stale = [key for key in (*DATA_TABLES, *HOT_PATHS) if key not in over]
    assert not stale, f"within the limits now (or gone): remove from tests/test_structure.py: {stale}"


def test_the_measure_sees_what_it_should() -> None:
    """Guards the test itself: the walk finds methods, nested functions and decorated functions."""
    tree = ast.parse(
        "class A:\n"
        "    @staticmethod\n"
        "    def m():\n"
        "        def inner():\n"
        "            pass\n"
        "        return inner\n"
        "async def f():\n"
        "    pass\n"
    )
    assert dict(_functions(tree)) == {"A.m": 5, "A.m.<locals>.inner": 2, "f": 2}
