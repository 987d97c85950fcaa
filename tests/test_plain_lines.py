"""checker.console.PlainLines writes, without rich, exactly what rich would write (issue 19's start-up: a
passing capture's report imports no rich). Every case here is drawn twice, plainly where it can be and by
rich alone, and the bytes must be equal: colour on and off, terminal or not, widths around each line's
length, names rich cannot measure by len() alone."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from checker import cli
from checker.console import PlainLines, make_console
from checker.report.text import TextReporter

ROOT = Path(__file__).resolve().parent.parent
PASSING = "captures/conforming/text.sse"
FAILING = "captures/rules/ITM001-output-index-missing.sse"
DEVIATING = "captures/llama.cpp/plain_text.sse"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], argv: list[str], *,
         plain: bool, tty: bool) -> str:
    monkeypatch.setattr(TextReporter, "plain_lines", plain)
    if tty:
        out = Terminal()
        monkeypatch.setattr(sys, "stdout", out)
        cli.main(argv)
        return out.getvalue()
    cli.main(argv)
    return capsys.readouterr().out


CASES = [
    [PASSING],
    [FAILING],
    [PASSING, FAILING, "captures/conforming"],
    [DEVIATING, "--profile", "llama.cpp"],
    [PASSING, "--quiet"],
    [FAILING, "--show", "error", "--fail-on", "error"],
]


@pytest.mark.parametrize("args", CASES, ids=lambda a: " ".join(a))
@pytest.mark.parametrize("color", ["never", "always", "auto"])
@pytest.mark.parametrize("columns", [None, "40", "79", "80", "200"])
@pytest.mark.parametrize("tty", [False, True])
def test_lint_reports_the_same_bytes_with_and_without_rich(monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str], args: list[str],
                                                           color: str, columns: str | None, tty: bool) -> None:
    monkeypatch.chdir(ROOT)
    for name in ("NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE", "COLUMNS"):
        monkeypatch.delenv(name, raising=False)
    if columns is not None:
        monkeypatch.setenv("COLUMNS", columns)
    argv = ["lint", *args, "--color", color]
    rich_only = _run(monkeypatch, capsys, argv, plain=False, tty=tty)
    assert _run(monkeypatch, capsys, argv, plain=True, tty=tty) == rich_only


@pytest.mark.parametrize("env", [{"NO_COLOR": "1"}, {"FORCE_COLOR": "1"}, {"FORCE_COLOR": ""},
                                 {"TTY_COMPATIBLE": "1"}, {"TTY_COMPATIBLE": "0"}, {"TERM": "dumb"},
                                 {"TERM": "xterm-256color", "COLORTERM": "truecolor"}, {"COLUMNS": "0"}])
@pytest.mark.parametrize("tty", [False, True])
def test_the_environment_decides_the_same_way(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                              env: dict[str, str], tty: bool) -> None:
    monkeypatch.chdir(ROOT)
    for name in ("NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE", "COLUMNS", "TERM", "COLORTERM"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    argv = ["lint", PASSING, FAILING]
    rich_only = _run(monkeypatch, capsys, argv, plain=False, tty=tty)
    assert _run(monkeypatch, capsys, argv, plain=True, tty=tty) == rich_only


LINES = [
    [("ok", "bold green"), (" ", ""), ("a/b.sse", "bold"), ("  ", ""), ("3 events · 10 bytes", "dim")],
    [("FAIL", "bold red"), (" ", ""), ("x" * 30, "bold"), ("  ", ""), ("×2 … – done", "dim")],
    [("trailing blanks   ", "")],
    [("", "")],
    [("error: unreadable", "bold red")],
    [("known  ", "dim"), ("deviation", "cyan")],
]


@pytest.mark.parametrize("segments", LINES)
@pytest.mark.parametrize("color", ["never", "always"])
def test_a_line_is_what_rich_writes_at_every_width(segments: list[tuple[str, str]], color: str) -> None:
    from rich.text import Text

    size = sum(len(text) for text, _ in segments)
    for width in sorted({40, max(1, size - 1), size, size + 1, 200}):
        plain, drawn = io.StringIO(), io.StringIO()
        if not PlainLines(plain, color, width=width).line(*segments):
            assert size > width or segments[-1][0].endswith(" ")  # a wrap, or trailing blanks: rich's job
            continue
        make_console(drawn, color, width=width).print(Text.assemble(*segments))
        assert plain.getvalue() == drawn.getvalue(), width


@pytest.mark.parametrize("text", ["日本語のファイル名", "e\u0301", "tab\there", "emoji 😀", "\x1b[31m"])
def test_what_rich_measures_otherwise_is_left_to_rich(text: str) -> None:
    assert not PlainLines(io.StringIO(), "never", width=200).line((text, ""))


def test_a_passing_lint_imports_no_rich_nor_jsonschema_rs() -> None:
    """The start-up target's design (bench/bench.py --only startup measures it): a passing capture's report
    needs neither rich nor a compiled schema."""
    code = (f"import sys; from checker.cli import main; code = main(['lint', {PASSING!r}]); "
            "print(code, sorted(m for m in sys.modules if m.split('.')[0] in ('rich', 'jsonschema_rs')))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1] == "0 []"
