"""Baselines: fingerprints that ignore positions and ids, counts, the file, and the CLI round trip."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from checker.baseline import (
    BASELINE_VERSION,
    Baseline,
    BaselineRun,
    fingerprint,
    load,
    normalise_message,
    save,
    scenario_key,
)
from checker.engine import LintResult
from checker.errors import UsageError
from checker.findings import Finding, Position, Severity

ROOT = Path(__file__).resolve().parents[1]
LLAMA = ROOT / "captures" / "llama.cpp"


def finding(code: str = "ITM011", message: str = "msg", line: int = 1, event_type: str | None = "x") -> Finding:
    return Finding(code=code, name="n", severity=Severity.WARNING, message=message,
                   position=Position(line=line, byte=line * 10, event_index=line, event_type=event_type))


def result(*findings: Finding) -> LintResult:
    return LintResult(findings=list(findings), events=1, bytes=1, terminal=None, response_id=None, profile="openai")


# --- normalisation and fingerprints --------------------------------------------------------------------------


@pytest.mark.parametrize(("a", "b"), [
    # ids with their prefix kept, suffix dropped
    ("function_call item 'fc_jfkWZdH1jSla4aYztFBO2Mgw9iKnO0Ug' added while reasoning item 'rs_po6bF3m2itQc2' is not done",
     "function_call item 'fc_68ee3db1e10b3ad24399ec17b5154a9c' added while reasoning item 'rs_abc' is not done"),
    # positions, indices and counts
    ("output_item.added at output_index 3, expected 2", "output_item.added at output_index 7, expected 1"),
    ("response.created sent again (first at event 0)", "response.created sent again (first at event 12)"),
    # streamed text in a diff snippet
    ("output_text.done text differs from the concatenated deltas (1 character(s) missing at 58: '\"')",
     "output_text.done text differs from the concatenated deltas (3 character(s) missing at 9: 'lo!')"),
    # a random id without a known prefix
    ("item 'a1b2c3d4e5f6a7b8c9d0' was never added", "item '0f9e8d7c6b5a49382716' was never added"),
])
def test_run_to_run_noise_normalises_away(a: str, b: str) -> None:
    assert normalise_message(a) == normalise_message(b)


@pytest.mark.parametrize(("a", "b"), [
    ("unknown event type 'response.reasoning.delta'", "unknown event type 'response.foo.delta'"),
    ("HTTP 500 Internal Server Error for the stream, expected 200", "HTTP 502 Bad Gateway for the stream, expected 200"),
    ("output_item.done changes type: 'message' at added, 'reasoning' at done",
     "output_item.done changes id: 'message' at added, 'reasoning' at done"),
])
def test_meaningful_differences_survive(a: str, b: str) -> None:
    assert normalise_message(a) != normalise_message(b)


def test_fingerprint_ignores_the_position_but_not_scenario_code_or_event() -> None:
    base = fingerprint(finding(line=1), "a.sse")
    assert fingerprint(finding(line=99), "a.sse") == base
    assert fingerprint(finding(line=1), "b.sse") != base
    assert fingerprint(finding(code="ITM012"), "a.sse") != base
    assert fingerprint(finding(event_type="y"), "a.sse") != base
    assert len(base) == 16 and int(base, 16) >= 0


# --- counting ---------------------------------------------------------------------------------------------------


def test_n_old_findings_stay_hidden_and_the_n_plus_first_shows() -> None:
    recorder = BaselineRun(record=True)
    recorder.apply("a.sse", result(finding(line=1), finding(line=2)))
    assert recorder.recorded is not None and recorder.recorded.total() == 2
    assert len(recorder.recorded.entries) == 1  # one fingerprint, counted twice

    gate = BaselineRun(recorder.recorded)
    kept = gate.apply("a.sse", result(finding(line=5), finding(line=6), finding(line=7)))
    assert [f.position.line for f in kept.findings] == [7]
    assert gate.hidden == 2


def test_a_new_kind_of_finding_is_never_hidden() -> None:
    recorder = BaselineRun(record=True)
    recorder.apply("a.sse", result(finding()))
    gate = BaselineRun(recorder.recorded)
    kept = gate.apply("a.sse", result(finding(), finding(code="LIF006", message="stream ended")))
    assert [f.code for f in kept.findings] == ["LIF006"]
    # the same finding in another scenario is new there
    assert gate.apply("b.sse", result(finding())).findings


def test_file_round_trip_is_versioned_and_sorted(tmp_path: Path) -> None:
    recorder = BaselineRun(record=True, profile="llama.cpp")
    recorder.apply("b.sse", result(finding(code="LIF015")))
    recorder.apply("a.sse", result(finding(code="ITM001"), finding(code="ITM001", line=3)))
    assert recorder.recorded is not None
    path = tmp_path / "baseline.json"
    save(path, recorder.recorded)
    document = json.loads(path.read_text())
    assert document["version"] == BASELINE_VERSION and document["tool"] == "sse-check"
    assert document["profile"] == "llama.cpp"
    assert [(e["scenario"], e["code"], e["count"]) for e in document["findings"]] == [
        ("a.sse", "ITM001", 2), ("b.sse", "LIF015", 1)]
    assert set(document["findings"][0]) == {"fingerprint", "code", "scenario", "event_type", "message", "count"}
    again = load(path)
    assert again.entries == recorder.recorded.entries


@pytest.mark.parametrize(("text", "error"), [
    ("not json", "unreadable baseline"),
    ('{"tool": "other"}', "not an sse-check baseline"),
    ('{"tool": "sse-check", "version": 99, "findings": []}', "version 99 is not supported"),
    ('{"tool": "sse-check", "version": 1, "findings": [{"code": "X"}]}', "findings[0] is not a baseline entry"),
])
def test_a_bad_baseline_file_is_one_line(tmp_path: Path, text: str, error: str) -> None:
    path = tmp_path / "b.json"
    path.write_text(text)
    with pytest.raises(UsageError, match=error.replace("[", r"\[")):
        load(path)
    with pytest.raises(UsageError, match="no such baseline"):
        load(tmp_path / "missing.json")


def test_scenario_keys_are_relative_and_posix(tmp_path: Path) -> None:
    assert scenario_key("captures/x.sse") == "captures/x.sse"
    assert scenario_key(str(tmp_path / "d" / "x.sse"), tmp_path) == "d/x.sse"
    assert scenario_key("-") == "<stdin>"
    # A capture saved by `sse-check probe --save` is named by its scenario, as the probe names it.
    (tmp_path / "plain_text.sse").write_bytes(b"")
    (tmp_path / "plain_text.meta.json").write_text(json.dumps({"meta_version": 1, "scenario": "plain_text"}))
    assert scenario_key(str(tmp_path / "plain_text.sse"), tmp_path) == "plain_text"
    (tmp_path / "other.meta.json").write_text(json.dumps({"profile": "llama.cpp"}))  # not a probe's
    assert scenario_key(str(tmp_path / "other.sse"), tmp_path) == "other.sse"


def test_baseline_from_document_rejects_bad_counts() -> None:
    with pytest.raises(ValueError, match="count"):
        Baseline.from_document({"tool": "sse-check", "version": 1, "findings": [
            {"fingerprint": "f", "code": "C", "scenario": "s", "count": 0}]})


# --- through the CLI --------------------------------------------------------------------------------------------


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "checker", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120, env={"NO_COLOR": "1", "PATH": "/usr/bin:/bin"})


def test_lint_baseline_hides_old_findings_and_fails_on_new_ones(tmp_path: Path) -> None:
    """Adopt the gate on a real llama-server capture (many findings under openai), then regress it."""
    captures = tmp_path / "captures"
    captures.mkdir()
    shutil.copy(LLAMA / "reasoning_one_call.sse", captures / "one_call.sse")
    shutil.copy(LLAMA / "reasoning_one_call.request.json", captures / "one_call.request.json")
    assert cli("lint", "captures", cwd=tmp_path).returncode == 1  # known debt fails today

    written = cli("lint", "captures", "--write-baseline", "sse-baseline.json", cwd=tmp_path)
    assert written.returncode == 0, written.stderr
    assert "wrote sse-baseline.json" in written.stderr
    recorded = json.loads((tmp_path / "sse-baseline.json").read_text())
    assert {e["scenario"] for e in recorded["findings"]} == {"captures/one_call.sse"}

    clean = cli("lint", "captures", "--baseline", "sse-baseline.json", cwd=tmp_path)
    assert clean.returncode == 0, clean.stdout
    hidden = sum(e["count"] for e in recorded["findings"])
    assert f"{hidden} finding(s) hidden by the baseline" in clean.stdout

    # Positions move (a comment line at the top shifts every line and byte): still hidden.
    data = (captures / "one_call.sse").read_bytes()
    (captures / "one_call.sse").write_bytes(b": build 2\n\n" + data)
    assert cli("lint", "captures", "--baseline", "sse-baseline.json", cwd=tmp_path).returncode == 0

    # A regression: the stream now stops before response.completed.
    cut = data[: data.rindex(b"event: response.completed")]
    (captures / "one_call.sse").write_bytes(cut)
    regressed = cli("lint", "captures", "--baseline", "sse-baseline.json", "--format", "json", cwd=tmp_path)
    assert regressed.returncode == 1
    report = json.loads(regressed.stdout)
    codes = [f["code"] for f in report["files"][0]["findings"]]
    assert "LIF006" in codes and "ITM001" not in codes  # the new one shows, the known ones stay hidden
    assert report["summary"]["baselined"] > 0


def test_unreadable_baseline_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "x.sse").write_bytes((ROOT / "captures" / "conforming" / "text.sse").read_bytes())
    proc = cli("lint", "x.sse", "--baseline", "nope.json", cwd=tmp_path)
    assert proc.returncode == 2
    assert "no such baseline file" in proc.stderr and "Traceback" not in proc.stderr
