"""Every mistake a user can make on the command line is one line on stderr and exit 2, nothing on stdout.

The CLI is run as a subprocess, as users and CI run it (tests/test_cli.py's style); the live cases start
real ``sse-check serve`` processes (tests/live/conftest.py).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from checker.synth import StreamBuilder, encode

ROOT = Path(__file__).resolve().parents[1]
CONFORMING = ROOT / "captures" / "conforming"


def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "checker", *args],
        capture_output=True, text=True, cwd=cwd, timeout=120,
        env={"NO_COLOR": "1", "PATH": "/usr/bin:/bin"},
    )


def assert_one_line(proc: subprocess.CompletedProcess[str], *words: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-500:], proc.stderr)
    assert proc.stdout == "", proc.stdout[:500]
    assert proc.stderr.count("\n") == 1 and proc.stderr.endswith("\n"), proc.stderr
    assert proc.stderr.startswith("sse-check"), proc.stderr
    assert "Traceback" not in proc.stderr and "usage:" not in proc.stderr
    for word in words:
        assert word in proc.stderr, (word, proc.stderr)


def free_port() -> int:
    with socket.socket() as sock:  # free a moment ago: nothing listens there
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def capture(tmp_path: Path) -> Path:
    path = tmp_path / "clean.sse"
    path.write_bytes(encode(StreamBuilder().message(["Hel", "lo"]).events()))
    return path


# --- files ------------------------------------------------------------------------------------------------


def test_a_missing_file_is_one_line_and_no_report(tmp_path: Path, capture: Path) -> None:
    for fmt in ("text", "json", "junit"):
        proc = run("lint", str(capture), str(tmp_path / "nope.sse"), "--format", fmt)
        assert_one_line(proc, "nope.sse: No such file or directory")


def test_output_into_a_missing_folder_names_the_folder_not_a_temporary_file(tmp_path: Path, capture: Path) -> None:
    target = tmp_path / "no" / "such" / "report.json"
    proc = run("lint", str(capture), "-o", str(target))
    assert_one_line(proc, f"-o {target}: no such folder: {target.parent}")
    assert ".report.json." not in proc.stderr
    proc = run("lint", str(capture), "-o", str(tmp_path))
    assert_one_line(proc, "is a directory")


def test_output_into_a_missing_folder_is_refused_before_probing(tmp_path: Path) -> None:
    proc = run("probe", f"http://127.0.0.1:{free_port()}", "--model", "m", "-o", str(tmp_path / "x" / "r.txt"))
    assert_one_line(proc, "no such folder")


@pytest.mark.parametrize("content, reason", [
    (None, "No such file or directory"),
    (b"{not json", "not JSON (Expecting property name"),
    (b"\xff\xfe", "not UTF-8"),
])
def test_an_unreadable_request_file_is_named_with_its_reason(tmp_path: Path, capture: Path,
                                                            content: bytes | None, reason: str) -> None:
    request = tmp_path / "request.json"
    if content is not None:
        request.write_bytes(content)
    proc = run("lint", str(capture), "--request", str(request))
    assert_one_line(proc, f"--request {request}: {reason}")
    assert "Errno" not in proc.stderr and "sidecar" not in proc.stderr


# --- options ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("args, words", [
    (["lint", "x.sse", "--format", "bogus"], ["sse-check lint: argument --format: invalid choice: 'bogus'"]),
    (["lint", "x.sse", "--profile", "bogus"], ["sse-check lint: argument --profile", "'openai'"]),
    (["lint", "x.sse", "--fail-on", "bogus"], ["sse-check lint: argument --fail-on", "'warning'"]),
    (["probe", "http://x", "--format", "bogus"], ["sse-check probe: argument --format"]),
    (["diff", "a", "b", "--profile", "bogus"], ["sse-check diff: argument --profile"]),
    (["rules", "--format", "bogus"], ["sse-check rules: argument --format"]),
    (["replay", "--format", "bogus"], ["sse-check replay: argument --format"]),
    (["lint", "--max-bytes", "lots", "x.sse"], ["sse-check lint: argument --max-bytes: not a size"]),
])
def test_a_bad_option_value_is_one_line_naming_the_command(args: list[str], words: list[str]) -> None:
    proc = run(*args)
    assert_one_line(proc, *words, f"see `sse-check {args[0]} --help`")


@pytest.mark.parametrize("command", ["lint", "probe", "replay", "diff", "rules", "serve", "proxy"])
def test_an_unknown_flag_is_named_by_its_command_not_by_the_top_level_usage(command: str) -> None:
    proc = run(command, "--no-such-flag", "x")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and proc.stdout == "", proc.stderr
    assert proc.stderr.startswith(f"sse-check {command}: "), proc.stderr
    assert "COMMAND" not in proc.stderr


def test_an_unknown_command_is_one_line() -> None:
    proc = run("lnit", "x.sse")
    assert_one_line(proc, "invalid choice: 'lnit'")


# --- servers --------------------------------------------------------------------------------------------


def test_probe_with_nothing_listening_says_so_once() -> None:
    port = free_port()
    proc = run("probe", f"http://127.0.0.1:{port}", "--model", "m")  # every scenario of the suite
    assert_one_line(proc, f"cannot connect to http://127.0.0.1:{port}/v1/responses: Connection refused")
    assert "HTP007" not in proc.stderr


def test_resolver_errors_are_words() -> None:
    proc = run("probe", "http://no-such-host.invalid:8080", "--model", "m", "--connect-timeout", "5")
    assert_one_line(proc, "cannot resolve the host name")
    assert "Unknown error" not in proc.stderr and "-2" not in proc.stderr


def test_replay_live_with_nothing_listening_is_one_line() -> None:
    proc = run("replay", "--live", f"http://127.0.0.1:{free_port()}", "--model", "m")
    assert_one_line(proc, "nothing replayed: cannot connect to")


# --- pipes ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("args", [
    ["rules"],
    ["rules", "--format", "json"],
    ["lint", str(ROOT / "captures" / "rules")],
    ["lint", str(ROOT / "captures" / "rules"), "--format", "json"],
])
def test_a_closed_pipe_ends_quietly(args: list[str]) -> None:
    """`sse-check … | head`: no "Broken pipe", no "Exception ignored", no exit 2."""
    proc = subprocess.Popen([sys.executable, "-m", "checker", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=ROOT, env={"NO_COLOR": "1", "PATH": "/usr/bin:/bin"})
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()  # what `head -1` does after its line
    err = proc.stderr.read().decode()
    code = proc.wait(timeout=120)
    assert err == "" and code == 0, (code, err)


def test_a_closed_pipe_in_a_shell_pipeline() -> None:
    shell = "set -o pipefail; \"$PY\" -m checker lint captures/rules | head -n 3 >/dev/null"
    proc = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, cwd=ROOT, timeout=120,
                          env={**os.environ, "PY": sys.executable, "NO_COLOR": "1"})
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


def test_output_into_a_missing_folder_is_refused_before_proxying(tmp_path: Path) -> None:
    proc = run("proxy", "--upstream", "http://127.0.0.1:9", "--listen", "127.0.0.1:0",
               "-o", str(tmp_path / "x" / "proxy.json"))
    assert_one_line(proc, "no such folder")


def test_the_proxy_without_its_extra_names_the_extra(tmp_path: Path) -> None:
    # aiohttp (the proxy's upstream client) made unimportable, as in an install without the serve extra.
    (tmp_path / "aiohttp.py").write_text("raise ModuleNotFoundError(\"No module named 'aiohttp'\", name='aiohttp')\n")
    proc = subprocess.run([sys.executable, "-m", "checker", "proxy", "--upstream", "http://127.0.0.1:9",
                           "--listen", "127.0.0.1:0"], capture_output=True, text=True, cwd=ROOT, timeout=120,
                          env={"NO_COLOR": "1", "PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path)})
    assert_one_line(proc, "aiohttp is missing", "serve extra")
