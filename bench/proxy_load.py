"""The proxy under load (issue 19, item 8): real processes on loopback, ratios in the same run.

``sse-check serve captures/llama.cpp`` is the upstream; ``sse-check proxy`` stands in front of it. The same
200 concurrent streaming requests go to serve directly and through the proxy (alternating, best of
--proxy-repeat), every proxied body compared byte for byte with its direct twin; then 10,000 sequential
streams through the proxy, its RSS read at intervals. The streams are paced as a model paces them
(``X-SSE-Check-Fault: delay=MS`` between events, default 10 ms: a fast model's 100 tokens/s), since a real
upstream's answers take their time; ``--proxy-delay-ms 0`` gives the unpaced, CPU-bound figure.

Targets: wall time through the proxy <= 1.5x direct; proxy peak RSS < 150 MB; RSS flat over 10,000 streams.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
CAPTURES = ROOT / "captures" / "llama.cpp"
SCENARIO = "reasoning_text"
ANNOUNCE = re.compile(r"(?:serving \d+ captures|proxying \S+) on (http://\S+)")


def start(*command: str) -> tuple[subprocess.Popen[bytes], str]:
    """Start ``python -m checker COMMAND`` and wait for its announce line; (process, URL)."""
    proc = subprocess.Popen([sys.executable, "-m", "checker", *command], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, cwd=ROOT,
                            env={**os.environ, "NO_COLOR": "1"})
    assert proc.stdout is not None
    line = b""
    deadline = time.monotonic() + 30
    while not line.endswith(b"\n"):
        ready, _, _ = select.select([proc.stdout], [], [], max(deadline - time.monotonic(), 0))
        data = os.read(proc.stdout.fileno(), 4096) if ready else b""
        if not data:
            proc.kill()
            raise SystemExit(f"{command[0]} did not start")
        line += data
    match = ANNOUNCE.search(line.decode())
    if match is None:
        proc.kill()
        raise SystemExit(f"unexpected announce line {line!r}")
    return proc, match.group(1)


def status_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise SystemExit(f"no {field} for {pid}")


async def concurrent(base: str, n: int, headers: dict[str, str], body: dict[str, Any]) -> tuple[float, list[bytes]]:
    limits = httpx.Limits(max_connections=n, max_keepalive_connections=n)
    async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as client:
        async def one() -> bytes:
            async with client.stream("POST", "/v1/responses", json=body, headers=headers) as response:
                return b"".join([chunk async for chunk in response.aiter_raw()])

        started = time.perf_counter()
        bodies = await asyncio.gather(*(one() for _ in range(n)))
        return time.perf_counter() - started, list(bodies)


def run(streams: int = 200, sequential: int = 10_000, repeat: int = 3, delay_ms: int = 10) -> bool:
    """Print the figures next to their targets; True when all are met."""
    body = json.loads((CAPTURES / f"{SCENARIO}.request.json").read_text())
    expected = (CAPTURES / f"{SCENARIO}.sse").read_bytes()
    headers = {"X-SSE-Check-Scenario": SCENARIO}
    if delay_ms:
        headers["X-SSE-Check-Fault"] = f"delay={delay_ms}"
    serve, upstream = start("serve", str(CAPTURES), "--port", "0")
    with tempfile.TemporaryDirectory(prefix="sse-check-bench-proxy-") as tmp:
        report = Path(tmp) / "report.json"
        proxy, through = start("proxy", "--upstream", upstream, "--listen", "127.0.0.1:0", "--quiet",
                               "--format", "json", "-o", str(report), "--keep-answers", "100")
        try:
            direct_times, proxy_times, identical = [], [], True
            for _ in range(repeat):
                took, direct = asyncio.run(concurrent(upstream, streams, headers, body))
                direct_times.append(took)
                took, proxied = asyncio.run(concurrent(through, streams, headers, body))
                proxy_times.append(took)
                identical &= proxied == direct and all(b == expected for b in direct)
            direct_best, proxy_best = min(direct_times), min(proxy_times)
            ratio = proxy_best / direct_best
            peak = status_kb(proxy.pid, "VmHWM") / 1024
            print(f"proxy load: {streams} concurrent streams ({SCENARIO}, {len(expected)} bytes, "
                  f"{delay_ms} ms between events), best of {repeat}")
            print(f"  direct {direct_best:.2f} s, through the proxy {proxy_best:.2f} s: {ratio:.2f}x   "
                  f"(target <= 1.5x)")
            print(f"  byte-identical to the direct answers: {'yes' if identical else 'NO'}   (target yes)")
            print(f"  proxy peak RSS: {peak:.0f} MB   (target < 150 MB)")
            seq_headers = {"X-SSE-Check-Scenario": SCENARIO}  # unpaced: 10,000 streams in reasonable time
            marks: list[tuple[int, float]] = []
            started = time.perf_counter()
            with httpx.Client(base_url=through, timeout=60) as client:
                for i in range(1, sequential + 1):
                    r = client.post("/v1/responses", json=body, headers=seq_headers)
                    identical &= r.content == expected
                    if i in (sequential // 5, sequential // 2, sequential):
                        marks.append((i, status_kb(proxy.pid, "VmRSS") / 1024))
            took = time.perf_counter() - started
            if marks:
                growth = marks[-1][1] - marks[0][1]
                flat = growth < 10
                print(f"  {sequential} sequential streams ({took:.0f} s): RSS "
                      + ", ".join(f"{rss:.0f} MB after {i}" for i, rss in marks)
                      + f"; growth {growth:+.1f} MB   (target flat: < 10 MB)")
            else:  # --proxy-sequential 0 (or too few to mark): the leak check skipped, said, not failed
                flat = True
                print(f"  {sequential} sequential streams: too few to measure the RSS growth (--proxy-sequential)")
        finally:
            proxy.send_signal(signal.SIGINT)
            try:
                proxy.wait(120)
            except subprocess.TimeoutExpired:
                proxy.kill()
            serve.terminate()
            serve.wait(30)
        summary = json.loads(report.read_text())["summary"] if report.exists() else {}
        checked = summary.get("files", 0)
        print(f"  answers checked by the proxy: {checked} of {repeat * streams + sequential}")
    return ratio <= 1.5 and identical and peak < 150 and flat
