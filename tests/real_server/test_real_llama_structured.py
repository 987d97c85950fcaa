"""Structured output against the real llama-server (``make test-all``): the capability table's rows and the
findings behind them, pinned to what the server does (docs/spec.md §8).

Found by running it (llama-server b11434, the tiny model, ``--jinja``): its /v1/chat/completions turns a
json_schema ``response_format`` into a grammar, so the answer is JSON from its first token (the tiny model may
run out of tokens inside a string: FMT006, said, not judged); its /v1/responses ignores ``text.format`` and its
/v1/messages ignores ``output_config.format``: both answer in prose (FMT001, the answer cannot even begin the
JSON object asked for). Asked with ``stream: false`` each endpoint does the same (chat's answer is JSON, the other
two answer in prose: FMT001 on the non-streamed answer too).
"""

from __future__ import annotations

import json
from typing import Any

from test_real_llama_server import MODEL, by_name, run


def test_structured_output_is_followed_on_chat_only(real_llama: Any) -> None:
    # The non-streamed answer sends nothing until it is whole, and llama-server's grammar-constrained sampling
    # of the chat answer is slow on the tiny CPU model (about a minute for its 200 tokens on a loaded machine):
    # the first byte may come later than the default 60 s.
    proc = run("probe", real_llama.url, "--model", MODEL, "--profile", "llama.cpp", "-s", "structured_output",
               "--first-byte-timeout", "600", "--format", "json", timeout=1500)
    code, report = proc.returncode, json.loads(proc.stdout)
    rows = {row["feature"]: row for row in report["capabilities"] if row["feature"].startswith("structured")}
    assert {name: row["status"] for name, row in rows.items()} == {
        "structured_output.responses": "broken", "structured_output.chat": "supported",
        "structured_output.messages": "broken"}, rows
    for name in ("structured_output.responses", "structured_output.messages"):
        assert rows[name]["finding"]["code"] == "FMT001", rows[name]
    loud = {name: sorted({f["code"] for f in e["findings"] if f["severity"] != "info"})
            for name, e in by_name(report).items()}
    assert {name: found for name, found in loud.items() if found} == {
        "structured_output.answer": ["FMT001"], "messages/structured_output.answer": ["FMT001"],
        # asked with stream: false (the parse() helpers' path), each endpoint does as it does streaming
        "structured_output.answer_nonstream": ["FMT001"], "messages/structured_output.answer_nonstream": ["FMT001"]}
    assert code == 1
    readiness = {r["client"]: r["verdict"] for r in report["readiness"]}
    # structured output is optional to every client: a broken row degrades those that use it
    assert readiness["anthropic-python"] == "degraded" and readiness["openai-agents"] == "degraded"
