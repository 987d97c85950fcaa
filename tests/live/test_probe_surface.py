"""The probe's flows against a real replay server (``sse-check serve``) on loopback: ``GET /v1/models`` right
and wrong (the ``models`` fault), the capability table and the per-client readiness in the text and JSON
reports."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.live.conftest import LLAMA_CAPTURES, sse_check, sse_check_json

MODEL = "tiny-qwen3-random"  # the model of the llama.cpp captures' recorded requests
# The JSON pointer of the list's first model (built: written out, it reads as a machine's path to
# tests/test_self_contained.py).
FIRST_MODEL = "/".join(("", "data", "0"))


def probe(url: str, *args: str, model: str = MODEL) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    proc = sse_check("probe", url, "--model", model, "--api", "responses", "--no-progress", "--format", "json", *args)
    return proc, json.loads(proc.stdout) if proc.stdout.strip() else {}


def codes(report: dict[str, Any], name: str) -> list[str]:
    entry = next(f for f in report["files"] if f["path"] == name)
    return [f["code"] for f in entry["findings"]]


def row(report: dict[str, Any], feature: str) -> dict[str, Any]:
    return next(r for r in report["capabilities"] if r["feature"] == feature)


def test_a_right_models_list_is_supported_with_no_finding(serve: Any) -> None:
    server = serve(str(LLAMA_CAPTURES))
    proc, report = probe(server.url, "-s", "plain_text,models")
    assert codes(report, "models.list") == []
    assert row(report, "models")["status"] == "supported"
    assert row(report, "stream.responses")["status"] in ("supported", "broken")  # the capture's own findings
    assert [r["client"] for r in report["readiness"]] == ["openai-python", "openai-node", "codex", "openai-agents",
                                                        "anthropic-python", "anthropic-ts"]
    assert {r["client"]: r["verdict"] for r in report["readiness"]}["anthropic-python"] == "unknown"


def test_a_list_of_models_without_their_fields_is_mod001_and_the_capability_broken(serve: Any) -> None:
    server = serve(str(LLAMA_CAPTURES), "--models", "invalid")
    proc, report = probe(server.url, "-s", "plain_text,models")
    assert proc.returncode == 1
    assert codes(report, "models.list") == ["MOD001"]
    models = row(report, "models")
    assert models["status"] == "broken" and models["finding"]["code"] == "MOD001"
    # judged by OpenAI's ListModelsResponse schema: the missing members at their pointer, once for every model
    assert f"at {FIRST_MODEL}: missing required properties 'object', 'created' (and in " in models["why"]


def test_mistyped_members_of_the_models_are_mod001_at_their_schema_paths(serve: Any) -> None:
    server = serve(str(LLAMA_CAPTURES), "--models", "mistyped")
    proc, report = probe(server.url, "-s", "models")
    assert proc.returncode == 1
    entry = next(f for f in report["files"] if f["path"] == "models.list")
    found = {(f["code"], f["details"]["pointer"]) for f in entry["findings"]}
    assert found == {("MOD001", f"{FIRST_MODEL}/created"), ("MOD001", f"{FIRST_MODEL}/owned_by")}
    assert all("more model" in f["message"] for f in entry["findings"])  # the same problem in every model: once


def test_a_model_left_out_of_the_list_is_mod003_when_answered_and_mod002_when_not(serve: Any) -> None:
    server = serve(str(LLAMA_CAPTURES), "--models", "unlisted")
    _, answered = probe(server.url, "-s", "plain_text,models")
    assert codes(answered, "models.list") == ["MOD003"]
    assert row(answered, "models")["status"] == "supported"  # a warning: the feature works
    _, alone = probe(server.url, "-s", "models")
    assert codes(alone, "models.list") == ["MOD002"]
    assert row(alone, "models")["status"] == "broken"


def test_a_server_without_the_endpoint_is_one_unsupported_line_never_a_failure(serve: Any, tmp_path: Path) -> None:
    server = serve(str(LLAMA_CAPTURES), "--models", "absent")
    proc, report = probe(server.url, "-s", "plain_text,models", "--save", str(tmp_path))
    assert "models.list" not in [f["path"] for f in report["files"]]
    assert row(report, "models")["status"] == "unsupported" and row(report, "models")["why"] == "GET /v1/models: 404"
    assert not list(tmp_path.glob("models*"))  # nothing saved of an absence
    # at 80 columns, set by sse_check: an inherited width changes the layout, and one is inherited after any
    # test imports readline (GNU readline exports COLUMNS, the terminal's width, to the C environment that a
    # child started without env= gets, unseen in os.environ)
    text = sse_check("probe", server.url, "--model", MODEL, "--api", "responses", "-s", "plain_text,models",
                     "--no-progress", "--color", "never").stdout
    assert "GET /v1/models" in text and "unsupported" in text and "codex" in text
    assert max(len(line) for line in text.splitlines()) <= 80


def test_save_writes_the_flow_record_and_the_step_s_exchange(serve: Any, tmp_path: Path) -> None:
    server = serve(str(LLAMA_CAPTURES), "--models", "invalid")
    probe(server.url, "-s", "models", "--save", str(tmp_path))
    record = json.loads((tmp_path / "models.flow.json").read_text())
    assert record["steps"][0]["status"] == 200 and record["steps"][0]["answer"]["object"] == "list"
    assert (tmp_path / "models.list.meta.json").is_file()
    from checker.surface.judging import judge_record
    from checker.surface.record import FlowRecord

    assert [f.code for _, f in judge_record(FlowRecord.from_dict(record))] == ["MOD001"]


def _turn_set(root: Path, answer: str) -> Path:
    """A replay folder for the Responses tool turn: the call from the real llama-server, and as the second
    answer (``replay-continue-exact``) the capture ``answer`` of captures/llama.cpp."""
    root.mkdir()
    for path in LLAMA_CAPTURES.glob("reasoning_one_call.*"):
        (root / path.name).write_bytes(path.read_bytes())
    for path in LLAMA_CAPTURES.glob(f"{answer}.*"):
        if path.name.endswith((".sse", ".headers.txt", ".request.json")):
            (root / path.name.replace(answer, "replay-continue-exact")).write_bytes(path.read_bytes())
    return root


def test_a_tool_turn_whose_result_is_taken_is_supported(serve: Any) -> None:
    server = serve(str(LLAMA_CAPTURES))
    _, report = probe(server.url, "-s", "tool_turn", "--profile", "llama.cpp")
    assert [f["path"] for f in report["files"]] == ["tool_turn.call", "tool_turn.answer", "tool_turn.orphan"]
    assert row(report, "tool_turn.responses")["status"] == "supported"
    assert codes(report, "tool_turn.orphan") == []  # refused 400, as it must be


def test_a_refused_tool_result_is_tur001_and_breaks_the_agents(serve: Any, tmp_path: Path) -> None:
    server = serve(str(_turn_set(tmp_path / "set", "error_previous_response_id")))
    proc, report = probe(server.url, "-s", "plain_text,tool_turn", "--profile", "llama.cpp")
    assert proc.returncode == 1
    assert "TUR001" in codes(report, "tool_turn.answer")
    turn = row(report, "tool_turn.responses")
    assert turn["status"] == "broken" and turn["finding"]["code"] == "TUR001"
    verdicts = {r["client"]: r for r in report["readiness"]}
    # codex meets the refusal itself (HTP001 on the second request: its matrix cell); the Agents SDK, which
    # that finding does not name, is broken by the capability it requires.
    codex, agents = verdicts["codex"], verdicts["openai-agents"]
    assert codex["verdict"] == "broken" and codex["because"].startswith("tool_turn.answer: ")
    assert codex["finding"]["code"] == "HTP001"
    assert agents["verdict"] == "broken" and agents["finding"]["code"] == "TUR001"
    assert agents["because"].startswith("needs tool turns on /v1/responses, which is broken")


def test_a_call_id_reused_by_the_second_answer_is_tur002(serve: Any, tmp_path: Path) -> None:
    server = serve(str(_turn_set(tmp_path / "set", "reasoning_one_call")))
    _, report = probe(server.url, "-s", "tool_turn", "--profile", "llama.cpp")
    assert "TUR002" in codes(report, "tool_turn.answer")
    assert row(report, "tool_turn.responses")["status"] == "broken"


def test_anthropics_list_of_models_suits_a_messages_probe_not_an_openai_one(serve: Any) -> None:
    # api.anthropic.com's GET /v1/models is a page of ModelInfo: what the anthropic SDKs' models.list() reads,
    # so a probe of the Messages dialect alone takes it; OpenAI's clients need object, created and owned_by
    server = serve(str(LLAMA_CAPTURES), "--models", "modelinfo")
    _, report = sse_check_json("probe", server.url, "--model", MODEL, "--api", "messages", "-s", "models",
                               "--no-progress")
    assert codes(report, "models.list") == [] and row(report, "models")["status"] == "supported"
    proc, report = probe(server.url, "-s", "models")
    assert set(codes(report, "models.list")) == {"MOD001"} and row(report, "models")["status"] == "broken"


def test_a_messages_probe_still_needs_a_data_array_of_ids() -> None:
    from checker.surface.models import anthropic_problems

    assert anthropic_problems({"data": [{"type": "model", "id": "claude"}], "has_more": False}) == []
    assert anthropic_problems({"data": [{"id": "a"}, {"type": "model"}, {"id": 3}]}) == \
        [("/".join(("", "data", "1")), "a model without a string `id` (and 1 more model)")]
    assert anthropic_problems({"models": []}) == [("/data", "no `data` array")]
    assert anthropic_problems(None) == [("", "the answer is not JSON")]
    assert anthropic_problems([]) == [("", "the answer is not a JSON object")]
