"""Expected vs actual request messages: where they differ, in words a reader can act on.

Pure functions. :func:`compare` walks both message lists and returns one
:class:`Difference` per differing leaf, each naming the message index (from 0,
as in the JSON array), the message's role, and the path of the field inside it:
``message 3 (assistant): reasoning_content expected 'Line 12 drops the last…'
but missing``. :func:`unified_diff` gives the same comparison as a unified diff
of the pretty-printed JSON.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final, Literal

Kind = Literal["missing", "unexpected", "changed"]

# Longest value shown inside a sentence; the unified diff shows everything.
SHORT_TEXT: Final = 40


class _Absent:
    """A side that has no value at this path (not the same as JSON null)."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Final = _Absent()


@dataclass(frozen=True, slots=True, kw_only=True)
class Difference:
    """One place where the actual messages differ from the expected ones."""

    index: int  # message index, from 0
    role: str | None  # the expected message's role (the actual one's if none was expected)
    path: str  # "" for the whole message, else e.g. "reasoning_content" or "content[0].signature"
    kind: Kind
    expected: Any = ABSENT
    actual: Any = ABSENT

    @property
    def text(self) -> str:
        where = f"message {self.index}" + (f" ({self.role})" if self.role else "")
        subject = f"{where}: {self.path}" if self.path else where
        if self.kind == "missing":
            if not self.path:
                return f"{where}: expected {short(self.expected)} but missing"
            return f"{subject} expected {short(self.expected)} but missing"
        if self.kind == "unexpected":
            if not self.path:
                return f"{where}: not expected but sent {short(self.actual)}"
            return f"{subject} not expected but sent {short(self.actual)}"
        joint = subject if self.path else f"{where}:"
        return f"{joint} expected {short(self.expected)} but got {short(self.actual)}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "message": self.index,
            "role": self.role,
            "path": self.path,
            "kind": self.kind,
            "expected": None if self.expected is ABSENT else self.expected,
            "actual": None if self.actual is ABSENT else self.actual,
            "text": self.text,
        }


def short(value: Any) -> str:
    """A value as it reads in a sentence: strings quoted, long ones cut with '…'."""
    if isinstance(value, str):
        return repr(value if len(value) <= SHORT_TEXT else value[: SHORT_TEXT - 1] + "…")
    text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    return text if len(text) <= SHORT_TEXT + 20 else text[: SHORT_TEXT + 19] + "…"


def compare(expected: list[Any], actual: list[Any]) -> list[Difference]:
    """Every difference between two message lists, in message order."""
    found: list[Difference] = []
    for index in range(max(len(expected), len(actual))):
        want = expected[index] if index < len(expected) else ABSENT
        got = actual[index] if index < len(actual) else ABSENT
        role = _role(want) or _role(got)
        if want is ABSENT:
            found.append(Difference(index=index, role=role, path="", kind="unexpected", actual=got))
        elif got is ABSENT:
            found.append(Difference(index=index, role=role, path="", kind="missing", expected=want))
        else:
            found.extend(
                Difference(index=index, role=role, path=path, kind=kind, expected=e, actual=a)
                for path, kind, e, a in _walk("", want, got)
            )
    return found


def _role(message: Any) -> str | None:
    """The message's role; a Responses input item without one is named by its type."""
    if not isinstance(message, dict):
        return None
    for key in ("role", "type"):
        value = message.get(key)
        if isinstance(value, str):
            return value
    return None


def _walk(path: str, want: Any, got: Any) -> Iterator[tuple[str, Kind, Any, Any]]:
    if isinstance(want, dict) and isinstance(got, dict):
        for key in [*want, *(k for k in got if k not in want)]:
            sub = f"{path}.{key}" if path else key
            if key not in got:
                yield sub, "missing", want[key], ABSENT
            elif key not in want:
                yield sub, "unexpected", ABSENT, got[key]
            else:
                yield from _walk(sub, want[key], got[key])
    elif isinstance(want, list) and isinstance(got, list):
        for n in range(max(len(want), len(got))):
            sub = f"{path}[{n}]"
            if n >= len(got):
                yield sub, "missing", want[n], ABSENT
            elif n >= len(want):
                yield sub, "unexpected", ABSENT, got[n]
            else:
                yield from _walk(sub, want[n], got[n])
    elif want != got or type(want) is not type(got) and not _same_number(want, got):
        yield path, "changed", want, got


def _same_number(a: Any, b: Any) -> bool:
    numbers = (int, float)
    return (isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool)
            and not isinstance(b, bool) and a == b)


def align_keys(actual: Any, expected: Any) -> Any:
    """``actual`` with its object keys in ``expected``'s order (extra keys last), for a readable diff."""
    if isinstance(actual, dict) and isinstance(expected, dict):
        ordered = {k: align_keys(actual[k], expected[k]) for k in expected if k in actual}
        ordered.update((k, v) for k, v in actual.items() if k not in expected)
        return ordered
    if isinstance(actual, list) and isinstance(expected, list):
        return [align_keys(a, expected[n]) if n < len(expected) else a for n, a in enumerate(actual)]
    return actual


def pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def unified_diff(expected: Any, actual: Any, *, actual_label: str = "actual") -> str:
    """A unified diff of the pretty JSON (actual's keys put in expected's order first)."""
    lines = difflib.unified_diff(
        pretty(expected).splitlines(),
        pretty(align_keys(actual, expected)).splitlines(),
        fromfile="expected",
        tofile=actual_label,
        lineterm="",
    )
    return "\n".join(lines)
