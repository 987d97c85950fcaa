"""``sse-check proxy`` checks what an Anthropic Messages client sends back of the thinking (RPL008-RPL010).

Real processes on loopback: ``sse-check serve`` answering as Anthropic's API does (the set of
tests/live/test_live_replay_messages.py: signed thinking, a redacted_thinking block, a tool call), the proxy in
front, and the real anthropic-python as the client, driven as its users drive a tool loop: the right history
sends ``message.content`` back as it came; the wrong ones drop the signature, edit the thinking, or leave the
thinking out, as clients that rebuild the assistant message do.
"""

from __future__ import annotations

import copy
import json
import signal
from pathlib import Path
from typing import Any, Callable

import pytest

from checker.replay import live
from tests.live.conftest import ServerProcess
from tests.live.test_live_replay_messages import anthropic_set

anthropic = pytest.importorskip("anthropic")


def _turn(client: Any, scenario: str, messages: list[dict[str, Any]]) -> Any:
    body = live.turn1_fallback("anthropic")
    assert body is not None
    params = {k: v for k, v in body.items() if k != "messages"}
    with client.messages.stream(model="m", messages=messages, extra_headers={"X-SSE-Check-Scenario": scenario},
                                **params) as stream:
        return stream.get_final_message()


def test_a_tool_loop_sent_back_right_and_wrong(serve: Any, proxy: Callable[..., ServerProcess], tmp_path: Path) -> None:
    upstream = serve(str(anthropic_set(tmp_path / "anthropic")))
    report = tmp_path / "report.json"
    px = proxy(upstream.url, "--format", "json", "-o", str(report))
    client = anthropic.Anthropic(base_url=px.url, api_key="test-key", max_retries=0)
    prompt = {"role": "user", "content": live.PROMPT}
    first = _turn(client, "turn1", [prompt])
    assert [b.type for b in first.content] == ["thinking", "redacted_thinking", "tool_use"]
    assert first.content[0].signature and first.content[1].data  # as the server streamed them
    results = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": first.content[2].id,
                                            "content": "{\"time\": \"14:05\"}"}]}
    sent = [block.model_dump(exclude_none=True) for block in first.content]
    unsigned = copy.deepcopy(sent)
    del unsigned[0]["signature"]
    edited = copy.deepcopy(sent)
    edited[0]["thinking"] = edited[0]["thinking"].replace("weather", "time")  # the signature no longer matches
    histories = [first.content, unsigned, edited, sent[1:2] + sent[2:], sent[2:]]
    for content in histories:
        answer = _turn(client, "continue-exact", [prompt, {"role": "assistant", "content": content}, results])
        assert answer.content[0].text == "It is 14:05 in Paris."  # the traffic passes untouched
    assert px.stop(signal.SIGINT) == 1  # RPL008 and RPL009 are errors
    document = json.loads(report.read_text())
    found = [sorted(f["code"] for f in entry["findings"] if f["code"].startswith("RPL")) for entry in document["files"]]
    assert found == [[], [], ["RPL008"], ["RPL009"], ["RPL009"], ["RPL010"]], found
    assert {entry["proxy"]["conversation"] for entry in document["files"]} == {"c1"}
    messages = {f["code"]: f["message"] for entry in document["files"] for f in entry["findings"]}
    assert messages["RPL008"] == ("assistant message 1 sends back thinking block 0 without the signature response "
                                  "001 emitted with it")
    assert messages["RPL010"] == ("assistant message 1 is in the current turn but is sent without its thinking "
                                  "(1 thinking block and 1 redacted_thinking block, emitted by response 001)")
    rows = {row["number"]: row for row in document["cache"]}
    assert (rows[2]["prompt_tokens"], rows[2]["cached_tokens"], rows[2]["previous_prompt_tokens"]) == (1670, 1520, 1520)
