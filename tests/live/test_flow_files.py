"""Flows in --scenario-file documents: the documented examples read, bad ones are one-line errors, and a user's
flow runs against a real replay server with its references filled in from the earlier answers."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from checker.errors import UsageError
from checker.surface.files import flow_from_document, split_scenario_files

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "flows.md"


def doc_examples() -> list[dict[str, Any]]:
    blocks = re.findall(r"```json\n(.*?)```", DOC.read_text(), re.S)
    return [json.loads(block) for block in blocks if block.lstrip().startswith("{")]


def test_the_documented_flows_read_as_written() -> None:
    stored, turn = doc_examples()
    flow = flow_from_document("x", stored, source="docs")
    assert (flow.name, flow.feature, flow.api) == ("stored_response", "stored responses", "responses")
    assert [(s.method, s.path, s.expect, s.gate) for s in flow.steps] == [
        ("POST", None, "stream", True), ("GET", "/responses/{create.id}", "json", False),
        ("DELETE", "/responses/{create.id}", "json", False)]
    chat = flow_from_document("x", turn, source="docs")
    assert chat.name == "chat/weather_turn" and chat.feature == "tool_turn.chat"
    assert [s.api for s in chat.steps] == ["chat", "chat"]


@pytest.mark.parametrize("document, message", [
    ({"steps": []}, "a flow has at least one step"),
    ({"steps": [{"name": "a", "method": "PUT", "path": "/x"}]}, "method must be one of POST, GET, DELETE"),
    ({"steps": [{"name": "a", "method": "GET", "path": "/x/{b.id}"}]}, "{b…} refers to no earlier step"),
    ({"steps": [{"name": "a", "path": "/x"}, {"name": "a", "path": "/y"}]}, "'a' cannot be a step name here"),
    ({"steps": [{"name": "a", "method": "GET", "path": "/x", "body": {}}]}, "only a POST has a body"),
    ({"steps": [{"name": "a", "path": "x"}]}, "path is a string that starts with /"),
    ({"steps": [{"name": "a", "path": "/x", "expect": "maybe"}]}, "expect must be one of"),
    ({"steps": [{"name": "a", "path": "/x"}], "stepz": 1}, "unknown keys ['stepz']"),
])
def test_a_bad_flow_is_one_line_naming_the_file_and_the_step(document: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError) as caught:
        flow_from_document("f", document, source="f.json")
    assert message in str(caught.value) and str(caught.value).startswith("f.json")
    assert "\n" not in str(caught.value)


def test_a_directory_holds_scenarios_and_flows_side_by_side(tmp_path: Path) -> None:
    (tmp_path / "one.json").write_text(json.dumps({"input": "hi"}))
    (tmp_path / "two.json").write_text(json.dumps({"steps": [{"name": "list", "method": "GET", "path": "/models"}]}))
    flows, others = split_scenario_files([tmp_path])
    assert [f.name for f in flows] == ["two"] and others == [tmp_path / "one.json"]
    assert flows[0].steps[0].expect == "json"


def test_a_user_flow_runs_with_its_references_filled_in(serve: Any, tmp_path: Path) -> None:
    from tests.live.conftest import LLAMA_CAPTURES

    flow = {"flow": "echo", "feature": "echo", "api": "responses", "steps": [
        {"name": "first", "body": {"input": "hi", "max_output_tokens": 50}, "replay": ["plain_text"]},
        {"name": "second", "body": {"input": "{first.output[type=message].content[0].text}", "metadata":
                                    {"after": "{first.id}"}}, "replay": ["plain_text"]},
        {"name": "list", "method": "GET", "path": "/models", "expect": "json"}]}
    path = tmp_path / "echo.json"
    path.write_text(json.dumps(flow))
    server = serve(str(LLAMA_CAPTURES))
    saved = tmp_path / "saved"
    proc = subprocess.run([sys.executable, "-m", "checker", "probe", server.url, "--model", "tiny-qwen3-random",
                           "--api", "responses", "--scenario-file", str(path), "-s", "echo", "--format", "json",
                           "--save", str(saved), "--profile", "llama.cpp"], capture_output=True, text=True, timeout=120)
    report = json.loads(proc.stdout)
    assert [f["path"] for f in report["files"]] == ["echo.first", "echo.second", "echo.list"]
    assert next(r for r in report["capabilities"] if r["feature"] == "echo")["status"] == "supported"
    record = json.loads((saved / "echo.flow.json").read_text())
    first, second = record["steps"][0]["answer"], record["steps"][1]["request"]
    text = next(i for i in first["output"] if i["type"] == "message")["content"][0]["text"]
    assert second["input"] == text and second["metadata"] == {"after": first["id"]}
    assert (saved / "echo.second.sse").is_file() and proc.returncode == 0, proc.stdout[-2000:]
