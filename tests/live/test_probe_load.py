"""``sse-check probe --repeat N --concurrency 1,C`` against real ``sse-check serve`` processes on loopback: how
verdicts and latencies change with the load.

A server that answers 503 to a request arriving while another is being answered (``--busy 1``) passes every
run at concurrency 1 and fails some at 4: RPT002 names the level, the verdict and the runs. A server without
that fault has the same verdicts at every level: no RPT002. Each level's runs are saved in their own folders.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.live.conftest import LLAMA_CAPTURES, ServerProcess, sse_check

COMMON = ("--model", "tiny-qwen3", "--profile", "llama.cpp", "--api", "responses", "--scenario", "plain_text",
          "--no-progress")


def test_a_server_that_fails_only_under_load_is_rpt002(serve: Callable[..., ServerProcess], tmp_path: Path) -> None:
    # 20 ms between events: a stream lasts about half a second, so four requests sent at once overlap
    server = serve(str(LLAMA_CAPTURES), "--status", "503", "--busy", "1", "--delay", "20")
    report, saved = tmp_path / "report.json", tmp_path / "saved"
    proc = sse_check("probe", server.url, *COMMON, "--retries", "0", "--repeat", "4", "--concurrency", "1,4",
                     "--save", str(saved), "--format", "json", "-o", str(report))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    doc = json.loads(report.read_text())
    repeat = doc["repeat"]
    assert repeat["concurrency"] == 1 and [level["concurrency"] for level in repeat["levels"]] == [1, 4]
    alone, loaded = (level["scenarios"][0] for level in repeat["levels"])
    assert [v["status"] for v in alone["verdicts"]] == [200] * 4 and alone["flaky"] is None
    assert repeat["scenarios"] == repeat["levels"][0]["scenarios"]
    statuses = [v["status"] for v in loaded["verdicts"]]
    assert statuses.count(200) == 1 and statuses.count(503) == 3, statuses  # the first to arrive is served
    assert loaded["latency"]["total"]["runs"] == 1  # the refusals are not the server's latency
    [load] = repeat["load"]
    assert load["code"] == "RPT002" and load["severity"] == "warning"
    [under] = load["details"]["under_load"]
    assert under["concurrency"] == 4 and under["status"] == 503 and under["failed"] is True
    assert under["runs"] == [k + 1 for k, s in enumerate(statuses) if s == 503]
    assert load["details"]["base"]["concurrency"] == 1 and load["details"]["base"]["status"] == 200
    assert "a verdict seen only under load, never in 4 runs at concurrency 1" in load["message"]
    # every exchange reported, named by level and run; saved in a folder per level and run
    assert [f["path"] for f in doc["files"]] == [f"plain_text @{c} #{k}" for c in (1, 4) for k in range(1, 5)]
    for c in (1, 4):
        for k in range(1, 5):
            meta = json.loads((saved / f"c{c}" / f"r{k}" / "plain_text.meta.json").read_text())
            assert meta["status"] == (200 if c == 1 else statuses[k - 1])


def test_the_text_report_compares_the_levels_in_80_columns(serve: Callable[..., ServerProcess]) -> None:
    server = serve(str(LLAMA_CAPTURES), "--status", "503", "--busy", "1", "--delay", "20")
    proc = sse_check("probe", server.url, *COMMON, "--retries", "0", "--repeat", "3", "--concurrency", "1,3")
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert "latency over 3 runs at each concurrency (1, 3), ms, p50/p95/p99 (nearest rank):" in lines
    header = next(line for line in lines if line.startswith("scenario ") and "TTFB" in line)
    assert header.split() == ["scenario", "C", "TTFB", "first", "delta", "gap", "total"]
    assert [line.split()[1] for line in lines if line.startswith("plain_text ") and line.count("/") == 8] == ["1", "3"]
    assert any(line.startswith("warning  RPT002 load-dependent-verdict: plain_text: a verdict seen only under")
               for line in lines), proc.stdout
    assert max(len(line) for line in lines) <= 80


def test_a_server_steady_under_load_has_no_rpt002(serve: Callable[..., ServerProcess], tmp_path: Path) -> None:
    server = serve(str(LLAMA_CAPTURES), "--delay", "5")
    proc = sse_check("probe", server.url, *COMMON, "--repeat", "2", "--concurrency", "1,2", "--format", "json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    repeat = json.loads(proc.stdout)["repeat"]
    assert repeat["load"] == [] and [lv["concurrency"] for lv in repeat["levels"]] == [1, 2]
    for level in repeat["levels"]:
        [row] = level["scenarios"]
        assert row["flaky"] is None and row["latency"]["gap"]["count"] > 0
    text = sse_check("probe", server.url, *COMMON, "--concurrency", "1,2")  # one run per level is enough
    assert text.returncode == 0 and "no verdict appeared only under load" in text.stdout.splitlines()


def test_concurrency_levels_are_checked(serve: Callable[..., ServerProcess]) -> None:
    for bad in ("0", "1,x", ","):
        proc = sse_check("probe", "http://127.0.0.1:9", *COMMON, "--concurrency", bad)
        assert proc.returncode == 2 and "--concurrency" in proc.stderr, (bad, proc.stderr)
