"""The client matrix (checker/compat.py): its table, its verdicts, and --clients / --oracle on the CLI."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from checker.clients import CLIENTS, cites
from checker.compat import LIMIT_CODES, Verdict, matrix
from checker.dialects.responses.effects import CLIENTS as RESPONSES_CLIENTS
from checker.dialects.responses.effects import EFFECTS, END_EFFECTS
from checker.engine import lint_bytes
from checker.findings import Position
from checker.profiles import get_profile
from checker.rules import RULES

ROOT = Path(__file__).resolve().parents[1]
CAPTURES = ROOT / "captures"
LLAMA_STREAMS = ["plain_text.sse", "reasoning_one_call.sse", "reasoning_text.sse", "reasoning_text_truncated.sse"]


def test_every_row_names_a_rule_and_known_clients() -> None:
    for code, table in EFFECTS.items():
        assert code in RULES, code
        assert set(table) <= set(CLIENTS), (code, set(table) - set(CLIENTS))


@pytest.mark.parametrize("code", sorted(EFFECTS))
def test_a_row_and_its_rules_clients_agree(code: str) -> None:
    """Rule.clients means 'breaks or degrades': exactly the clients with an effect in the row."""
    affected = {client for client, effects in EFFECTS[code].items() if any(e.verdict > Verdict.OK for e in effects)}
    assert affected == set(RULES[code].clients)


@pytest.mark.parametrize("code", sorted(RULES))
def test_every_client_a_rule_names_is_cited_in_its_sources(code: str) -> None:
    """An attribution is checkable only against the code it claims: each named client's code is cited."""
    rule = RULES[code]
    uncited = [c for c in rule.clients if not any(cites(source, c) for source in rule.sources)]
    assert not uncited, f"{code} names {uncited} without citing their code in its sources {rule.sources}"


def test_every_end_effect_cites_its_client() -> None:
    for client, ends in END_EFFECTS.items():
        assert client in CLIENTS
        for end in ends:
            assert cites(end.source, client), (client, end.source)
            assert "as a conforming stream may" in end.symptom, (client, end.symptom)


def test_the_citation_check_can_fail() -> None:
    assert cites("codex codex-rs/codex-api/src/sse/responses.rs", "codex")
    assert not cites("OpenAI OpenAPI 2.3.0 ResponseStreamEvent", "codex")
    assert not cites("openai-python src/openai/_streaming.py", "openai-node")


def test_verdicts_order_and_print() -> None:
    assert Verdict.OK < Verdict.DEGRADED < Verdict.BREAKS
    assert [str(v) for v in Verdict] == ["ok", "degraded", "breaks"]
    assert Verdict.parse("degraded") is Verdict.DEGRADED
    with pytest.raises(ValueError):
        Verdict.parse("fine")


def test_a_clean_stream_is_ok_for_every_client() -> None:
    result = lint_bytes((CAPTURES / "conforming" / "reasoning-summary.sse").read_bytes())
    cells = matrix(result).cells
    assert [c.client for c in cells] == list(RESPONSES_CLIENTS)
    assert all(c.verdict is Verdict.OK and c.finding is None and c.symptom is None for c in cells)


def test_the_first_finding_with_the_worst_verdict_decides() -> None:
    # llama.cpp's reasoning stream: ITM001 (first event) and CNT001 both break openai-node; ITM001 comes first.
    data = (CAPTURES / "llama.cpp" / "reasoning_one_call.sse").read_bytes()
    m = matrix(lint_bytes(data))
    cell = m["openai-node"]
    assert cell.verdict is Verdict.BREAKS and cell.finding is not None and cell.finding.code == "ITM001"
    assert cell.symptom == "OpenAIError: missing output at index undefined"
    assert m["openai-python"].symptom == "RuntimeError: Duplicate response output index None."


def test_a_condition_narrows_an_effect_to_the_case_where_it_holds() -> None:
    # One message at output_index None works in openai-python; the text delta without content_index does not.
    m = matrix(lint_bytes((CAPTURES / "llama.cpp" / "plain_text.sse").read_bytes()))
    assert m["openai-python"].finding is not None and m["openai-python"].finding.code == "CNT001"
    assert m["openai-python"].symptom == "TypeError: list indices must be integers or slices, not NoneType"
    # Reasoning text without a content part only breaks openai-node (openai-python ignores reasoning deltas).
    m = matrix(lint_bytes((CAPTURES / "rules" / "CNT004-delta-before-part.sse").read_bytes()))
    assert (m["openai-python"].verdict, m["openai-node"].verdict) == (Verdict.OK, Verdict.BREAKS)


@pytest.mark.parametrize("name", LLAMA_STREAMS)
def test_a_known_deviation_still_decides_the_matrix(name: str) -> None:
    """--profile llama.cpp lowers documented deviations to info; the clients break all the same."""
    data = (CAPTURES / "llama.cpp" / name).read_bytes()
    under_openai = matrix(lint_bytes(data)).verdicts()
    under_llama = matrix(lint_bytes(data, profile=get_profile("llama.cpp")))
    assert under_llama.verdicts() == under_openai
    deciding = under_llama["openai-python"].finding
    assert deciding is not None and deciding.known_deviation is not None


def test_a_rule_without_a_row_falls_back_to_its_clients() -> None:
    from dataclasses import replace

    from checker.compat import effect

    result = lint_bytes((CAPTURES / "conforming" / "text.sse").read_bytes())
    base = RULES["LIF006"].finding(Position(1, 0))
    new_rule = replace(base, code="XYZ999", clients=("codex",), message="data: {\"a\": 1} {type}")
    found = effect(new_rule, "codex", result)  # a rule added before it has a row
    assert found is not None and found.verdict is Verdict.BREAKS
    assert effect(new_rule, "openai-python", result) is None
    result.findings.append(new_rule)
    assert matrix(result)["codex"].symptom == 'data: {"a": 1} {type}'  # the message is shown as it is
    limit = replace(base, code=sorted(LIMIT_CODES - set(EFFECTS))[0], clients=("codex",))
    found = effect(limit, "codex", result)
    assert found is not None and found.verdict is Verdict.DEGRADED  # sse-check's own limit, not the client's


def test_a_new_column_keeps_the_fallback_of_the_clients_a_rule_already_named() -> None:
    """A client's own rows (checker/dialects/*/vercel_effects.py) merged by add_column: a rule that had no row
    still breaks every other client it names, with the finding's message, as it did without a row."""
    from checker.dialects.base import Effect, add_column

    by_rule: dict[str, dict[str, tuple[Effect, ...]]] = {"SSE006": {"codex": (Effect(Verdict.DEGRADED, "kept"),)}}
    add_column(by_rule, {"SSE006": {"new": (Effect(Verdict.BREAKS, "x"),)},
                         "XYZ999": {"new": (Effect(Verdict.BREAKS, "y"),)}}, lambda code: ("codex", "new"))
    assert by_rule["SSE006"]["codex"][0].symptom == "kept"  # an existing row is left as it is
    assert set(by_rule["XYZ999"]) == {"codex", "new"} and by_rule["XYZ999"]["codex"][0].verdict is Verdict.BREAKS


def test_sse_check_limits_degrade_and_say_so() -> None:
    data = (CAPTURES / "rules" / "SSE021-event-too-large.sse").read_bytes()
    from checker.engine import Limits

    m = matrix(lint_bytes(data, limits=Limits(max_line_bytes=65536, max_event_bytes=1024)))
    assert m.caveat is not None and "SSE021" in m.caveat


# --- the CLI ----------------------------------------------------------------------


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "checker", "lint", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=300, env={"NO_COLOR": "1", "PATH": "/usr/bin:/bin", "COLUMNS": "160"})


def test_lint_clients_draws_the_matrix_under_each_capture() -> None:
    proc = run("captures/real-world/codex-backend-empty-output.sse", "--clients")
    assert proc.returncode == 1, proc.stderr
    out = proc.stdout
    assert "what the user sees" in out
    # (its "breaks" was once met by the rule's static client list under the finding, while the matrix said
    # degraded: the line under a finding now follows the matrix, checker.report.affected)
    assert "openai-agents" in out and "REC005" in out
    assert re.search(r"^  openai-python +degraded +REC005 91:9213", out, re.M)
    assert "degrades: openai-python, openai-node" in out
    assert "get_final_response().output is []" in out


def test_lint_clients_in_json_follows_the_report_schema() -> None:
    proc = run("captures/llama.cpp/plain_text.sse", "captures/conforming/text.sse", "--clients", "--format", "json")
    report = json.loads(proc.stdout)
    jsonschema.validate(report, json.loads((ROOT / "docs" / "report-schema.json").read_text()))
    llama, clean = report["files"]
    assert llama["clients"]["openai-python"]["verdict"] == "breaks"
    assert llama["clients"]["openai-python"]["finding"]["code"] == "CNT001"
    assert llama["clients"]["codex"] == {"verdict": "ok", "finding": None, "symptom": None}
    assert {cell["verdict"] for cell in clean["clients"].values()} == {"ok"}
    plain = json.loads(run("captures/conforming/text.sse", "--format", "json").stdout)
    assert "clients" not in plain["files"][0]


def test_lint_oracle_runs_the_real_client_next_to_the_prediction() -> None:
    proc = run("captures/real-world/missing-terminal-event.sse", "--oracle", "openai-python", "--format", "json")
    entry = json.loads(proc.stdout)["files"][0]
    assert entry["clients"]["openai-python"]["verdict"] == "breaks"
    assert entry["oracles"]["openai-python"]["raised"] == "RuntimeError: Didn't receive a `response.completed` event."
    text = run("captures/real-world/missing-terminal-event.sse", "--oracle", "openai-python").stdout
    assert "real openai-python" in text and "(agrees: breaks)" in text


def test_lint_oracle_without_the_client_installed_is_one_line(monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    import importlib.util

    from checker.cli import main

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "openai" else real(name, *a))
    code = main(["lint", str(CAPTURES / "conforming" / "text.sse"), "--oracle", "openai-python"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip() == ("sse-check: --oracle openai-python: the openai package is not installed "
                           "(pip install -e '.[test]' (openai==3.57.0))")


def test_an_openai_event_unknown_to_open_responses_breaks_only_the_open_responses_suite() -> None:
    # Under --profile open-responses, OpenAI's reasoning_text.* are undefined there (SCH005), not for openai-node.
    data = (CAPTURES / "rules" / "SCH005-openai-event-under-open-responses.sse").read_bytes()
    m = matrix(lint_bytes(data, profile=get_profile("open-responses")))
    assert m["openai-node"].verdict is Verdict.OK
    assert m["open-responses"].verdict is Verdict.BREAKS
    unknown = (CAPTURES / "rules" / "SCH005-unknown-event-type.sse").read_bytes()
    assert matrix(lint_bytes(unknown))["openai-node"].verdict is Verdict.BREAKS
