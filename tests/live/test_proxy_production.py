"""The proxy in production (issue 19, items 8-10): observable, never in the way, no leak.

Everything runs for real: ``sse-check serve captures/llama.cpp`` as the upstream (with its fault injection,
``X-SSE-Check-Fault``), the real ``sse-check proxy`` process in front, httpx and openai-python as clients,
and the metrics endpoint scraped over HTTP and parsed with prometheus_client's own text parser. No timing
is asserted (the CPU is shared); the load figures are ``make bench``'s.
"""

from __future__ import annotations

import json
import re
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import openai
import pytest
from prometheus_client.parser import text_string_to_metric_families

if TYPE_CHECKING:
    from conftest import ServerProcess

ROOT = Path(__file__).resolve().parents[2]
LLAMA = ROOT / "captures" / "llama.cpp"
NAMES = sorted(path.stem for path in LLAMA.glob("*.sse"))
SSE = {name: (LLAMA / f"{name}.sse").read_bytes() for name in NAMES}
METRICS_LINE = re.compile(r"metrics on (http://\S+/metrics)")


def request_body(name: str) -> dict[str, Any]:
    return json.loads((LLAMA / f"{name}.request.json").read_text())


def endpoint(name: str) -> str:
    return "/v1/chat/completions" if "messages" in request_body(name) else "/v1/responses"


def post(base: str, name: str, fault: str | None = None) -> httpx.Response:
    headers = {"X-SSE-Check-Scenario": name}
    if fault:
        headers["X-SSE-Check-Fault"] = fault
    with httpx.Client(base_url=base, timeout=20) as client:
        return client.post(endpoint(name), json=request_body(name), headers=headers)


def metrics_url(px: ServerProcess) -> str:
    match = METRICS_LINE.search(px.stderr())
    assert match, px.stderr()
    return match.group(1)


def scrape(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """GET /metrics and parse it as Prometheus does: {(sample name, sorted labels): value}."""
    text = httpx.get(url, timeout=10).text
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def total(samples: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str) -> float:
    return sum(v for (n, ls), v in samples.items() if n == name and all((k, labels[k]) in ls for k in labels))


def wait_for(predicate: Callable[[], bool], timeout: float = 30) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


# --- 10. observable --------------------------------------------------------------------------------------


def test_the_metrics_endpoint_counts_what_the_report_says(llama_server: ServerProcess,
                                                          proxy: Callable[..., ServerProcess],
                                                          tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    px = proxy(llama_server.url, "--metrics", "127.0.0.1:0", "--format", "json", "-o", str(report), "--quiet")
    url = metrics_url(px)
    before = scrape(url)
    assert total(before, "sse_check_proxy_answers_checked_total") == 0
    for name in NAMES:
        assert post(px.url, name).content == SSE[name]
    httpx.get(px.url + "/v1/models", timeout=10)
    assert wait_for(lambda: total(scrape(url), "sse_check_proxy_answers_checked_total") == len(NAMES))
    samples = scrape(url)
    assert px.stop(signal.SIGINT) in (0, 1)
    document = json.loads(report.read_text())
    files = document["files"]
    assert len(files) == len(NAMES)
    failed = sum(not f["passed"] for f in files)
    assert total(samples, "sse_check_proxy_answers_checked_total", verdict="fail") == failed
    # findings by rule and severity: exactly the report's
    expected: dict[tuple[str, str], int] = {}
    for entry in files:
        for finding in entry["findings"]:
            key = (finding["code"], finding["severity"])
            expected[key] = expected.get(key, 0) + 1
    got = {(dict(ls)["rule"], dict(ls)["severity"]): int(v) for (n, ls), v in samples.items()
           if n == "sse_check_proxy_findings_total"}
    assert got == expected
    assert total(samples, "sse_check_proxy_requests_passed_through_total") == 1
    assert total(samples, "sse_check_proxy_answers_skipped_total") == 0
    # every body chunk forwarded was timed
    assert total(samples, "sse_check_proxy_forward_latency_seconds_count") >= len(NAMES)


def test_client_breakages_are_the_matrix_of_each_answer(llama_server: ServerProcess,
                                                        proxy: Callable[..., ServerProcess],
                                                        tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    px = proxy(llama_server.url, "--metrics", "127.0.0.1:0", "--clients", "--format", "json",
               "-o", str(report), "--quiet")
    url = metrics_url(px)
    for name in NAMES:
        post(px.url, name)
    assert wait_for(lambda: total(scrape(url), "sse_check_proxy_answers_checked_total") == len(NAMES))
    samples = scrape(url)
    px.stop(signal.SIGINT)
    expected: dict[tuple[str, str], int] = {}
    for entry in json.loads(report.read_text())["files"]:
        for client, cell in entry["clients"].items() if isinstance(entry["clients"], dict) else []:
            verdict = cell["verdict"] if isinstance(cell, dict) else cell
            if verdict != "ok":
                expected[(client, verdict)] = expected.get((client, verdict), 0) + 1
    got = {(dict(ls)["client"], dict(ls)["verdict"]): int(v) for (n, ls), v in samples.items()
           if n == "sse_check_proxy_client_breakages_total"}
    assert got == expected and expected, (got, expected)


def test_log_jsonl_writes_the_report_entry_of_each_answer(llama_server: ServerProcess,
                                                          proxy: Callable[..., ServerProcess],
                                                          tmp_path: Path) -> None:
    log, report = tmp_path / "answers.jsonl", tmp_path / "report.json"
    px = proxy(llama_server.url, "--log-jsonl", str(log), "--format", "json", "-o", str(report), "--quiet")
    for name in NAMES[:4]:
        post(px.url, name)
    assert wait_for(lambda: log.exists() and len(log.read_text().splitlines()) == 4)
    px.stop(signal.SIGINT)
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    files = json.loads(report.read_text())["files"]
    for line, entry in zip(lines, files, strict=True):
        assert {k: line[k] for k in entry} == entry  # the same record as the report's files[] entry
        exchange = line["exchange"]
        assert exchange["method"] == "POST" and exchange["path"] == entry["proxy"]["path"]
        assert exchange["status"] == entry["http"]["status"] and exchange["timings"]["total"] >= 0


def test_sample_saves_a_fraction_and_always_the_failing_answers(llama_server: ServerProcess,
                                                               proxy: Callable[..., ServerProcess],
                                                               tmp_path: Path) -> None:
    saved, report = tmp_path / "saved", tmp_path / "report.json"
    # llama.cpp's answers pass under its profile at --fail-on error, except those with real defects
    px = proxy(llama_server.url, "--save", str(saved), "--sample", "0.5", "--profile", "llama.cpp",
               "--fail-on", "error", "--format", "json", "-o", str(report), "--quiet")
    names = NAMES * 2
    for name in names:
        post(px.url, name)
    px.stop(signal.SIGINT)
    files = json.loads(report.read_text())["files"]
    assert len(files) == len(names)
    failing = {f["proxy"]["number"] for f in files if not f["passed"]}
    passing = [f["proxy"]["number"] for f in files if f["passed"]]
    kept = {int(p.name[:3]) for p in saved.glob("*.sse")}
    assert failing <= kept
    assert len(kept - failing) == len(passing) // 2  # exactly half of the passing ones, evenly spread
    for entry in files:  # the report says which were saved
        assert ("saved" in entry["http"]) == (entry["proxy"]["number"] in kept)
    assert passing, "the sample needs passing answers to choose from"


def test_metrics_without_the_extra_is_a_one_line_error(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = ("import builtins, sys; real = builtins.__import__\n"
            "def fake(name, *a, **k):\n"
            "    if name.startswith('prometheus_client'): raise ImportError(name=name)\n"
            "    return real(name, *a, **k)\n"
            "builtins.__import__ = fake\n"
            "from checker.cli import main; sys.exit(main())\n")
    run = subprocess.run([sys.executable, "-c", code, "proxy", "--upstream", "http://127.0.0.1:9",
                          "--metrics", "127.0.0.1:0"], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "proxy-metrics" in lines[0], run.stderr


# --- 9. never in the way ---------------------------------------------------------------------------------


def test_a_slow_checker_skips_checking_not_bytes(llama_server: ServerProcess, proxy: Callable[..., ServerProcess],
                                                 tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SSE_CHECK_TEST_CHECKER", "slow:0.5")  # half a second per chunk
    report = tmp_path / "report.json"
    px = proxy(llama_server.url, "--check-queue", "0.001", "--metrics", "127.0.0.1:0", "--format", "json",
               "-o", str(report), "--quiet")
    url = metrics_url(px)
    name = "reasoning_text"  # dozens of events, one chunk each: far more than the 1 kB queue holds
    for _ in range(3):
        assert post(px.url, name).content == SSE[name]
    # every answer arrived whole while the checker is still asleep on its first chunks
    assert total(scrape(url), "sse_check_proxy_answers_checked_total") == 0
    assert wait_for(lambda: total(scrape(url), "sse_check_proxy_answers_skipped_total", reason="queue-full") == 3)
    px.stop(signal.SIGINT)
    document = json.loads(report.read_text())
    assert document["skipped_queue_full"] == 3
    assert [u["note"].startswith("not checked: the checker fell behind") for u in document["unchecked"]] == [True] * 3


def test_a_failing_checker_does_not_touch_the_traffic(llama_server: ServerProcess,
                                                      proxy: Callable[..., ServerProcess], tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SSE_CHECK_TEST_CHECKER", "fail")
    report = tmp_path / "report.json"
    px = proxy(llama_server.url, "--format", "json", "-o", str(report), "--quiet")
    for name in ("plain_text", "reasoning_text"):  # what openai-python makes of it, with and without the proxy
        assert openai_outcome(px.url, name) == openai_outcome(llama_server.url, name)
    assert post(px.url, "reasoning_text").content == SSE["reasoning_text"]
    px.stop(signal.SIGINT)
    for entry in json.loads(report.read_text())["files"]:
        assert any(f["code"] == "SSE099" and "the checker failed" in f["message"] for f in entry["findings"])


def openai_outcome(base: str, name: str, fault: str | None = None) -> str:
    """What openai-python's streaming helper returns or raises on this scenario."""
    headers = {"X-SSE-Check-Scenario": name, **({"X-SSE-Check-Fault": fault} if fault else {})}
    client = openai.OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0, timeout=10,
                           default_headers=headers)
    try:
        with client.responses.stream(model="m", input="hi") as stream:
            return "finished: " + repr(stream.get_final_response().output_text)
    except Exception as exc:  # noqa: BLE001 - the client's own error is what is compared
        return f"{type(exc).__name__}: {exc}"


def _through(base: str, name: str, fault: str) -> tuple[int, bytes, str | None]:
    """Status, every byte received and the error the client ended with (its class name)."""
    got, error = bytearray(), None
    with httpx.Client(base_url=base, timeout=httpx.Timeout(10, read=2)) as client:
        try:
            with client.stream("POST", endpoint(name), json=request_body(name),
                               headers={"X-SSE-Check-Scenario": name, "X-SSE-Check-Fault": fault}) as r:
                status = r.status_code
                for chunk in r.iter_raw():
                    got += chunk
        except httpx.HTTPError as exc:
            error = type(exc).__name__
    return status, bytes(got), error


@pytest.mark.parametrize("fault", ["disconnect-after=700", "stall-after=700", "status=503", "status=500",
                                   "disconnect-after=700;chunk-size=7"])
def test_upstream_faults_reach_the_client_as_the_same_fault(llama_server: ServerProcess,
                                                            proxy: Callable[..., ServerProcess],
                                                            fault: str) -> None:
    px = proxy(llama_server.url, "--quiet", "--metrics", "127.0.0.1:0")
    direct = _through(llama_server.url, "reasoning_text", fault)
    proxied = _through(px.url, "reasoning_text", fault)
    assert proxied == direct
    if fault.startswith(("disconnect", "stall")):
        assert direct[2] is not None and len(direct[1]) == 700  # the fault did happen


def test_upstream_faults_reach_openai_python_as_the_same_error(llama_server: ServerProcess,
                                                                  proxy: Callable[..., ServerProcess]) -> None:
    px = proxy(llama_server.url, "--quiet")
    for fault in ("disconnect-after=300", "status=503", "status=500"):
        direct = openai_outcome(llama_server.url, "plain_text", fault)
        assert openai_outcome(px.url, "plain_text", fault) == direct
        assert not direct.startswith("finished"), direct


# --- 8. no leak (the load figures are make bench's) ------------------------------------------------------


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the proxy's RSS from /proc")
def test_many_sequential_streams_leave_the_proxy_memory_flat(llama_server: ServerProcess,
                                                             proxy: Callable[..., ServerProcess],
                                                             tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    px = proxy(llama_server.url, "--quiet", "--keep-answers", "50", "--format", "json", "-o", str(report))
    name = "plain_text"
    body = request_body(name)
    with httpx.Client(base_url=px.url, timeout=20) as client:
        def run(n: int) -> None:
            for _ in range(n):
                r = client.post(endpoint(name), json=body, headers={"X-SSE-Check-Scenario": name})
                assert r.content == SSE[name]
        run(300)  # warm: caches, pools, the report's last 50
        warm = _rss_kb(px.pid)
        run(600)
        after = _rss_kb(px.pid)
    assert px.stop(signal.SIGINT) in (0, 1)
    assert after - warm < 8 * 1024, f"RSS grew from {warm} kB to {after} kB over 600 streams"
    document = json.loads(report.read_text())
    assert document["summary"]["files"] == 900 and len(document["files"]) == 50
    assert document["answers_not_shown"] == 850
