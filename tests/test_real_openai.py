"""Real OpenAI Responses streams (captures/real-openai): what the reference server sends is no error.

The captures are recordings of api.openai.com kept by public SDK test suites
(captures/real-openai/README.md). Each declares its complete set of findings
under the `openai` profile (``X.expect.json``) and its client matrix
(``X.clients.json``); tests/test_client_oracles.py runs the real openai-python and
openai-node on the same bytes and checks the matrix against them.

Held here:

* every capture produces exactly its declared codes, however the bytes are chunked;
* a verbatim recording (not under edited/) gets no error-severity finding that the
  real clients contradict: where OpenAI departs from its published description the
  profile reports a known deviation (info, with its source), where the description
  is stricter than the clients' own types the schema follows the clients, and an
  error stands only where openai-python or openai-node really breaks on it;
* every known deviation reported on them names its source;
* the matrix is the declared one.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_corpus import CAPTURES, codes, declaration, lint, random_chunks, rel

from checker.compat import Verdict, matrix
from checker.findings import Severity

REAL = CAPTURES / "real-openai"
ALL = sorted(REAL.rglob("*.sse"))
# Recordings of today's API as the source keeps them: not edited/, nor older-api/ (March 2025, before OpenAI sent
# sequence_number, which today's API and description require: LIF015 stays an error there).
VERBATIM = [p for p in ALL if not {"edited", "older-api"} & set(p.relative_to(REAL).parts)]
# The clients that tests/test_client_oracles.py really runs on every capture.
REAL_CLIENTS = ("openai-python", "openai-node")


def _cases(paths: list[Path]) -> list[Any]:
    cases = []
    for path in paths:
        bug = json.loads(path.with_name(path.name[: -len(".sse")] + ".expect.json").read_text()).get(
            "known_engine_bug")
        marks = [pytest.mark.xfail(strict=True, reason=f"known engine bug: {bug}")] if bug else []
        cases.append(pytest.param(path, id=rel(path), marks=marks))
    return cases


def test_the_corpus_is_there_and_kept_apart() -> None:
    assert len(VERBATIM) >= 50, len(VERBATIM)
    assert (REAL / "edited").is_dir() and (REAL / "older-api").is_dir() and len(ALL) > len(VERBATIM)
    readme = (REAL / "README.md").read_text()
    for path in ALL:
        assert f"`{path.relative_to(REAL).as_posix()}`" in readme, f"{rel(path)} is not in the README table"
        for kind in ("expect", "clients"):
            assert path.with_name(path.name[: -len(".sse")] + f".{kind}.json").is_file(), (rel(path), kind)
    assert {p.name for p in (REAL / "LICENSES").iterdir()} == {"vercel-ai.LICENSE", "pydantic-ai.LICENSE"}


@pytest.mark.parametrize("path", _cases(ALL))
def test_each_capture_gives_exactly_its_declared_findings(path: Path) -> None:
    decl = declaration(path)
    data = path.read_bytes()
    result = lint(data, decl, "openai")
    detail = "\n".join(f"  {f.code} {f.severity} {f.message}" for f in result.findings)
    assert codes(result) == set(decl.expect["openai"]), f"{rel(path)}:\n{detail}"
    chunked = lint(data, decl, "openai", random_chunks(data, rel(path)))
    assert [f.as_dict() for f in chunked.findings] == [f.as_dict() for f in result.findings]


@pytest.mark.parametrize("path", _cases(VERBATIM))
def test_a_verbatim_recording_gets_no_error_the_real_clients_contradict(path: Path) -> None:
    """An error on what OpenAI itself sends stands only where a real client breaks on it: the matrix names that
    finding as what breaks openai-python or openai-node, and tests/test_client_oracles.py runs both clients on
    the same bytes to hold the matrix to what they really do. Anything else is a false alarm."""
    result = lint(path.read_bytes(), declaration(path), "openai")
    cells = matrix(result)
    confirmed = {cells[client].finding.code for client in REAL_CLIENTS  # type: ignore[union-attr]
                 if cells[client].verdict is Verdict.BREAKS}
    unconfirmed = [f"{f.code} {f.message}" for f in result.findings
                   if f.severity is Severity.ERROR and f.code not in confirmed]
    assert not unconfirmed, f"{rel(path)}: " + "; ".join(unconfirmed)


@pytest.mark.parametrize("path", ALL, ids=rel)
def test_known_deviations_name_their_source(path: Path) -> None:
    result = lint(path.read_bytes(), declaration(path), "openai")
    for finding in result.findings:
        if finding.known_deviation is not None:
            assert finding.severity is Severity.INFO
            assert "captures/real-openai" in finding.known_deviation or "openai-" in finding.known_deviation, (
                finding.known_deviation)


@pytest.mark.parametrize("path", ALL, ids=rel)
def test_the_matrix_is_the_declared_one(path: Path) -> None:
    declared = json.loads(path.with_name(path.name[: -len(".sse")] + ".clients.json").read_text())
    assert matrix(lint(path.read_bytes(), declaration(path), "openai")).verdicts() == declared


def test_the_oracle_keeps_the_sdk_warnings_out_of_the_output() -> None:
    """openai-python's models warn on stderr when they serialise what their types do not declare (OpenAI's web
    search sources of type "api"); `lint --oracle openai-python` prints its report and nothing else."""
    capture = REAL / "pydantic-openai-responses-model-web-search-tool-stream.sse"
    proc = subprocess.run([sys.executable, "-m", "checker", "lint", str(capture), "--oracle", "openai-python"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr[-2000:]
    assert "openai-python" in proc.stdout
