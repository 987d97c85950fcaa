"""The surface a client relies on, against the real llama-server (``make test-real-server``): the capability
table and the per-client readiness the probe reports, pinned to what the server does.

Found by running it (llama-server b-series, one model, ``--jinja``): it lists its one model under the file's
alias, answers any model name (MOD003, a known deviation of the llama.cpp profile), takes a tool's result back
in all three dialects (function_call_output, tool message, tool_result block), and accepts a result for a call
id that no call has (HTP005 on each ``tool_turn.orphan``), where OpenAI and Anthropic answer 400. It keeps no
response: the ten stored-response rows are unsupported, none a finding (docs/stored.md; tests/real_server/
test_real_llama_stored.py asks openai-python the same), so no client is worse for them.
"""

from __future__ import annotations

from typing import Any

from test_real_llama_server import MODEL, by_name, run_json


def test_the_capability_table_and_readiness_of_the_real_server(real_llama: Any) -> None:
    code, report = run_json("probe", real_llama.url, "--model", MODEL, "--profile", "llama.cpp",
                            "-s", "plain_text,models,tool_turn,stored")
    rows = {row["feature"]: row for row in report["capabilities"]}
    assert {name: row["status"] for name, row in rows.items()} == {
        "stream.responses": "supported", "stream.chat": "supported", "stream.messages": "supported",
        "models": "supported", "tool_turn.responses": "supported", "tool_turn.chat": "supported",
        "tool_turn.messages": "supported",
        **{f"stored.{feature}": "unsupported" for feature in (
            "retrieve", "input_items", "resumption", "delete", "previous_response_id", "stateful_tool_use",
            "background", "cancel", "conversations", "compact")}}
    # It lists its one model by the file it was loaded from, and answers the name the probe sends.
    assert rows["models"]["finding"]["code"] == "MOD003" and "tiny-qwen3-random.gguf" in rows["models"]["why"]
    entries = by_name(report)
    loud = {name: sorted({f["code"] for f in e["findings"] if f["severity"] != "info"}) for name, e in entries.items()}
    # A tool result for a call id no call has is answered as a success in every dialect.
    assert {name: found for name, found in loud.items() if found} == {
        "tool_turn.orphan": ["HTP005"], "chat/tool_turn.orphan": ["HTP005"], "messages/tool_turn.orphan": ["HTP005"]}
    assert code == 1
    verdicts = {r["client"]: r for r in report["readiness"]}
    # What the strict Responses accumulators meet in its plain_text stream (known deviations still break them);
    # codex, the Agents SDK and the Anthropic SDKs get what they need, tool turns included.
    assert {c: r["verdict"] for c, r in verdicts.items()} == {
        "openai-python": "broken", "openai-node": "broken", "codex": "ready", "openai-agents": "ready",
        "anthropic-python": "ready", "anthropic-ts": "ready"}
    assert verdicts["openai-python"]["finding"]["code"] == "CNT001"
    assert verdicts["openai-node"]["finding"]["code"] == "ITM001"


def test_the_input_forms_of_the_real_server(real_llama: Any) -> None:
    """System and developer messages and an earlier assistant turn are taken; without a vision projector an image
    is declined with a 500 saying so, a file with a 400: both unsupported, one line each. The hosted web_search
    tool, forced, is taken and ignored: a text answer, no web_search_call (INP002)."""
    code, report = run_json("probe", real_llama.url, "--model", MODEL, "--profile", "llama.cpp", "--api",
                            "responses", "-s", "system_message,assistant_history,image_input,file_input,"
                                              "hosted_web_search")
    rows = {row["feature"]: row for row in report["capabilities"]}
    assert {name: row["status"] for name, row in rows.items() if name.startswith("inputs.")} == {
        "inputs.system_message": "supported", "inputs.assistant_history": "supported",
        "inputs.image_input": "unsupported", "inputs.file_input": "unsupported",
        "inputs.hosted_web_search": "broken"}
    assert rows["inputs.image_input"]["why"].startswith("POST /v1/responses: 500 (")
    assert rows["inputs.hosted_web_search"]["finding"]["code"] == "INP002"
    assert code == 1
