"""Project configuration: ``[tool.sse-check]`` in ``pyproject.toml`` (or a ``sse-check.toml``), found as ruff
finds its own.

The nearest ``pyproject.toml`` that has a ``[tool.sse-check]`` table (or ``sse-check.toml`` /
``.sse-check.toml``, whose keys are top-level), looking upward from the first checked path (the working
directory for ``probe``, ``proxy`` and stdin). ``--config FILE`` names the file; ``--isolated`` ignores every
configuration file. Options given on the command line win over the file; the file wins over the defaults.

Keys (kebab-case, as on the command line)::

    [tool.sse-check]
    profile = "llama.cpp"
    select = ["ITM", "LIF"]          # codes, family prefixes or rule names
    ignore = ["SSE016"]
    fail-on = "error"

    [tool.sse-check.limits]
    max-line-bytes = "1MiB"          # sizes as on the command line, or integers
    max-events = 100000

    [[tool.sse-check.overrides]]     # per path: the first matching entry applies, on top of the above
    paths = ["captures/llama.cpp/*"] # fnmatch patterns relative to the file's folder ("*" crosses folders)
    profile = "llama.cpp"
    ignore = ["HTP019"]
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checker.engine import Limits
from checker.errors import UsageError
from checker.profiles import PROFILES

CONFIG_NAMES = ("sse-check.toml", ".sse-check.toml", "pyproject.toml")
SEVERITIES = ("error", "warning", "info")
LIMITS = ("max-line-bytes", "max-event-bytes", "max-json-depth", "max-bytes", "max-events")
TOP_KEYS = ("profile", "select", "ignore", "fail-on", "limits", "overrides")
OVERRIDE_KEYS = ("paths", "profile", "select", "ignore")
DEFAULTS: dict[str, Any] = {
    "profile": "openai",
    "fail_on": "warning",
    "max_line_bytes": Limits().max_line_bytes,
    "max_event_bytes": Limits().max_event_bytes,
    "max_json_depth": Limits().max_json_depth,
    "max_bytes": Limits().max_bytes,
    "max_events": Limits().max_events,
}


@dataclass(frozen=True, slots=True)
class Override:
    """Options for the captures whose path matches one of ``paths`` (relative to ``base``)."""

    base: Path
    paths: tuple[str, ...]
    profile: str | None = None
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None

    def matches(self, capture: Path) -> bool:
        import fnmatch

        try:
            relative = Path(os.path.relpath(capture.resolve(), self.base.resolve())).as_posix()
        except ValueError:
            return False
        return any(fnmatch.fnmatchcase(relative, pattern) or
                   ("/" not in pattern and fnmatch.fnmatchcase(capture.name, pattern)) for pattern in self.paths)


@dataclass(slots=True)
class Config:
    """A configuration file read: where it is, the options it sets (by argparse dest), its overrides."""

    path: Path | None = None
    values: dict[str, Any] = field(default_factory=dict)  # argparse dest -> value
    overrides: list[Override] = field(default_factory=list)


def find(start: str) -> Path | None:
    """The nearest configuration file upward from ``start`` (a file's folder or a folder)."""
    folder = os.path.realpath(start if os.path.isdir(start) else (os.path.dirname(start) or "."))
    while True:
        for name in CONFIG_NAMES:
            candidate = os.path.join(folder, name)
            if not os.path.isfile(candidate):
                continue
            if name != "pyproject.toml" or _may_configure(candidate) and \
                    "sse-check" in (_read(candidate).get("tool") or {}):
                return Path(candidate)
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def load(path: Path) -> Config:
    """Read and check one configuration file; a UsageError naming the file and the key when it is wrong."""
    document = _read(path)
    if path.name == "pyproject.toml":
        table = (document.get("tool") or {}).get("sse-check")
        if table is None:
            raise UsageError(f"{path}: no [tool.sse-check] table")
        where = f"{path}: [tool.sse-check]"
    else:
        table, where = document, str(path)
    if not isinstance(table, dict):
        raise UsageError(f"{where} is not a table")
    _known(table, TOP_KEYS, where)
    config = Config(path=path)
    values = config.values
    if "profile" in table:
        values["profile"] = _profile(table["profile"], f"{where} profile")
    if "fail-on" in table:
        value = table["fail-on"]
        if value not in SEVERITIES:
            raise UsageError(f"{where} fail-on: {value!r} is not one of {', '.join(SEVERITIES)}")
        values["fail_on"] = value
    for key in ("select", "ignore"):
        if key in table:
            values[key] = list(_codes(table[key], f"{where} {key}"))
    limits = table.get("limits", {})
    if not isinstance(limits, dict):
        raise UsageError(f"{where} limits: expected a table ([tool.sse-check.limits])")
    _known(limits, LIMITS, f"{where}.limits")
    for key, value in limits.items():
        values[key.replace("-", "_")] = _limit(key, value, f"{where}.limits {key}")
    overrides = table.get("overrides", [])
    if not isinstance(overrides, list):
        raise UsageError(f"{where} overrides: expected an array of tables ([[tool.sse-check.overrides]])")
    for number, entry in enumerate(overrides):
        here = f"{where} overrides[{number}]"
        if not isinstance(entry, dict):
            raise UsageError(f"{here}: expected a table")
        _known(entry, OVERRIDE_KEYS, here)
        paths = entry.get("paths")
        if isinstance(paths, str):
            paths = [paths]
        if not paths or not isinstance(paths, list) or not all(isinstance(p, str) and p for p in paths):
            raise UsageError(f"{here}: paths must be a list of path patterns")
        config.overrides.append(Override(
            base=path.parent, paths=tuple(paths),
            profile=_profile(entry["profile"], f"{here} profile") if "profile" in entry else None,
            select=_codes(entry["select"], f"{here} select") if "select" in entry else None,
            ignore=_codes(entry["ignore"], f"{here} ignore") if "ignore" in entry else None,
        ))
    return config


def apply(args: argparse.Namespace) -> None:
    """Fill the options the command line left unset from the configuration file, then from the defaults;
    keep the file's per-path overrides on ``args`` (see :func:`override_for`)."""
    config = Config()
    if not getattr(args, "isolated", False):
        if getattr(args, "config", None):
            chosen = Path(args.config)
            if not chosen.is_file():
                raise UsageError(f"--config {args.config}: no such file")
            config = load(chosen)
        else:
            found = find(_start(args))
            if found is not None:
                config = load(found)
    given = {dest for dest in (*DEFAULTS, "select", "ignore") if getattr(args, dest, None) not in (None, [])}
    sources = {dest: "command line" for dest in given}
    for dest, value in config.values.items():
        if dest not in given:
            setattr(args, dest, value)
            sources[dest] = _table_name(config.path)
    for dest, value in DEFAULTS.items():
        if getattr(args, dest, None) is None:
            setattr(args, dest, value)
    args.config_file = str(config.path) if config.path is not None else None
    args.setting_sources = sources  # where each setting came from (--show-settings): the rest are defaults
    args.overrides = config.overrides
    args.given_on_command_line = given


def _table_name(path: Path | None) -> str:
    if path is None:
        return "default"
    return f"{_shown(path)} [tool.sse-check]" if path.name == "pyproject.toml" else _shown(path)


def _shown(path: str | Path) -> str:
    """A configuration file's path as a person reads it: relative to the working directory when below it."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive
        return str(path)
    return str(path) if relative.startswith("..") else relative


# The settings --show-settings lists, by argparse dest, with their names as on the command line.
SHOWN = (("profile", "profile"), ("select", "select"), ("ignore", "ignore"), ("fail_on", "fail-on"),
         *((key.replace("-", "_"), key) for key in LIMITS))


def show_settings(args: argparse.Namespace) -> list[str]:
    """``--show-settings``: each setting in force and where it came from (the command line, the configuration
    file, the default), the file's per-path overrides, and which one applies to each path given (as ruff's
    ``--show-settings`` shows the settings for a file)."""
    sources: dict[str, str] = getattr(args, "setting_sources", {})
    found = getattr(args, "config_file", None)
    if getattr(args, "isolated", False):
        where = "configuration files ignored (--isolated)"
    else:
        where = f"configuration: {_shown(found)}" if found else "configuration: none found (looked upward from " \
            f"{_start(args)} for {', '.join(CONFIG_NAMES)})"
    lines = [where, "settings in force, and where each came from:"]
    width = max(len(name) for _, name in SHOWN)
    rows: list[tuple[str, str, str]] = []
    for dest, name in SHOWN:
        value = getattr(args, dest, None)
        if dest in ("select", "ignore"):
            shown = ", ".join(value) if value else ("every rule" if dest == "select" else "nothing")
        elif dest in LIMIT_DESTS and isinstance(value, int):
            shown = _size_words(value) if dest not in ("max_json_depth", "max_events") else f"{value:,}"
        else:
            shown = str(value)
        rows.append((name, shown, sources.get(dest, "default")))
    shown_width = max(len(shown) for _, shown, _ in rows)
    lines += [f"  {name:<{width}}  {shown:<{shown_width}}  {source}" for name, shown, source in rows]
    overrides: Sequence[Override] = getattr(args, "overrides", ()) or ()
    if overrides:
        lines.append("per-path overrides (the first whose paths match a capture applies, below the command line):")
        for number, entry in enumerate(overrides):
            lines.append(f"  overrides[{number}] {', '.join(entry.paths)}: {_override_words(entry)}")
        for path in getattr(args, "paths", None) or ():
            if path == "-":
                continue
            chosen = override_for(overrides, Path(path))
            lines.append(f"  {path}: " + (f"overrides[{list(overrides).index(chosen)}] applies" if chosen
                                           else "no override applies"))
    return lines


LIMIT_DESTS = tuple(key.replace("-", "_") for key in LIMITS)


def _size_words(value: int) -> str:
    for unit, factor in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if value >= factor and value % factor == 0:
            return f"{value // factor} {unit}"
    return f"{value:,} bytes"


def _override_words(entry: Override) -> str:
    parts = []
    if entry.profile is not None:
        parts.append(f"profile {entry.profile}")
    if entry.select is not None:
        parts.append(f"select {', '.join(entry.select)}")
    if entry.ignore is not None:
        parts.append(f"ignore {', '.join(entry.ignore)}")
    return "; ".join(parts) or "nothing"


def override_for(overrides: Sequence[Override], capture: Path) -> Override | None:
    """The first per-path override of the configuration that matches ``capture`` (None: the run's options).
    Options given on the command line win over it too."""
    for override in overrides:
        if override.matches(capture):
            return override
    return None


def _start(args: argparse.Namespace) -> str:
    for path in getattr(args, "paths", None) or ():
        if path != "-":
            return str(Path(path))
    return os.getcwd()


# The spellings of a [tool.sse-check] table in TOML: a dotted key or header `tool.sse-check` (quoted or spaced
# as TOML allows), or a `sse-check` key under a [tool] header, or an inline `tool = {…}` table.
_SPELLINGS = (rb"""tool["']?[ \t]*\.[ \t]*["']?sse-check""", rb"""(?m)^[ \t]*["']?tool["']?[ \t]*=""",
              rb"""(?m)^[ \t]*\[[ \t]*["']?tool["']?[ \t]*\]""", rb"""(?m)^[ \t]*["']?sse-check["']?[ \t]*[.=]""")


def _may_configure(path: str) -> bool:
    """Whether a pyproject.toml can hold a [tool.sse-check] table (any spelling of it; else neither tomllib is
    imported nor the file parsed: most projects' pyproject.toml never names the table)."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError:
        return True  # _read reports it
    if b"sse-check" not in raw:
        return False
    dotted, inline, header, key = (re.search(pattern, raw) for pattern in _SPELLINGS)
    return bool(dotted or inline or (header and key))


def _read(path: str | Path) -> dict[str, Any]:
    import tomllib  # only when a configuration file is found

    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path}: not valid TOML: {exc}") from None
    except OSError as exc:
        raise UsageError(f"{path}: {exc.strerror or exc}") from None


def _known(table: dict[str, Any], keys: tuple[str, ...], where: str) -> None:
    unknown = sorted(set(table) - set(keys))
    if unknown:
        raise UsageError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(keys)})")


def _profile(value: Any, where: str) -> str:
    if value not in PROFILES:
        raise UsageError(f"{where}: {value!r} is not one of {', '.join(sorted(PROFILES))}")
    return str(value)


def _codes(value: Any, where: str) -> tuple[str, ...]:
    """A select or ignore list, each entry checked here so that the error names the file and the key (checked
    later, on the command line's way, it read "--select/--ignore: 'NOPE' matches no rule", no file named)."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(f"{where}: expected a list of rule codes, prefixes or names")
    if value:
        from checker.rules import RULES  # every family: an entry may name any rule

        for entry in value:
            for part in (p.strip() for p in entry.split(",")):
                if part and not any(code.startswith(part.upper()) or rule.name == part for code, rule in RULES.items()):
                    raise UsageError(f"{where}: {part!r} matches no rule (a code like ITM011, a family like ITM, "
                                     "or a name; see `sse-check rules`)")
    return tuple(value)


def _limit(key: str, value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise UsageError(f"{where}: expected a whole number or a size such as \"16MiB\"")
    if key in ("max-json-depth", "max-events"):
        if not isinstance(value, int) or value <= 0:
            raise UsageError(f"{where}: expected a whole number above 0")
        return value
    try:
        return size(str(value))
    except argparse.ArgumentTypeError as exc:
        raise UsageError(f"{where}: {exc}") from None


def size(text: str) -> int:
    """An argparse type: a size in bytes, with an optional k/m/g (KiB, MiB, GiB) suffix."""
    units = {"k": 1024, "m": 1024**2, "g": 1024**3}
    text = text.strip().lower().removesuffix("b").removesuffix("i")
    factor = units.get(text[-1:], 1)
    number = text[:-1] if text[-1:] in units else text
    try:
        value = int(number) * factor
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError("must be positive")
    return value
