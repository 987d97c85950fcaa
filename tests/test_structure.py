"""Modules small with one job, functions short (BRIEF "Rules of work"; issue 15's measures).

Every module in checker/ is at most ``MAX_MODULE_LINES`` lines and every function (methods and nested
functions included, decorators counted) at most ``MAX_FUNCTION_LINES``, read with ``ast``. A module or
function may exceed them only when it is listed below with its reason:

* ``DATA_TABLES``: modules and functions that are mostly a data table, where splitting would scatter one
  table; a listed entry that no longer exceeds the limit fails, so the list only shrinks.
* ``BEING_SPLIT``: offenders that other work of this session is splitting (issue 15); an entry that
  no longer exceeds the limit is named in a warning, to be removed when the list is tightened.
"""

from __future__ import annotations

import ast
import warnings
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
BEING_SPLIT: dict[str, str] = {
    # issue 15, engine-split and seam: the engine's pipeline and the HTTP exchange checks
    "checker/engine.py": "being split this session (engine-split)",
    "checker/engine.py::StreamLinter.feed": "being split this session (engine-split)",
    "checker/http_checks.py": "being split this session (engine-split, seam)",
    "checker/http_checks.py::exchange_findings": "being split this session (engine-split, seam)",
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
                if key not in DATA_TABLES and key not in BEING_SPLIT]
    assert not unlisted, "split these (one job per module, functions short):\n" + "\n".join(unlisted)
    shrunk = [key for key in BEING_SPLIT if key not in over]
    if shrunk:  # a warning, not a failure: the work that splits them need not edit this file to merge
        warnings.warn(f"within the limits now (or gone): remove from BEING_SPLIT in tests/test_structure.py: "
                      f"{shrunk}", stacklevel=1)


def test_listed_data_tables_still_need_their_exception(over: dict[str, tuple[int, int]]) -> None:
    stale = [key for key in DATA_TABLES if key not in over]
    assert not stale, f"within the limits now (or gone): remove from DATA_TABLES in tests/test_structure.py: {stale}"


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
