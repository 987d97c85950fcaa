"""What the peer testers (CompatCanary, openai-compatible-tester; docs/peers/) found on the real llama-server
that sse-check's other flows do not ask: a tool forced by name, a custom tool, JSON mode on /v1/responses.

Found by running it (llama-server b11434, the tiny model, ``--jinja``): on /v1/responses, with the flow's
reasoning effort ``none``, it enforces no tool choice at all (a named one or ``"required"``: the answer is the
unconstrained random model's prose), has no custom tools, and ignores ``text.format: json_object``; on
/v1/chat/completions it follows ``response_format: json_object`` (a grammar). On chat and messages a named tool
choice is taken as "some tool" (the grammar lets the model pick either offered function), so the row depends on
the pick; what never happens is a call to a function that was not offered.
"""

from __future__ import annotations

from typing import Any

from test_real_llama_server import MODEL, by_name, run_json


def test_the_forced_tool_custom_tool_and_json_mode_rows_of_the_real_server(real_llama: Any) -> None:
    code, report = run_json("probe", real_llama.url, "--model", MODEL, "--profile", "llama.cpp",
                            "-s", "tool_choice,custom_tool,json_mode")
    rows = {row["feature"]: row for row in report["capabilities"] if not row["feature"].startswith("stream.")}
    assert set(rows) == {"tool_choice.responses", "tool_choice.chat", "tool_choice.messages",
                         "custom_tool.responses", "json_mode.responses", "json_mode.chat"}
    for feature in ("tool_choice.responses", "custom_tool.responses"):
        assert rows[feature]["status"] == "broken", rows[feature]
        assert rows[feature]["finding"]["code"] == "TCH001" and "the answer is text, with no call" in \
            rows[feature]["why"], rows[feature]
    assert rows["json_mode.responses"]["status"] == "broken"
    assert rows["json_mode.responses"]["finding"]["code"] == "FMT001"
    assert rows["json_mode.chat"]["status"] == "supported", rows["json_mode.chat"]
    for feature in ("tool_choice.chat", "tool_choice.messages"):
        row = rows[feature]
        assert row["status"] in ("supported", "broken"), row  # accepted; the pick decides (see the doc)
        if row["status"] == "broken":
            assert row["finding"]["code"] == "TCH001" and "the answer called get_weather instead" in row["why"]
    codes = {f["code"] for e in by_name(report).values() for f in e["findings"]}
    assert "TCH002" not in codes  # every call names a tool the request offered
    assert code == 1
