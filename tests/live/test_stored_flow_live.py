"""The stored-response flow asked of a real ``sse-check serve`` process over loopback (checker/surface/stored_run.py).

The replay server answers the probe's captures and the stateful continuation (tests/data/stored-serve). With no
fault every feature is supported and nothing is found; with each ``stored`` defect (``--stored DEFECT`` for the
whole server) exactly the rule that defect breaks is found, on its feature's row, and the other rows stay
supported; ``--stored unsupported`` answers as llama-server does and every row is unsupported, none a finding.
A continuation answered by a capture that does not name the response it continues is STO013; a replay server
with no capture for the continuation leaves that feature "not checked".
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from checker.live.scenarios import BUILTIN
from checker.surface.stored_flow import flow_findings
from checker.surface.stored_run import StoredRun, run_stored
from tests.live.conftest import PROBE_CAPTURES, ROOT, ServerProcess, start_serve

CONTINUATION = ROOT / "tests" / "data" / "stored-serve"
TOOLS_BODY = {k: v for k, v in next(s.body for s in BUILTIN if s.name == "reasoning_one_call").items()}
FEATURES = ["retrieve", "input_items", "resumption", "delete", "previous_response_id", "stateful tool use",
            "background", "cancel", "conversations", "compact"]
# defect -> (the feature it breaks, the codes found there)
DEFECTS = {
    "differ": ("retrieve", {"STO001"}),
    "input-items": ("input_items", {"STO003"}),
    "keep-deleted": ("delete", {"STO004"}),
    "accept-unknown": ("previous_response_id", {"STO005"}),
    "error-shape": ("previous_response_id", {"STO006"}),
    "restart": ("resumption", {"STO007"}),
    "skip": ("resumption", {"STO007"}),
    "regress": ("background", {"STO008"}),
    "cancel-ignored": ("cancel", {"STO009"}),
    "conversation-shape": ("conversations", {"STO010"}),
    "compact-shape": ("compact", {"STO011"}),
    "lost-context": ("stateful tool use", {"STO012"}),
}


def ask(server: ServerProcess, save: Path | None = None, **headers: str) -> StoredRun:
    async def go() -> StoredRun:
        async with httpx.AsyncClient() as client:
            return await run_stored(client, server.url, "gpt-oss-120b", TOOLS_BODY, headers=headers, timeout=20,
                                    save_dir=save, poll_wait=0)

    return asyncio.run(go())


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    process = start_serve(str(PROBE_CAPTURES), str(CONTINUATION))
    try:
        yield process
    finally:
        process.stop()
        process._stderr.close()


def test_a_conforming_server_supports_every_feature(server: ServerProcess, tmp_path: Path) -> None:
    run = ask(server, save=tmp_path)
    assert [(v.feature, v.state) for v in run.verdicts] == [(f, "supported") for f in FEATURES], \
        [(v.feature, v.state, v.why) for v in run.verdicts]
    saved = json.loads((tmp_path / "stored.flow.json").read_text())
    assert saved["expect"] == [] and flow_findings(saved) == []  # the saved flow lints to the same verdict


@pytest.mark.parametrize("defect", sorted(DEFECTS))
def test_each_defect_breaks_its_feature_only(server: ServerProcess, defect: str) -> None:
    feature, codes = DEFECTS[defect]
    run = ask(server, **{"X-SSE-Check-Fault": f"stored={defect}"})
    rows = {v.feature: v for v in run.verdicts}
    assert rows[feature].state == "broken", (rows[feature].state, rows[feature].why)
    assert {f.code for f in rows[feature].findings if f.code.startswith("STO")} == codes
    others = {name: row.state for name, row in rows.items() if name != feature and row.state != "supported"}
    assert others == {}, [(n, rows[n].why) for n in others]


def test_a_server_without_storage_is_unsupported_everywhere(serve) -> None:  # noqa: ANN001 - conftest factory
    llama_like = serve(str(PROBE_CAPTURES), str(CONTINUATION), "--stored", "unsupported")
    run = ask(llama_like)
    rows = {v.feature: v for v in run.verdicts}
    # The probe's captures say store: true, so a server that then answers 404 lost them (STO002) ...
    assert [f.code for f in rows["retrieve"].findings] == ["STO002"]
    # ... and every other feature is one "unsupported" line, no finding.
    rest = {name: row.state for name, row in rows.items() if name != "retrieve"}
    assert set(rest.values()) <= {"unsupported", "not checked"}, [(n, rows[n].why) for n in rest]
    assert all(not row.findings for name, row in rows.items() if name != "retrieve")
    assert rows["input_items"].state == rows["conversations"].state == rows["compact"].state == "unsupported"
    assert "File Not Found" in rows["input_items"].why


def test_a_continuation_that_does_not_name_its_previous_response(serve, tmp_path: Path) -> None:  # noqa: ANN001
    plain = (PROBE_CAPTURES / "plain_text.sse").read_bytes()
    (tmp_path / "tool_result_stateful.sse").write_bytes(plain)  # previous_response_id null, as recorded
    run = ask(serve(str(PROBE_CAPTURES), str(tmp_path)))
    row = next(v for v in run.verdicts if v.feature == "stateful tool use")
    assert [f.code for f in row.findings] == ["STO013"] and row.state == "broken"


def test_no_capture_for_the_continuation_is_not_checked(serve) -> None:  # noqa: ANN001
    run = ask(serve(str(PROBE_CAPTURES)))
    rows = {v.feature: v for v in run.verdicts}
    assert rows["stateful tool use"].state == "not checked" and not rows["stateful tool use"].findings
    assert all(row.state == "supported" for name, row in rows.items() if name != "stateful tool use")
