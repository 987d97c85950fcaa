"""What a user sees of ``sse-check probe``: real subprocesses against the real replay server.

Each scenario's line appears when the scenario ends (also through a pipe); SIGINT and SIGTERM print the
report of what finished, keep the partial capture and exit 130 / 143; a passing probe fits on one screen and
in 80 columns; GitHub annotations point at files that exist; the markdown table names scenarios.
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.live.conftest import ROOT, ServerProcess

PLAIN_TEXT_BODY = {"input": "Say hello.", "max_output_tokens": 64}


def probe(*args: str, columns: int | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", "OPENAI_API_KEY": ""}
    env.pop("COLUMNS", None)
    if columns is not None:
        env["COLUMNS"] = str(columns)
    proc = subprocess.run([sys.executable, "-m", "checker", "probe", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=timeout, env=env)
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    return proc


def stalling_scenario(directory: Path, name: str = "stalled") -> Path:
    """A scenario replayed from plain_text whose stream stalls after 300 bytes (the server's stall fault)."""
    directory.mkdir(exist_ok=True)
    path = directory / f"{name}.json"
    path.write_text(json.dumps({"request": PLAIN_TEXT_BODY, "replay": ["plain_text"],
                                "headers": {"X-SSE-Check-Fault": "stall-after=300"}}))
    return path


def start_probe(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "checker", "probe", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, cwd=ROOT,
                            env={**os.environ, "NO_COLOR": "1", "OPENAI_API_KEY": ""})


def read_until(proc: subprocess.Popen[bytes], needle: bytes, timeout: float = 20) -> bytes:
    """Read the probe's stdout (a pipe) until ``needle`` appears; fail if it does not in time."""
    assert proc.stdout is not None
    seen = b""
    deadline = time.monotonic() + timeout
    while needle not in seen:
        left = deadline - time.monotonic()
        ready, _, _ = select.select([proc.stdout], [], [], max(left, 0))
        assert ready, f"{needle!r} did not appear within {timeout} s; so far: {seen!r}"
        data = os.read(proc.stdout.fileno(), 4096)
        assert data, f"stdout closed before {needle!r}; so far: {seen!r}"
        seen += data
    return seen


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_scenario_line_comes_as_it_ends_and_a_signal_prints_what_finished(
        llama_server: ServerProcess, tmp_path: Path, signum: int) -> None:
    files = tmp_path / "scenarios"
    stalling_scenario(files)
    saved = tmp_path / "saved"
    proc = start_probe(llama_server.url, "--model", "m", "--profile", "llama.cpp", "--scenario-file", str(files),
                       "-s", "invalid_model,stalled", "--idle-timeout", "60", "--save", str(saved),
                       "--api", "responses", "--verbose")  # --verbose: a line per scenario as it ends
    try:
        # invalid_model ends at once; its line is out (through a pipe) while the stalled stream still hangs.
        early = read_until(proc, b"ok invalid_model")
        assert proc.poll() is None
        deadline = time.monotonic() + 10
        while not any(saved.glob(".stalled.sse.*")) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # the first 300 bytes have arrived by now
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    stdout = (early + out).decode()
    stderr = err.decode()
    assert proc.returncode == 128 + signum, (stdout, stderr)
    name = signal.Signals(signum).name
    # One line on stderr; the report of what finished on stdout, the one cut short among it.
    assert stderr.strip().splitlines() == [stderr.strip()], stderr
    assert stderr.startswith(f"sse-check: interrupted by {name}: 1 of 2 scenario(s) ended; stalled was cut short "
                             f"(partial capture kept: {saved / 'stalled.sse'})"), stderr
    assert "FAIL stalled  " in stdout and "ended: interrupted" in stdout
    assert "2 scenario(s): 1 failed" in stdout
    # The partial capture is kept: the bytes that arrived before the signal, and its meta says how it ended.
    body = (saved / "stalled.sse").read_bytes()
    assert len(body) == 300
    assert (ROOT / "captures" / "llama.cpp" / "plain_text.sse").read_bytes().startswith(body)
    meta = json.loads((saved / "stalled.meta.json").read_text())
    assert meta["ending"]["kind"] == "interrupted" and meta["partial"] is True
    assert not list(saved.glob(".*"))  # no temporary file left behind


def test_a_passing_probe_of_the_replay_server_fits_on_one_screen(llama_server: ServerProcess) -> None:
    args = ("--model", "tiny-qwen3", "--profile", "llama.cpp", "--api", "responses")
    short = probe(llama_server.url, *args, columns=80)
    assert short.returncode == 0, short.stderr
    lines = short.stdout.splitlines()
    # The answer first: the client table (each client's verdict and why), the capabilities counted, the endpoint;
    # no line per passing scenario, no timings table, the known deviations one line; then what was probed, the
    # summary, what the exit code means beside broken clients, and how to see the rest.
    assert len(lines) <= 25, short.stdout
    assert lines[0].split() == ["client", "verdict", "why"]
    assert re.match(r"openai-python +broken +plain_text: TypeError", lines[1])
    assert any(re.fullmatch(r"capabilities: \d+ supported, \d+ not checked", line) for line in lines)
    assert any(line.split()[:4] == ["responses", "/responses", "10", "0"] for line in lines)
    assert not any(line.startswith("ok ") for line in lines) and not any(line.startswith("scenario ") for line in lines)
    assert any(re.fullmatch(r"15 scenario\(s\): 0 failed at --fail-on warning; 0 error\(s\), 0 warning\(s\), \d+", line)
               for line in lines)
    assert lines[-2].startswith("--verbose: every scenario with its timings")
    assert max(len(line) for line in lines) <= 80 and not [line for line in lines if line != line.rstrip()]
    # --verbose: the long report, a line per scenario and the timings table
    wide = probe(llama_server.url, *args, "--verbose", columns=100)
    assert wide.returncode == 0, wide.stderr
    lines = wide.stdout.splitlines()
    # 10 scenarios and the flows' 4 steps (models, a tool turn of 3 requests): a line each, a table row each, the deviations; the capabilities
    # (one line when none is broken) and the readiness of the four clients of this dialect (known deviations
    # still break them: a table, a row each with its reason); the stored-response features add their names to
    # the capabilities line (checker/surface/stored_probe.py: four lines more at 100 columns); the input forms
    # add theirs (checker/surface/inputs.py: not checked without their captures, one line more), and so do the
    # tool-choice, custom-tool and JSON-mode rows (tool_choice.py, custom_tool.py, json_mode.py: two lines more)
    # the WebSocket mode's short form (checker/surface/websocket.py): a line and a table row; the exit note (2)
    assert len(lines) <= 80, wide.stdout
    # one line per scenario, the deviations grouped, the table, the verdict
    assert sum(line.startswith("ok ") for line in lines) == 15
    assert any(re.fullmatch(r"15 scenario\(s\): 0 failed at --fail-on warning; 0 error\(s\), 0 warning\(s\), \d+ info",
                            line) for line in lines)
    narrow = probe(llama_server.url, *args, "--verbose", columns=80)
    assert narrow.returncode == 0
    lines = narrow.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80, narrow.stdout
    assert not [line for line in lines if line != line.rstrip()]
    # and the stored-response features' names (five lines at 80), the input forms' (two more), and the tool-choice,
    # custom-tool and JSON-mode rows, not checked against this replay (their names: two lines more at 80)
    assert len(lines) <= 95, narrow.stdout
    # the table keeps every scenario name whole and every header in one piece
    header = next(line for line in lines if line.startswith("scenario "))
    assert header.split() == ["scenario", "verdict", "HTTP", "TTFB", "delta", "gap", "total", "e/w/i"]
    assert any(line.startswith("reasoning_one_call_nonstream ok ") for line in lines)


def test_quiet_and_show_change_the_display_not_the_verdict(llama_server: ServerProcess) -> None:
    common = ("--model", "m", "-s", "plain_text,invalid_model", "--profile", "openai", "--api", "responses",
              "--verbose")
    loud = probe(llama_server.url, *common)
    quiet = probe(llama_server.url, *common, "--quiet")
    errors_only = probe(llama_server.url, *common, "--show", "error")
    assert loud.returncode == quiet.returncode == errors_only.returncode == 1
    def summary(out: str) -> str:
        return next(line for line in out.splitlines() if " scenario(s): " in line)

    assert summary(quiet.stdout) == summary(errors_only.stdout) == summary(loud.stdout)
    assert "ok invalid_model" not in quiet.stdout and "FAIL plain_text" in quiet.stdout
    assert "scenario " not in quiet.stdout  # no table
    assert " warning " in loud.stdout and " warning " not in errors_only.stdout.replace("warning(s)", "")
    assert "finding(s) below --show error not shown" in errors_only.stdout


def test_github_annotations_point_at_files_that_exist(llama_server: ServerProcess, tmp_path: Path) -> None:
    files = tmp_path / "scenarios"
    files.mkdir()
    (files / "mine.json").write_text(json.dumps({"request": PLAIN_TEXT_BODY, "replay": ["plain_text"]}))
    plain = probe(llama_server.url, "--model", "m", "-s", "plain_text,mine", "--scenario-file", str(files),
                  "--format", "github")
    annotations = [line for line in plain.stdout.splitlines() if line.startswith(("::error", "::warning"))]
    assert annotations
    # without --save: the scenario file for a scenario from a file (line 1), none for a built-in one
    for line in annotations:
        props = line.split("::")[1]
        if "file=" in props:
            target = props.split("file=")[1].split(",")[0]
            assert Path(target) == files / "mine.json" and ",line=1," in props, line
    assert any("file=" not in line.split("::")[1] for line in annotations)
    saved = tmp_path / "saved"
    kept = probe(llama_server.url, "--model", "m", "-s", "plain_text", "--save", str(saved), "--format", "github")
    targets = {line.split("file=")[1].split(",")[0] for line in kept.stdout.splitlines() if "file=" in line}
    assert targets == {str(saved / "plain_text.sse")}


def test_markdown_names_the_column_scenario(llama_server: ServerProcess) -> None:
    out = probe(llama_server.url, "--model", "m", "-s", "plain_text,invalid_model", "--format", "markdown").stdout
    assert "| scenario | verdict | error | warning | info | rules |" in out
    assert "| capture |" not in out


def test_the_scenario_list_fits_80_columns_with_names_whole(tmp_path: Path) -> None:
    files = tmp_path / "scenarios"
    stalling_scenario(files, "a_scenario_of_our_own_with_a_long_name")
    proc = probe("--list-scenarios", "--scenario-file", str(files), columns=80)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert max(map(len, lines)) <= 80 and not [line for line in lines if line != line.rstrip()]
    assert lines[0].split() == ["scenario", "expect", "what", "it", "checks"]
    names = [line.split()[0] for line in lines[1:-1] if line and not line.startswith(" ")]
    assert "reasoning_one_call_nonstream" in names and "a_scenario_of_our_own_with_a_long_name" in names
    # Where it came from: the file's path, folded within its column where it is longer than the column.
    assert f"{files}/a_scenario_of_our_own_with_a_long_name.json" in "".join(line.strip() for line in lines)


def test_an_error_answer_reads_as_expected_only_when_it_passes(llama_server: ServerProcess) -> None:
    good = probe(llama_server.url, "--model", "m", "-s", "invalid_model", "--verbose")
    assert "ok invalid_model  HTTP 400 · JSON error, as expected" in good.stdout
    bad = probe(llama_server.url, "--model", "m", "-s", "invalid_model", "-H",
                "X-SSE-Check-Fault: content-type=text/plain", "--verbose")
    assert bad.returncode == 1
    assert bad.stdout.splitlines()[0] == "FAIL invalid_model  HTTP 400 · text/plain error"
