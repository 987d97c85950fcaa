"""The anthropic-python oracle: what the real ``client.messages.stream()`` does with a capture.

A real ``Anthropic`` client is pointed at a loopback HTTP server that answers with the capture's bytes
(``checker.oracles.loopback``), so the SDK's whole call path runs: its HTTP stack, its SSE decoder
(``anthropic._streaming``: events without an ``event:`` line and ``ping`` are skipped, ``event: error``
raises), and the helper its users call. Two modes:

* ``stream`` (default): ``with client.messages.stream(...) as s: for e in s: ...`` then
  ``s.get_final_message()``; the outcome's output is the final message's content blocks.
* ``create``: ``for e in client.messages.create(..., stream=True)``, the raw events as they are yielded,
  accumulated the way that call's users do (text and thinking deltas joined, partial_json joined and
  parsed); ``message_stop`` is not needed there either.

``drive`` is the registry's entry: the ``stream`` call on a :class:`~checker.oracles.protocol.DriverCall`.

``anthropic`` is imported lazily; without it :class:`OracleUnavailable` says so.
"""

from __future__ import annotations

import json
import warnings
from typing import Any

from checker.oracles import OracleUnavailable
from checker.oracles.loopback import serve_body
from checker.oracles.protocol import DriverCall, Outcome, OutputItem, ToolCall

CLIENT = "anthropic-python"
MODES = ("stream", "create")
_REQUEST: dict[str, Any] = {"model": "oracle", "max_tokens": 1024, "messages": [{"role": "user", "content": "hi"}]}


def _anthropic() -> Any:
    try:
        import anthropic
    except ImportError:
        raise OracleUnavailable("the anthropic-python oracle needs the anthropic package (pip install anthropic)"
                                ) from None
    return anthropic


def run(data: bytes, *, mode: str = "stream") -> Outcome:
    """Run anthropic-python on the capture ``data``; never raises for what the client does."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r} (choose from {', '.join(MODES)})")
    with serve_body(data) as url:
        return _run(DriverCall(base_url=url + "/v1", model="oracle", dialect="messages", timeout_s=30), mode)


def drive(call: DriverCall) -> Outcome:
    """The registry's entry: ``messages.stream()`` + ``get_final_message()`` against ``call.root_url``."""
    return _run(call, "stream")


def _run(call: DriverCall, mode: str) -> Outcome:
    anthropic = _anthropic()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pydantic's serialisation warnings: the outcome is what counts
        # The SDK adds /v1 itself.
        # Plain HTTP to loopback: no certificate store to load (as in checker/oracles/openai_python.py).
        client = anthropic.Anthropic(api_key="sk-ant-oracle", base_url=call.root_url, max_retries=0,
                                     timeout=call.timeout_s, http_client=anthropic.DefaultHttpxClient(verify=False))
        try:
            got = _run_stream(anthropic, client) if mode == "stream" else _run_create(anthropic, client)
        finally:
            client.close()
    return final_result(got)


def final_result(got: Outcome) -> Outcome:
    """The outcome with its normalised final result: the text blocks joined, the tool_use blocks as calls, the
    stop_reason as finish_reason (``status`` keeps it too, as the first Messages oracles reported it)."""
    from dataclasses import replace

    if got.raised is not None:
        return replace(got, dialect="messages")
    texts = [o.text or "" for o in got.output if o.type == "text"]
    names = iter(got.extra.get("tool_names", ()))
    calls = tuple(ToolCall(id=o.id, name=next(names, None), arguments=o.text) for o in got.output
                  if o.type == "tool_use")
    return replace(got, dialect="messages", text="".join(texts) if texts else None, tool_calls=calls,
                   finish_reason=got.status, extra={})


def _error(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _run_stream(anthropic: Any, client: Any) -> Outcome:
    events = 0
    terminal: str | None = None
    try:
        with client.messages.stream(**_REQUEST) as stream:
            for event in stream:
                events += 1
                if getattr(event, "type", None) == "message_stop":
                    terminal = "message_stop"
            final = stream.get_final_message()
    except Exception as exc:  # noqa: BLE001 - whatever the client raises is the finding
        return Outcome(client=CLIENT, version=anthropic.__version__, mode="stream", raised=_error(exc),
                       events=events, terminal=terminal)
    blocks = getattr(final, "content", None) or ()
    output = tuple(block_item(block) for block in blocks)
    names = [getattr(b, "name", None) for b in blocks if getattr(b, "type", None) == "tool_use"]
    return Outcome(client=CLIENT, version=anthropic.__version__, mode="stream",
                   status=getattr(final, "stop_reason", None), terminal=terminal, events=events, output=output,
                   extra={"tool_names": names})


def _run_create(anthropic: Any, client: Any) -> Outcome:
    events = 0
    terminal: str | None = None
    status: str | None = None
    blocks: dict[int, dict[str, Any]] = {}
    try:
        for event in client.messages.create(**_REQUEST, stream=True):
            events += 1
            kind = getattr(event, "type", None)
            if kind == "content_block_start":
                blocks[event.index] = {"block": event.content_block.to_dict(), "text": "", "json": ""}
            elif kind == "content_block_delta" and event.index in blocks:
                delta = event.delta
                entry = blocks[event.index]
                entry["text"] += getattr(delta, "text", None) or getattr(delta, "thinking", None) or ""
                entry["json"] += getattr(delta, "partial_json", None) or ""
            elif kind == "message_delta":
                status = event.delta.stop_reason
            elif kind == "message_stop":
                terminal = "message_stop"
        output = tuple(_created_item(blocks[i]) for i in sorted(blocks))
        names = [blocks[i]["block"].get("name") for i in sorted(blocks) if blocks[i]["block"].get("type") == "tool_use"]
    except Exception as exc:  # noqa: BLE001
        return Outcome(client=CLIENT, version=anthropic.__version__, mode="create", raised=_error(exc),
                       events=events, terminal=terminal)
    return Outcome(client=CLIENT, version=anthropic.__version__, mode="create", status=status, terminal=terminal,
                   events=events, output=output, extra={"tool_names": names})


def canonical(value: Any) -> str:
    """A tool input as one comparable string."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def block_item(block: Any) -> OutputItem:
    """A final message's content block as the oracles compare it: its type, its tool id, its text."""
    kind = getattr(block, "type", None)
    if kind in ("tool_use", "server_tool_use"):
        return OutputItem(type=kind, id=getattr(block, "id", None), text=canonical(getattr(block, "input", None)))
    if kind == "thinking":
        return OutputItem(type=kind, id=None, text=getattr(block, "thinking", None))
    if kind == "redacted_thinking":
        return OutputItem(type=kind, id=None, text=getattr(block, "data", None))
    return OutputItem(type=kind, id=None, text=getattr(block, "text", None))


def _created_item(entry: dict[str, Any]) -> OutputItem:
    block = entry["block"]
    kind = block.get("type")
    if kind in ("tool_use", "server_tool_use"):
        # The joined partial_json as the user has it (no parse of ours: what the SDK gives is what counts).
        text = entry["json"] if entry["json"] else canonical(block.get("input"))
        return OutputItem(type=kind, id=block.get("id"), text=text)
    if kind == "redacted_thinking":
        return OutputItem(type=kind, id=None, text=block.get("data"))
    initial = block.get("text") or block.get("thinking") or ""
    return OutputItem(type=kind, id=None, text=initial + entry["text"])
