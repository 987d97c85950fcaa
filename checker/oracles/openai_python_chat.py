"""The openai-python oracle for Chat Completions: what the real SDK does with a chat capture.

Two call paths, both through a real ``OpenAI`` client pointed at a loopback HTTP server that answers with the
capture bytes as a 200 ``text/event-stream`` answer (its HTTP stack, the SDK's own SSE decoder, ``[DONE]``
handling and APIError on a data object with an ``error``):

* ``stream`` (default): ``with client.chat.completions.stream(...) as s: for e in s: ...`` then
  ``s.get_final_completion()``: ChatCompletionStreamState accumulates the chunks (accumulate_delta) and
  raises LengthFinishReasonError on ``finish_reason: "length"`` when the request has parseable input
  (a strict tool or a rich response_format);
* ``iterate``: ``for chunk in client.chat.completions.create(stream=True, ...)``: the chunks as the
  decoder yields them, nothing accumulated (what users who build the message themselves run).

The request sidecar's n, tools, token limits and stream_options are passed on, as a user's call has them.
``drive`` is the registry's entry (the ``stream`` path on a :class:`~checker.oracles.protocol.DriverCall`).
"""

from __future__ import annotations

import warnings
from typing import Any

from checker.oracles import OracleUnavailable
from checker.oracles.chat import ChatOutcome, completion_view
from checker.oracles.loopback import serve_body
from checker.oracles.protocol import DriverCall, Outcome, ToolCall
from checker.oracles.protocol import error_text as _error

CLIENT = "openai-python"
MODES = ("stream", "iterate")
# Request fields the oracle passes to the SDK's call (the rest does not change what the SDK does with a stream).
PASSED = ("n", "tools", "tool_choice", "max_tokens", "max_completion_tokens", "stream_options", "parallel_tool_calls",
          "response_format")


def _openai() -> Any:
    try:
        import openai
    except ImportError:
        raise OracleUnavailable("the openai-python oracle needs the openai package (pip install openai)") from None
    return openai


def run(data: bytes, *, mode: str = "stream", request: dict[str, Any] | None = None) -> ChatOutcome:
    """Run openai-python on the chat capture ``data``; never raises for what the client does."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r} (choose from {', '.join(MODES)})")
    with serve_body(data) as url:
        return _run(DriverCall(base_url=url + "/v1", model="oracle", dialect="chat", request=request or {}), mode)


def drive(call: DriverCall) -> Outcome:
    """The registry's entry: ``chat.completions.stream()`` + ``get_final_completion()`` against ``call.base_url``."""
    got = _run(call, "stream")
    return normalised(got, call.dialect)


def normalised(got: ChatOutcome, dialect: str = "chat") -> Outcome:
    """A chat oracle's outcome in the protocol's shape: choice 0's text, tool calls and finish reason (the whole
    compared view kept in ``extra["completion"]``)."""
    completion = got.completion
    choice = (completion or {}).get("choices") or [{}]
    first = choice[0]
    calls = tuple(ToolCall(id=c.get("id"), name=c.get("name"), arguments=c.get("arguments"))
                  for c in first.get("tool_calls") or ())
    return Outcome(client=got.client, version=got.version, dialect=dialect, mode=got.mode, raised=got.raised,
                   events=got.chunks, text=first.get("content"), tool_calls=calls,
                   finish_reason=first.get("finish_reason"),
                   extra={"completion": completion} if completion is not None else {})


def _run(call: DriverCall, mode: str) -> ChatOutcome:
    openai = _openai()
    request = call.request
    params = {k: v for k, v in request.items() if k in PASSED}
    messages = request.get("messages") or [{"role": "user", "content": "oracle"}]
    # Plain HTTP to loopback: no certificate store to load (as in checker/oracles/openai_python.py).
    client = openai.OpenAI(api_key="sk-oracle", base_url=call.base_url, max_retries=0, timeout=call.timeout_s,
                           http_client=openai.DefaultHttpxClient(verify=False))
    chunks = 0
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # pydantic's serialisation warnings on unexpected values
            if mode == "iterate":
                for _ in client.chat.completions.create(model=call.model, messages=messages, stream=True, **params):
                    chunks += 1
                return ChatOutcome(client=CLIENT, version=openai.__version__, mode=mode, chunks=chunks)
            with client.chat.completions.stream(model=call.model, messages=messages, **params) as stream:
                for event in stream:
                    chunks += getattr(event, "type", None) == "chunk"
                final = stream.get_final_completion()
            view = completion_view(final.model_dump(mode="json", warnings=False))
    except Exception as exc:  # noqa: BLE001 - whatever the client raises is the finding
        return ChatOutcome(client=CLIENT, version=openai.__version__, mode=mode, raised=_error(exc), chunks=chunks)
    finally:
        client.close()
    return ChatOutcome(client=CLIENT, version=openai.__version__, mode=mode, chunks=chunks, completion=view)
