"""``sse-check probe`` runs the stored-response flow after its scenarios (checker/surface/stored_probe.py).

Against a real ``sse-check serve`` process: with no fault every stored feature is a "supported" row of the
capability table in ``--format json``; with ``--stored differ`` the retrieval row is broken with STO001 and the
clients that rely on retrieval (openai-node, optional) are degraded by it; with ``--stored unsupported`` (what
llama-server answers) the rows are unsupported, not failures.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from tests.live.conftest import PROBE_CAPTURES, ROOT

CONTINUATION = ROOT / "tests" / "data" / "stored-serve"


def probe_json(url: str, code: int | None = None) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, "-m", "checker", "probe", url, "--model", "gpt-oss-120b", "--api",
                           "responses", "--format", "json"], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert proc.returncode in ((0, 1) if code is None else (code,)), (proc.returncode, proc.stderr)
    return json.loads(proc.stdout)


def stored_rows(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["feature"]: row for row in report["capabilities"] if row["feature"].startswith("stored.")}


def test_a_conforming_server_has_every_stored_row_supported(serve) -> None:  # noqa: ANN001 - conftest factory
    report = probe_json(serve(str(PROBE_CAPTURES), str(CONTINUATION)).url, code=0)
    rows = stored_rows(report)
    assert len(rows) == 10 and {row["status"] for row in rows.values()} == {"supported"}, rows


def test_a_stored_response_that_differs_breaks_its_row(serve) -> None:  # noqa: ANN001
    # a broken row fails probe (exit 1) as a template flow's does: its findings are a reported result's
    report = probe_json(serve(str(PROBE_CAPTURES), str(CONTINUATION), "--stored", "differ").url, code=1)
    rows = stored_rows(report)
    reported = {f["path"]: f for f in report["files"]}
    assert [f["code"] for f in reported["stored/retrieve"]["findings"]][:1] == ["STO001"], reported.keys()
    assert rows["stored.retrieve"]["status"] == "broken" and rows["stored.retrieve"]["finding"]["code"] == "STO001"
    assert all(row["status"] == "supported" for name, row in rows.items() if name != "stored.retrieve")
    node = next(r for r in report["readiness"] if r["client"] == "openai-node")
    assert node["verdict"] == "degraded" and "GET /v1/responses/{id}" in node["because"], node


def test_a_server_without_storage_is_unsupported_not_failed(serve) -> None:  # noqa: ANN001
    rows = stored_rows(probe_json(serve(str(PROBE_CAPTURES), str(CONTINUATION), "--stored", "unsupported").url))
    states = {name: row["status"] for name, row in rows.items()}
    assert states.pop("stored.retrieve") == "broken"  # its Response said store: true (STO002)
    assert set(states.values()) == {"unsupported"}, rows
