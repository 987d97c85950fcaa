"""The text report as a user reads it: the real CLI as a subprocess, at 80 columns and wider, into a file.

Short when all is well (a passing capture is one line, known deviations one line each), --quiet and --show
change the display and never the exit code, a run over several captures ends with totals per rule,
non-event-stream input is one finding, and no control character reaches the terminal.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LLAMA = Path("captures") / "llama.cpp"  # relative: the CLI runs in ROOT and reports the names as given
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def lint(*args: str, columns: int | None = None, stdin: bytes | None = None,
         cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1"}
    env.pop("COLUMNS", None)
    if columns is not None:
        env["COLUMNS"] = str(columns)
    proc = subprocess.run([sys.executable, "-m", "checker", "lint", *args], capture_output=True, cwd=cwd,
                          env=env, input=stdin, timeout=120)
    out = subprocess.CompletedProcess(proc.args, proc.returncode, proc.stdout.decode(), proc.stderr.decode())
    assert "Traceback" not in out.stderr + out.stdout, out.stderr
    return out


def test_at_80_columns_lines_fit_and_wrapped_lines_keep_their_indent() -> None:
    proc = lint(str(LLAMA / "reasoning_one_call.sse"), columns=80)
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert max(map(len, lines)) <= 80
    assert not [line for line in lines if line != line.rstrip()]
    # A finding's message that wraps continues under the message column, never at column 0.
    first = next(i for i, line in enumerate(lines) if line.startswith("  SCH002 warning"))
    column = lines[first].index("response.created response object")
    assert lines[first + 1].startswith(" " * column) and lines[first + 1][column] != " "
    # (The known-deviations section after the findings is a heading and its table: LIF018's cache_write_tokens,
    # which OpenAI's own streams lacked before mid-2026, is one under the openai profile.)
    findings = lines[: next((i for i, line in enumerate(lines) if line.startswith("known deviations")), len(lines))]
    assert all(line.startswith((" ", "FAIL ", "1 capture(s)")) or not line for line in findings)
    wide = lint(str(LLAMA / "reasoning_one_call.sse"), columns=160)
    assert max(map(len, wide.stdout.splitlines())) > 80  # the width follows the terminal


def test_output_written_with_o_is_not_hard_wrapped_and_has_no_trailing_blanks(tmp_path: Path) -> None:
    report = tmp_path / "report.txt"
    proc = lint(str(LLAMA / "reasoning_one_call.sse"), str(Path("captures") / "conforming"), "-o", str(report),
                columns=80)  # COLUMNS is for the terminal, not for a file
    assert proc.returncode == 1 and proc.stdout == ""
    text = report.read_text()
    lines = text.splitlines()
    assert not [line for line in lines if line != line.rstrip()]
    long_message = [line for line in lines if "missing required properties 'created_at', 'error'" in line]
    assert long_message and "and 7 more" in long_message[0]  # the whole message on its line
    assert max(map(len, lines)) > 120


def test_a_passing_capture_is_one_line_and_known_deviations_are_grouped() -> None:
    proc = lint(str(LLAMA), "--profile", "llama.cpp", columns=140)
    lines = proc.stdout.splitlines()
    assert "ok captures/llama.cpp/plain_text.sse  30 events · 5669 bytes · ended by response.completed · " \
           "27 known deviations" in lines
    start = lines.index(next(line for line in lines if line.startswith("known deviations of profile llama.cpp")))
    grouped = [line for line in lines[start + 1:] if line.startswith("  ") and "×" in line]
    # one line per deviation: its count, its rule and the events it covers, never one line per finding
    assert len(grouped) == len({line.split(" ", 4)[-1] for line in grouped}) >= 10
    assert any(re.match(r"\s+×250 LIF015 no event carries sequence_number · 9 captures · on 11 event types$", line)
               for line in grouped)
    assert any(line.endswith("SCH008 text events lack logprobs · 6 captures · on output_text.delta, "
                             "output_text.done") for line in grouped)
    assert len(lines) < 45


def test_quiet_and_show_filter_the_display_without_changing_the_exit_code() -> None:
    captures = [str(LLAMA / "reasoning_one_call.sse"), str(Path("captures") / "conforming" / "text.sse")]
    full = lint(*captures)
    quiet = lint(*captures, "--quiet")
    errors = lint(*captures, "--show", "error")
    assert full.returncode == quiet.returncode == errors.returncode == 1
    summary = "2 capture(s): 1 failed at --fail-on warning; 6 error(s), 15 warning(s), 1 info"
    assert summary in full.stdout and summary in quiet.stdout and summary in errors.stdout
    assert "ok captures/conforming/text.sse" in full.stdout and "text.sse" not in quiet.stdout
    assert "findings by rule" in full.stdout and "findings by rule" not in quiet.stdout
    assert re.search(r"^  ITM011 warning", full.stdout, re.M) and not re.search(r"^  \w+ +warning", errors.stdout,
                                                                                re.M)
    assert "16 finding(s) below --show error not shown" in errors.stdout  # 15 warnings, 1 info
    # --show info on a clean run changes nothing; --show error does not make a failing run pass
    assert lint(str(LLAMA / "reasoning_one_call.sse"), "--show", "error", "--fail-on", "warning").returncode == 1


def test_a_run_over_several_captures_ends_with_totals_per_rule() -> None:
    proc = lint(str(Path("captures") / "real-world"), columns=80)
    lines = proc.stdout.splitlines()
    start = lines.index("findings by rule")
    header = lines[start + 1].split()
    assert header == ["rule", "severity", "findings", "captures", "name"]
    rows = {line.split()[0]: line.split() for line in lines[start + 2:] if re.match(r"[A-Z]{3}\d{3} ", line)}
    assert rows["LIF006"][1] == "error" and rows["LIF015"][1] == "warning" and rows["LIF006"][-1] == "missing-terminal-event"
    assert max(map(len, lines)) <= 80


def test_a_png_or_a_markdown_page_is_one_finding() -> None:
    for path, kind in ((Path("docs") / "report.png", "a PNG image"), (Path("README.md"), "plain text")):
        proc = lint(str(path), columns=80)
        assert proc.returncode == 1
        lines = proc.stdout.splitlines()
        assert len(lines) <= 8, proc.stdout
        assert f"the body is {kind}" in proc.stdout and proc.stdout.count("SSE022") == 1
        assert not CONTROL.search(proc.stdout)


def test_control_characters_are_escaped_and_quoted_input_is_capped() -> None:
    body = b"\x1b[2J\x1b]0;pwned\x07" + b"x" * 5000 + b"\n" * 2
    proc = lint("-", stdin=body)
    assert proc.returncode == 1
    assert not CONTROL.search(proc.stdout), proc.stdout
    assert "\\x1b[2J" in proc.stdout and max(map(len, proc.stdout.splitlines())) < 400
    # inside an event stream too: an unknown field name with an escape sequence in it
    stream = (ROOT / LLAMA / "plain_text.sse").read_bytes().replace(b"event: response.created", b"ev\x1b[31ment: x", 1)
    proc = lint("-", stdin=stream)
    assert not CONTROL.search(proc.stdout) and "\\x1b[31m" in proc.stdout


def test_a_capture_that_is_not_a_stream_reads_as_what_it_is() -> None:
    proc = lint(str(Path("captures") / "llama.cpp-probe" / "plain_text_nonstream.sse"), "--profile", "llama.cpp")
    # a saved probe's stream:false answer reads as the probe said it, from the recorded exchange
    assert "ok captures/llama.cpp-probe/plain_text_nonstream.sse  HTTP 200 · JSON answer (not streamed, as asked) · " \
           "611 bytes" in proc.stdout and "ended by no terminal event" not in proc.stdout
    error = lint(str(Path("captures") / "llama.cpp-probe" / "malformed_input.sse"), "--profile", "llama.cpp")
    assert "ok captures/llama.cpp-probe/malformed_input.sse  HTTP 400 · JSON error, as expected · 110 bytes" \
        in error.stdout


def test_a_baseline_matches_whatever_the_working_directory(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "streams").mkdir(parents=True)
    (project / "ci").mkdir()
    capture = project / "streams" / "one.sse"
    capture.write_bytes((ROOT / LLAMA / "reasoning_one_call.sse").read_bytes())
    baseline = project / "ci" / "baseline.json"
    # written from the project's root: exit 0, and no failing report for today's findings
    wrote = lint("streams/one.sse", "--write-baseline", "ci/baseline.json", cwd=project)
    assert wrote.returncode == 0, wrote.stderr
    assert "FAIL" not in wrote.stdout and "ok streams/one.sse" in wrote.stdout
    assert "22 finding(s) hidden by the baseline" in wrote.stdout
    assert wrote.stderr.startswith("sse-check: wrote ci/baseline.json: 22 finding(s)")
    entries = {e["scenario"] for e in json.loads(baseline.read_text())["findings"]}
    assert entries == {"../streams/one.sse"}  # relative to the baseline file, not to the working directory
    # read from elsewhere: from the streams folder, and with absolute paths from anywhere
    for cwd, path, base in ((project / "streams", "one.sse", "../ci/baseline.json"),
                            (tmp_path, str(capture), str(baseline))):
        proc = lint(path, "--baseline", base, cwd=cwd)
        assert proc.returncode == 0, (cwd, proc.stdout)
        assert "22 finding(s) hidden by the baseline" in proc.stdout
        assert "22 of 22 baseline entries matched" in proc.stdout
    # a baseline for other captures cannot pass in silence
    other = project / "streams" / "other.sse"
    other.write_bytes((ROOT / LLAMA / "plain_text.sse").read_bytes())
    proc = lint("streams/other.sse", "--baseline", "ci/baseline.json", cwd=project)
    assert proc.returncode == 1 and "0 of 22 baseline entries matched" in proc.stdout
    assert "warning: --baseline ci/baseline.json: 0 of 22 baseline entries matched" in proc.stderr


def test_a_capture_name_with_control_characters_is_escaped(tmp_path: Path) -> None:
    capture = tmp_path / "evil\x1b[31mname.sse"
    capture.write_bytes(b"data: x\n\n")
    proc = lint(str(capture))
    assert proc.returncode == 1
    assert not CONTROL.search(proc.stdout) and "evil\\x1b[31mname.sse  1 event · 9 bytes" in proc.stdout


def sse_check(*args: str, columns: int | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1"}
    env.pop("COLUMNS", None)
    if columns is not None:
        env["COLUMNS"] = str(columns)
    proc = subprocess.run([sys.executable, "-m", "checker", *args], capture_output=True, cwd=ROOT, env=env,
                          text=True, timeout=120)
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    return proc


def test_a_finding_names_only_the_clients_its_matrix_says_it_breaks() -> None:
    # CHT002 (a null system_fingerprint) names openai-python and openai-node among the rule's clients, but on this
    # recording the matrix says ok for both (and the real clients return the completion).
    chat = Path("captures") / "cassettes" / "openllmetry" / "azure-openai-chat_streaming-0.sse"
    proc = lint(str(chat), "--clients", columns=120)
    # (the vendors' own shape, at info, is grouped as a known deviation: tests/test_severity_policy.py)
    assert re.search(r"×26 CHT002 +what api\.openai\.com", proc.stdout) and "breaks:" not in proc.stdout
    assert re.search(r"^  openai-python +ok$", proc.stdout, re.M)
    # where a finding does break a client, the line says so, and the matrix row says breaks
    broken = lint(str(LLAMA / "reasoning_one_call.sse"), "--clients", columns=200)
    lines = broken.stdout.splitlines()
    itm001 = next(i for i, line in enumerate(lines) if line.startswith("  ITM001 error"))
    assert lines[itm001 + 1].strip() == "event response.output_item.added · breaks: openai-python, openai-node, vercel-ai"
    assert re.search(r"^  openai-python +breaks +ITM001", broken.stdout, re.M)
    named = {c for line in lines for c in re.findall(r"breaks: ([\w, -]+)", line) for c in c.split(", ")}
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^  ([\w-]+) +(ok|breaks|degraded)\b", broken.stdout, re.M)}
    assert named and all(rows[c] == "breaks" for c in named)


def test_random_bytes_are_one_finding_and_no_raw_byte_is_echoed() -> None:
    import random

    for seed in (3, 5):  # seeds whose first lines hold one starting with ":" (once 4,000 lines of SSE005)
        rng = random.Random(seed)
        proc = lint("-", stdin=bytes(rng.randrange(256) for _ in range(5000)), columns=80)
        assert proc.returncode == 1
        assert proc.stdout.count("SSE022") == 1 and "SSE005" not in proc.stdout
        assert "the body is binary data, not an event stream" in proc.stdout
        assert len(proc.stdout.splitlines()) <= 8 and not CONTROL.search(proc.stdout)


def test_a_rule_page_into_a_pipe_is_its_markdown_not_a_line_of_blanks() -> None:
    piped = sse_check("rules", "CNT004")
    lines = piped.stdout.splitlines()
    assert lines[0] == "# CNT004 delta-before-part"
    assert max(map(len, lines)) < 400 and not any(line.startswith("   ") for line in lines[:3])
    terminal = sse_check("rules", "CNT004", columns=80)  # a width: rendered, the heading centred within it
    assert terminal.stdout.splitlines()[0].strip() == "CNT004 delta-before-part"
    assert max(map(len, terminal.stdout.splitlines())) <= 80


def test_lint_help_says_line_byte_for_a_position() -> None:
    text = sse_check("lint", "--help", columns=80).stdout
    assert "line:column" not in text and "line:byte" in text


def test_clients_required_makes_a_broken_client_fail_the_run_whatever_the_profile_accepts() -> None:
    plain = str(LLAMA / "plain_text.sse")
    # the llama.cpp profile documents every deviation of this capture: exit 0, though openai-python breaks on it
    assert lint(plain, "--profile", "llama.cpp").returncode == 0
    codex = lint(plain, "--profile", "llama.cpp", "--clients-required", "codex")  # codex reads it fine
    assert codex.returncode == 0 and "required client" not in codex.stdout
    proc = lint(plain, "--profile", "llama.cpp", "--clients-required", "openai-python,codex", columns=80)
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("FAIL captures/llama.cpp/plain_text.sse")
    assert lines[2] == "  breaks openai-python (required): CNT001 13:702 · TypeError: list indices must"
    assert lines[3].startswith("  be integers")  # wrapped under its text, not at column 0
    assert "required client(s) broken (--clients-required): openai-python on 1 capture" in lines
    assert max(map(len, lines)) <= 80
    assert lint(plain, "--profile", "llama.cpp", "--clients-required", "all").returncode == 1
    bad = lint(plain, "--clients-required", "openai-pyhton")
    assert bad.returncode == 2 and "unknown client 'openai-pyhton'" in bad.stderr
    # the contract is in --help
    text = " ".join(sse_check("lint", "--help", columns=80).stdout.split())
    assert "--clients-required openai-python,codex (or all) makes a capture that breaks one of those clients fail" \
        in text
