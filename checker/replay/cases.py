"""Case files and the targets they run against.

A case file (``cases/reasoning-replay.json`` is the shared one)::

    {"about": "...", "dialect": "openai-chat",          # dialect optional, per file
     "cases": [{"about": "...", "dialect": "...",       # optional, per case (wins)
                "messages": [...history...],
                "expect": [...request messages...]}]}

A case with no declared dialect is an ``openai-chat`` case (the shared file's
expectations are in that dialect).

A *target* turns a history into request messages: the built-in reference
(:class:`Reference`), a user's Python function (:class:`PythonFunction`), a
user's program (:class:`Program`, JSON on stdin and stdout). A target that
cannot answer one case raises :class:`TargetError`; the runner records that
case as failed with the reason and goes on. Input that makes the whole run
impossible (an unreadable case file, an --impl that does not import, a program
that does not exist) is a :class:`~checker.errors.UsageError`.
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import json
import os
import shlex
import signal
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal, Protocol

from checker.errors import UsageError
from checker.replay.dialects import DEFAULT_FIELD, DIALECTS, HistoryError, build, validate_history
from checker.replay.diff import Difference, compare, unified_diff

DEFAULT_DIALECT: Final = "openai-chat"
DEFAULT_TIMEOUT_S: Final = 10.0
# How much of a program's stderr/stdout goes into a one-line reason.
QUOTE_CHARS: Final = 120

Status = Literal["passed", "failed", "skipped"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Case:
    file: str
    number: int  # 1-based position in its file
    about: str
    dialect: str
    messages: list[dict[str, Any]] = field(hash=False)
    expect: list[Any] = field(hash=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class CaseResult:
    case: Case
    status: Status
    actual: Any = None
    error: str | None = None  # why the target gave no usable answer, or why the case was skipped
    differences: tuple[Difference, ...] = ()
    unified: str = ""

    @property
    def passed(self) -> bool:
        return self.status == "passed"


class TargetError(Exception):
    """The target gave no usable answer for one case (one line, shown with the case)."""


# --- case files ---------------------------------------------------------------


def parse_case_file(text: str, name: str) -> list[Case]:
    """The cases of one file; :class:`UsageError` (one line, naming the file) if it is malformed."""
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"{name}: not JSON: {exc}") from None
    if not isinstance(document, dict) or not isinstance(document.get("cases"), list):
        raise UsageError(f'{name}: a case file is an object with a "cases" list')
    file_dialect = _dialect(document.get("dialect", DEFAULT_DIALECT), f"{name}: dialect")
    cases: list[Case] = []
    for number, raw in enumerate(document["cases"], start=1):
        where = f"{name}: case {number}"
        if not isinstance(raw, dict):
            raise UsageError(f"{where}: must be an object")
        for key in ("messages", "expect"):
            if not isinstance(raw.get(key), list):
                raise UsageError(f'{where}: "{key}" must be a list of messages')
        about = raw.get("about", "")
        if not isinstance(about, str):
            raise UsageError(f'{where}: "about" must be a string')
        try:
            validate_history(raw["messages"])
        except HistoryError as exc:
            raise UsageError(f"{where}: messages: {exc}") from None
        cases.append(Case(
            file=name, number=number, about=about,
            dialect=_dialect(raw.get("dialect", file_dialect), f"{where}: dialect"),
            messages=raw["messages"], expect=raw["expect"],
        ))
    return cases


def load_case_file(path: Path) -> list[Case]:
    """Read and parse one case file (an OSError is left to the CLI: one line, exit 2)."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not UTF-8 ({exc.reason} at byte {exc.start})") from None
    return parse_case_file(text, str(path))


def _dialect(value: object, where: str) -> str:
    if value not in DIALECTS:
        raise UsageError(f"{where} must be one of {', '.join(DIALECTS)}, not {value!r}")
    return str(value)


# --- targets ------------------------------------------------------------------


class Target(Protocol):
    @property
    def kind(self) -> str: ...  # reference | impl | cmd
    @property
    def label(self) -> str: ...  # how the report names it

    def speaks(self, dialect: str) -> bool: ...
    def build(self, messages: list[dict[str, Any]], dialect: str) -> Any: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Reference:
    """The built-in dialect builders; with ``dialect=None`` it speaks every dialect."""

    dialect: str | None = None
    field: str = DEFAULT_FIELD
    kind: str = "reference"

    @property
    def label(self) -> str:
        extra = f", field {self.field}" if self.field != DEFAULT_FIELD else ""
        return f"the built-in reference ({self.dialect or 'each case in its own dialect'}{extra})"

    def speaks(self, dialect: str) -> bool:
        return self.dialect is None or dialect == self.dialect

    def build(self, messages: list[dict[str, Any]], dialect: str) -> Any:
        try:
            return build(dialect, messages, field=self.field)
        except HistoryError as exc:
            raise TargetError(f"the reference cannot build this history: {exc}") from None


@dataclass(frozen=True, slots=True, kw_only=True)
class PythonFunction:
    """``--impl package.module:function``: called with the history, returns the request messages."""

    spec: str
    function: Any
    dialect: str = DEFAULT_DIALECT
    kind: str = "impl"

    @classmethod
    def load(cls, spec: str, *, dialect: str = DEFAULT_DIALECT) -> PythonFunction:
        module_name, colon, attr = spec.partition(":")
        if not colon or not module_name or not attr:
            raise UsageError(f"--impl: expected package.module:function, got {spec!r}")
        cwd = os.getcwd()
        if cwd not in sys.path:
            sys.path.insert(0, cwd)  # the user's module may sit in the working directory
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:  # noqa: BLE001 - any import failure is the user's input
            raise UsageError(f"--impl: cannot import {module_name}: {type(exc).__name__}: {exc}") from None
        target: Any = module
        for part in attr.split("."):
            try:
                target = getattr(target, part)
            except AttributeError:
                raise UsageError(f"--impl: {module_name} has no {attr}") from None
        if not callable(target):
            raise UsageError(f"--impl: {spec} is not callable")
        return cls(spec=spec, function=target, dialect=dialect)

    @property
    def label(self) -> str:
        return f"--impl {self.spec} ({self.dialect})"

    def speaks(self, dialect: str) -> bool:
        return dialect == self.dialect

    def build(self, messages: list[dict[str, Any]], dialect: str) -> Any:
        try:
            # The report owns stdout (JSON must stay parseable): the function's prints go to stderr.
            with contextlib.redirect_stdout(sys.stderr):
                output = self.function(copy.deepcopy(messages))
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - the user's code failing is a failed case
            raise TargetError(f"--impl raised {type(exc).__name__}: {_clip(str(exc))}") from None
        if not isinstance(output, (list, tuple)):
            raise TargetError(f"--impl returned {_type_name(output)}, not a list of messages")
        try:
            return json.loads(json.dumps(output, ensure_ascii=False))
        except (TypeError, ValueError) as exc:
            raise TargetError(f"--impl returned something that is not JSON: {exc}") from None


@dataclass(frozen=True, slots=True, kw_only=True)
class Program:
    """``--cmd "node build.js"``: history JSON on stdin, request messages JSON on stdout.

    Run as an argument vector (``shlex.split``), never through a shell, in its
    own process group so that a timeout kills whatever it started too.
    """

    command: str
    argv: tuple[str, ...]
    timeout: float = DEFAULT_TIMEOUT_S
    dialect: str = DEFAULT_DIALECT
    kind: str = "cmd"

    @classmethod
    def parse(cls, command: str, *, timeout: float = DEFAULT_TIMEOUT_S, dialect: str = DEFAULT_DIALECT) -> Program:
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise UsageError(f"--cmd: cannot split {command!r}: {exc}") from None
        if not argv:
            raise UsageError("--cmd: empty command")
        return cls(command=command, argv=tuple(argv), timeout=timeout, dialect=dialect)

    @property
    def label(self) -> str:
        return f"--cmd {self.command!r} ({self.dialect})"

    def speaks(self, dialect: str) -> bool:
        return dialect == self.dialect

    def build(self, messages: list[dict[str, Any]], dialect: str) -> Any:
        stdin = json.dumps(messages, ensure_ascii=False).encode("utf-8")
        try:
            proc = subprocess.Popen(
                list(self.argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:  # not found, not executable: no case can run
            raise UsageError(f"--cmd: cannot run {self.argv[0]}: {exc.strerror or exc}") from None
        try:
            out, err = proc.communicate(stdin, timeout=self.timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            proc.communicate()
            raise TargetError(f"--cmd timed out after {self.timeout:g}s (killed)") from None
        except BaseException:
            _kill_group(proc)
            proc.communicate()
            raise
        if proc.returncode < 0:
            raise TargetError(f"--cmd was killed by signal {-proc.returncode}{_stderr_tail(err)}")
        if proc.returncode != 0:
            raise TargetError(f"--cmd exited with status {proc.returncode}{_stderr_tail(err)}")
        text = out.decode("utf-8", errors="replace")
        if not text.strip():
            raise TargetError("--cmd printed nothing (expected a JSON list of messages)")
        try:
            output = json.loads(text)
        except ValueError as exc:
            raise TargetError(f"--cmd printed invalid JSON ({exc}): {_clip(text.strip())!r}") from None
        if not isinstance(output, list):
            raise TargetError(f"--cmd printed {_type_name(output)}, not a list of messages")
        return output


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill the program we started and its process group (it leads its own session)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def _stderr_tail(err: bytes) -> str:
    lines = [line.strip() for line in err.decode("utf-8", errors="replace").splitlines() if line.strip()]
    return f": {_clip(lines[-1])}" if lines else ""


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= QUOTE_CHARS else text[: QUOTE_CHARS - 1] + "…"


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    return {dict: "a JSON object", str: "a string", bool: "a boolean", int: "a number", float: "a number"}.get(
        type(value), type(value).__name__
    )


# --- the runner ---------------------------------------------------------------


def run_case(case: Case, target: Target) -> CaseResult:
    if not target.speaks(case.dialect):
        return CaseResult(case=case, status="skipped", error=f"a {case.dialect} case")
    try:
        actual = target.build(case.messages, case.dialect)
    except TargetError as exc:
        return CaseResult(case=case, status="failed", error=str(exc))
    differences = tuple(compare(case.expect, actual))
    if not differences:
        return CaseResult(case=case, status="passed", actual=actual)
    return CaseResult(
        case=case, status="failed", actual=actual, differences=differences,
        unified=unified_diff(case.expect, actual, actual_label=f"actual ({target.kind})"),
    )


def run_cases(cases: Sequence[Case], target: Target) -> list[CaseResult]:
    """Run every case; :class:`UsageError` if the target speaks none of their dialects."""
    if cases and not any(target.speaks(case.dialect) for case in cases):
        dialects = sorted({case.dialect for case in cases})
        raise UsageError(
            f"no case is in the dialect the target speaks (the cases are {', '.join(dialects)}); "
            f"pass --dialect {dialects[0]}"
        )
    return [run_case(case, target) for case in cases]
