"""checker.dataclass_cache: the dataclasses built through the table of compiled methods are the classes
dataclasses builds (same methods, same behaviour, same annotations), the table survives a run, and a table
that cannot be read or written is only a slower start."""

from __future__ import annotations

import dataclasses
import inspect
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from checker import dataclass_cache

ROOT = Path(__file__).resolve().parent.parent


def _define() -> dict[str, Any]:
    source = '''
from dataclasses import dataclass, field

@dataclass(frozen=True, slots=True, kw_only=True)
class Frozen:
    code: str
    count: int = 0
    tags: tuple[str, ...] = ()

@dataclass(order=True)
class Plain:
    name: str
    items: list[int] = field(default_factory=list)
    flag: "bool" = False

    def total(self) -> int:
        return sum(self.items)
'''
    module = types.ModuleType("cached_example")
    sys.modules[module.__name__] = module
    try:
        exec(compile(source, "cached_example", "exec"), module.__dict__)
    finally:
        del sys.modules[module.__name__]
    return module.__dict__


def _describe(cls: type) -> dict[str, Any]:
    """What a class's generated methods do and declare."""
    out: dict[str, Any] = {"fields": [(f.name, f.type, f.default) for f in dataclasses.fields(cls)]}
    for name in ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__", "__lt__"):
        method = cls.__dict__.get(name)
        if method is not None and callable(method) and hasattr(method, "__code__"):
            code = method.__code__
            out[name] = (code.co_code, code.co_consts, code.co_names, code.co_varnames, code.co_flags,
                         getattr(method, "__annotations__", None), str(inspect.signature(method)))
    return out


def test_classes_built_through_the_table_are_those_dataclasses_builds() -> None:
    plain = _define()
    dataclass_cache.install()
    try:
        first = _define()
        again = _define()  # now every method comes from the table
    finally:
        dataclass_cache.uninstall()
    for name in ("Frozen", "Plain"):
        assert _describe(first[name]) == _describe(plain[name]) == _describe(again[name])
    frozen = again["Frozen"](code="X1", count=2)
    assert repr(frozen) == "Frozen(code='X1', count=2, tags=())"
    assert frozen == again["Frozen"](code="X1", count=2) and hash(frozen) == hash(again["Frozen"](code="X1", count=2))
    with pytest.raises(dataclasses.FrozenInstanceError):
        frozen.count = 3  # type: ignore[misc]
    item = again["Plain"]("a", [1, 2])
    assert item.total() == 3 and item < again["Plain"]("b") and item.items is not again["Plain"]("c").items
    assert getattr(dataclasses, "exec", None) is None  # uninstalled: dataclasses' own exec again


def test_the_command_line_writes_the_table_and_reads_it_back(tmp_path: Path) -> None:
    """A run that compiled something writes the table (atomically, beside the package's bytecode, here under
    PYTHONPYCACHEPREFIX); the next run finds every method in it; -B writes nothing."""
    env = {"PATH": "/usr/bin:/bin", "PYTHONPYCACHEPREFIX": str(tmp_path / "pycache"), "NO_COLOR": "1"}
    lint = [sys.executable, "-m", "checker", "lint", "captures/conforming/text.sse"]
    subprocess.run([sys.executable, "-B", *lint[1:]], cwd=ROOT, env=env, check=True, capture_output=True)
    assert not list(tmp_path.rglob("dataclass-code.*"))
    subprocess.run(lint, cwd=ROOT, env=env, check=True, capture_output=True)
    tables = list(tmp_path.rglob("dataclass-code.*.marshal"))
    assert [t.name.split(".")[-2] for t in tables] == ["lint"] and tables[0].stat().st_size > 1000
    probe = ("import dataclasses, sys; from checker import dataclass_cache as d; d.install('lint'); "
             "import checker.commands.lint, checker.report.text; "
             "print(d._used <= d._tables[d.cache_path('lint')], len(d._used))")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, check=True, capture_output=True,
                          text=True)
    held, used = done.stdout.split()
    assert held == "True" and int(used) > 100  # every method of those modules came from the table


def test_each_command_has_its_own_table(tmp_path: Path) -> None:
    """A lint reads the methods a lint defines, not every command's: `rules` writes a table of its own."""
    env = {"PATH": "/usr/bin:/bin", "PYTHONPYCACHEPREFIX": str(tmp_path / "pycache"), "NO_COLOR": "1"}
    for args in (["lint", "captures/conforming/text.sse"], ["rules", "ITM001"], ["--version"]):
        subprocess.run([sys.executable, "-m", "checker", *args], cwd=ROOT, env=env, check=True, capture_output=True)
    names = sorted(t.name.split(".")[-2] for t in tmp_path.rglob("dataclass-code.*.marshal"))
    assert names == ["help", "lint", "rules"]
    before = {t.name: t.stat().st_mtime_ns for t in tmp_path.rglob("dataclass-code.*.marshal")}
    subprocess.run([sys.executable, "-m", "checker", "lint", "captures/conforming/text.sse"], cwd=ROOT, env=env,
                   check=True, capture_output=True)
    after = {t.name: t.stat().st_mtime_ns for t in tmp_path.rglob("dataclass-code.*.marshal")}
    assert after == before  # nothing new to a lint: no table written


def test_an_unreadable_table_is_an_empty_one(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPYCACHEPREFIX": str(tmp_path / "pycache"), "NO_COLOR": "1"}
    find = ("from checker import dataclass_cache as d; print(d.cache_path('lint'))")
    path = Path(subprocess.run([sys.executable, "-c", find], cwd=ROOT, env=env, check=True, capture_output=True,
                               text=True).stdout.strip())
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"not a table")
    done = subprocess.run([sys.executable, "-m", "checker", "lint", "captures/conforming/text.sse"], cwd=ROOT,
                          env=env, capture_output=True, text=True)
    assert done.returncode == 0 and done.stderr == ""
    assert path.read_bytes() != b"not a table"  # written anew
