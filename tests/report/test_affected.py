"""The line under a finding names the clients the matrix says it breaks or degrades on that stream, never the
rule's static list: no report says "breaks: openai-python" beside a matrix (and a real client) that says ok."""

from __future__ import annotations

from pathlib import Path

import pytest

from checker.compat import Verdict, matrix
from checker.engine import lint_bytes
from checker.report.affected import affected

CAPTURES = Path(__file__).resolve().parents[2] / "captures"
# One folder of bad captures per dialect, real recordings among them.
FOLDERS = ("chat/rules", "messages/rules", "rules", "llama.cpp", "cassettes/openllmetry")


def streams() -> list[Path]:
    return sorted(p for folder in FOLDERS for p in (CAPTURES / folder).rglob("*.sse"))


@pytest.mark.parametrize("folder", FOLDERS)
def test_what_a_finding_says_it_breaks_the_matrix_says_too(folder: str) -> None:
    checked = 0
    for path in sorted((CAPTURES / folder).rglob("*.sse")):
        result = lint_bytes(path.read_bytes())
        cells = {cell.client: cell for cell in matrix(result).cells}
        for finding in result.findings:
            touched = affected(finding, result)
            for client in touched.breaks:
                assert cells[client].verdict is Verdict.BREAKS, (path.name, finding.code, client)
            for client in touched.degrades:
                assert cells[client].verdict is not Verdict.OK, (path.name, finding.code, client)
            checked += bool(touched)
        # and the finding that decides a cell names that client under itself
        for cell in cells.values():
            if cell.finding is not None:
                touched = affected(cell.finding, result)
                named = touched.breaks if cell.verdict is Verdict.BREAKS else touched.degrades
                assert cell.client in named, (path.name, cell.client, cell.finding.code)
    assert checked  # the folder has findings that break a client: the check above ran on something


def test_a_rule_that_can_break_a_client_is_not_said_to_when_it_does_not_here() -> None:
    # CHT002 names openai-python and openai-node (Rule.clients), but a null system_fingerprint breaks neither:
    # the real clients return the completion (tests/test_chat_oracles.py runs them on this recording).
    path = CAPTURES / "cassettes" / "openllmetry" / "azure-openai-chat_streaming-0.sse"
    result = lint_bytes(path.read_bytes())
    schema = [f for f in result.findings if f.code == "CHT002"]
    assert schema and not any(f.clients for f in schema)  # the engine names only the clients touched here
    assert not any(affected(f, result) for f in schema)
    assert set(matrix(result).verdicts().values()) == {"ok"}
    assert affected(schema[0], result).words() == ""
