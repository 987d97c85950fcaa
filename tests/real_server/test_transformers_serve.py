"""End to end against Hugging Face ``transformers serve`` (PyPI transformers[serving] 5.23.0), through the CLI.

Runs only in the real-server suite (``make test-all``). The server is the session fixture ``transformers_serve``
(conftest.py and transformers_serve.py here): the unmodified server on the project's scripted tiny Qwen3
(tools/tiny-qwen3), offline, its model cache folder absent, one start for the session. One probe of both
endpoints it streams (``--api responses,chat``) is shared by the tests of this module:

* the live findings per scenario are those recorded in captures/transformers (their ``X.expect.json``), and
  the streams it saved lint exactly as they were probed;
* the deviations issue 29 names, asked of the server directly: Responses events without ``event:`` lines,
  reasoning deltas before any content part, a tool call added at ``output_index`` 2 and an empty message added
  at the same index, no ``[DONE]`` on chat, usage on a chunk that has a choice, ``GET /v1/models`` 500 while
  its model cache folder does not exist (and 200 with an empty list once it does);
* every installed real client (checker/oracles/registry.py: openai-python, openai-node, codex, openai-agents,
  langchain) on one live stream of each kind per endpoint (``LIVE``), replayed over loopback as it arrived:
  sse-check's verdict per client is what the client did (tests/test_real_clients.py and the oracle tests run
  them on every stream of the recording); and the real openai-python over the live connection raises where the
  matrix says;
* docs/transformers-serve.md's table of findings is what a probe gives today.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from test_real_llama_server import assert_lint_agrees, run_json
from transformers_serve import MODEL, PROBE_ARGS, RECORDED, SERVED_AS

from checker.captures import request_for
from checker.compat import Verdict, matrix
from checker.engine import StreamLinter
from checker.oracles import Outcome, disagreement, registry, runner
from checker.profiles import get_profile

ROOT = Path(__file__).resolve().parents[2]
# The families of findings a surface flow makes of its steps (not of one body): inputs, tool turns, tool choice,
# stored responses, models, structured output asked of a flow.
FLOW_FAMILIES = ("INP", "TUR", "TCH", "STO", "MOD")
@pytest.fixture(scope="module")
def probed(transformers_serve: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any], Path]:
    """One probe of the live server (every built-in scenario and flow, Responses and chat), saved."""
    saved = tmp_path_factory.mktemp("transformers") / "saved"
    code, report = run_json("probe", transformers_serve.url, *PROBE_ARGS, "--save", str(saved))
    return code, report, saved


# Each chat chunk is stamped with the second it was made, so CHT027 (created changed) is there when an answer spans
# a second boundary and not otherwise.
BY_THE_CLOCK = {"CHT027"}


def _names(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix().removesuffix(".sse") for p in folder.rglob("*.sse")}


def _recorded(name: str) -> set[str]:
    return set(json.loads((RECORDED / f"{name}.expect.json").read_text())["openai"]) - BY_THE_CLOCK


def _codes(entry: dict[str, Any]) -> set[str]:
    return {f["code"] for f in entry["findings"]} - BY_THE_CLOCK


def _file_of(path: str) -> str:
    """The saved file of a probe entry: a retried scenario's first try ("models.list (try 1)") is X.try1.sse."""
    name, sep, rest = path.partition(" (try ")
    return f"{name}.try{rest.rstrip(')')}" if sep else path


def test_the_probe_finds_what_was_recorded_and_its_captures_lint_the_same(probed: tuple[int, dict[str, Any], Path]) \
        -> None:
    code, report, saved = probed
    assert code == 1
    assert _names(saved) == _names(RECORDED)
    # Its 500s are retried once, as the SDKs retry them (HTP025); each try is saved.
    report = {**report, "files": [{**e, "path": _file_of(e["path"])} for e in report["files"]]}
    assert {e["path"] for e in report["files"] if ".try" in e["path"]} == {"chat/malformed_input.try1",
                                                                          "models.list.try1"}
    # The stored-response flow's checks of ids it never got a body for are judgements of the flow alone.
    with_body = [e for e in report["files"] if (saved / f"{e['path']}.sse").is_file()]
    assert sorted(e["path"] for e in report["files"] if e not in with_body) == ["stored/previous_response_id",
                                                                              "stored/stateful_tool_use"]
    # A flow step's entry also carries the flow's own judgement of the answer, which a lint of the body alone
    # cannot make: a forced tool not called, a tool called that was not offered, a hosted tool ignored.
    judged = {e["path"]: sorted({f["code"] for f in e["findings"] if f["code"][:3] in FLOW_FAMILIES})
              for e in with_body}
    assert {path: found for path, found in judged.items() if found} == {
        "custom_tool.forced": ["TCH001", "TCH002"], "hosted_web_search.answer": ["INP002"],
        "tool_choice.forced": ["TCH001"], "chat/tool_choice.forced": ["TCH001"]}
    flow_only = [{**e, "findings": [f for f in e["findings"] if f["code"][:3] not in FLOW_FAMILIES]}
                 for e in with_body]
    assert_lint_agrees({**report, "files": flow_only}, saved)
    assert {e["path"]: _codes(e) for e in flow_only} == {e["path"]: _recorded(e["path"]) for e in flow_only}
    rows = {row["feature"]: row["status"] for row in report["capabilities"]}
    assert rows["stream.responses"] == rows["stream.chat"] == rows["models"] == "broken"


def _events(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in data.decode().splitlines()
            if line.startswith("data: ") and line != "data: [DONE]"]


TOOLS = [{"type": "function", "name": "get_weather", "description": "Get the current weather for a city",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string"}},
                         "required": ["city", "unit"]}}]


def test_the_deviations_of_issue_29(transformers_serve: Any) -> None:
    url = transformers_serve.url
    text = httpx.post(f"{url}/v1/responses", json={"model": MODEL, "input": "Hi", "stream": True}, timeout=120).content
    lines = text.decode().splitlines()
    assert not any(line.startswith("event:") for line in lines) and "data: [DONE]" not in lines
    kinds = [e["type"] for e in _events(text)]
    # Reasoning streamed before (and without) any content part of its own.
    assert kinds.index("response.reasoning_text.delta") < kinds.index("response.content_part.added")
    assert _events(text)[kinds.index("response.content_part.added")]["output_index"] == 1
    # With tools: the call is added at 2 (1 is skipped), then an empty message is added at 2 again.
    call = _events(httpx.post(f"{url}/v1/responses", json={"model": MODEL, "input": "Weather?", "tools": TOOLS,
                                                          "stream": True}, timeout=120).content)
    added = [(e["output_index"], e["item"]["type"]) for e in call if e["type"] == "response.output_item.added"]
    assert added == [(0, "reasoning"), (2, "function_call"), (2, "message")]
    # Chat: no [DONE]; usage rides on the finish chunk, which still has its choice.
    chat = httpx.post(f"{url}/v1/chat/completions", json={"model": MODEL, "stream": True,
                                                          "messages": [{"role": "user", "content": "Hi"}],
                                                          "stream_options": {"include_usage": True}},
                      timeout=120).content
    assert b"[DONE]" not in chat
    chunks = _events(chat)
    assert [bool(c["choices"]) for c in chunks if "usage" in c] == [True]
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop" and chunks[-1]["model"] == SERVED_AS
    # GET /v1/models lists the model cache folder ($HF_HOME/hub), which a new machine does not have yet: 500.
    assert not transformers_serve.hub.exists()
    assert httpx.get(f"{url}/v1/models", timeout=30).status_code == 500
    transformers_serve.hub.mkdir()
    try:
        listed = httpx.get(f"{url}/v1/models", timeout=30)
        # Once it exists: 200, but the model it serves (a local folder, not in that cache) is not listed.
        assert listed.status_code == 200 and listed.json() == {"object": "list", "data": []}
    finally:
        transformers_serve.hub.rmdir()


def test_openai_python_over_the_live_connection_raises_where_the_matrix_says(transformers_serve: Any) -> None:
    client = openai.OpenAI(api_key="sk-none", base_url=f"{transformers_serve.url}/v1", max_retries=0)
    with pytest.raises(RuntimeError, match=r"^Duplicate response output index 2\.$"):
        with client.responses.stream(model=MODEL, input="Weather?", tools=TOOLS) as stream:  # type: ignore[arg-type]
            for _event in stream:
                pass
    # Chat without [DONE] and with usage on the last choice chunk: the SDK returns the answer all the same.
    with client.chat.completions.stream(model=MODEL, messages=[{"role": "user", "content": "Hi"}]) as chat:
        for _event in chat:
            pass
        final = chat.get_final_completion()
    assert final.choices[0].message.content == "Sunny and mild, with a light breeze from the west."


def _whole_streams(saved: Path) -> list[Path]:
    from test_corpus import is_probe_exchange

    return [p for p in sorted(saved.rglob("*.sse")) if not is_probe_exchange(p)]


def _linted(path: Path) -> Any:
    linter = StreamLinter(profile=get_profile("openai"), request=request_for(path))
    linter.feed(path.read_bytes())
    return linter.close()


# One live stream of each kind it answers with, per endpoint: text, a call, a cut (inside the reasoning and inside
# the call), the answer after a tool result. tests/test_real_clients.py, tests/test_client_oracles.py and
# tests/test_chat_oracles.py run the same clients on every stream of the recording (captures/transformers).
LIVE = ("plain_text", "reasoning_one_call", "reasoning_text_truncated", "function_call_truncated", "tool_turn.answer")


@pytest.fixture(scope="module")
def client_runs(probed: tuple[int, dict[str, Any], Path]) -> dict[tuple[str, str], Outcome]:
    """Every installed real client of each dialect on the live probe's streams of LIVE, over loopback."""
    saved = probed[2]
    found: dict[tuple[str, str], Outcome] = {}
    missing = []
    for dialect in ("responses", "chat"):
        folder = saved / "chat" if dialect == "chat" else saved
        paths = [folder / f"{name}.sse" for name in LIVE]
        assert set(paths) <= set(_whole_streams(saved))
        jobs = [runner.job_for(p, dialect) for p in paths]
        for client in registry.for_dialect(dialect):
            try:
                got = runner.run_batch(client.name, jobs)
            except runner.ClientUnavailable as exc:
                missing.append(str(exc))
                continue
            found.update({(client.name, p.relative_to(saved).as_posix().removesuffix(".sse")): o
                          for p, o in zip(paths, got, strict=True)})
    if missing and (os.environ.get("CI") or os.environ.get("SSE_CHECK_REQUIRE_REAL_SERVER")):
        pytest.fail(f"real clients not installed: {'; '.join(missing)}", pytrace=False)
    return found


def test_every_real_client_does_what_the_matrix_predicts_on_the_live_streams(
        probed: tuple[int, dict[str, Any], Path], client_runs: dict[tuple[str, str], Outcome]) -> None:
    saved = probed[2]
    assert client_runs, "no real client is installed"
    wrong = []
    for (client, name), outcome in sorted(client_runs.items()):
        assert outcome.failure is None, f"{client} could not be run on {name}: {outcome.failure}"
        result = _linted(saved / f"{name}.sse")
        why = disagreement(matrix(result)[client].verdict, outcome, result)
        if why is not None:
            wrong.append(f"{client} on {name}: {why}")
    assert wrong == []


def test_the_matrix_names_the_errors_the_sdks_raise(probed: tuple[int, dict[str, Any], Path],
                                                     client_runs: dict[tuple[str, str], Outcome]) -> None:
    """The cells the docs quote, and the real clients' own words for them."""
    saved = probed[2]
    call = matrix(_linted(saved / "reasoning_one_call.sse"))
    assert (call["openai-python"].finding.code, call["openai-python"].symptom) == (  # type: ignore[union-attr]
        "ITM003", "RuntimeError: Duplicate response output index 2.")
    assert client_runs[("openai-python", "reasoning_one_call")].raised == \
        "RuntimeError: Duplicate response output index 2."
    text = matrix(_linted(saved / "plain_text.sse"))
    assert text["openai-node"].finding.code == "CNT004"  # type: ignore[union-attr]
    assert client_runs[("openai-node", "plain_text")].raised == "OpenAIError: missing content at index 0"
    cut = matrix(_linted(saved / "chat" / "function_call_truncated.sse"))
    assert cut["openai-agents"].verdict is Verdict.BREAKS
    assert (client_runs[("openai-agents", "chat/function_call_truncated")].raised or "").startswith(
        "ModelBehaviorError: Chat Completions stream terminated with finish_reason='length'")


def test_the_docs_full_probe_is_what_the_server_gives(probed: tuple[int, dict[str, Any], Path]) -> None:
    """docs/transformers-serve.md shows one real run (``--show error``): its table of findings by rule (the errors)
    is what a probe gives today."""
    _code, report, _saved = probed
    errors = sorted({f["code"] for e in report["files"] for f in e["findings"] if f["severity"] == "error"})
    text = (ROOT / "docs" / "transformers-serve.md").read_text()
    table = text.split("findings by rule\n", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    assert sorted(line.split()[0] for line in table) == errors
