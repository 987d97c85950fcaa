"""checker.cli's garbage-collector handling at start-up: off while a command is imported and parsed, the
start-up's objects frozen before it runs; a program that calls main() gets its collector back as it was, the
program itself (python -m checker, the console script) leaves them frozen for the interpreter's exit."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

import pytest

from checker import cli

ROOT = Path(__file__).resolve().parent.parent
PASSING = str(ROOT / "captures" / "conforming" / "text.sse")


def _observe(monkeypatch: pytest.MonkeyPatch) -> list[tuple[bool, int]]:
    """(collector enabled, objects frozen) when the command starts running."""
    seen: list[tuple[bool, int]] = []
    started = cli._StartupCollector.started

    def spy(self: cli._StartupCollector) -> None:
        seen.append((gc.isenabled(), gc.get_freeze_count()))
        started(self)
        seen.append((gc.isenabled(), gc.get_freeze_count()))

    monkeypatch.setattr(cli._StartupCollector, "started", spy)
    return seen


def test_main_gives_the_collector_back(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    seen = _observe(monkeypatch)
    assert gc.isenabled() and gc.get_freeze_count() == 0
    assert cli.main(["lint", PASSING, "--color", "never"]) == 0
    assert "ok " in capsys.readouterr().out
    # Off while the command was imported and parsed, on (with the start-up frozen) while it ran.
    assert seen[0] == (False, 0)
    assert seen[1][0] is True and seen[1][1] > 0
    # Afterwards: on, nothing frozen, as before the call (the caller's garbage is collected as before).
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_a_caller_without_collector_keeps_it_off(monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    seen = _observe(monkeypatch)
    gc.disable()
    try:
        assert cli.main(["lint", PASSING, "--color", "never"]) == 0
        assert seen == [(False, 0), (False, 0)]  # nothing frozen: the caller decides its collector
        assert not gc.isenabled() and gc.get_freeze_count() == 0
    finally:
        gc.enable()
    capsys.readouterr()


def test_usage_errors_give_it_back_too(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["lint", "--no-such-option", PASSING])
    assert cli.main([]) == 2
    assert gc.isenabled() and gc.get_freeze_count() == 0
    capsys.readouterr()


def test_the_program_leaves_the_start_up_frozen() -> None:
    """python -m checker (and the console script, checker.cli:entry) ends the process: nothing to give back,
    and the interpreter's last collection skips what stays frozen."""
    code = ("import gc, runpy, sys; sys.argv = ['sse-check', 'lint', sys.argv[1], '--color', 'never']\n"
            "try:\n    runpy.run_module('checker', run_name='__main__')\n"
            "except SystemExit as exc:\n    print('exit', exc.code)\n"
            "print('collector', gc.isenabled(), gc.get_freeze_count() > 1000)\n")
    proc = subprocess.run([sys.executable, "-c", code, PASSING], capture_output=True, text=True, cwd=ROOT,
                          timeout=60)
    assert proc.stdout.splitlines()[-2:] == ["exit 0", "collector True True"], proc.stdout + proc.stderr
