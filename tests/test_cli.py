"""The CLI driven as a subprocess, as users and CI run it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from checker.rules import RULES
from checker.synth import StreamBuilder, encode

ROOT = Path(__file__).resolve().parents[1]


def run(*args: str, stdin: bytes | None = None, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "checker", *args],
        input=stdin.decode() if stdin is not None else None,
        capture_output=True, text=True, cwd=cwd, timeout=120,
        env={"NO_COLOR": "1", "PATH": "/usr/bin:/bin"},
    )


@pytest.fixture
def clean(tmp_path: Path) -> Path:
    path = tmp_path / "clean.sse"
    path.write_bytes(encode(StreamBuilder().reasoning(["Think", "ing"]).message(["Hel", "lo"]).events()))
    return path


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    events = list(StreamBuilder().message(["Hel", "lo"]).events())
    del events[-1]  # no terminal event: LIF006 (error)
    path = tmp_path / "broken.sse"
    path.write_bytes(encode(events))
    return path


@pytest.fixture
def warning_only(tmp_path: Path) -> Path:
    data = encode(StreamBuilder().message(["Hi"]).events())
    path = tmp_path / "warn.sse"
    path.write_bytes(data.replace(b"\n", b"\r\n", 2))  # mixed line endings: SSE003 (warning)
    return path


def test_clean_capture_exits_0(clean: Path) -> None:
    proc = run("lint", str(clean))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ok" in proc.stdout and "0 failed" in proc.stdout


def test_broken_capture_exits_1_with_code_position_and_clients(broken: Path) -> None:
    proc = run("lint", str(broken))
    assert proc.returncode == 1
    assert "LIF006" in proc.stdout and "missing-terminal" not in proc.stderr
    assert "breaks: openai-python" in proc.stdout


def test_fail_on_decides_the_exit_code(warning_only: Path) -> None:
    assert run("lint", str(warning_only)).returncode == 1
    assert run("lint", str(warning_only), "--fail-on", "error").returncode == 0


def test_json_report_follows_its_schema(clean: Path, broken: Path) -> None:
    proc = run("lint", str(clean), str(broken), "--format", "json")
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    schema = json.loads((ROOT / "docs" / "report-schema.json").read_text())
    jsonschema.validate(report, schema)
    by_path = {Path(f["path"]).name: f for f in report["files"]}
    assert by_path["clean.sse"]["passed"] and by_path["clean.sse"]["findings"] == []
    assert [f["code"] for f in by_path["broken.sse"]["findings"]] == ["LIF006"]
    assert report["summary"]["failed_files"] == 1


def test_stdin(clean: Path) -> None:
    proc = run("lint", "-", "--format", "json", stdin=clean.read_bytes())
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["files"][0]["path"] == "<stdin>"


def test_missing_file_is_one_line_exit_2(tmp_path: Path) -> None:
    proc = run("lint", str(tmp_path / "nope.sse"))
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "nope.sse" in proc.stderr and "No such file" in proc.stderr


def test_directory_without_captures_exit_2(tmp_path: Path) -> None:
    proc = run("lint", str(tmp_path))
    assert proc.returncode == 2 and "no .sse captures" in proc.stderr and "Traceback" not in proc.stderr


def test_directory_is_expanded(tmp_path: Path, clean: Path, broken: Path) -> None:
    proc = run("lint", str(tmp_path), "--format", "json")
    assert sorted(Path(f["path"]).name for f in json.loads(proc.stdout)["files"]) == ["broken.sse", "clean.sse"]


def test_select_and_ignore(broken: Path) -> None:
    assert run("lint", str(broken), "--ignore", "LIF").returncode == 0
    assert run("lint", str(broken), "--select", "SSE,ITM").returncode == 0
    assert run("lint", str(broken), "--select", "missing-terminal-event").returncode == 1
    proc = run("lint", str(broken), "--select", "XYZ")
    assert proc.returncode == 2 and "matches no rule" in proc.stderr


def test_output_file(tmp_path: Path, broken: Path) -> None:
    target = tmp_path / "report.json"
    proc = run("lint", str(broken), "--format", "json", "--output", str(target))
    assert proc.returncode == 1 and proc.stdout == ""
    assert json.loads(target.read_text())["files"][0]["findings"][0]["code"] == "LIF006"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".report")] == []


def test_timeline(clean: Path) -> None:
    proc = run("lint", str(clean), "--timeline")
    assert proc.returncode == 0 and "timeline" in proc.stdout and "[" in proc.stdout


def test_rules_lists_every_rule() -> None:
    proc = run("rules")
    assert proc.returncode == 0
    for code in RULES:
        assert code in proc.stdout


def test_rules_explains_one() -> None:
    proc = run("rules", "ITM011")
    assert proc.returncode == 0 and "interleaved-items" in proc.stdout and "Why is this bad?" in proc.stdout
    assert json.loads(run("rules", "interleaved-items", "--format", "json").stdout)["code"] == "ITM011"
    proc = run("rules", "NOPE01")
    assert proc.returncode == 2 and "no rule" in proc.stderr


def test_version_and_help() -> None:
    assert run("--version").stdout.startswith("sse-check ")
    proc = run()
    assert proc.returncode == 2 and "lint" in proc.stderr


def test_request_sidecar_is_used(tmp_path: Path) -> None:
    events = list(StreamBuilder().message(["a", "b", "c"]).events())
    (tmp_path / "cut.sse").write_bytes(encode(events))
    assert "LIF017" not in run("lint", str(tmp_path / "cut.sse")).stdout
    (tmp_path / "cut.request.json").write_text(json.dumps({"max_output_tokens": 3}))
    proc = run("lint", str(tmp_path / "cut.sse"))
    assert "LIF017" in proc.stdout and proc.returncode == 1


def test_lint_imports_only_what_it_needs() -> None:
    """The parser imports the chosen command's module alone: a lint of a large capture must not carry the
    live commands' httpx, asyncio servers and uvicorn in its memory."""
    code = ("import sys; from checker.cli import main; main(['lint', 'captures/conforming/text.sse', '--color', "
            "'never']); print(sorted(m for m in ('httpx', 'uvicorn', 'starlette', 'checker.live.probe') "
            "if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.stdout.strip().splitlines()[-1] == "[]", proc.stdout + proc.stderr
