"""HTP024: an invalid request answered with a 5xx (a server error where a 4xx refusal belongs), both for the
probe's deliberately malformed scenarios (expect "error") and for a request a scenario meant as valid that the
request schema finds malformed; a 4xx refusal and a 5xx to a valid request stay what they were."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from checker.http_checks import lint_exchange

HTTP = Path(__file__).resolve().parent.parent / "captures" / "http"
ERROR_500 = json.dumps({"error": {"message": "Internal server error", "type": "server_error"}}).encode()


def _meta(name: str, **changes: Any) -> dict[str, Any]:
    meta = json.loads((HTTP / f"{name}.meta.json").read_text())
    meta.update(changes)
    return meta


def _codes(meta: dict[str, Any], body: bytes) -> list[str]:
    return [f.code for f in lint_exchange(meta, [body]).findings]


@pytest.mark.parametrize("status", [500, 502, 503])
def test_the_probes_malformed_request_failed_by_the_server(status: int) -> None:
    meta = _meta("HTP024-invalid-request-server-error", status=status)
    assert _codes(meta, ERROR_500) == ["HTP024"]


def test_the_probes_malformed_request_refused_is_not_flagged() -> None:
    meta = _meta("HTP024-invalid-request-server-error", status=400, reason="Bad Request")
    assert _codes(meta, ERROR_500) == []


def test_a_malformed_request_meant_as_valid_gets_htp024_not_htp001() -> None:
    refused = _meta("HTP021-invalid-request-refused")  # input: 1, expect stream
    body = (HTTP / "HTP021-invalid-request-refused.sse").read_bytes()
    assert _codes(refused, body) == ["HTP021"]
    failed = _meta("HTP021-invalid-request-refused", status=500, reason="Internal Server Error")
    findings = lint_exchange(failed, [ERROR_500]).findings
    assert [f.code for f in findings] == ["HTP024"]
    assert "/input" in findings[0].message and "HTTP 500" in findings[0].message


def test_a_valid_request_failed_by_the_server_stays_htp001() -> None:
    meta = _meta("HTP001-status-not-ok")
    assert _codes(meta, (HTTP / "HTP001-status-not-ok.sse").read_bytes()) == ["HTP001"]
