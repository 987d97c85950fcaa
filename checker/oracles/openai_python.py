"""The openai-python oracle: what the real ``client.responses.stream()`` does with a capture.

Two modes:

* ``client`` (default): a real ``OpenAI`` client pointed at a loopback HTTP
  server (``checker.oracles.loopback``) that answers with the capture bytes as
  ``text/event-stream``. This is exactly the user's code path: its HTTP stack,
  the SDK's own SSE decoder (no BOM stripping,
  the APIError on a truthy top-level ``error``, ``[DONE]``), then
  ``ResponseStreamState``, and the call its users make: ``with
  client.responses.stream(...) as s: for e in s: ...`` then
  ``s.get_final_response()``, which returns only a ``response.completed``
  (after ``response.incomplete`` or ``response.failed`` it raises).
* ``state``: the capture decoded by sse-check's WHATWG decoder and each event
  fed to ``ResponseStreamState.handle_event`` as the SDK builds it
  (``construct_type_unchecked``), with the decoder-level rules of
  ``Stream.__stream__`` (``[DONE]`` stops, a truthy ``error`` raises). It
  isolates the accumulator from the SDK's decoder.

``drive`` is the registry's entry (``checker.oracles.registry``): the same call on a
:class:`~checker.oracles.protocol.DriverCall` (a base URL the runner's loopback server
answers), Responses or Chat Completions by its dialect.

``openai`` is imported lazily; without it :class:`OracleUnavailable` says so.
"""

from __future__ import annotations

import warnings
from typing import Any, cast

import orjson

from checker.oracles import TERMINALS, OracleUnavailable
from checker.oracles.loopback import serve_body
from checker.oracles.protocol import DriverCall, Outcome, OutputItem, ToolCall
from checker.oracles.protocol import error_text as _error

CLIENT = "openai-python"
MODES = ("client", "state")


def _openai() -> Any:
    try:
        import openai
    except ImportError:
        raise OracleUnavailable("the openai-python oracle needs the openai package (pip install openai)") from None
    return openai


def run(data: bytes, *, mode: str = "client") -> Outcome:
    """Run openai-python on the capture ``data``; never raises for what the client does."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r} (choose from {', '.join(MODES)})")
    openai = _openai()
    # The SDK's pydantic models warn on stderr when they serialise a value their types do not declare (OpenAI's
    # own web search sources of type "api", captures/real-openai); the run's outcome is what counts, and
    # sse-check's output stays its own (one line per error, never a warning dump).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if mode == "client":
            with serve_body(data) as url:
                return _run_client(openai, DriverCall(base_url=url + "/v1", model="oracle", dialect="responses"))
        return _run_state(openai, data)


def drive(call: DriverCall) -> Outcome:
    """The registry's entry: openai-python's user-facing call for ``call.dialect`` against ``call.base_url``."""
    if call.dialect == "chat":
        from checker.oracles.openai_python_chat import drive as drive_chat

        return drive_chat(call)
    openai = _openai()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # as in run(): the outcome counts, not pydantic's warnings
        return _run_client(openai, call)


def _run_client(openai: Any, call: DriverCall) -> Outcome:
    # Plain HTTP to loopback: the SDK's default client with no certificate store loaded (loading it costs ~0.4 s
    # per client here, which dominated a batch of oracle runs); nothing else of its defaults changes.
    client = openai.OpenAI(api_key="sk-oracle", base_url=call.base_url, max_retries=0, timeout=call.timeout_s,
                           http_client=openai.DefaultHttpxClient(verify=False))
    text = call.request.get("text") if isinstance(call.request.get("text"), dict) else None
    extra = {"text": text} if text else {}
    events = 0
    terminal: Any = None
    try:
        # What its users write: iterate the stream, then ask for the final response. get_final_response()
        # returns only a response.completed; after response.incomplete or response.failed it raises.
        with client.responses.stream(model=call.model, input="oracle", **extra) as stream:
            for event in stream:
                events += 1
                if getattr(event, "type", None) in TERMINALS:
                    terminal = event
            final = stream.get_final_response()
    except Exception as exc:  # noqa: BLE001 - whatever the client raises is the finding
        return Outcome(client=CLIENT, version=openai.__version__, mode="client", raised=_error(exc), events=events,
                       terminal=getattr(terminal, "type", None))
    finally:
        client.close()
    return _outcome(openai, "client", events, "response.completed", final)


def _run_state(openai: Any, data: bytes) -> Outcome:
    from openai._models import construct_type_unchecked
    from openai.lib.streaming.responses._responses import ResponseStreamState
    from openai.types.responses import ResponseStreamEvent

    from checker.sse import SSEDecoder, SSEEvent

    decoder = SSEDecoder()
    decoded = [item for item in [*decoder.feed(data), *decoder.close()] if isinstance(item, SSEEvent)]
    state: Any = ResponseStreamState(input_tools=openai.NOT_GIVEN, text_format=openai.NOT_GIVEN)
    events = 0
    terminal: Any = None
    try:
        for sse in decoded:
            if sse.data.startswith(b"[DONE]"):
                break
            obj = orjson.loads(sse.data)
            if isinstance(obj, dict) and obj.get("error"):
                error = obj["error"]
                message = error.get("message") if isinstance(error, dict) else None
                raise openai.APIError(message if isinstance(message, str) and message
                                      else "An error occurred during streaming", request=None, body=error)
            # ResponseStreamEvent is an annotated union, not a class: the SDK passes it the same way.
            event: ResponseStreamEvent = construct_type_unchecked(type_=cast(Any, ResponseStreamEvent), value=obj)
            for fired in state.handle_event(event):
                events += 1
                if getattr(fired, "type", None) in TERMINALS:
                    terminal = fired
        final = state._completed_response  # what ResponseStream.get_final_response() returns
        if final is None:
            raise RuntimeError("Didn't receive a `response.completed` event.")
    except Exception as exc:  # noqa: BLE001 - whatever the client raises is the finding
        return Outcome(client=CLIENT, version=openai.__version__, mode="state", raised=_error(exc), events=events,
                       terminal=getattr(terminal, "type", None))
    return _outcome(openai, "state", events, "response.completed", final)


def _outcome(openai: Any, mode: str, events: int, terminal: str, response: Any) -> Outcome:
    items = getattr(response, "output", None) or ()
    output = tuple(_item(item) for item in items)
    return Outcome(client=CLIENT, version=openai.__version__, mode=mode, status=getattr(response, "status", None),
                   terminal=terminal, events=events, output=output, **final_result(items))


def final_result(items: Any) -> dict[str, Any]:
    """The normalised final result of a Responses output: the messages' text joined, the function calls."""
    texts = [_item(item).text or "" for item in items if getattr(item, "type", None) == "message"]
    calls = tuple(ToolCall(id=getattr(item, "call_id", None), name=getattr(item, "name", None),
                           arguments=getattr(item, "arguments", None))
                  for item in items if getattr(item, "type", None) == "function_call")
    return {"text": "".join(texts) if texts else None, "tool_calls": calls}


def _item(item: Any) -> OutputItem:
    kind = getattr(item, "type", None)
    text: str | None = None
    # The SDK builds the final response without validating it (construct): a text the server sent as a number
    # stays a number there, joined here as its JSON text (what openai-node's join makes of it too).
    if kind == "message":
        text = "".join(_str(getattr(part, "text", None) or getattr(part, "refusal", None) or "")
                       for part in _parts(item))
    elif kind == "function_call":
        text = getattr(item, "arguments", None)
    elif kind == "reasoning":
        text = "".join(_str(getattr(part, "text", None) or "") for part in _parts(item))
    return OutputItem(type=kind, id=getattr(item, "id", None), text=text)


def _parts(item: Any) -> list[Any]:
    content = getattr(item, "content", None)
    return list(content) if isinstance(content, (list, tuple)) else []


def _str(value: Any) -> str:
    return value if isinstance(value, str) else orjson.dumps(value, default=str).decode()
