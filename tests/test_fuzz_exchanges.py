"""Any JSON request and any answer body: lint with sidecars and the proxy's checking never fail inside.

The checker reads what clients and servers really send, and both send anything: a chat request whose
``messages`` is a number, tools that are strings, an answer whose ``choices`` is an object. Whatever the
shapes, the result is findings, never an internal error (SSE099) or an exception. Two paths are driven:

* ``sse-check lint`` (the real command, in-process) on a capture with its ``X.meta.json`` and
  ``X.request.json`` sidecars, as the probe and the proxy save them;
* the proxy's checking side (:class:`checker.live.proxy_watch.Watch`, the object that the running proxy feeds),
  with the answer's status, headers and body, over several exchanges in one proxy so that the history
  checks see conversations of odd requests and answers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checker.cli import main
from checker.live.proxy import Proxy, ProxyConfig
from checker.live.proxy_watch import Record, Watch
from checker.live.upstream import UpstreamHead

KEYS = ["model", "input", "messages", "stream", "instructions", "previous_response_id", "tools", "tool_choice",
        "conversation", "max_output_tokens", "max_tokens", "reasoning", "include", "text", "role", "content",
        "type", "id", "call_id", "name", "arguments", "output", "tool_calls", "function", "summary", "status",
        "reasoning_content", "usage", "choices", "message", "delta", "response", "item", "error", "param", "code",
        "encrypted_content", "input_tokens_details", "cached_tokens", "prompt_tokens_details", "finish_reason"]
VALUES = ["message", "user", "assistant", "tool", "reasoning", "function_call", "function_call_output",
          "output_text", "input_text", "response.completed", "response.output_item.done", "chat.completion",
          "web_search", "function", "resp_1", "call_1", "completed", "incomplete"]
SCALARS = (st.none() | st.booleans() | st.integers(-3, 2**60) | st.floats(allow_nan=False)
           | st.sampled_from(VALUES) | st.text(max_size=6))
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=4),
                                                                inner, max_size=5),
    max_leaves=24,
)
# Requests: the fields the checker reads, each with any JSON value (a list, an object, a number, …).
REQUEST_KEYS = ["model", "input", "messages", "instructions", "previous_response_id", "tools", "tool_choice",
                "conversation", "max_output_tokens", "max_tokens", "max_completion_tokens", "reasoning",
                "include", "text", "background", "store", "metadata", "stream_options"]
REQUESTS = st.fixed_dictionaries({}, optional={key: SCALARS | JSON for key in REQUEST_KEYS})
STATUSES = st.sampled_from([200, 200, 200, 400, 404, 422, 429, 500, 501])
APIS = st.sampled_from(["/v1/responses", "/v1/chat/completions", "/v1/other"])


@st.composite
def answers(draw: Any) -> tuple[bytes, str]:
    """An answer body and its content type: one JSON document, or an event stream of JSON events."""
    if draw(st.booleans()):
        return json.dumps(draw(JSON)).encode(), "application/json"
    events = draw(st.lists(JSON, max_size=5))
    body = "".join(f"data: {json.dumps(e)}\n\n" for e in events)
    if draw(st.booleans()):
        body += "data: [DONE]\n\n"
    return body.encode(), "text/event-stream"


def _no_internal_error(findings: list[Any]) -> None:
    for finding in findings:
        code = finding["code"] if isinstance(finding, dict) else finding.code
        message = finding["message"] if isinstance(finding, dict) else finding.message
        assert code != "SSE099", message


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(request=REQUESTS | JSON, answer=answers(), status=STATUSES, path=APIS, streamed=st.booleans(),
       ending=st.sampled_from(["complete", "complete", "disconnect", "interrupted"]))
def test_lint_with_sidecars_reads_any_request_and_answer(tmp_path_factory: Any, request: Any,
                                                         answer: tuple[bytes, str], status: int, path: str,
                                                         streamed: bool, ending: str) -> None:
    folder = tmp_path_factory.mktemp("capture")
    body, content_type = answer
    (folder / "x.sse").write_bytes(body)
    meta = {"meta_version": 1, "expect": "stream" if streamed else "nonstream", "url": f"http://h{path}",
            "request": request, "status": status, "headers": [["content-type", content_type]],
            "ending": {"kind": ending, "detail": "the client disconnected" if ending == "interrupted" else "",
                       "bytes": len(body)}}
    (folder / "x.meta.json").write_text(json.dumps(meta))
    (folder / "x.request.json").write_text(json.dumps(request))
    report = folder / "report.json"
    code = main(["lint", str(folder / "x.sse"), "--format", "json", "-o", str(report)])
    assert code in (0, 1)
    (entry,) = json.loads(report.read_text())["files"]
    _no_internal_error(entry["findings"])


def _exchange(proxy: Proxy, number: int, path: str, request: dict[str, Any], status: int,
              answer: tuple[bytes, str], ending: str) -> Record:
    api = "chat" if path.endswith("/chat/completions") else "responses"
    record = Record(number=number, method="POST", path=path, api=api, streamed=request.get("stream") is True)
    watch = Watch(proxy, record, request, [("content-type", "application/json")], f"http://upstream{path}")
    body, content_type = answer
    reason = httpx.codes.get_reason_phrase(status)
    watch.headers(UpstreamHead(status, reason, "HTTP/1.1", [(b"content-type", content_type.encode("latin-1"))]))
    for start in range(0, len(body), 97):
        watch.feed(body[start:start + 97])
    return watch.finish(ending, "the client disconnected" if ending == "interrupted" else "")


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(exchanges=st.lists(st.tuples(REQUESTS, answers(), STATUSES, APIS, st.booleans(),
                                    st.sampled_from(["complete", "disconnect", "interrupted"])),
                          min_size=1, max_size=4))
def test_the_proxy_checks_any_request_and_answer(exchanges: list[Any]) -> None:
    proxy = Proxy(ProxyConfig(upstream="http://127.0.0.1:9"))
    for number, (request, answer, status, path, stream, ending) in enumerate(exchanges, start=1):
        request = {**request, "stream": stream}
        record = _exchange(proxy, number, path, request, status, answer, ending)
        assert record.note is None, record.note
        assert record.result is not None
        _no_internal_error(record.result.findings)


def test_the_reported_requests_are_checked_not_crashed_on(tmp_path: Path) -> None:
    # The two requests of the report (issue 14), answered 400 as a real server answers them.
    proxy = Proxy(ProxyConfig(upstream="http://127.0.0.1:9"))
    error = (json.dumps({"error": {"message": "bad", "type": "invalid_request_error"}}).encode(), "application/json")
    for number, (path, request) in enumerate([("/v1/responses", {"input": 1}),
                                              ("/v1/chat/completions", {"messages": 1})], start=1):
        record = _exchange(proxy, number, path, request, 400, error, "complete")
        assert record.result is not None
        codes = {f.code for f in record.result.findings}
        assert "SSE099" not in codes and "HTP001" not in codes, record.result.findings
