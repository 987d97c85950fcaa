"""The openai-python oracle for Chat Completions: what the real SDK does with a chat capture.

Two call paths, both through a real ``OpenAI`` client whose HTTP transport serves the capture bytes as a
200 ``text/event-stream`` answer (the SDK's own SSE decoder, ``[DONE]`` handling and APIError on a data
object with an ``error``):

* ``stream`` (default): ``with client.chat.completions.stream(...) as s: for e in s: ...`` then
  ``s.get_final_completion()``: ChatCompletionStreamState accumulates the chunks (accumulate_delta) and
  raises LengthFinishReasonError on ``finish_reason: "length"`` when the request has parseable input
  (a strict tool or a rich response_format);
* ``iterate``: ``for chunk in client.chat.completions.create(stream=True, ...)``: the chunks as the
  decoder yields them, nothing accumulated (what users who build the message themselves run).

The request sidecar's n, tools, token limits and stream_options are passed on, as a user's call has them.
"""

from __future__ import annotations

import warnings
from typing import Any

from checker.oracles import OracleUnavailable
from checker.oracles.chat import ChatOutcome, completion_view

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
    openai = _openai()
    from checker.oracles.openai_python import _error, _http

    http = _http()

    def serve(_: Any) -> Any:
        return http.Response(200, headers={"content-type": "text/event-stream"}, content=data)

    params = {k: v for k, v in (request or {}).items() if k in PASSED}
    messages = (request or {}).get("messages") or [{"role": "user", "content": "oracle"}]
    client = openai.OpenAI(api_key="sk-oracle", base_url="http://oracle.invalid/v1", max_retries=0,
                           http_client=http.Client(transport=http.MockTransport(serve)))
    chunks = 0
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # pydantic's serialisation warnings on unexpected values
            if mode == "iterate":
                for _ in client.chat.completions.create(model="oracle", messages=messages, stream=True, **params):
                    chunks += 1
                return ChatOutcome(client=CLIENT, version=openai.__version__, mode=mode, chunks=chunks)
            with client.chat.completions.stream(model="oracle", messages=messages, **params) as stream:
                for event in stream:
                    chunks += getattr(event, "type", None) == "chunk"
                final = stream.get_final_completion()
            view = completion_view(final.model_dump(mode="json", warnings=False))
    except Exception as exc:  # noqa: BLE001 - whatever the client raises is the finding
        return ChatOutcome(client=CLIENT, version=openai.__version__, mode=mode, raised=_error(exc), chunks=chunks)
    finally:
        client.close()
    return ChatOutcome(client=CLIENT, version=openai.__version__, mode=mode, chunks=chunks, completion=view)
