"""The OpenAI Agents SDK (Python) driver: ``Runner.run_streamed`` of an agent over a loopback server.

    {env}/bin/python openai_agents_driver.py BASE_URL MODEL DIALECT [TOOL,NAMES]   -> one JSON outcome
    {env}/bin/python openai_agents_driver.py --batch < jobs                        -> one outcome line per job

Runs in the ``openai-agents`` environment (``checker/oracles/pins/openai-agents.txt``). The agent's model is
``OpenAIResponsesModel`` (dialect ``responses``) or ``OpenAIChatCompletionsModel`` (``chat``) over an
``AsyncOpenAI(base_url=BASE_URL, max_retries=0)``; tracing is off (``set_tracing_disabled``, and
``OPENAI_AGENTS_DISABLE_TRACING=1`` before the import), so nothing is exported anywhere. The user's call is
``Runner.run_streamed(agent, input)`` and iterating ``stream_events()``: errors surface there (``Runner.run``
where the capture's declared request says ``stream: false``: that user's model request asks for one JSON answer).

Each function the stream calls is a tool of the agent (an undeclared one fails the run), whose arguments are
parsed by the SDK's own parser for function tools (``agents.tool._parse_function_tool_json_input``, what
``@function_tool`` runs: ``ModelBehaviorError: Invalid JSON input for tool X`` on arguments that are not
JSON), and ``tool_use_behavior="stop_on_first_tool"`` ends the run after the first tool call, so no second
model request is made. The outcome's text is the run's message items; its tool calls the run's tool-call items.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import warnings
from typing import Any

os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")

from driver_common import Call, error_text, main, outcome, timeout_s  # noqa: E402

CLIENT = "openai-agents"


def _sdk() -> Any:
    import agents

    agents.set_tracing_disabled(True)
    return agents


def _tool(agents: Any, name: str) -> Any:
    from agents.tool import _parse_function_tool_json_input

    async def invoke(ctx: Any, arguments: str) -> str:
        return json.dumps({"ok": True, "input": _parse_function_tool_json_input(tool_name=name, input_json=arguments)})

    return agents.FunctionTool(name=name, description=name, on_invoke_tool=invoke, strict_json_schema=False,
                               params_json_schema={"type": "object", "additionalProperties": True})


def _get(raw: Any, key: str) -> Any:
    return raw.get(key) if isinstance(raw, dict) else getattr(raw, key, None)


_SHARED: dict[str, Any] = {}


def _http() -> Any:
    # One HTTP client for the whole batch (each AsyncOpenAI would otherwise build its own, TLS context and all:
    # most of a loopback run's cost); the SDK's own default client, with its own settings.
    if "http" not in _SHARED:
        from openai import DefaultAsyncHttpxClient

        _SHARED["http"] = DefaultAsyncHttpxClient()
    return _SHARED["http"]


async def _run(call: Call, out: dict[str, Any]) -> None:
    agents = _sdk()
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=call.base_url, api_key="sk-oracle", max_retries=0, timeout=timeout_s(),
                         http_client=_http())
    model = (agents.OpenAIResponsesModel(model=call.model, openai_client=client) if call.dialect == "responses"
             else agents.OpenAIChatCompletionsModel(model=call.model, openai_client=client))
    agent = agents.Agent(name="oracle", instructions="Answer.", model=model,
                         tools=[_tool(agents, name) for name in call.tools], tool_use_behavior="stop_on_first_tool")
    result = None
    try:
        if call.request.get("stream") is False:
            # The request the capture declares did not ask for a stream: the user's call is ``Runner.run``, whose
            # model request says ``stream: false`` and reads the answer as one JSON object.
            result = await agents.Runner.run(agent, input="hi", max_turns=2)
        else:
            result = agents.Runner.run_streamed(agent, input="hi", max_turns=2)
            async for _ in result.stream_events():
                pass
    except Exception as exc:  # noqa: BLE001 - whatever the SDK raises is the outcome
        out["raised"] = error_text(exc)
    if result is None:
        return
    texts = [agents.ItemHelpers.text_message_output(item) for item in result.new_items
             if item.type == "message_output_item"]
    out["text"] = "".join(texts) if texts else None
    for item in result.new_items:
        if item.type == "tool_call_item":
            raw = item.raw_item
            out["tool_calls"].append({"id": _get(raw, "call_id") or _get(raw, "id"), "name": _get(raw, "name"),
                                      "arguments": _get(raw, "arguments")})


def run(call: Call) -> dict[str, Any]:
    from importlib.metadata import version

    out = outcome(CLIENT, version("openai-agents"), call.dialect)
    if call.dialect not in ("responses", "chat"):
        out["raised"] = "UnsupportedDialect: the Agents SDK's OpenAI models speak Responses and Chat Completions"
        return out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _loop().run_until_complete(_run(call, out))
    return out


def _loop() -> asyncio.AbstractEventLoop:
    # One event loop for the batch: the shared HTTP client belongs to it.
    if "loop" not in _SHARED:
        _SHARED["loop"] = asyncio.new_event_loop()
    loop: asyncio.AbstractEventLoop = _SHARED["loop"]
    return loop


if __name__ == "__main__":
    sys.exit(main(run))
