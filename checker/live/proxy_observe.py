"""What a running proxy tells the outside: Prometheus metrics (``--metrics``) and a JSON line per checked
answer (``--log-jsonl``).

Both are fed by the checker thread (one call per ended exchange) and, for the forwarding latency, by the
forwarding coroutine (one observation per chunk, a lock-free-enough ``Histogram.observe``). Neither ever
raises into the proxy: the proxy calls them through its ``_safely``.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import IO, Any

from checker.errors import UsageError
from checker.findings import Severity
from checker.report import ReportOptions

METRICS_EXTRA = "proxy-metrics"
# Seconds from reading a chunk off the upstream to handing it to the client's connection.
LATENCY_BUCKETS = (0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0)


class ProxyMetrics:
    """The proxy's Prometheus metrics, in a registry of their own, served on ``HOST:PORT``."""

    def __init__(self, fail_on: Severity) -> None:
        try:
            import prometheus_client as prom
        except ImportError:
            raise UsageError(f"--metrics needs prometheus-client: install sse-check with its {METRICS_EXTRA} "
                             f"extra (pip install 'sse-check[{METRICS_EXTRA}]')") from None
        self.prom = prom
        self.fail_on = fail_on
        self.registry = prom.CollectorRegistry()
        r = self.registry
        self.checked = prom.Counter("sse_check_proxy_answers_checked", "Answers checked, by endpoint and verdict",
                                    ["api", "verdict"], registry=r)
        self.findings = prom.Counter("sse_check_proxy_findings", "Findings in checked answers, by rule and severity",
                                     ["rule", "severity"], registry=r)
        self.breakages = prom.Counter("sse_check_proxy_client_breakages",
                                      "Checked answers a client is predicted to break (or degrade) on",
                                      ["client", "verdict"], registry=r)
        self.skipped = prom.Counter("sse_check_proxy_answers_skipped",
                                    "Watched answers forwarded without being checked, by reason",
                                    ["reason"], registry=r)
        self.passed = prom.Counter("sse_check_proxy_requests_passed_through",
                                   "Requests forwarded that are not Responses or chat requests", registry=r)
        self.latency = prom.Histogram("sse_check_proxy_forward_latency_seconds",
                                      "Seconds from reading a body chunk off the upstream to handing it to the client",
                                      buckets=LATENCY_BUCKETS, registry=r)
        self.queue = prom.Gauge("sse_check_proxy_check_queue_bytes", "Body bytes waiting for the checker",
                                registry=r)

    def serve(self, host: str, port: int) -> tuple[str, int]:
        """Start the /metrics endpoint (a daemon thread); the address it is bound to."""
        try:
            server, _thread = self.prom.start_http_server(port, addr=host, registry=self.registry)
        except OSError as exc:
            raise UsageError(f"--metrics {host}:{port}: cannot listen there: {exc.strerror or exc}") from None
        bound = server.server_address
        return str(bound[0]), int(bound[1])

    def watch_queue(self, queue: Any) -> None:
        self.queue.set_function(lambda: queue.queued_bytes)

    def record(self, record: Any) -> None:
        """One ended exchange (checker thread)."""
        if record.result is None:
            self.skipped.labels(reason=record.skipped or "error").inc()
            return
        findings = record.result.findings
        failed = any(f.severity >= self.fail_on for f in findings)
        self.checked.labels(api=record.api, verdict="fail" if failed else "pass").inc()
        for finding in findings:
            self.findings.labels(rule=finding.code, severity=str(finding.severity)).inc()
        from checker.compat import matrix

        for cell in matrix(record.result).cells:
            verdict = str(cell.verdict)
            if verdict != "ok":
                self.breakages.labels(client=cell.client, verdict=verdict).inc()

    def passthrough(self) -> None:
        self.passed.inc()

    def forwarded(self, seconds: float) -> None:
        self.latency.observe(seconds)


class JsonlLog:
    """``--log-jsonl FILE``: per checked answer, the JSON report's ``files[]`` entry plus ``exchange`` (the
    request's method and path, the status, the timings), one line each, flushed as it is written."""

    def __init__(self, path: str, options: ReportOptions) -> None:
        from checker.live.reports import ProxyJsonReporter

        try:
            self.stream: IO[str] = Path(path).open("a", encoding="utf-8")  # noqa: SIM115 - open for the run
        except OSError as exc:
            raise UsageError(f"--log-jsonl {path}: {exc.strerror or exc}") from None
        self.reporter = ProxyJsonReporter(self.stream, options)
        self._lock = threading.Lock()

    def record(self, record: Any) -> None:
        if record.result is None:
            return
        entry = self.reporter.entry(record.name, record.result)
        http = getattr(record.result, "http", {}) or {}
        # "path" is the report's name of the answer (as in files[]); the request's path is the exchange's.
        line = {**entry, "exchange": {"method": record.method, "path": record.path, "status": record.status,
                                      "timings": http.get("timings") or {}}}
        with self._lock:
            self.stream.write(json.dumps(line, ensure_ascii=False) + "\n")
            self.stream.flush()

    def close(self) -> None:
        self.stream.close()
