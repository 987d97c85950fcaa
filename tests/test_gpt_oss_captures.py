"""captures/gpt-oss: the probe of OpenAI's gpt-oss reference Responses server (PyPI gpt-oss 0.0.9), as saved.

Each capture lints as its ``X.expect.json`` declares, through the HTTP checks as ``sse-check lint`` runs them
(tests/real_server/test_gpt_oss.py holds the live server to the same codes); the real clients' outcomes on the
whole streams among them are tests/test_client_oracles.py's. See captures/gpt-oss/README.md.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_http_captures import declared, lint, meta_of

from checker.compat import matrix
from checker.http_checks import is_probe_meta
from checker.live.scenarios import BUILTIN

ROOT = Path(__file__).resolve().parents[1]
GPT_OSS = ROOT / "captures" / "gpt-oss"
CAPTURES = sorted(GPT_OSS.rglob("*.sse"))
SCENARIO_FILES = sorted(p.stem for p in (ROOT / "tools" / "gpt-oss" / "scenarios").glob("*.json"))


def rel(path: Path) -> str:
    return path.relative_to(GPT_OSS).as_posix()


def test_the_probe_covers_every_built_in_scenario_and_the_gpt_oss_ones() -> None:
    top = {p.name.removesuffix(".sse") for p in GPT_OSS.glob("*.sse")}
    assert {s.name for s in BUILTIN} | set(SCENARIO_FILES) <= top


@pytest.mark.parametrize("path", CAPTURES, ids=rel)
def test_each_capture_lints_as_declared(path: Path) -> None:
    assert is_probe_meta(meta_of(path))
    for profile, codes in declared(path).items():
        assert {f.code for f in lint(path, profile=profile).findings} == codes, profile


@pytest.mark.parametrize("name", ["reasoning_text", "plain_text_low", "invalid_model", "assistant_history.answer",
                                  "stub/fresh/plain_text_low"])
def test_every_text_stream_breaks_both_sdks_where_they_really_fail(name: str) -> None:
    """Where the real clients raise on these bytes (tests/test_client_oracles.py runs them): openai-python at the
    message's output_text.done (output_index 1, its item added at 0), openai-node at the first event at -1."""
    cells = matrix(lint(GPT_OSS / f"{name}.sse"))
    python, node = cells["openai-python"], cells["openai-node"]
    assert python.finding is not None and node.finding is not None
    assert (python.finding.code, python.finding.position.event_type) == ("ITM005", "response.output_text.done")
    assert python.symptom == ("RuntimeError: Received a content event for output index 1 before receiving its "
                              "output item")
    assert (node.finding.code, node.symptom) == ("ITM014", "OpenAIError: Invalid response output index.")


def test_the_stub_leaks_a_cut_request_into_the_next() -> None:
    """The same request, after a cut one on the package's stub model, and on a fresh stub."""
    after_cut, fresh = declared(GPT_OSS / "stub" / "plain_text_low.sse"), declared(GPT_OSS / "stub" / "fresh" /
                                                                                    "plain_text_low.sse")
    assert {"HTP012", "LIF006"} <= after_cut["openai"] and not {"HTP012", "LIF006"} & fresh["openai"]
    assert fresh["openai"] - {"LIF019"} == declared(GPT_OSS / "plain_text_low.sse")["openai"] - {"LIF019"}


# What the gpt-oss profile leaves above info: a stream cut mid-answer, and a cut answer whose final output is not
# what was streamed (its last token is in response.completed only). Everything else is a documented deviation.
LOUD_UNDER_ITS_PROFILE = {
    "function_call_truncated_auto": ["HTP012", "LIF006"],
    "reasoning_text_truncated": ["REC004"],
    "stub/plain_text_low": ["HTP012", "LIF006"],
    "stub/reasoning_text_truncated": ["REC004"],
}


def test_the_gpt_oss_profile_documents_everything_but_the_cuts() -> None:
    loud = {}
    for path in CAPTURES:
        found = sorted({f.code for f in lint(path, profile="gpt-oss").findings if f.severity.name != "INFO"})
        if found:
            loud[rel(path).removesuffix(".sse")] = found
    assert loud == LOUD_UNDER_ITS_PROFILE


def test_its_deviations_still_break_the_clients_they_break() -> None:
    cells = matrix(lint(GPT_OSS / "reasoning_text.sse", profile="gpt-oss"))
    assert cells["openai-python"].verdict.name == cells["openai-node"].verdict.name == "BREAKS"


# --- every registered real client, on the exchanges as saved (status, headers, the cut included) ----------------

STREAMED = [p for p in CAPTURES if meta_of(p).get("status") == 200 and meta_of(p).get("expect") != "nonstream"]
# (client, capture) -> why the prediction and the real client differ, found by this test: a strict xfail.
DISAGREE: dict[tuple[str, str], str] = {}


def _client_cases() -> list[object]:
    from checker.oracles import registry

    cases = []
    for client in registry.for_dialect("responses"):
        for path in STREAMED:
            name = rel(path).removesuffix(".sse")
            why = DISAGREE.get((client.name, name))
            marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
            cases.append(pytest.param(client.name, path, id=f"{client.name}:{name}", marks=marks))
    return cases


@pytest.fixture(scope="module")
def outcomes() -> dict[tuple[str, Path], object]:
    from checker.oracles import registry, runner

    found: dict[tuple[str, Path], object] = {}
    jobs = [runner.job_for(path, "responses") for path in STREAMED]
    for client in registry.for_dialect("responses"):
        try:
            got = runner.run_batch(client.name, jobs)
        except runner.ClientUnavailable as exc:
            pytest.skip(str(exc))
        found.update({(client.name, path): outcome for path, outcome in zip(STREAMED, got, strict=True)})
    return found


@pytest.mark.parametrize(("client", "path"), _client_cases())
def test_every_real_client_does_what_the_matrix_predicts_on_the_saved_exchange(
        client: str, path: Path, outcomes: dict[tuple[str, Path], object]) -> None:
    """Each real client of the registry (checker/oracles/registry.py: every one installed) over loopback HTTP,
    answered with the exchange as it was saved, cut connections included."""
    from checker.oracles import Outcome, disagreement

    outcome = outcomes[(client, path)]
    assert isinstance(outcome, Outcome)
    result = lint(path)
    assert disagreement(matrix(result)[client].verdict, outcome, result) is None
