"""``sse-check probe`` as a real process against ``sse-check serve`` as a real process (loopback, free port).

Every probe here is a subprocess talking HTTP to a replay server subprocess; verdicts are compared with
``sse-check lint`` of the captures the probe saved (JSON reports, finding by finding), and stderr must never
hold a traceback.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jsonschema
import pytest

from checker.http_checks import ExchangeLinter, _at_event_boundary
from checker.nonstream_checks import parity_findings
from checker.live.probe import endpoint
from checker.live.redact import Redactor
from checker.live.saving import BodySink
from checker.live.scenarios import BUILTIN, load_scenario_files, pick, suite
from checker.surface.capability import feature_families
from checker.surface.features import load_features
from checker.cli import main
from report_entries import by_name, codes, lint_json
from checker.errors import UsageError

if TYPE_CHECKING:  # the fixtures come from tests/live/conftest.py
    from conftest import ServerProcess

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = ROOT / "captures"
LLAMA = CAPTURES / "llama.cpp"
NAMES = [s.name for s in BUILTIN]
FLOW_STEPS = ["models.list"]  # the built-in flows' steps (checker.surface), after the scenarios


def scenario_entries(entries: dict[str, Any]) -> dict[str, Any]:
    """The scenarios' entries, after checking that the rest are flows' steps (named FLOW.STEP) after them."""
    names = list(entries)
    assert names[:len(NAMES)] == NAMES and all("." in name for name in names[len(NAMES):]), names
    assert names[len(NAMES):len(NAMES) + len(FLOW_STEPS)] == FLOW_STEPS, names
    return {name: entry for name, entry in entries.items() if name in NAMES}
load_features()
SCENARIOS = {s.name: s for s in BUILTIN}
PLAIN = (LLAMA / "plain_text.sse").read_bytes()
SCHEMA = json.loads((ROOT / "docs" / "report-schema.json").read_text())


Proc = subprocess.CompletedProcess[str]


def run(command: str, *args: str, env: dict[str, str] | None = None, timeout: float = 60) -> Proc:
    proc = subprocess.run(
        [sys.executable, "-m", "checker", command, *args], capture_output=True, text=True, cwd=ROOT,
        timeout=timeout, env={**os.environ, "NO_COLOR": "1", "OPENAI_API_KEY": "", **(env or {})},
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stdout
    return proc


def probe_json(*args: str, env: dict[str, str] | None = None) -> tuple[Proc, dict[str, Any]]:
    proc = run("probe", *args, "--format", "json", env=env)
    assert proc.stdout.startswith("{"), proc.stdout[:500] + proc.stderr
    report = json.loads(proc.stdout)
    jsonschema.validate(report, SCHEMA)
    return proc, report


def assert_lint_agrees(probe_report: dict[str, Any], saved: Path, *args: str) -> None:
    """`sse-check lint SAVED` reports, finding by finding, what the probe reported."""
    probed = by_name(probe_report)
    linted = by_name(lint_json(str(saved), *args))
    assert set(linted) == set(probed)
    # A flow's own findings (MOD, TUR, …) are about several requests: its saved record (NAME.flow.json)
    # reproduces them (tests/surface/test_flow_records.py), a step's capture alone cannot.
    own = feature_families()
    for name, entry in probed.items():
        assert linted[name]["findings"] == [f for f in entry["findings"] if f["code"][:3] not in own], name
        assert linted[name]["bytes"] == entry["bytes"], name


def expected_codes(capture: str, profile: str = "openai") -> set[str]:
    return set(json.loads((LLAMA / f"{capture}.expect.json").read_text())[profile])


# --- no server needed ---------------------------------------------------------------------------------------


def test_list_scenarios_needs_no_server(tmp_path: Path) -> None:
    proc = run("probe", "--list-scenarios")
    assert proc.returncode == 0, proc.stderr
    for name in NAMES:
        assert name in proc.stdout
    (tmp_path / "tools_auto.yaml").write_text("input: hi\ntool_choice: auto\n")
    (tmp_path / "plain_text.json").write_text(json.dumps({"request": {"input": "mine"}, "summary": "my own"}))
    proc = run("probe", "--list-scenarios", "--format", "json", "--scenario-file", str(tmp_path), "--api", "responses")
    rows = {row["name"]: row for row in json.loads(proc.stdout)}
    assert list(rows) == [*NAMES, "tools_auto", "models", "tool_turn", "system_message", "assistant_history",
                          "image_input", "file_input", "hosted_web_search", "structured_output",
                          "stored", "tool_choice", "custom_tool", "json_mode", "websocket"]  # the flows after the scenarios
    assert rows["plain_text"]["summary"] == "my own" and rows["plain_text"]["request"]["input"] == "mine"
    assert rows["tools_auto"]["request"] == {"model": "MODEL", "input": "hi", "tool_choice": "auto", "stream": True}
    assert rows["plain_text_nonstream"]["request"]["stream"] is False


@pytest.mark.parametrize("args, message", [
    ((), "needs a BASE_URL"),
    (("http://127.0.0.1:1",), "needs --model"),
    (("ftp://x", "--model", "m"), "not an http(s) base URL"),
    (("http://127.0.0.1:1", "--model", "m", "--scenario", "nope"), "unknown scenario 'nope'"),
    (("http://127.0.0.1:1", "--model", "m", "--header", "no colon"), "expected 'Name: value'"),
    (("http://127.0.0.1:1", "--model", "m", "--api-key-env", "SSE_CHECK_UNSET_VAR"), "is not set"),
    (("http://127.0.0.1:1", "--model", "m", "--scenario-file", "/nonexistent.json"), "no such scenario file"),
])
def test_usage_errors_are_one_line_and_exit_2(args: tuple[str, ...], message: str,
                                              capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SSE_CHECK_UNSET_VAR", raising=False)
    assert main(["probe", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1, err


def test_endpoint_accepts_a_base_url_with_or_without_v1() -> None:
    assert endpoint("http://127.0.0.1:8080") == "http://127.0.0.1:8080/v1/responses"
    assert endpoint("http://127.0.0.1:8080/") == "http://127.0.0.1:8080/v1/responses"
    assert endpoint("http://127.0.0.1:8080/v1") == "http://127.0.0.1:8080/v1/responses"
    assert endpoint("https://api.example.com/openai/v1/") == "https://api.example.com/openai/v1/responses"
    assert endpoint("http://h:1/v1/responses") == "http://h:1/v1/responses"
    with pytest.raises(UsageError):
        endpoint("127.0.0.1:8080")


def test_scenario_files_and_picking(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(json.dumps({"input": "x", "stream": False}))
    (tmp_path / "b.yaml").write_text("request:\n  input: y\nexpect: error\nreplay: [other]\n"
                                     "headers:\n  X-SSE-Check-Fault: status=500\n")
    a, b = load_scenario_files([tmp_path])
    assert (a.name, a.expect, a.stream) == ("a", "nonstream", False)
    assert (b.expect, b.replay_names, b.headers) == ("error", ("other",), (("X-SSE-Check-Fault", "status=500"),))
    assert [s.name for s in pick(suite([a, b]), ["b,plain_text"])] == ["plain_text", "b"]
    (tmp_path / "c.json").write_text("[1]")
    with pytest.raises(UsageError, match="a JSON/YAML object"):
        load_scenario_files([tmp_path / "c.json"])
    (tmp_path / "d.json").write_text(json.dumps({"request": {}, "expect": "maybe"}))
    with pytest.raises(UsageError, match="expect must be one of"):
        load_scenario_files([tmp_path / "d.json"])


def test_secrets_are_masked_in_text_headers_urls_and_split_chunks(tmp_path: Path) -> None:
    secret = "sk-split-secret-0123456789"
    redact = Redactor([secret])
    assert redact.text(f"key {secret}!") == f"key {'*' * len(secret)}!"
    assert redact.url("http://u:pw@h:1/v1") == "http://<redacted>@h:1/v1"
    assert redact.headers([("Authorization", "Bearer x"), ("X-My-Token", "t"), ("Accept", "a")], request=True) == [
        ["Authorization", "<redacted>"], ["X-My-Token", "<redacted>"], ["Accept", "a"]]
    body = b"data: {\"text\":\"" + secret.encode() + b"\"}\n\n"
    sink = BodySink(tmp_path / "x.sse", redact)
    for i in range(len(body)):  # one byte at a time: the secret is split across every boundary
        sink.write(body[i : i + 1])
    assert sink.commit() == tmp_path / "x.sse"
    saved = (tmp_path / "x.sse").read_bytes()
    assert secret.encode() not in saved and len(saved) == len(body)
    assert saved == body.replace(secret.encode(), b"*" * len(secret))
    assert [p.name for p in tmp_path.iterdir()] == ["x.sse"]  # no temporary file left


def test_event_boundaries_and_parity_helpers() -> None:
    assert _at_event_boundary(b"") and _at_event_boundary(b"}\n\n") and _at_event_boundary(b"\r\n\r\n")
    assert not _at_event_boundary(b'"}\n') and not _at_event_boundary(b"data") and not _at_event_boundary(b"x\r")
    streamed = [{"type": "reasoning", "id_prefix": "rs_", "text": "t"},
                {"type": "message", "id_prefix": "msg_", "text": "a"}]
    assert parity_findings(streamed, streamed, terminal="response.completed") == []
    swapped = [dict(streamed[0], text="other"), streamed[1]]
    assert [f.code for f in parity_findings(swapped, streamed, terminal="response.completed")] == ["HTP017"]
    prefix = [streamed[0], dict(streamed[1], id_prefix="message_")]
    assert [f.code for f in parity_findings(prefix, streamed, terminal="response.completed")] == ["HTP016"]


def test_an_exchange_without_meta_limits_or_body_is_judged() -> None:
    meta = {"meta_version": 1, "expect": "stream", "status": None, "ending": {"kind": "connect-error",
            "detail": "Connection refused"}, "url": "http://127.0.0.1:9/v1/responses"}
    linter = ExchangeLinter(meta)
    result = linter.close()
    assert [(f.code, f.message) for f in result.findings] == [
        ("HTP007", "cannot connect to 127.0.0.1:9: Connection refused")]


# --- against the replay server ------------------------------------------------------------------------------


def test_the_conforming_replay_set_is_clean(probe_server: ServerProcess, tmp_path: Path) -> None:
    saved = tmp_path / "saved"
    proc, report = probe_json(probe_server.url, "--model", "gpt-4.1", "--save", str(saved), "--concurrency", "3")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr
    entries = scenario_entries(by_name(report))
    assert report["skipped"] == [] and report["command"] == "probe"
    for name, entry in entries.items():
        assert entry["findings"] == [], (name, entry["findings"])
        assert entry["http"]["replayed_as"] == SCENARIOS[name].replay_names[0]
        assert entry["http"]["partial"] is False
    assert entries["plain_text_nonstream"]["http"]["parity"] == "compared with plain_text"
    assert entries["invalid_model"]["http"]["status"] == 400
    assert entries["plain_text"]["bytes"] == (CAPTURES / "conforming" / "text.sse").stat().st_size
    assert_lint_agrees(report, saved)
    # The saved set is itself replayable: the non-streaming answers are saved as PAIR.nonstream.json too.
    replayable = CAPTURES / "probe" / "plain_text.nonstream.json"
    assert (saved / "plain_text.nonstream.json").read_bytes() == replayable.read_bytes()


def test_llama_captures_show_the_documented_deviations_under_openai(llama_server: ServerProcess,
                                                                    tmp_path: Path) -> None:
    saved = tmp_path / "saved"
    proc, report = probe_json(llama_server.url, "--model", "m", "--profile", "openai", "--save", str(saved),
                              "--concurrency", "4")
    assert proc.returncode == 1, proc.stderr
    entries = scenario_entries(by_name(report))
    for name, entry in entries.items():
        capture = entry["http"]["replayed_as"]
        if SCENARIOS[name].expect == "stream":
            assert codes(entry) == expected_codes(capture), name  # what linting the capture itself says
        elif SCENARIOS[name].expect == "nonstream":
            # In order and in parity with the stream; the answer is llama-server's reduced Response object, so
            # its schema deviations are those its streams' response.completed shows (captures/llama.cpp).
            assert codes(entry) == {"SCH002", "LIF018"}, (name, entry["findings"])
            assert codes(entry) <= expected_codes(capture), name
        else:  # HTTP 400 JSON errors for invalid requests
            assert entry["findings"] == [], (name, entry["findings"])
    assert entries["parallel_calls"]["http"]["replayed_as"] == "replay-turn1"
    assert entries["invalid_model"]["http"]["replayed_as"] == "error_previous_response_id"
    assert_lint_agrees(report, saved, "--profile", "openai")
    # Finding for finding, the streams' verdicts are those of linting the original captures.
    original = by_name(lint_json(str(LLAMA / "plain_text.sse"), str(LLAMA / "reasoning_one_call.sse")))
    for name in ("plain_text", "reasoning_one_call"):
        assert entries[name]["findings"] == original[name]["findings"]


def test_llama_captures_show_nothing_above_info_under_their_profile(llama_server: ServerProcess) -> None:
    proc, report = probe_json(llama_server.url, "--model", "m", "--profile", "llama.cpp", "--concurrency", "4")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr
    for entry in report["files"]:
        loud = [f for f in entry["findings"] if f["severity"] != "info"]
        assert not loud, (entry["path"], loud)
    assert report["summary"]["info"] > 0


def test_text_report_has_a_timing_line_per_scenario_and_a_summary(llama_server: ServerProcess) -> None:
    proc = run("probe", llama_server.url, "--model", "m", "-s", "plain_text,invalid_model", "--profile", "llama.cpp",
               "--api", "responses", "--verbose")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    # --verbose: one line per scenario, in words; the timings in the table at the end.
    assert "ok plain_text  30 events · response.completed · 27 known deviations" in out
    assert "ok invalid_model  HTTP 400 · JSON error, as expected" in out
    assert "ended by no terminal event" not in out and " 0 events" not in out
    table = out[out.index("\nscenario ") + 1:]
    assert table.split("\n")[0].split() == ["scenario", "verdict", "HTTP", "TTFB", "delta", "gap", "total", "e/w/i"]
    assert table.split("\n")[1].split()[:3] == ["plain_text", "ok", "200"]
    assert f"probed {llama_server.url}/v1/responses (model m, profile llama.cpp)" in out
    assert "2 scenario(s): 0 failed at --fail-on warning" in out
    # The known deviations are grouped: one line each, with the count and the events it covers.
    assert "known deviations of profile llama.cpp" in out
    assert re.search(r"×\d+ LIF015 no event carries sequence_number · 1 scenario · on \d+ event types", out)
    assert out.count("no event carries sequence_number") == 1


def test_a_failing_scenario_shows_its_http_facts_and_findings(llama_server: ServerProcess) -> None:
    proc = run("probe", llama_server.url, "--model", "m", "-s", "plain_text", "--profile", "openai", "--verbose")
    assert proc.returncode == 1, proc.stderr
    out = proc.stdout
    # (one known deviation under openai: llama-server's usage lacks cache_write_tokens, as OpenAI's did before
    # mid-2026)
    assert out.startswith("FAIL plain_text  30 events · response.completed · 1 known deviation\n")
    assert "  HTTP 200 text/event-stream · 5669 bytes, 30 events · ended: complete" in out
    assert "  TTFB " in out and "first delta" in out and "largest gap" in out
    assert re.search(r"^  LIF015 warning +1:0 #0 +response.created has no sequence_number$", out, re.M)


# Per-scenario faults (scenario files with an X-SSE-Check-Fault header, all answered from plain_text) and
# what the probe must make of them: (fault, HTTP codes, ending, what is saved).
FAULTS: dict[str, tuple[str, set[str], str, str | int]] = {
    "chunk_size_1": ("chunk-size=1", set(), "complete", "all"),
    "delay": ("delay=20", set(), "complete", "all"),
    "first_byte_delay": ("first-byte-delay=300", set(), "complete", "all"),
    "first_byte_timeout": ("first-byte-delay=6000", {"HTP009"}, "first-byte-timeout", "nothing"),
    "disconnect": ("disconnect-after=300", {"HTP012"}, "disconnect", 300),
    "stall": ("stall-after=300", {"HTP010"}, "idle-timeout", 300),
    "keep_open": ("keep-open=30", {"HTP006"}, "kept-open", "all"),
    "total_timeout": ("delay=500", {"HTP011"}, "total-timeout", "prefix"),
    "content_type": ("content-type=text/plain", {"HTP002"}, "complete", "all"),
    "status_500": ("status=500", {"HTP001"}, "complete", "error"),
    "status_429": ("status=429", {"HTP001"}, "complete", "error"),
    "redirect": ("redirect=/responses", {"HTP014"}, "complete", "all"),
}


def test_every_fault_is_reported_and_nothing_received_is_lost(llama_server: ServerProcess, tmp_path: Path) -> None:
    files = tmp_path / "scenarios"
    files.mkdir()
    body = dict(SCENARIOS["plain_text"].body)
    for name, (fault, *_rest) in FAULTS.items():
        (files / f"{name}.json").write_text(json.dumps(
            {"request": body, "replay": ["plain_text"], "headers": {"X-SSE-Check-Fault": fault}}))
    saved = tmp_path / "saved"
    proc, report = probe_json(
        llama_server.url, "--model", "m", "--profile", "llama.cpp", "--scenario-file", str(files),
        "--scenario", ",".join(FAULTS), "--save", str(saved), "--concurrency", str(len(FAULTS)),
        "--first-byte-timeout", "2", "--idle-timeout", "1.5", "--close-timeout", "0.5", "--total-timeout", "4",
        "--retries", "0",  # one answer per fault here (the retries of a 429 or 500: test_probe_retry.py)
    )
    assert proc.returncode == 1, proc.stderr
    entries = by_name(report)
    assert set(entries) == set(FAULTS)
    plain = by_name(lint_json(str(LLAMA / "plain_text.sse"), "--profile", "llama.cpp"))["plain_text"]
    for name, (fault, http_codes, ending, kept) in FAULTS.items():
        entry = entries[name]
        found = {c for c in codes(entry) if c.startswith("HTP")}
        assert found == http_codes, (name, entry["findings"])
        meta = json.loads((saved / f"{name}.meta.json").read_text())
        assert meta["ending"]["kind"] == ending, (name, meta["ending"])
        assert entry["http"]["ending"]["kind"] == ending
        data = (saved / f"{name}.sse").read_bytes()
        assert meta["bytes"] == len(data) == entry["bytes"]
        assert meta["partial"] is (ending not in ("complete", "kept-open")), name
        if kept == "all":
            assert data == PLAIN, name
            # The stream itself is judged exactly as linting the capture: no event lost, none invented.
            stream_findings = [f for f in entry["findings"] if not f["code"].startswith("HTP")]
            assert stream_findings == plain["findings"], name
        elif kept == "prefix":
            assert 0 < len(data) < len(PLAIN) and data == PLAIN[: len(data)], name
        elif kept == "nothing":
            assert data == b"" and meta["status"] is None, name
        elif kept == "error":
            assert json.loads(data)["error"]["type"] and meta["status"] == int(fault.split("=")[1])
        else:
            assert data == PLAIN[:kept], name
    stalled = next(f for f in entries["stall"]["findings"] if f["code"] == "HTP010")
    assert stalled["message"] == "the stream stalled: no bytes for 1.5 s after byte 300 (idle timeout)"
    assert stalled["position"]["byte"] == 300
    assert {"SSE004", "LIF006"} <= codes(entries["disconnect"])
    assert "Retry-After: 1" in next(f["message"] for f in entries["status_429"]["findings"] if f["code"] == "HTP001")
    assert entries["first_byte_delay"]["http"]["timings"]["headers"] >= 0.3
    assert entries["delay"]["http"]["timings"]["largest_gap"] >= 0.015
    assert entries["keep_open"]["http"]["timings"]["total"] < 4  # the probe did not wait 30 s
    assert_lint_agrees(report, saved, "--profile", "llama.cpp")


def test_caps_stop_reading_and_lint_agrees_under_the_recorded_caps(llama_server: ServerProcess, tmp_path: Path) -> None:
    reports = {}
    for cap, value in (("--max-bytes", "1000"), ("--max-events", "5")):
        saved = tmp_path / cap.strip("-")
        proc, report = probe_json(llama_server.url, "--model", "m", "-s", "plain_text", "--profile", "llama.cpp",
                                  "--save", str(saved), cap, value, "-H", "X-SSE-Check-Fault: chunk-size=100")
        assert proc.returncode == 1, proc.stderr
        (entry,) = report["files"]
        assert "SSE027" in codes(entry)
        assert entry["http"]["ending"]["kind"] == ("byte-cap" if cap == "--max-bytes" else "event-cap")
        data = (saved / "plain_text.sse").read_bytes()
        assert data == PLAIN[: len(data)] and len(data) < len(PLAIN)
        assert_lint_agrees(report, saved, "--profile", "llama.cpp")  # lint's own limits are the defaults
        reports[cap] = report
    assert reports["--max-bytes"]["files"][0]["http"]["bytes"] == 1100  # all received bytes are kept


def test_an_unreachable_server_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """Nothing listening is one fact: said once after the first failed connect, not one HTP007 per scenario."""
    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens there
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    saved = tmp_path / "saved"
    for fmt in ("text", "json"):
        proc = run("probe", f"http://127.0.0.1:{port}", "--model", "m", "-s", "plain_text,invalid_model",
                   "--save", str(saved), "--format", fmt)
        assert proc.returncode == 2
        url = f"http://127.0.0.1:{port}/v1/responses"
        assert proc.stderr == (f"sse-check: cannot connect to {url}: Connection refused "
                               "(is the server running, on this port?)\n")
        assert proc.stdout == ""


def test_a_scenario_the_replay_server_has_no_capture_for_is_skipped(serve: Any) -> None:
    server = serve(str(LLAMA / "plain_text.sse"))
    proc, report = probe_json(server.url, "--model", "m", "-s", "plain_text,parallel_calls", "--profile", "llama.cpp")
    assert proc.returncode == 0, proc.stderr
    assert [e["path"] for e in report["files"]] == ["plain_text"]
    assert report["skipped"] == [{"scenario": "parallel_calls", "reason": "the replay server has no capture for "
                                  "this scenario (tried parallel_calls, replay-turn1)"}]
    proc = run("probe", server.url, "--model", "m", "-s", "parallel_calls")
    assert proc.returncode == 2 and "nothing probed" in proc.stderr


SECRET_KEY = "sk-probe-secret-key-0123456789"
SECRET_HEADER = "hdr-secret-value-abcdef"
SECRET_URL = "url-secret-pw-98765"


def test_secrets_never_appear_in_output_or_saved_files(serve: Any, tmp_path: Path) -> None:
    # A server that echoes the API key in its stream (as some error messages do): the capture holds it.
    captures = tmp_path / "captures"
    captures.mkdir()
    text = (CAPTURES / "conforming" / "text.sse").read_bytes()
    assert text.count(b" French") > 1
    (captures / "echo.sse").write_bytes(text.replace(b" French", b" " + SECRET_KEY.encode()))
    server = serve(str(captures))
    (tmp_path / "echo.json").write_text(json.dumps({"request": {"input": "x"}, "replay": ["echo"],
                                                    "headers": {"X-Scenario-Token": "tok-" + SECRET_HEADER}}))
    url = server.url.replace("http://", f"http://user:{SECRET_URL}@") + "/v1"
    saved = tmp_path / "saved"
    env = {"SSE_CHECK_TEST_KEY": SECRET_KEY}
    common = ("--model", "m", "--api-key-env", "SSE_CHECK_TEST_KEY", "--header", f"X-Api-Key: {SECRET_HEADER}",
              "--scenario-file", str(tmp_path / "echo.json"), "--save", str(saved))
    text_run = run("probe", url, *common, "-s", "echo", env=env)
    json_run, report = probe_json(url, *common, "-s", "echo", env=env)
    outputs = [text_run.stdout, text_run.stderr, json_run.stdout, json_run.stderr]
    outputs += [p.read_text(errors="replace") for p in saved.iterdir()]
    for secret in (SECRET_KEY, SECRET_HEADER, SECRET_URL):
        for output in outputs:
            assert secret not in output
    meta = json.loads((saved / "echo.meta.json").read_text())
    sent = dict(meta["request_headers"])
    assert sent["Authorization"] == sent["X-Api-Key"] == sent["X-Scenario-Token"] == "<redacted>"
    assert meta["url"].startswith("http://<redacted>@127.0.0.1:")
    assert (saved / "echo.sse").read_bytes() == text.replace(b" French", b" " + b"*" * len(SECRET_KEY))
    assert_lint_agrees(report, saved)


def test_the_docs_name_every_scenario_rule_flag_and_ending() -> None:
    import argparse

    from checker.http_checks import ENDINGS
    from checker.commands import probe as probe_command
    from checker.rules import RULES

    doc = (ROOT / "docs" / "probe.md").read_text()
    from checker.commands.common import add_engine_arguments

    def long_flags(add: Any) -> set[str]:
        parser = argparse.ArgumentParser()
        add(parser)
        return {opt for action in parser._actions for opt in action.option_strings if opt.startswith("--")}

    flags = long_flags(probe_command.add_arguments) - long_flags(add_engine_arguments)  # lint's are lint's docs
    for word in [*NAMES, *(c for c in RULES if c.startswith("HTP")), *flags - {"--help"}, *ENDINGS]:
        assert f"`{word}" in doc or f"| {word} |" in doc or f"{word}`" in doc, word
    readme = (ROOT / "README.md").read_text()
    assert "## Check a live server" in readme and "llama-server -m model.gguf --jinja --port 8080" in readme
    assert "llama-server -m model.gguf --jinja --port 8080" in doc
    assert "sse-check probe http://127.0.0.1:8080 --model X" in doc


def test_a_probe_of_the_saved_real_llama_server_probe_is_its_lint(serve: Any, tmp_path: Path) -> None:
    """captures/llama.cpp-probe is what a probe of the real llama-server saved; served back (status, headers
    and bytes from its meta, and the connection closed after each stream as llama-server closed it: HTP019), a
    probe gives the real server's verdict, and that is lint's on both saves."""
    recorded = ROOT / "captures" / "llama.cpp-probe"
    server = serve(str(recorded))
    for profile, loud_expected in (("llama.cpp", {}), ("openai", None)):
        saved = tmp_path / profile
        proc, report = probe_json(server.url, "--model", "tiny-qwen3-random", "--profile", profile,
                                  "--api", "responses", "--save", str(saved),
                                  "-s", ",".join(NAMES))  # the scenarios it recorded
        entries = by_name(report)
        assert sorted(entries) == sorted(NAMES)
        loud = {n: sorted(f["code"] for f in e["findings"] if f["severity"] != "info") for n, e in entries.items()}
        if loud_expected is not None:
            assert {n: c for n, c in loud.items() if c} == loud_expected and proc.returncode == 0
        else:
            assert "HTP005" in loud["invalid_model"] and proc.returncode == 1
        for name, entry in entries.items():
            declared = set(json.loads((recorded / f"{name}.expect.json").read_text())[profile])
            assert codes(entry) == declared, name
        assert_lint_agrees(report, saved, "--profile", profile)
        # the recording itself lints as the probe of its replay does (timings aside, the same findings)
        top = [str(p) for p in sorted(recorded.glob("*.sse"))]  # its chat/ and messages/: the next test
        assert {n: codes(e) for n, e in by_name(lint_json(*top, "--profile", profile)).items()} == \
            {n: codes(e) for n, e in entries.items()}
    # close=no serves the same answers over a connection that is kept: HTP019 goes, nothing else changes
    _, kept = probe_json(server.url, "--model", "tiny-qwen3-random", "--profile", "openai", "--api", "responses",
                         "-s", "plain_text", "-H", "X-SSE-Check-Fault: close=no")
    assert codes(kept["files"][0]) == set(json.loads((recorded / "plain_text.expect.json").read_text())["openai"]) \
        - {"HTP019"}


def test_a_probe_of_the_saved_real_llama_servers_other_endpoints_is_their_lint(serve: Any, tmp_path: Path) -> None:
    """captures/llama.cpp-probe/chat and /messages served back: a probe of both endpoints (what make demo runs)
    gives the declared findings of each saved exchange, all documented by the llama.cpp profile but one real
    defect (/v1/messages takes `messages` given as an object), and lint of its save agrees."""
    recorded = ROOT / "captures" / "llama.cpp-probe"
    server = serve(str(recorded))
    saved = tmp_path / "saved"
    proc, report = probe_json(server.url, "--model", "tiny-qwen3-random", "--profile", "llama.cpp",
                              "--api", "chat,messages", "--save", str(saved), "-s", ",".join(NAMES))  # no flows
    entries = {entry["path"]: entry for entry in report["files"]}
    assert len(entries) == 20 and report["skipped"] == []
    for name, entry in entries.items():
        declared = set(json.loads((recorded / f"{name}.expect.json").read_text())["llama.cpp"])
        assert codes(entry) == declared, name
    loud = {n: [f["code"] for f in e["findings"] if f["severity"] != "info"] for n, e in entries.items()}
    assert {n: c for n, c in loud.items() if c} == {"messages/malformed_input": ["HTP005"]}
    assert proc.returncode == 1
    linted = lint_json(str(saved), "--profile", "llama.cpp")["files"]
    assert {Path(e["path"]).relative_to(saved).as_posix().removesuffix(".sse"): e["findings"] for e in linted} == \
        {n: e["findings"] for n, e in entries.items()}


def test_a_non_streaming_answer_is_checked_as_a_response_object(serve: Any, tmp_path: Path) -> None:
    """A stream: false answer in parity with its stream is still checked against the Response schema and the
    final-form checks of its items: a reasoning item whose content holds an output_text part is reported."""
    served = tmp_path / "served"
    served.mkdir()
    probe_set = CAPTURES / "probe"
    (served / "reasoning_one_call.sse").write_bytes((probe_set / "reasoning_one_call.sse").read_bytes())
    answer = json.loads((probe_set / "reasoning_one_call.nonstream.json").read_text())
    reasoning = answer["output"][0]
    assert reasoning["type"] == "reasoning"
    reasoning["content"] = [{"type": "output_text", "text": reasoning["content"][0]["text"], "annotations": []}]
    (served / "reasoning_one_call.nonstream.json").write_text(json.dumps(answer))
    server = serve(str(served))
    saved = tmp_path / "saved"
    proc, report = probe_json(server.url, "--model", "gpt-4.1", "-s", "reasoning_one_call,reasoning_one_call_nonstream",
                              "--save", str(saved))
    entries = by_name(report)
    assert entries["reasoning_one_call"]["findings"] == []
    found = entries["reasoning_one_call_nonstream"]["findings"]
    assert {f["code"] for f in found} == {"SCH003"}, found
    assert all(f["pointer"].startswith("/output/0/content/0") for f in found), found
    assert proc.returncode == 1
    assert_lint_agrees(report, saved)
