"""The probe retries a refused request as the SDK would, against real ``sse-check serve`` processes on loopback.

``--first N`` makes the server refuse its first N requests and answer the later ones: a 429 with Retry-After
(waited as given), a 429 without (the SDK's backoff, and HTP023 on the first answer), a 503, a Retry-After
date; a server still refusing after the retry; a delay too long to wait. Every answer is reported with its
findings and saved (the first as ``NAME.try1.sse``), and ``sse-check lint`` of the folder agrees.
"""

from __future__ import annotations

import email.utils
import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.live.conftest import LLAMA_CAPTURES, ServerProcess, sse_check

COMMON = ("--model", "tiny-qwen3", "--profile", "llama.cpp", "--api", "responses", "--scenario", "plain_text",
          "--no-progress")


def probe_json(url: str, saved: Path, *args: str) -> tuple[dict, float]:
    start = time.monotonic()
    proc = sse_check("probe", url, *COMMON, "--save", str(saved), "--format", "json", *args)
    took = time.monotonic() - start
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    return json.loads(proc.stdout), took


def codes(entry: dict) -> list[str]:
    return sorted({f["code"] for f in entry["findings"]} - {"LIF015", "ITM001", "CNT001", "SCH008", "SCH002",
                                                             "LIF018", "SCH004"})  # llama.cpp's known deviations


def lint_codes(saved: Path) -> dict[str, list[str]]:
    lint = sse_check("lint", str(saved), "--profile", "llama.cpp", "--format", "json")
    return {Path(f["path"]).name: codes(f) for f in json.loads(lint.stdout)["files"]}


@pytest.mark.parametrize("status, fault, basis, wait, first_codes", [
    ("429", (), "Retry-After 1 s honoured", 1.0, ["HTP025"]),
    ("429", ("--retry-after", "none"), "no Retry-After: openai-python's backoff, 500 ms", 0.5,
     ["HTP023", "HTP025"]),
    ("503", (), "Retry-After 1 s honoured", 1.0, ["HTP025"]),
    ("502", (), "no Retry-After: openai-python's backoff, 500 ms", 0.5, ["HTP025"]),
])
def test_a_refused_request_is_retried_after_the_wait_and_both_answers_are_kept(
        serve: Callable[..., ServerProcess], tmp_path: Path, status: str, fault: tuple[str, ...], basis: str,
        wait: float, first_codes: list[str]) -> None:
    server = serve(str(LLAMA_CAPTURES), "--status", status, "--first", "1", *fault)
    saved = tmp_path / "saved"
    doc, took = probe_json(server.url, saved)
    first, last = doc["files"]
    assert (first["path"], last["path"]) == ("plain_text (try 1)", "plain_text")
    assert first["http"]["status"] == int(status) and codes(first) == first_codes  # its findings count
    assert last["http"]["status"] == 200 and codes(last) == []
    retry = last["http"]["retry"]
    assert retry["line"] == f"{status}, {basis}, retried: 200"
    assert retry["after"] == [{"status": int(status), "wait": wait, "basis": basis, "saved": "plain_text.try1.sse"}]
    assert took >= wait  # it did wait
    # the first answer is HTP025 (info: the SDK retries it, the caller never sees it), not a failure by itself;
    # a 429 without a delay is HTP023 (a warning) all the same
    assert doc["summary"]["error"] == 0 and doc["summary"]["failed_files"] == ("HTP023" in first_codes)
    # both saved; the lint of the folder gives each its findings; the metas say what happened
    assert lint_codes(saved) == {"plain_text.try1.sse": first_codes, "plain_text.sse": []}
    meta1 = json.loads((saved / "plain_text.try1.meta.json").read_text())
    assert meta1["status"] == int(status) and meta1["retry"]["then"] == "retried" and meta1["retry"]["wait"] == wait
    assert json.loads((saved / "plain_text.meta.json").read_text())["retry"]["attempt"] == 2
    text = sse_check("probe", server.url, *COMMON, "--retries", "1")  # --first 1 is used up: nothing to retry
    assert text.returncode == 0 and "retried" not in text.stdout


def test_a_retry_after_date_is_waited_until(serve: Callable[..., ServerProcess], tmp_path: Path) -> None:
    when = email.utils.formatdate(time.time() + 8, usegmt=True)  # whole seconds, and the server takes a while
    server = serve(str(LLAMA_CAPTURES), "--status", "429", "--first", "1", "--retry-after", when)
    doc, took = probe_json(server.url, tmp_path / "saved")
    first, last = doc["files"]
    retry = last["http"]["retry"]
    assert retry["line"].startswith(f"429, Retry-After {when} (in ") and retry["line"].endswith("honoured, retried: 200")
    assert 0.5 <= retry["after"][0]["wait"] <= 8.0 and took >= retry["after"][0]["wait"]
    assert codes(first) == ["HTP025"] and last["http"]["status"] == 200


def test_a_server_still_refusing_after_the_retry_is_said_plainly(
        serve: Callable[..., ServerProcess], tmp_path: Path) -> None:
    server = serve(str(LLAMA_CAPTURES), "--status", "429", "--first", "2")
    saved = tmp_path / "saved"
    doc, _ = probe_json(server.url, saved)
    first, last = doc["files"]
    assert first["http"]["status"] == last["http"]["status"] == 429
    line = last["http"]["retry"]["line"]
    assert line == ("429, Retry-After 1 s honoured, retried: 429 again, not retried: Retry-After 1 s; "
                    "no retry left (--retries 1) (the retry failed too)")
    assert sorted(p.name for p in saved.iterdir()) == ["plain_text.meta.json", "plain_text.sse",
                                                       "plain_text.try1.meta.json", "plain_text.try1.sse"]
    text = sse_check("probe", server.url, *COMMON)  # request 3: served
    assert text.returncode == 0


def test_the_text_report_says_what_happened(serve: Callable[..., ServerProcess]) -> None:
    server = serve(str(LLAMA_CAPTURES), "--status", "503", "--first", "1")
    proc = sse_check("probe", server.url, *COMMON, "--verbose")
    assert proc.returncode == 0, proc.stdout  # the 503 is retried as the SDK retries it: HTP025, not a failure
    lines = proc.stdout.splitlines()
    assert any(line.startswith("ok plain_text (try 1)") for line in lines)
    assert any("HTP025 info" in line for line in lines)
    assert "  503, Retry-After 1 s honoured, retried: 200" in lines
    assert max(len(line) for line in lines) <= 80


def test_a_delay_beyond_what_the_sdk_waits_is_not_retried(serve: Callable[..., ServerProcess]) -> None:
    server = serve(str(LLAMA_CAPTURES), "--status", "429", "--first", "1", "--retry-after", "3600")
    start = time.monotonic()
    proc = sse_check("probe", server.url, *COMMON, "--format", "json")
    assert time.monotonic() - start < 30
    [entry] = json.loads(proc.stdout)["files"]
    assert entry["http"]["status"] == 429
    assert entry["http"]["retry"]["line"] == ("429, not retried: Retry-After 3600 s is more than the 120 s "
                                              "openai-python waits: it does not retry")
    assert entry["http"]["retry"]["then"] == "not retried"


def test_retries_zero_keeps_the_first_answer_alone(serve: Callable[..., ServerProcess]) -> None:
    server = serve(str(LLAMA_CAPTURES), "--status", "429", "--first", "1")
    proc = sse_check("probe", server.url, *COMMON, "--retries", "0", "--format", "json")
    [entry] = json.loads(proc.stdout)["files"]
    assert entry["http"]["status"] == 429 and "retry" not in entry["http"]
    assert sse_check("probe", server.url, *COMMON, "--retries", "-1").returncode == 2


def test_a_flows_step_is_retried_as_a_scenario_is(serve: Callable[..., ServerProcess], tmp_path: Path) -> None:
    server = serve(str(LLAMA_CAPTURES.parent / "llama.cpp-probe"), "--status", "429", "--first", "1")
    saved = tmp_path / "saved"
    proc = sse_check("probe", server.url, "--model", "tiny-qwen3", "--profile", "llama.cpp", "--scenario",
                     "tool_turn", "--no-progress", "--save", str(saved), "--format", "json")
    assert proc.returncode == 0, proc.stdout + proc.stderr  # the refusal was absorbed: the flow went on
    files = {f["path"]: f for f in json.loads(proc.stdout)["files"]}
    first, last = files["tool_turn.call (try 1)"], files["tool_turn.call"]
    assert first["http"]["status"] == 429 and codes(first) == ["HTP025"]
    assert last["http"]["status"] == 200 and last["http"]["retry"]["line"] == "429, Retry-After 1 s honoured, retried: 200"
    assert (saved / "tool_turn.call.try1.sse").exists() and (saved / "tool_turn.call.sse").exists()
    assert lint_codes(saved)["tool_turn.call.try1.sse"] == ["HTP025"]
