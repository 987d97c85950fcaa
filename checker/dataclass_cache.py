"""The methods ``@dataclass`` writes for each class (``__init__``, ``__repr__``, ``__eq__``, …), compiled once
and kept between runs of the command line, as Python keeps each module's bytecode in ``__pycache__``.

Why: Python 3.11 and 3.12 compile every generated method from its source text at each start-up (``exec`` in
``dataclasses``, about 80 µs a method on this project's machines), and a lint of one small capture defines
about 45 dataclasses: their compiling was a quarter of the lint's start-up (issue 19: within 1.5x of
``import rich.console``). While :func:`install` is in effect, the ``exec`` that the ``dataclasses`` module
calls looks each source text up in a table of code objects first. The same text compiled with the same flags
(none: the ``dataclasses`` module has no ``__future__`` import, and ``dont_inherit`` keeps ours out) is the
same code, so every class is exactly the class ``dataclasses`` would have built; only the compiling is saved.

The table maps a 128-bit BLAKE2 digest of each source text to its code object, marshalled on its own: reading
the table copies bytes, and only the methods a run defines are unmarshalled. Each command has its own table
(``lint``'s holds what a lint defines, not what ``probe`` or ``serve`` does: a table of every command's
methods was twice a lint's to read). It is a marshal file beside the package's bytecode
(``checker/__pycache__/``, or under ``$PYTHONPYCACHEPREFIX``), stamped with the interpreter's bytecode magic
number; it is written by
:func:`save` when a run compiled something new, unless bytecode writing is off (``-B``,
``PYTHONDONTWRITEBYTECODE``), atomically, and never fails a run: a cache that cannot be read or written is
an empty one. Only the command line installs it (checker.cli); a program that imports checker as a library
keeps its own ``dataclasses`` untouched.
"""

from __future__ import annotations

import builtins
import marshal
import os
import sys
from types import CodeType
from typing import Any

try:
    from _blake2 import blake2b as _blake2b  # hashlib's own BLAKE2, without hashlib's OpenSSL start-up
except ImportError:  # pragma: no cover - an interpreter built without it
    from hashlib import blake2b as _blake2b

# Entries kept at most: past it, a save keeps only what this run used (the table follows the code).
MAX_ENTRIES = 4096

_exec = builtins.exec
_codes: dict[bytes, bytes] = {}  # digest of a source text -> its code object, marshalled (every table read)
_used: set[bytes] = set()  # what this command defined since install()
_tables: dict[str, frozenset[bytes]] = {}  # a table read (by its path) -> the digests it held
_state: dict[str, Any] = {"installed": False, "path": "", "table": ""}  # the table in use: its path


def _digest(source: str) -> bytes:
    return _blake2b(source.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _cached_exec(source: Any, globals: Any = None, locals: Any = None, /, **options: Any) -> None:
    """``exec`` for the ``dataclasses`` module: a source text's code object from the table when it is there."""
    if type(source) is not str or options:
        return _exec(source, globals, locals, **options)
    key = _digest(source)
    stored = _codes.get(key)
    code = marshal.loads(stored) if stored is not None else None
    if type(code) is not CodeType:
        code = compile(source, "<string>", "exec", dont_inherit=True)
        _codes[key] = marshal.dumps(code)
    _used.add(key)
    return _exec(code, globals, locals)


def cache_path(command: str = "lint") -> str:
    """Where ``command``'s table lives: beside this package's bytecode ('' when the interpreter keeps none)."""
    if not _state["path"]:
        from importlib.util import cache_from_source

        try:
            pyc = cache_from_source(__file__)
        except (NotImplementedError, ValueError):
            return ""
        _state["path"] = os.path.join(os.path.dirname(pyc), f"dataclass-code.{sys.implementation.cache_tag}")
    return f"{_state['path']}.{command}.marshal"


def _magic() -> bytes:
    from importlib.util import MAGIC_NUMBER

    return MAGIC_NUMBER


def install(command: str = "lint") -> None:
    """Route the ``dataclasses`` module's ``exec`` through ``command``'s table (read from its file once per
    process) until :func:`save`."""
    import dataclasses

    if _state["installed"]:
        return
    _state["installed"] = True
    _used.clear()
    path = _state["table"] = cache_path(command)
    if path and path not in _tables:  # read once per process (a program may run the command line many times)
        keys: frozenset[bytes] = frozenset()
        try:
            with open(path, "rb") as handle:
                raw = handle.read()
            magic = _magic()
            if raw.startswith(magic):
                table = marshal.loads(raw[len(magic):])
                if isinstance(table, dict):
                    entries = {k: v for k, v in table.items() if type(k) is bytes and type(v) is bytes}
                    _codes.update(entries)
                    keys = frozenset(entries)
        except (OSError, EOFError, ValueError, TypeError):
            pass  # no table yet, or one this interpreter cannot read: compiled as usual, written anew
        _tables[path] = keys
    dataclasses.exec = _cached_exec  # type: ignore[attr-defined]  # a module global shadows the builtin


def uninstall() -> None:
    """The ``dataclasses`` module's own ``exec`` again (the tests)."""
    import dataclasses

    if getattr(dataclasses, "exec", None) is _cached_exec:
        del dataclasses.exec  # type: ignore[attr-defined]
    _state["installed"] = False


def save() -> None:
    """Write the command's table when this run defined a method it did not hold (never raises: the cache is only
    a cache). The table keeps what it held and what the run used, or only the latter past MAX_ENTRIES."""
    path = str(_state["table"])
    held = _tables.get(path, frozenset())
    if not path or _used <= held or sys.dont_write_bytecode:
        return
    keys = held | _used if len(held | _used) <= MAX_ENTRIES else _used
    table = {k: _codes[k] for k in keys if k in _codes}
    temporary = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(temporary, "wb") as handle:
            handle.write(_magic() + marshal.dumps(table))
        os.replace(temporary, path)  # atomic: a concurrent run reads the old table or the new one
        _tables[path] = frozenset(table)
    except (OSError, ValueError):
        try:
            os.unlink(temporary)
        except OSError:
            pass
