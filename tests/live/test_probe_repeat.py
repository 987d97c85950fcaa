"""``sse-check probe --repeat N`` against real ``sse-check serve`` processes on loopback.

A steady server: every run has the same verdict (no RPT001), the latency percentiles are the nearest-rank
percentiles of the timings each run saved in ``DIR/rK/NAME.meta.json``, and each run's folder lints to that
run's findings. A flaky server (``--status 500 --every 2``: runs 2 and 4 fail): RPT001 names those runs. A
server that fails every time the same way is not flaky.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

from tests.live.conftest import LLAMA_CAPTURES, ServerProcess, sse_check

COMMON = ("--model", "tiny-qwen3", "--profile", "llama.cpp", "--api", "responses", "--scenario", "plain_text",
          "--no-progress")


def nearest_rank(values: list[float], p: int) -> float:
    return sorted(values)[math.ceil(p / 100 * len(values)) - 1]


def test_a_steady_server_gets_percentiles_and_a_folder_per_run(
        serve: Callable[..., ServerProcess], tmp_path: Path) -> None:
    server = serve(str(LLAMA_CAPTURES), "--delay", "3")  # 3 ms between events: a gap worth measuring
    report = tmp_path / "report.json"
    saved = tmp_path / "saved"
    proc = sse_check("probe", server.url, *COMMON, "--repeat", "5", "--save", str(saved), "--format", "json",
                     "-o", str(report))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads(report.read_text())
    repeat = doc["repeat"]
    assert (repeat["runs"], repeat["concurrency"], repeat["percentiles"]) == (5, 1, "nearest-rank")
    [row] = repeat["scenarios"]
    assert row["scenario"] == "plain_text" and row["flaky"] is None
    assert [v["failed"] for v in row["verdicts"]] == [False] * 5
    metas = [json.loads((saved / f"r{k}" / "plain_text.meta.json").read_text()) for k in range(1, 6)]
    for key in ("first_byte", "first_delta", "largest_gap", "total"):
        values = [m["timings"][key] for m in metas]
        stats = row["latency"][key]
        assert stats["runs"] == 5
        for p in (50, 95, 99):
            assert math.isclose(stats[f"p{p}"], nearest_rank(values, p), abs_tol=1e-5), (key, p)
        assert stats["p50"] <= stats["p95"] <= stats["p99"]
    assert row["latency"]["largest_gap"]["p50"] >= 0.002  # the server's delay is seen
    # every inter-event gap of the five runs is pooled: events - 1 per run, most of them the server's 3 ms
    gap = row["latency"]["gap"]
    assert gap["runs"] == 5 and gap["count"] == sum(m["events"] - 1 for m in metas)
    assert 0.002 <= gap["p50"] <= gap["p95"] <= gap["p99"] <= row["latency"]["largest_gap"]["p99"] + 1e-6
    # every run is in the report under NAME #k, and its folder lints to the same findings
    assert [f["path"] for f in doc["files"]] == [f"plain_text #{k}" for k in range(1, 6)]
    lint = sse_check("lint", str(saved / "r3"), "--profile", "llama.cpp", "--format", "json")
    [linted] = json.loads(lint.stdout)["files"]
    third = doc["files"][2]
    assert sorted(f["code"] for f in linted["findings"]) == sorted(f["code"] for f in third["findings"])


def test_the_text_report_has_the_latency_table_in_80_columns(
        serve: Callable[..., ServerProcess]) -> None:
    server = serve(str(LLAMA_CAPTURES))
    proc = sse_check("probe", server.url, *COMMON, "--repeat", "3", "--concurrency", "2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert "latency over 3 runs at concurrency 2, ms, p50/p95/p99 (nearest rank):" in lines
    header = next(line for line in lines if line.startswith("scenario ") and "TTFB" in line)
    assert header.split() == ["scenario", "TTFB", "first", "delta", "gap", "total"]
    row = next(line for line in lines if line.startswith("plain_text ") and line.count("/") == 8)
    assert len(row.split()) == 5
    assert "every scenario had the same verdict in all 3 runs" in lines
    assert max(len(line) for line in lines) <= 80


def test_a_verdict_that_changes_between_runs_is_rpt001(serve: Callable[..., ServerProcess], tmp_path: Path) -> None:
    server = serve(str(LLAMA_CAPTURES), "--status", "500", "--every", "2")  # requests 2 and 4 fail
    report = tmp_path / "report.json"
    # --retries 0: one request per run (a retry would be the next request, which this server answers)
    proc = sse_check("probe", server.url, *COMMON, "--retries", "0", "--repeat", "4", "--format", "json",
                     "-o", str(report))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    [row] = json.loads(report.read_text())["repeat"]["scenarios"]
    flaky = row["flaky"]
    assert flaky["code"] == "RPT001"
    assert [d["run"] for d in flaky["details"]["differing"]] == [2, 4]
    assert all(d["status"] == 500 and d["failed"] for d in flaky["details"]["differing"])
    assert "run 2: failed" in flaky["message"] and "run 4: failed" in flaky["message"]
    assert [v["status"] for v in row["verdicts"]] == [200, 500, 200, 500]
    text = sse_check("probe", server.url, *COMMON, "--retries", "0", "--repeat", "4")  # requests 5-8: 6, 8 fail
    assert text.returncode == 1
    assert any(line.startswith("warning  RPT001 flaky-verdict: plain_text: the verdict changed")
               for line in text.stdout.splitlines()), text.stdout
    ignored = sse_check("probe", server.url, *COMMON, "--retries", "0", "--repeat", "2", "--ignore", "RPT,HTP001",
                        "--format", "json")
    assert json.loads(ignored.stdout)["repeat"]["scenarios"][0]["flaky"] is None


def test_failing_the_same_way_every_run_is_not_flaky(serve: Callable[..., ServerProcess], tmp_path: Path) -> None:
    server = serve(str(LLAMA_CAPTURES), "--status", "500")
    proc = sse_check("probe", server.url, *COMMON, "--repeat", "3", "--format", "json")
    assert proc.returncode == 1
    [row] = json.loads(proc.stdout)["repeat"]["scenarios"]
    assert row["flaky"] is None and [v["status"] for v in row["verdicts"]] == [500] * 3


def test_repeat_refuses_what_it_cannot_do(serve: Callable[..., ServerProcess]) -> None:
    proc = sse_check("probe", "http://127.0.0.1:9", *COMMON, "--repeat", "2", "--transport", "websocket")
    assert proc.returncode == 2 and "--repeat applies to the scenarios over SSE" in proc.stderr
    proc = sse_check("probe", "http://127.0.0.1:9", *COMMON, "--repeat", "0")
    assert proc.returncode == 2 and "must be at least 1" in proc.stderr
