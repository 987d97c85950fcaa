"""The layering of checker/: which module may import which (CONTRIBUTING.md shows the same table).

LAYERS lists the modules of checker/ from the lowest layer to the highest. A module may import from its own
layer and from the layers below it, never from a higher one; and no import cycle joins two modules. Every
import the code makes counts: at the top of a module, inside a function (a lazy import), under
``if TYPE_CHECKING:`` (for the layers only: such an import never runs, so it makes no cycle), and
``importlib.import_module("checker....")`` with a literal name. A registry that lists modules in strings and
imports one when asked (the CLI's COMMANDS, the report's REPORTERS, the dialects' BUILTIN) is data read at
run time: the module it names may import the registry, not the other way round.

A name in LAYERS covers a module (``engine``) or a package with all its submodules (``dialects``), except the
submodules a longer name places elsewhere (``rules.docs``). A new module in a listed package needs no change;
a new top-level module is one word added to its layer's line. After changing LAYERS, run
``python tests/test_layering.py`` (or ``make docs``) to rewrite CONTRIBUTING.md's table.
"""

from __future__ import annotations

import ast
import sys
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "checker"

# The map, lowest layer first: (layer, its modules under checker/, what it is).
LAYERS: tuple[tuple[str, str, str], ...] = (
    ("foundations", "findings errors text console clients version synth native _speedups",
     "findings and positions, errors, text helpers, terminal output, the client list, the compiled hot path"),
    ("rules", "rules", "the rule registry and the rule families: codes, messages, sources"),
    ("wire", "sse sse_lines schemas schema_check schema_files schema_errors request_checks structured_output",
     "the SSE decoder, the JSON Schemas, request checks"),
    ("dialects", "dialects", "one package per wire format: vocabulary, machine, schema findings, client effects"),
    ("profiles", "profiles", "where the references disagree, per dialect, as data"),
    ("engine", "engine engine_options body_sniff json_scan finding_sink lint_result run_template run_match",
     "the pipeline: bytes, events, a dialect's machine, findings"),
    ("exchange", "exchange_meta exchange_text nonstream_checks http_checks ws_transcript ws_checks",
     "a whole HTTP exchange or WebSocket connection: its record, status, headers, a non-streamed body"),
    ("verdicts", "compat oracles baseline", "the client matrix, client oracles, baselines"),
    ("reports", "report diff rules.docs", "the reporters, diffs of two runs, the rules' docs"),
    ("jobs", "capture_format captures remote executors lint_job api",
     "capture files and URLs, lint jobs, the Python API"),
    ("live", "live replay", "probe, proxy, serve, history replay"),
    ("surface", "surface", "flows of several requests, the capability table, readiness per client"),
    ("commands", "commands", "the sse-check commands: options, running, output"),
    ("entry points", "cli __main__ __init__ pytest_plugin", "the command line, the package, the pytest plugin"),
)

# Names other engineers add or remove this session: listed above before they land (or after they leave) so that
# neither their merge nor this map waits for the other. Delete a name here once main has settled it.
IN_FLIGHT: frozenset[str] = frozenset()

# Imports from a higher layer that are known and being removed, with who removes them; whoever removes one
# deletes its line (an entry that matches no import is reported as gone, not failed, while work is in flight).
ALLOWED_UPWARD: dict[tuple[str, str], str] = {}

# Import cycles that are known and being removed, with who removes them (the same way).
ALLOWED_CYCLES: dict[frozenset[str], str] = {}

CONTRIBUTING = ROOT / "CONTRIBUTING.md"
TABLE_START = "<!-- layers: generated from tests/test_layering.py (python tests/test_layering.py) -->"
TABLE_END = "<!-- /layers -->"


@dataclass(frozen=True)
class Import:
    source: str  # the importing module, relative to checker/ ("live.probe"; "__init__" for the package)
    target: str  # the imported module, the same way
    line: int
    typing_only: bool = False  # under `if TYPE_CHECKING:`: it never runs

    def where(self) -> str:
        return f"{module_path(self.source)}:{self.line}"


def module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = list(path.relative_to(package).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def module_path(name: str) -> str:
    for candidate in (PACKAGE / (name.replace(".", "/") + ".py"), PACKAGE / name.replace(".", "/") / "__init__.py"):
        if candidate.is_file():
            return candidate.relative_to(ROOT).as_posix()
    return f"checker/{name}"


def modules(package: Path = PACKAGE) -> dict[str, Path]:
    found = {module_name(path, package): path for path in sorted(package.rglob("*.py"))}
    # A compiled module (checker/_speedups.c) is known by its type stub; it imports nothing of checker.
    stubs = {module_name(path, package): path for path in sorted(package.rglob("*.pyi"))}
    return found | {name: path for name, path in stubs.items() if name not in found}


def _absolute(module: str, is_package: bool, level: int, name: str | None) -> str:
    """The absolute dotted name of ``from <level dots><name> import ...`` written in ``module``."""
    if not level:
        return name or ""
    base = ["checker", *([] if module == "__init__" else module.split("."))]
    if not is_package:
        base.pop()
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def _relative(dotted: str) -> str:
    return dotted.removeprefix("checker.")


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports_of(module: str, source: str, known: Iterable[str], *, is_package: bool = False) -> list[Import]:
    """Every import of a checker module that ``source`` (the text of ``module``) makes, wherever it stands."""
    names = set(known)

    def resolve(dotted: str) -> str | None:
        # "checker.rules.framing.X" -> the longest known module name that prefixes it.
        if dotted != "checker" and not dotted.startswith("checker."):
            return None
        parts = dotted.split(".")[1:]
        while parts:
            if ".".join(parts) in names:
                return ".".join(parts)
            parts.pop()
        return "__init__"

    tree = ast.parse(source)
    typing_only = {id(inner) for node in ast.walk(tree) if isinstance(node, ast.If) and _is_type_checking(node.test)
                   for statement in node.body for inner in ast.walk(statement)}
    found: list[Import] = []
    for node in ast.walk(tree):
        targets: list[str | None] = []
        if isinstance(node, ast.Import):
            targets = [resolve(alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, is_package, node.level, node.module)
            # `from checker.rules import framing` imports the module checker.rules.framing.
            targets = [resolve(f"{base}.{alias.name}") if _relative(f"{base}.{alias.name}") in names
                       else resolve(base) for alias in node.names]
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "import_module" and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)):
            targets = [resolve(node.args[0].value)]
        found += [Import(module, target, node.lineno, id(node) in typing_only)
                  for target in targets if target and target != module]
    return found


def all_imports(package: Path = PACKAGE) -> list[Import]:
    found = modules(package)
    return [imp for name, path in found.items()
            for imp in imports_of(name, path.read_text(encoding="utf-8"), found, is_package=path.name == "__init__.py")]


def layer_of(module: str, layers: tuple[tuple[str, str, str], ...] = LAYERS) -> int | None:
    """The index of the layer whose longest name covers ``module`` (None: no layer lists it)."""
    best: tuple[int, int] | None = None
    for index, (_, names, _) in enumerate(layers):
        for name in names.split():
            if module == name or module.startswith(name + "."):
                if best is None or len(name) > best[0]:
                    best = (len(name), index)
    return None if best is None else best[1]


def cycles(edges: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def render_table(layers: tuple[tuple[str, str, str], ...] = LAYERS) -> str:
    """LAYERS as the Markdown table of CONTRIBUTING.md, highest layer first (the way a reader meets them)."""
    lines = ["| # | layer | modules in `checker/` (a package: all its modules) | what it holds |",
             "|---|---|---|---|"]
    for number, (layer, names, what) in reversed(list(enumerate(layers, 1))):
        shown = ", ".join(f"`{name.replace('.', '/')}/`" if (PACKAGE / name.replace(".", "/")).is_dir()
                          else f"`{name.replace('.', '/')}.c`" if (PACKAGE / f"{name}.c").is_file()
                          else f"`{name.replace('.', '/')}.py`" if name != "__init__" else "`__init__.py`"
                          for name in names.split())
        lines.append(f"| {number} | {layer} | {shown} | {what} |")
    return "\n".join(lines)


# --- the tests ----------------------------------------------------------------------------------------------


def test_every_module_is_in_one_layer_and_every_name_is_a_module() -> None:
    found = modules()
    assert len(found) > 50
    unplaced = sorted(name for name in found if layer_of(name) is None)
    assert not unplaced, f"modules in no layer (add each to its layer in LAYERS, tests/test_layering.py): {unplaced}"
    listed = [name for _, names, _ in LAYERS for name in names.split()]
    assert len(listed) == len(set(listed)), "a name is listed twice"
    stale = [name for name in listed if not any(m == name or m.startswith(name + ".") for m in found)
             and name not in IN_FLIGHT]
    assert not stale, f"LAYERS names what checker/ does not hold (delete it): {stale}"


def test_no_module_imports_from_a_higher_layer() -> None:
    upward: dict[tuple[str, str], Import] = {}
    for imp in all_imports():
        source, target = layer_of(imp.source), layer_of(imp.target)
        if source is not None and target is not None and target > source:
            upward.setdefault((imp.source, imp.target), imp)
    wrong = [f"{imp.where()}: {imp.source} ({LAYERS[layer_of(imp.source) or 0][0]}) imports {imp.target} "
             f"({LAYERS[layer_of(imp.target) or 0][0]})" for key, imp in sorted(upward.items())
             if key not in ALLOWED_UPWARD]
    hint = ("\n(`from checker import __version__` imports the package, the top layer: import it from "
            "checker.version)" if any(target == "__init__" for _, target in upward) else "")
    assert not wrong, "imports from a higher layer:\n" + "\n".join(wrong) + hint
    gone = sorted(set(ALLOWED_UPWARD) - set(upward))
    if gone:
        warnings.warn(f"ALLOWED_UPWARD names imports that are gone (delete their lines): {gone}", stacklevel=1)


def test_no_import_cycle() -> None:
    """Imports under ``if TYPE_CHECKING:`` never run and are left out here (a module split into helpers may name
    its owner's class in their annotations); they count for the layers above."""
    found = [imp for imp in all_imports() if not imp.typing_only]
    edges: dict[str, set[str]] = {}
    for imp in found:
        edges.setdefault(imp.source, set()).add(imp.target)
    components = cycles(edges)
    wrong = []
    for component in components:
        if frozenset(component) in ALLOWED_CYCLES:
            continue
        members = set(component)
        joined = [f"{imp.where()} imports {imp.target}" for imp in found
                  if imp.source in members and imp.target in members]
        wrong.append(" <-> ".join(component) + ":\n    " + "\n    ".join(sorted(set(joined))))
    assert not wrong, "import cycles:\n" + "\n".join(wrong)
    gone = [sorted(c) for c in ALLOWED_CYCLES if c not in {frozenset(c) for c in components}]
    if gone:
        warnings.warn(f"ALLOWED_CYCLES names cycles that are gone (delete their lines): {gone}", stacklevel=1)


def test_contributing_shows_this_map() -> None:
    text = CONTRIBUTING.read_text(encoding="utf-8")
    assert TABLE_START in text and TABLE_END in text, f"CONTRIBUTING.md lacks the markers {TABLE_START!r}"
    shown = text.split(TABLE_START, 1)[1].split(TABLE_END, 1)[0].strip()
    assert shown == render_table(), "CONTRIBUTING.md's layer table differs from LAYERS: python tests/test_layering.py"


# --- the reader and the checks find what they look for --------------------------------------------------------

SAMPLE = """
import json
from checker.rules import framing
import checker.sse
from .. import text
from ..rules.registry import Rule
from .y import helper
if TYPE_CHECKING:
    from checker.engine import StreamLinter

def later():
    from checker.report import get_reporter
    import importlib
    return importlib.import_module("checker.live.probe")
"""


def test_the_reader_finds_every_kind_of_import() -> None:
    known = {"__init__", "sse", "rules", "rules.framing", "rules.registry", "text", "report", "live", "live.probe",
             "engine", "dialects", "dialects.x", "dialects.y"}
    found = imports_of("dialects.x", SAMPLE, known)
    assert {imp.target for imp in found} == {"sse", "rules.framing", "text", "rules.registry", "dialects.y", "engine",
                                             "report", "live.probe"}
    assert [imp.line for imp in found if imp.target == "report"] == [12]  # the lazy import, where it stands
    assert [imp.target for imp in found if imp.typing_only] == ["engine"]


def test_the_layer_of_a_module_is_its_longest_name() -> None:
    layers = (("low", "a", ""), ("high", "b a.x", ""))
    assert layer_of("a", layers) == 0
    assert layer_of("a.y", layers) == 0
    assert layer_of("a.x", layers) == 1 and layer_of("a.x.z", layers) == 1
    assert layer_of("ab", layers) is None


def test_cycles_are_found_through_any_length() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set(), "c": {"c"}}) == []


def write_contributing() -> None:
    text = CONTRIBUTING.read_text(encoding="utf-8")
    head, rest = text.split(TABLE_START, 1)
    _, tail = rest.split(TABLE_END, 1)
    CONTRIBUTING.write_text(f"{head}{TABLE_START}\n{render_table()}\n{TABLE_END}{tail}", encoding="utf-8")


if __name__ == "__main__":
    write_contributing()
    print(f"{CONTRIBUTING.relative_to(ROOT)}: layer table written", file=sys.stderr)
