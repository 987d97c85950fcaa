"""The LangChain driver: a chat model's ``.stream()`` over a loopback server, chunks summed as its users do.

    {env}/bin/python langchain_driver.py BASE_URL MODEL DIALECT [TOOL,NAMES]   -> one JSON outcome
    {env}/bin/python langchain_driver.py --batch < jobs                        -> one outcome line per job

Runs in the ``langchain`` environment (``checker/oracles/pins/langchain.txt``). ``responses``:
``ChatOpenAI(base_url=BASE_URL, use_responses_api=True)``; ``chat``: the same with ``use_responses_api=False``;
``messages``: ``ChatAnthropic(base_url=ROOT)`` (the Anthropic SDK adds ``/v1/messages`` itself). Retries 0;
LangSmith tracing off (``LANGSMITH_TRACING=false``, ``LANGCHAIN_TRACING_V2=false``). The functions the stream
calls are bound as tools (``bind_tools``), and the call is ``for chunk in model.stream("hi"): acc = acc +
chunk``: the summed ``AIMessageChunk`` is the result (its text, tool calls, invalid tool calls and response
metadata). LangChain reports arguments it cannot parse as ``invalid_tool_calls`` instead of raising: each is
one of the outcome's ``errors``.
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from typing import Any

os.environ["LANGSMITH_TRACING"] = "false"
os.environ["LANGCHAIN_TRACING_V2"] = "false"

from driver_common import Call, error_text, main, outcome, timeout_s  # noqa: E402

CLIENT = "langchain"


def _model(call: Call) -> Any:
    if call.dialect == "messages":
        from langchain_anthropic import ChatAnthropic

        return ChatAnthropic(model=call.model, base_url=call.root_url, api_key="sk-ant-oracle", max_retries=0,
                             timeout=timeout_s())
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(model=call.model, base_url=call.base_url, api_key="sk-oracle", max_retries=0,
                      timeout=timeout_s(), use_responses_api=call.dialect == "responses", http_client=_http())


_SHARED: dict[str, Any] = {}


def _http() -> Any:
    # One HTTP client for the batch (a client per model would build its own TLS context each time: most of a
    # loopback run's cost); openai's own default client.
    if "http" not in _SHARED:
        from openai import DefaultHttpxClient

        _SHARED["http"] = DefaultHttpxClient()
    return _SHARED["http"]


def _text(message: Any) -> str | None:
    text = message.text
    text = text() if callable(text) else text
    return text if isinstance(text, str) else None


def run(call: Call) -> dict[str, Any]:
    from importlib.metadata import version

    package = "langchain-anthropic" if call.dialect == "messages" else "langchain-openai"
    out = outcome(CLIENT, version(package), call.dialect)
    model = _model(call)
    if call.tools:
        model = model.bind_tools([{"type": "function", "function": {
            "name": name, "description": name, "parameters": {"type": "object", "additionalProperties": True}}}
            for name in call.tools])
    acc: Any = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            for chunk in model.stream("hi"):
                acc = chunk if acc is None else acc + chunk
        except Exception as exc:  # noqa: BLE001 - whatever the client raises is the outcome
            out["raised"] = error_text(exc)
    if acc is None:
        return out
    out["text"] = _text(acc) or None
    out["tool_calls"] = [{"id": c.get("id"), "name": c.get("name"),
                          "arguments": json.dumps(c.get("args"), sort_keys=True, separators=(",", ":"),
                                                  ensure_ascii=False)} for c in acc.tool_calls]
    out["errors"] = [f"invalid tool call {c.get('name')!r}: {c.get('error') or c.get('args')}"
                     for c in acc.invalid_tool_calls]
    metadata = acc.response_metadata or {}
    finish = metadata.get("finish_reason") or metadata.get("stop_reason")
    out["finish_reason"] = finish if isinstance(finish, str) else None
    status = metadata.get("status")
    out["status"] = status if isinstance(status, str) else None
    return out


if __name__ == "__main__":
    sys.exit(main(run))
