"""The pytest plugin, run with pytester: inert by default, one item per capture, clean failures, profiles
from options and sidecars, baselines. (The live half is in tests/live/test_pytest_plugin_probe.py.)

Each inner pytest runs in a subprocess, as CI runs it: an in-process run restores ``sys.modules``
afterwards and would leave this process with second copies of the modules the plugin imported."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CAPTURES = ROOT / "captures"


@pytest.fixture
def captures(pytester: pytest.Pytester) -> Path:
    """A project with three captures: a clean one, a broken one, a real llama-server one."""
    directory = pytester.path / "captures"
    directory.mkdir()
    shutil.copy(CAPTURES / "conforming" / "text.sse", directory / "text.sse")
    shutil.copy(CAPTURES / "rules" / "LIF006-missing-terminal-event.sse", directory / "cut.sse")
    shutil.copy(CAPTURES / "llama.cpp" / "plain_text.sse", directory / "llama.sse")
    pytester.makepyfile(test_ordinary="def test_ordinary():\n    assert True\n")
    return directory


def test_plugin_is_inert_unless_enabled(pytester: pytest.Pytester, captures: Path) -> None:
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    out = result.stdout.str()
    assert re.search(r"^plugins: (.*, )?sse-check-", out, re.M)  # loaded by its entry point ...
    assert "sse-check:" not in out  # ... and silent: no header, no items
    # Even when the captures directory is collected as a path, .sse files are not items.
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "captures", "test_ordinary.py")
    result.assert_outcomes(passed=1)


def test_each_capture_is_an_item_and_a_failure_prints_findings_not_a_traceback(
        pytester: pytest.Pytester, captures: Path) -> None:
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--sse-check-captures", "captures", "-v")
    result.assert_outcomes(passed=2, failed=2)  # test_ordinary, text.sse pass; cut.sse and llama.sse fail
    out = result.stdout.str()
    result.stdout.fnmatch_lines([
        "*captures/cut.sse::sse-check[[]openai[]] FAILED*",
        "*captures/text.sse::sse-check[[]openai[]] PASSED*",
        "*test_ordinary.py::test_ordinary PASSED*",
    ])
    result.stdout.fnmatch_lines([
        "FAIL captures/cut.sse  24 events · 7050 bytes · no terminal event",
        "  LIF006 error* 76:7050 *stream ended without response.completed*",
        "*breaks: openai-python*",
    ])
    assert "Traceback" not in out and "raise StreamFailed" not in out and "pytest_plugin.py" not in out
    assert "sse-check: captures " in out  # the report header


def test_profile_option_and_sidecars(pytester: pytest.Pytester, captures: Path) -> None:
    # The llama.cpp profile reports the real server's documented deviations as info: it passes.
    (captures / "llama.profile").write_text("# documented deviations\nllama.cpp\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--sse-check-captures", "captures", "-v")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["*captures/llama.sse::sse-check[[]llama.cpp[]] PASSED*"])

    # A meta.json sidecar's profile works too.
    (captures / "llama.profile").unlink()
    (captures / "llama.meta.json").write_text(json.dumps({"profile": "llama.cpp"}))
    pytester.runpytest_subprocess("-p", "no:cacheprovider", "--sse-check-captures", "captures").assert_outcomes(
        passed=3, failed=1)

    # An explicit option overrides the sidecar; --sse-check-fail-on error lets warnings pass.
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--sse-check-captures", "captures",
                                "--sse-check-profile", "openai", "--sse-check-fail-on", "error", "-v")
    result.stdout.fnmatch_lines(["*captures/llama.sse::sse-check[[]openai[]] FAILED*"])


def test_bad_sidecar_is_a_one_line_failure(pytester: pytest.Pytester, captures: Path) -> None:
    (captures / "text.profile").write_text("no-such-profile\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--sse-check-captures", "captures")
    result.assert_outcomes(passed=1, failed=3)
    result.stdout.fnmatch_lines(["sse-check: unknown profile 'no-such-profile'*"])
    assert "Traceback" not in result.stdout.str()


def test_ini_options(pytester: pytest.Pytester, captures: Path) -> None:
    pytester.makeini("[pytest]\nsse_check_captures = captures\nsse_check_profile = llama.cpp\n"
                     "sse_check_ignore = LIF006\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-v")
    # llama.cpp profile for all; LIF006 ignored, so the cut stream passes too.
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["*captures/cut.sse::sse-check[[]llama.cpp[]] PASSED*"])


def test_select_and_k(pytester: pytest.Pytester, captures: Path) -> None:
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--sse-check-captures", "captures",
                                "--sse-check-select", "LIF006", "-k", "sse")
    result.assert_outcomes(passed=2, failed=1)  # only LIF006 counts: llama.sse passes


def test_baseline_hides_known_findings(pytester: pytest.Pytester, captures: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "checker", "lint", "captures", "--write-baseline", "base.json"],
                          cwd=pytester.path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--sse-check-captures", "captures",
                                "--sse-check-baseline", "base.json")
    result.assert_outcomes(passed=4)
    data = (captures / "text.sse").read_bytes()
    (captures / "text.sse").write_bytes(data[: data.rindex(b"event: response.completed")])
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--sse-check-captures", "captures",
                                "--sse-check-baseline", "base.json")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["*LIF006*"])


def test_usage_errors_stop_the_run(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--sse-check-captures", "nowhere")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*sse-check: capture directory * does not exist*"])
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--sse-check-url", "http://127.0.0.1:9")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*needs --sse-check-model*"])
