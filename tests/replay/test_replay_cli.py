"""``sse-check replay`` driven as a subprocess, as users and CI run it."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHARED_CASES = ROOT / "cases" / "reasoning-replay.json"


def run(*args: str, cwd: Path = ROOT, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "checker", "replay", *args],
        capture_output=True, text=True, cwd=cwd, timeout=120,
        env={"NO_COLOR": "1", "PATH": "/usr/bin:/bin", **(env or {})},
    )


def script(tmp_path: Path, name: str, body: str) -> str:
    """A small Python program for --cmd, run with this interpreter (quoted for shlex)."""
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return f"'{sys.executable}' '{path}'"


def assert_one_line_error(proc: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert proc.stderr.startswith("sse-check: ")
    for needle in needles:
        assert needle in proc.stderr, proc.stderr


ALWAYS_SENDS = """
def build(messages):
    out = []
    for message in messages:
        sent = {k: v for k, v in message.items() if k not in ("turn", "reasoning")}
        if message.get("reasoning"):
            sent["reasoning_content"] = message["reasoning"]
        out.append(sent)
    return out
"""


def test_shared_file_against_the_reference_exits_0() -> None:
    proc = run(str(SHARED_CASES))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "6 cases: 6 passed, 0 failed" in proc.stdout
    assert "\x1b[" not in proc.stdout  # NO_COLOR


def test_all_bundled_case_files_pass(tmp_path: Path) -> None:
    proc = run(*sorted(str(p) for p in (ROOT / "cases").glob("*.json")), "--format", "json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["summary"]["failed"] == 0 and report["summary"]["passed"] == report["summary"]["cases"] >= 24


def test_wrong_impl_fails_with_exit_1_naming_the_message(tmp_path: Path) -> None:
    (tmp_path / "wrong_replay.py").write_text(ALWAYS_SENDS)
    proc = run(str(SHARED_CASES), "--impl", "wrong_replay:build", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    # case 2: the first turn's replies must go without their reasoning
    assert "message 1 (assistant): reasoning_content not expected but sent 'Search for load.'" in proc.stdout
    assert '+    "reasoning_content": "Search for load."' in proc.stdout
    assert "--- expected" in proc.stdout and "+++ actual (impl)" in proc.stdout
    assert "6 cases: 2 passed, 4 failed" in proc.stdout


def test_wrong_impl_json_report(tmp_path: Path) -> None:
    (tmp_path / "wrong_replay.py").write_text(ALWAYS_SENDS)
    proc = run(str(SHARED_CASES), "--impl", "wrong_replay:build", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert (report["version"], report["tool"]["name"], report["command"]) == (1, "sse-check", "replay")
    assert report["target"]["kind"] == "impl"
    assert report["summary"] == {"cases": 6, "passed": 2, "failed": 4, "skipped": 0}
    failed = [c for c in report["cases"] if not c["passed"]]
    assert [c["case"] for c in failed] == [2, 4, 5, 6]
    first = failed[0]["diff"][0]
    assert first["message"] == 1 and first["role"] == "assistant" and first["path"] == "reasoning_content"
    assert first["kind"] == "unexpected" and first["actual"] == "Search for load." and first["expected"] is None
    assert failed[0]["unified_diff"].startswith("--- expected")
    assert all(set(c) >= {"about", "passed", "diff"} for c in report["cases"])


def test_impl_missing_is_exit_2(tmp_path: Path) -> None:
    assert_one_line_error(run(str(SHARED_CASES), "--impl", "nowhere_xyz:build", cwd=tmp_path), "cannot import nowhere_xyz")
    assert_one_line_error(run(str(SHARED_CASES), "--impl", "nocolon"), "package.module:function")


def test_wrong_cmd_fails_with_exit_1(tmp_path: Path) -> None:
    command = script(tmp_path, "drops.py", """
        import json, sys
        messages = json.load(sys.stdin)
        json.dump([{k: v for k, v in m.items() if k not in ("turn", "reasoning")} for m in messages], sys.stdout)
    """)
    proc = run(str(SHARED_CASES), "--cmd", command)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "message 1 (assistant): reasoning_content expected 'The test name points at the parser.' but missing" in proc.stdout
    assert "message 3 (assistant): reasoning_content expected 'Line 12 drops the last token.' but missing" in proc.stdout
    assert "+++ actual (cmd)" in proc.stdout


def test_right_cmd_passes(tmp_path: Path) -> None:
    command = script(tmp_path, "right.py", """
        import json, sys
        from checker.replay.dialects import to_openai_chat
        json.dump(to_openai_chat(json.load(sys.stdin)), sys.stdout)
    """)
    proc = run(str(SHARED_CASES), "--cmd", command)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize(("body", "reason"), [
    ("import sys; sys.stdout.write('hello, world')", "--cmd printed invalid JSON"),
    ("import sys; sys.stderr.write('boom\\nTypeError: x is undefined\\n'); sys.exit(3)",
     "--cmd exited with status 3: TypeError: x is undefined"),
    ("print('{\"role\": \"user\"}')", "--cmd printed a JSON object, not a list of messages"),
    ("pass", "--cmd printed nothing"),
])
def test_broken_cmd_is_a_failed_case_not_a_crash(tmp_path: Path, body: str, reason: str) -> None:
    proc = run(str(SHARED_CASES), "--cmd", script(tmp_path, "broken.py", body))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    assert proc.stdout.count(reason) == 6, proc.stdout
    assert "6 cases: 0 passed, 6 failed" in proc.stdout


def test_hanging_cmd_times_out(tmp_path: Path) -> None:
    command = script(tmp_path, "hang.py", "import time; time.sleep(60)")
    started = time.monotonic()
    proc = run(str(SHARED_CASES), "--cmd", command, "--timeout", "0.5", "--format", "json")
    assert time.monotonic() - started < 30
    assert proc.returncode == 1, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert {c["error"] for c in report["cases"]} == {"--cmd timed out after 0.5s (killed)"}


def test_cmd_that_does_not_exist_is_exit_2() -> None:
    assert_one_line_error(run(str(SHARED_CASES), "--cmd", "/nonexistent/replay-builder --x"), "cannot run /nonexistent/replay-builder")
    assert_one_line_error(run(str(SHARED_CASES), "--cmd", "'unbalanced"), "--cmd: cannot split")


def test_cmd_is_not_run_through_a_shell(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    command = script(tmp_path, "echo.py", "import json,sys; json.dump(json.load(sys.stdin), sys.stdout)")
    proc = run(str(SHARED_CASES), "--cmd", f"{command} ; touch {marker}")
    assert not marker.exists()
    assert proc.returncode == 1


def test_missing_case_file_is_one_line_exit_2(tmp_path: Path) -> None:
    assert_one_line_error(run(str(tmp_path / "nope.json")), "nope.json", "No such file")


def test_bad_case_file_is_one_line_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{ not json")
    assert_one_line_error(run(str(bad)), "bad.json: not JSON")
    bad.write_text('{"cases": []}')
    assert_one_line_error(run(str(bad)), "no cases")


def test_dialect_selection(tmp_path: Path) -> None:
    anthropic = str(ROOT / "cases" / "anthropic-thinking.json")
    assert run(anthropic).returncode == 0
    assert run(anthropic, "--dialect", "anthropic").returncode == 0
    assert_one_line_error(run(anthropic, "--dialect", "openai-chat"), "pass --dialect anthropic")
    proc = run(anthropic, str(SHARED_CASES), "--dialect", "anthropic")
    assert proc.returncode == 0 and "6 skipped" in proc.stdout and "skip" in proc.stdout


def test_field_variant(tmp_path: Path) -> None:
    proc = run(str(SHARED_CASES), "--field", "reasoning")
    assert proc.returncode == 1
    assert "message 3 (assistant): reasoning not expected but sent 'Line 12 drops the last token.'" in proc.stdout
    (tmp_path / "impl_mod.py").write_text(ALWAYS_SENDS)
    assert_one_line_error(run(str(SHARED_CASES), "--impl", "impl_mod:build", "--field", "reasoning", cwd=tmp_path),
                          "--field applies to the built-in reference")
    assert_one_line_error(run(str(SHARED_CASES), "--dialect", "anthropic", "--field", "reasoning"),
                          "openai-chat dialect only")


def test_color_only_when_asked() -> None:
    proc = run(str(SHARED_CASES), "--color", "always")
    assert "\x1b[" in proc.stdout


def test_impl_prints_do_not_spoil_the_json_report(tmp_path: Path) -> None:
    (tmp_path / "chatty.py").write_text(textwrap.dedent("""
        import sys
        from checker.replay.dialects import to_openai_chat

        def build(messages):
            print("debugging", messages[0])
            return to_openai_chat(messages)

        def leave(messages):
            sys.exit(4)
    """))
    proc = run(str(SHARED_CASES), "--impl", "chatty:build", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 0 and json.loads(proc.stdout)["summary"]["passed"] == 6
    assert "debugging" in proc.stderr
    proc = run(str(SHARED_CASES), "--impl", "chatty:leave", cwd=tmp_path)
    assert proc.returncode == 1 and proc.stdout.count("--impl raised SystemExit: 4") == 6
