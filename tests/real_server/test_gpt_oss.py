"""End to end against OpenAI's gpt-oss reference Responses server (PyPI gpt-oss 0.0.9), through the CLI.

Runs only in the real-server suite (``make test-all``). The server is the session fixture ``gpt_oss``
(conftest.py and gpt_oss.py here): the unmodified ``gpt_oss.responses_api`` server with the project's scripted
token source (tools/gpt-oss/scripted_serve.py); ``gpt_oss_stub`` is the same server with the package's own stub
model. The clients are the real openai-python 3.57 and openai-node 7.59.

* ``sse-check probe`` with the built-in suite and the gpt-oss scenarios (tools/gpt-oss/scenarios: reasoning
  effort low and ``tool_choice: "auto"``, which it takes, where the built-in ones ask for what it refuses with
  422): the findings per scenario are the ones recorded in captures/gpt-oss (their ``X.expect.json``), and the
  saved captures lint identically;
* the real openai-python against the live server raises exactly where the matrix says it does, and the
  readiness table says so;
* the scripted model answers a request alike whatever ran before it; the package's stub does not (a request
  cut by max_output_tokens leaves the next one mid-script: captures/gpt-oss/stub).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from gpt_oss import MODEL, PROBE_ARGS, RECORDED, SCENARIO_FILES
from test_real_llama_server import assert_lint_agrees, by_name, run_json

import node_oracle
from checker.compat import matrix
from checker.engine import StreamLinter
from checker.oracles import Outcome, disagreement
from checker.oracles.openai_python import run as run_openai_python
from checker.profiles import get_profile

ROOT = Path(__file__).resolve().parents[2]
PROBE = PROBE_ARGS
# The families of findings a surface flow makes of its steps (not of one body): inputs, tool turns, stored
# responses, models.
FLOW_FAMILIES = ("INP", "TUR", "STO", "MOD")


# It stamps each snapshot of a response with the second it was made (generate_response: created_at=now), so
# LIF019 (created_at changed) is there when an answer spans a second boundary and not otherwise.
BY_THE_CLOCK = {"LIF019"}


def recorded_codes(folder: Path, name: str, profile: str = "openai") -> set[str]:
    return set(json.loads((folder / f"{name}.expect.json").read_text())[profile]) - BY_THE_CLOCK


def saved_names(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix().removesuffix(".sse") for p in folder.glob("*.sse")}


def test_the_probe_finds_what_was_recorded_and_its_captures_lint_the_same(gpt_oss: Any, tmp_path: Path) -> None:
    saved = tmp_path / "saved"
    code, report = run_json("probe", gpt_oss.url, *PROBE, "--save", str(saved))
    assert code == 1
    # Every entry with a saved body lints as it was probed; the one without (the stored-response flow's check
    # of an unknown previous_response_id, STO005) is a judgement of the flow, saved as stored.flow.json.
    with_body = [e for e in report["files"] if (saved / f"{e['path']}.sse").is_file()]
    assert [e["path"] for e in report["files"] if e not in with_body] == ["stored/previous_response_id"]
    # A flow step's entry also carries the flow's own judgement of the answer (INP001: the input form was
    # refused), which its X.flow.json records and a lint of the body alone cannot make.
    flow_only = [{**e, "findings": [f for f in e["findings"] if f["code"][:3] not in FLOW_FAMILIES]}
                 for e in with_body]
    judged = {e["path"]: sorted({f["code"] for f in e["findings"] if f["code"][:3] in FLOW_FAMILIES})
              for e in with_body}
    assert {path: found for path, found in judged.items() if found} == {"system_message.answer": ["INP001"]}
    assert_lint_agrees({**report, "files": flow_only}, saved)
    assert saved_names(saved) == saved_names(RECORDED)
    entries = {e["path"]: e for e in flow_only}
    assert {name: {f["code"] for f in entry["findings"]} - BY_THE_CLOCK for name, entry in entries.items()} == \
        {name: recorded_codes(RECORDED, name) for name in entries}
    # It serves Responses only: chat and Messages are one "not served" line each, no scenario of theirs runs.
    rows = {row["feature"]: row for row in report["capabilities"]}
    assert rows["stream.chat"]["status"] == rows["stream.messages"]["status"] == rows["models"]["status"] \
        == "unsupported"
    assert not any(name.startswith(("chat/", "messages/")) for name in by_name(report))


def test_what_it_refuses_it_refuses_with_fastapis_422(gpt_oss: Any) -> None:
    """Reasoning effort none and tool_choice required are not in its request model (gpt_oss/responses_api/
    types.py): 422 with FastAPI's validation body, which the SDKs raise as UnprocessableEntityError."""
    client = openai.OpenAI(api_key="sk-none", base_url=f"{gpt_oss.url}/v1", max_retries=0)
    with pytest.raises(openai.UnprocessableEntityError) as refused:
        client.responses.create(model=MODEL, input="Hi", reasoning={"effort": "none"})
    # openai-python 3.57 reads message, code and type from an OpenAI error object: without one the message says
    # only the status, and the reason is left in the body.
    assert (refused.value.status_code, refused.value.message) == (422, "Error code: 422")
    assert refused.value.code is None and refused.value.type is None
    assert isinstance(refused.value.body, dict) and refused.value.body["detail"][0]["loc"] == ["body", "reasoning",
                                                                                              "effort"]
    answer = httpx.post(f"{gpt_oss.url}/v1/responses", json={"model": MODEL, "input": "Hi", "tool_choice": "required"})
    assert answer.status_code == 422 and answer.json()["detail"][0]["loc"] == ["body", "tool_choice"]


def _linted(data: bytes) -> Any:
    linter = StreamLinter(profile=get_profile("openai"))
    linter.feed(data)
    return linter.close()


def test_the_real_clients_do_what_the_matrix_predicts_on_its_live_streams(gpt_oss: Any, tmp_path: Path) -> None:
    """openai-python over the live connection, openai-node on the bytes it sent: on every text stream both
    raise, openai-python at the first *.done (one index past its item's added), openai-node at the first item
    (added at -1); a function call (no added, no argument events) is read by openai-python."""
    client = openai.OpenAI(api_key="sk-none", base_url=f"{gpt_oss.url}/v1", max_retries=0)
    tools = json.loads((SCENARIO_FILES / "one_call_auto.json").read_text())["request"]["tools"]
    with pytest.raises(RuntimeError, match="Received a content event for output index 1 before receiving its "
                                           "output item"):
        with client.responses.stream(model=MODEL, input="Hello", reasoning={"effort": "low"}) as stream:
            for _event in stream:
                pass
    with client.responses.stream(model=MODEL, input="Weather?", tools=tools, tool_choice="auto") as stream:
        for _event in stream:
            pass
        final = stream.get_final_response()
    assert [item.type for item in final.output] == ["reasoning", "function_call"]
    assert json.loads(final.output[1].arguments) == {"city": "Paris", "unit": "celsius"}
    # The same requests' raw bytes: the matrix against both real clients.
    bodies = {}
    for name, body in (("text", {"input": "Hello", "reasoning": {"effort": "low"}}),
                       ("call", {"input": "Weather?", "tools": tools, "tool_choice": "auto"})):
        bodies[name] = httpx.post(f"{gpt_oss.url}/v1/responses", json={"model": MODEL, "stream": True, **body},
                                  timeout=60).content
        (tmp_path / f"{name}.sse").write_bytes(bodies[name])
    target = node_oracle.ensure_installed()
    node = dict(zip(bodies, node_oracle.run([tmp_path / f"{name}.sse" for name in bodies], target), strict=True))
    for name, data in bodies.items():
        result = _linted(data)
        for outcome in (run_openai_python(data), Outcome.from_dict(node[name])):
            assert disagreement(matrix(result)[outcome.client].verdict, outcome, result) is None, (name, outcome)
    assert matrix(_linted(bodies["text"]))["openai-python"].finding.code == "ITM005"
    assert Outcome.from_dict(node["text"]).raised == "OpenAIError: Invalid response output index."


def test_the_readiness_table_says_which_clients_it_breaks(gpt_oss: Any) -> None:
    code, report = run_json("probe", gpt_oss.url, *PROBE, "--api", "responses",
                            "-s", "plain_text_low,one_call_auto")
    verdicts = {r["client"]: r for r in report["readiness"]}
    assert {c: r["verdict"] for c, r in verdicts.items()} == {
        "openai-python": "broken", "openai-node": "broken", "codex": "degraded", "openai-agents": "degraded",
        "anthropic-python": "unknown", "anthropic-ts": "unknown"}  # --api responses: Messages not probed
    assert verdicts["openai-python"]["finding"]["code"] == "ITM005"
    assert verdicts["openai-node"]["finding"]["code"] == "ITM014"
    assert code == 1


def _stream_text(url: str, body: dict[str, Any]) -> str:
    data = httpx.post(f"{url}/v1/responses", json={"model": MODEL, "stream": True, **body}, timeout=60).content
    done = [json.loads(line[6:]) for line in data.decode().splitlines() if line.startswith("data: ")]
    completed = [e for e in done if e["type"] == "response.completed"]
    assert completed, data[-500:]
    return json.dumps([{k: v for k, v in item.items() if k not in ("id", "call_id")}
                       for item in completed[0]["response"]["output"]])


def test_the_scripted_model_answers_a_request_alike_whatever_ran_before(gpt_oss: Any) -> None:
    body = {"input": "What is the weather in Paris?", "reasoning": {"effort": "low"}}
    first = _stream_text(gpt_oss.url, body)
    httpx.post(f"{gpt_oss.url}/v1/responses", json={"model": MODEL, "stream": True, "max_output_tokens": 16,
                                                     "input": "Weather in Tokyo please"}, timeout=60)
    assert _stream_text(gpt_oss.url, body) == first
    # After a tool result it answers with it.
    tools = json.loads((SCENARIO_FILES / "one_call_auto.json").read_text())["request"]["tools"]
    call = {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{}"}
    answer = _stream_text(gpt_oss.url, {"tools": tools, "input": [
        {"type": "message", "role": "user", "content": "Weather?"}, call,
        {"type": "function_call_output", "call_id": "call_1", "output": "sunny, 21 C"}]})
    assert "The tool returned: sunny, 21 C" in answer


def test_the_package_stub_leaks_a_cut_request_into_the_next(gpt_oss_stub: Any, tmp_path: Path) -> None:
    """The stub's one token queue, shared by all requests, left mid-script by a max_output_tokens cut: the next
    request starts mid-message, the server's harmony parser fails and the stream is cut (HTP012), as recorded."""
    saved = tmp_path / "stub"
    code, report = run_json("probe", gpt_oss_stub.url, *PROBE, "--api", "responses",
                            "-s", "reasoning_text_truncated,plain_text_low", "--save", str(saved))
    assert code == 1
    assert_lint_agrees(report, saved)
    entries = by_name(report)
    assert {name: {f["code"] for f in e["findings"]} - BY_THE_CLOCK for name, e in entries.items()} == \
        {name: recorded_codes(RECORDED / "stub", name) for name in entries}
    assert "HTP012" in recorded_codes(RECORDED / "stub", "plain_text_low")
    assert "HTP012" not in recorded_codes(RECORDED / "stub" / "fresh", "plain_text_low")


def test_the_docs_full_probe_is_what_the_server_gives(gpt_oss: Any) -> None:
    """docs/gpt-oss.md shows one real run under --profile gpt-oss: its table of findings by rule (what the
    profile leaves above info) is what a probe gives today."""
    code, report = run_json("probe", gpt_oss.url, *PROBE, "--profile", "gpt-oss")
    loud = sorted({f["code"] for e in report["files"] for f in e["findings"] if f["severity"] != "info"})
    text = (ROOT / "docs" / "gpt-oss.md").read_text()
    table = text.split("findings by rule\n", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    assert sorted(line.split()[0] for line in table) == loud
    assert code == 1
