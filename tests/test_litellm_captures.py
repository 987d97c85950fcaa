"""captures/litellm: a real gateway's streams, and why every finding on them is a real defect of the gateway.

LiteLLM's proxy (the ``gateway`` extra) bridged the probe's Responses requests to a real llama-server's Chat
Completions (``use_chat_completions_api: true``; see captures/litellm/README.md). tests/test_corpus.py checks
that each capture lints to exactly its ``X.expect.json``; tests/test_client_oracles.py that the matrix is its
``X.clients.json`` and that the real openai-python and openai-node do what the matrix says on every one of
them; the real-server suite (tests/real_server/test_litellm_gateway.py) that the live proxy still sends
streams with these very findings. This file says why each code is there: ``EXPECTED`` lists the codes per
scenario, each with what it is and what the real clients do with it (what they do is run, not assumed: the
oracle tests above).

LIF018 is the one finding here that is no defect of the gateway: a known deviation of OpenAI's own streams,
reported at info.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LITELLM = ROOT / "captures" / "litellm"
CAPTURES = sorted(LITELLM.glob("*.sse"))

# --- what each code means on these streams ---------------------------------------------------------------------

SSE009 = ("info: no `event:` line; openai-python and openai-node dispatch on the JSON `type` and do not care "
          "(both finish), but the Open Responses spec requires the event name, so its suite fails the stream")
SSE011 = ("info: `data: [DONE]` after the terminal event, a Chat Completions habit; both SDKs stop on it "
          "quietly, the Responses API never sends it")
SCH002_SNAPSHOT = ("the response objects of response.created / in_progress / completed lack properties the "
                   "published Response schema requires (error, incomplete_details, instructions, temperature, "
                   "top_p, metadata; `strict` on the echoed function tools); openai-node's typed snapshot then "
                   "has `undefined` where its types promise a value or null (the matrix's `degraded`)")
SCH003_REASONING = ("the reasoning item is announced without `summary` (required) and finished in "
                    "response.completed as `content: [{type: output_text}]` instead of `reasoning_text`: the "
                    "gateway turns the Chat Completions `reasoning_content` into the wrong item shape, and a "
                    "client that sends it back as history sends an item OpenAI rejects")
SCH001_SUMMARY = ("response.reasoning_summary_text.delta without `summary_index` (required): the real "
                  "openai-node raises `OpenAIError: missing content at index undefined` on it (with RSN001)")
RSN001 = ("reasoning summary deltas with no response.reasoning_summary_part.added before them: the real "
          "openai-node raises `OpenAIError: missing content at index undefined` and the user gets no response "
          "at all; openai-python tolerates it")
SCH008 = ("warning: text deltas, their .done and the finished parts without `logprobs`; openai-node's "
          "accumulator skips the missing array (response-accumulator.js accumulateOutputLogprobs), openai-python "
          "types it optional: the typed result lacks the field")
ITM013 = ("warning: the reasoning item was added `in_progress` and its output_item.done carries no status at "
          "all, so a client that tracks item status never sees it finish")
IDS001 = ("info: the function call's `call_id` is llama-server's random id, not `call_…` as OpenAI's; no "
          "client checks the prefix, tools that route on it do")
REC004 = ("the reasoning item in the terminal snapshot is not the item the stream finished (a summary in "
          "output_item.done, `content: [output_text]` and another status in the snapshot); the real "
          "openai-python's get_final_response() returns the snapshot's item, so the user's final result "
          "differs from what was streamed (the matrix's `degraded`)")
LIF019 = ("warning: `parallel_tool_calls` is `true` in response.created / in_progress and `false` in the "
          "terminal snapshot (reasoning_one_call asked for false: the opening snapshots are the gateway's defaults, "
          "not the request's), and `created_at` can move by a second between the opening snapshots; a client "
          "that reads the request's settings from response.created reads wrong ones")
REC007 = ("the message's output_item.done says `completed`, the terminal response.incomplete lists the same "
          "message as `incomplete`: the final response contradicts what the stream finished")
FNC001 = ("the function call cut by max_output_tokens is finished `completed` with arguments `{`, which is no JSON, "
          "inside a response.incomplete: codex fails to parse the arguments and the Agents SDK raises "
          "`ModelBehaviorError: Invalid JSON input for tool get_time` (llama-server itself marks such a call "
          "incomplete)")
LIF018 = ("info, a known deviation of the reference server: `usage.input_tokens_details` without "
          "`cache_write_tokens`, as OpenAI's own streams recorded before mid-2026 (codex defaults it, the SDKs "
          "do not validate it); reported so the skew is visible, not as a defect")

# The codes each recorded scenario produces under --profile openai, with why (see the README for more).
EXPECTED: dict[str, dict[str, str]] = {
    "plain_text": {
        "SSE009": SSE009, "SSE011": SSE011, "SCH002": SCH002_SNAPSHOT, "SCH008": SCH008, "LIF018": LIF018,
        "LIF019": LIF019,
    },
    "reasoning_text": {
        "SSE009": SSE009, "SSE011": SSE011, "SCH001": SCH001_SUMMARY, "SCH002": SCH002_SNAPSHOT,
        "SCH003": SCH003_REASONING, "SCH008": SCH008, "RSN001": RSN001, "ITM013": ITM013,
        "REC004": REC004, "LIF018": LIF018, "LIF019": LIF019,
    },
    "reasoning_one_call": {
        "SSE009": SSE009, "SSE011": SSE011, "SCH001": SCH001_SUMMARY,
        "SCH002": SCH002_SNAPSHOT, "SCH003": SCH003_REASONING, "RSN001": RSN001, "ITM013": ITM013,
        "IDS001": IDS001, "REC004": REC004, "LIF018": LIF018, "LIF019": LIF019,
    },
    "parallel_calls": {  # the tiny model calls one tool only: the same stream shape as reasoning_one_call
        "SSE009": SSE009, "SSE011": SSE011, "SCH001": SCH001_SUMMARY,
        "SCH002": SCH002_SNAPSHOT, "SCH003": SCH003_REASONING, "RSN001": RSN001, "ITM013": ITM013,
        "IDS001": IDS001, "REC004": REC004, "LIF018": LIF018,
    },
    "function_call_truncated": {  # reasoning_one_call cut at max_output_tokens 24: ends with response.incomplete
        "SSE009": SSE009, "SSE011": SSE011, "SCH001": SCH001_SUMMARY, "SCH002": SCH002_SNAPSHOT,
        "SCH003": SCH003_REASONING, "RSN001": RSN001, "ITM013": ITM013, "IDS001": IDS001, "FNC001": FNC001,
        "REC004": REC004, "LIF018": LIF018, "LIF019": LIF019,
    },
    "reasoning_text_truncated": {  # correctly ends with response.incomplete (max_output_tokens)
        "SSE009": SSE009, "SSE011": SSE011, "SCH001": SCH001_SUMMARY, "SCH002": SCH002_SNAPSHOT,
        "SCH003": SCH003_REASONING, "SCH008": SCH008, "RSN001": RSN001, "ITM013": ITM013,
        "REC004": REC004, "REC007": REC007, "LIF018": LIF018, "LIF019": LIF019,
    },
}


def _name(path: Path) -> str:
    return path.name.removesuffix(".sse")


def _sidecar(path: Path, kind: str) -> Path:
    return path.with_name(f"{_name(path)}.{kind}")


def test_every_recorded_stream_is_explained() -> None:
    assert {_name(p) for p in CAPTURES} == set(EXPECTED)


@pytest.mark.parametrize("path", CAPTURES, ids=_name)
def test_the_declared_codes_are_the_explained_ones(path: Path) -> None:
    declared = json.loads(_sidecar(path, "expect.json").read_text())
    assert set(declared) == {"openai"}
    assert set(declared["openai"]) == set(EXPECTED[_name(path)])


@pytest.mark.parametrize("path", CAPTURES, ids=_name)
def test_each_capture_is_a_whole_recording_of_the_pinned_gateway(path: Path) -> None:
    """The sidecars the corpus reads are there, and the headers name the LiteLLM release the extra pins."""
    request = json.loads(_sidecar(path, "request.json").read_text())
    assert request["stream"] is True and request["model"] == "tiny-qwen3-random"
    head = _sidecar(path, "headers.txt").read_text().splitlines()
    assert head[0] == "HTTP/1.1 200 OK"
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in head[1:])}
    assert headers["content-type"].startswith("text/event-stream")
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    (pin,) = pyproject["project"]["optional-dependencies"]["gateway"]
    assert pin == f"litellm[proxy]=={headers['x-litellm-version']}"
    assert path.read_bytes().rstrip().endswith(b"data: [DONE]")  # recorded to the end


@pytest.mark.parametrize("path", CAPTURES, ids=_name)
def test_openai_node_breaks_exactly_where_the_reasoning_summary_is_malformed(path: Path) -> None:
    """The one break both real SDKs show on these streams: openai-node on summary deltas without their part
    (RSN001). tests/test_client_oracles.py runs the real openai-node on the capture and holds it to this."""
    verdicts = json.loads(_sidecar(path, "clients.json").read_text())
    assert (verdicts["openai-node"] == "breaks") == ("RSN001" in EXPECTED[_name(path)])


def test_the_readme_explains_every_code_and_names_the_release() -> None:
    readme = (LITELLM / "README.md").read_text()
    for code in set().union(*EXPECTED.values()):
        assert re.search(rf"\b{code}\b", readme), code
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    (pin,) = pyproject["project"]["optional-dependencies"]["gateway"]
    assert pin.split("==")[1] in readme
    assert "use_chat_completions_api: true" in readme
