"""Write the captures of ``sse-check probe``: the conforming replay set and the HTTP rule examples.

Run from the project root after ``captures/make_captures.py``: ``python captures/make_probe_captures.py``.
The output is deterministic.

* ``probe/``: one capture per built-in probe scenario, so that ``sse-check serve captures/probe`` answers
  every scenario and ``sse-check probe`` against it is clean. The streams are byte-for-byte copies of
  ``conforming/`` streams (see ``PROBE_SET``); the invalid requests are OpenAI-style HTTP 400 JSON errors
  (``X.headers.txt`` gives the status); ``X.nonstream.json`` is the streamed ``response.completed``
  response, the answer to the same request with ``stream: false``. ``X.expect.json`` declares what
  ``sse-check lint`` says of each capture alone (the error bodies are not event streams: SSE022).
* ``http/<CODE>-<name>.sse``: one example per HTTP rule (``checker/rules/http.py``): a body and an
  ``X.meta.json`` in the format ``sse-check probe --save`` writes (``checker.live.probe.build_meta``),
  recording the status, headers, timings and ending that produce the rule. ``X.expect.json`` declares the
  complete set of codes ``sse-check lint`` reports for the capture with its meta (tests/test_http_captures.py).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent))

from checker.dialects.responses.nonstream import digest_output  # noqa: E402
from checker.live.faults import status_error  # noqa: E402
from checker.live.probe import ProbeLimits, build_meta  # noqa: E402
from checker.live.saving import meta_json  # noqa: E402
from checker.live.scenarios import BUILTIN, Scenario  # noqa: E402

CONFORMING = ROOT / "conforming"
PROBE = ROOT / "probe"
HTTP = ROOT / "http"

# scenario -> the conforming stream that answers it
PROBE_SET = {
    "plain_text": "text.sse",
    "reasoning_text": "reasoning-text.sse",
    "reasoning_one_call": "reasoning-function-call.sse",
    "parallel_calls": "parallel-function-calls.sse",
    "reasoning_text_truncated": "incomplete.sse",
    "function_call_truncated": "function-call-incomplete.sse",
}
ERRORS = {
    "invalid_model": {"error": {"message": "The requested model 'sse-check-no-such-model' does not exist.",
                                "type": "invalid_request_error", "param": "model", "code": "model_not_found"}},
    "malformed_input": {"error": {"message": "Invalid type for 'input': expected a string or an array of input "
                                             "items, but got an object instead.",
                                  "type": "invalid_request_error", "param": "input", "code": "invalid_type"}},
}
ERROR_HEAD = "HTTP/1.1 400 Bad Request\nContent-Type: application/json\n"
SCENARIOS = {s.name: s for s in BUILTIN}
URL = "http://127.0.0.1:8080/v1/responses"
LIMITS = ProbeLimits()
SSE_HEADERS = [["content-type", "text/event-stream; charset=utf-8"], ["cache-control", "no-cache"]]
JSON_HEADERS = [["content-type", "application/json"]]


def events(data: bytes) -> list[dict[str, Any]]:
    objects = []
    for block in data.decode("utf-8").split("\n\n"):
        lines = [line[len("data: "):] for line in block.split("\n") if line.startswith("data: ")]
        if lines and lines != ["[DONE]"]:
            objects.append(json.loads("\n".join(lines)))
    return objects


def final_response(data: bytes) -> dict[str, Any]:
    return events(data)[-1]["response"]


def compact(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def write_json(path: Path, obj: Any) -> None:
    path.write_text(json.dumps(obj, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


# --- captures/probe --------------------------------------------------------------------------------------


def make_probe_set() -> None:
    if PROBE.is_dir():
        shutil.rmtree(PROBE)
    PROBE.mkdir()
    for name, source in PROBE_SET.items():
        data = (CONFORMING / source).read_bytes()
        (PROBE / f"{name}.sse").write_bytes(data)
        write_json(PROBE / f"{name}.expect.json", {"openai": []})
    for scenario in BUILTIN:
        if scenario.expect == "nonstream" and scenario.pair in PROBE_SET:
            data = (PROBE / f"{scenario.pair}.sse").read_bytes()
            (PROBE / f"{scenario.pair}.nonstream.json").write_bytes(compact(final_response(data)))
    for name, body in ERRORS.items():
        (PROBE / f"{name}.sse").write_bytes(compact(body))
        (PROBE / f"{name}.headers.txt").write_text(ERROR_HEAD, encoding="utf-8")
        write_json(PROBE / f"{name}.expect.json", {"openai": ["SSE022"]})
    (PROBE / "README.md").write_text(PROBE_README, encoding="utf-8")


PROBE_README = """\
# Captures for `sse-check probe` against `sse-check serve`

Written by `captures/make_probe_captures.py`; do not edit by hand.

One capture per built-in probe scenario (`sse-check probe --list-scenarios`), named after it, so that

    sse-check serve captures/probe --port 8000
    sse-check probe http://127.0.0.1:8000 --model any

answers every scenario (the probe sends `X-SSE-Check-Scenario: NAME`) and reports nothing: these are what
a conforming server sends.

| scenario | capture |
|---|---|
""" + "".join(f"| `{name}` | copy of `conforming/{source}` |\n" for name, source in PROBE_SET.items()) + """\
| `invalid_model`, `malformed_input` | HTTP 400 with an OpenAI-style JSON error (`X.headers.txt`) |
| `plain_text_nonstream`, `reasoning_one_call_nonstream` | `plain_text.nonstream.json`, \
`reasoning_one_call.nonstream.json`: the streamed final response, the answer with `stream: false` |

`X.expect.json` declares what `sse-check lint` reports for each capture on its own: nothing for the
streams, SSE022 (not an event stream) for the error bodies. Probed, the error bodies are the expected
answer to an invalid request and give no finding.
"""


# --- captures/http ---------------------------------------------------------------------------------------

TEXT = (CONFORMING / "text.sse").read_bytes()
ONE_CALL = (CONFORMING / "reasoning-function-call.sse").read_bytes()
REASONING_TEXT = (CONFORMING / "reasoning-text.sse").read_bytes()


def cut(data: bytes, events_kept: int, extra: int = 0) -> bytes:
    """The first ``events_kept`` events of a capture, plus ``extra`` bytes of the next one."""
    at = 0
    for _ in range(events_kept):
        at = data.index(b"\n\n", at) + 2
    return data[: at + extra]


def timings(*, size: int, stream: bool = True, total: float = 0.25, **more: float) -> dict[str, float]:
    values: dict[str, float] = {"headers": 0.012, "first_byte": 0.015} if size or more.get("headers") else {}
    if stream and size:
        values.update(first_event=0.015, first_delta=0.05, largest_gap=0.02, largest_gap_at_byte=0, terminal=0.24)
    values.update(more)
    values["total"] = total
    return {k: v for k, v in values.items() if v is not None}


def example(
    name: str,
    body: bytes,
    *,
    about: str,
    codes: list[str],
    scenario: str = "plain_text",
    status: int | None = 200,
    reason: str = "OK",
    headers: list[list[str]] | None = None,
    ending: str = "complete",
    detail: str = "",
    events_count: int | None = None,
    reference: dict[str, Any] | None = None,
    limits: ProbeLimits = LIMITS,
    redirects: list[dict[str, Any]] | None = None,
    connection: dict[str, Any] | None = None,
    request: dict[str, Any] | None = None,
    retry: dict[str, Any] | None = None,
    **timing: Any,
) -> None:
    chosen: Scenario = SCENARIOS[scenario]
    request = request if request is not None else chosen.request("gpt-4.1")
    stream = chosen.expect != "nonstream"
    if headers is None:
        headers = SSE_HEADERS if stream and status == 200 else JSON_HEADERS if status is not None else []
    if events_count is None:
        events_count = body.count(b"\n\n") if stream and status == 200 else 0
    meta = build_meta(
        scenario=chosen, url=URL, request=request,
        request_headers=[["Content-Type", "application/json"],
                         ["Accept", "text/event-stream" if stream else "application/json"],
                         ["X-SSE-Check-Scenario", chosen.replay_names[0]], ["Authorization", "<redacted>"]],
        status=status, reason=reason if status is not None else "", http_version="HTTP/1.1" if status else "",
        headers=headers, redirects=redirects or [], ending=ending, detail=detail, size=len(body),
        events=events_count, timings=timings(size=len(body), stream=stream, **timing), limits=limits,
        reference=reference, started_at="2026-10-01T12:00:00+00:00",
        connection=connection or {"closed_by_server": None, "closed_after": None, "retried": None},
    )
    if retry is not None:
        meta["retry"] = retry
    meta["about"] = about
    (HTTP / f"{name}.sse").write_bytes(body)
    (HTTP / f"{name}.meta.json").write_text(meta_json(meta), encoding="utf-8")
    write_json(HTTP / f"{name}.expect.json", {"openai": sorted(codes)})


def reference_of(data: bytes, scenario: str) -> dict[str, Any]:
    response = final_response(data)
    return {"scenario": scenario, "terminal": "response.completed", "output": digest_output(response["output"])}


# Examples recorded from a real probe of `sse-check serve` rather than written here: kept when the others are.
PROBED_EXAMPLES = ("HTP023-rate-limited-without-retry-after",)


def make_http_examples() -> None:
    HTTP.mkdir(exist_ok=True)
    for stale in HTTP.iterdir():
        if not stale.name.startswith(PROBED_EXAMPLES):
            stale.unlink()
    error_500 = compact(status_error(500))
    example("HTP001-status-not-ok", error_500, about="HTTP 500 with a JSON error for a streaming request",
            codes=["HTP001"], status=500, reason="Internal Server Error")
    example("HTP002-wrong-content-type", TEXT, about="a conforming stream sent as text/plain",
            codes=["HTP002"], headers=[["content-type", "text/plain; charset=utf-8"]])
    html = b"<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1>" \
           b"</center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
    example("HTP003-error-body-not-json", html, about="a proxy's HTML error page instead of a JSON error",
            codes=["HTP001", "HTP003"], status=502, reason="Bad Gateway", headers=[["content-type", "text/html"]])
    detail = compact({"detail": [{"type": "literal_error", "loc": ["body", "reasoning", "effort"],
                                  "msg": "Input should be 'low', 'medium' or 'high'", "input": "none"}]})
    example("HTP026-error-body-without-error-object", detail, scenario="malformed_input",
            about="a 422 with FastAPI's validation body instead of an OpenAI error object (the gpt-oss server)",
            codes=["HTP026"], status=422, reason="Unprocessable Entity", headers=JSON_HEADERS)
    error_200 = compact({"error": {"message": "Rate limit reached for requests", "type": "requests",
                                   "param": None, "code": "rate_limit_exceeded"}})
    example("HTP004-error-with-ok-status", error_200, about="a JSON error sent with status 200 to a streaming request",
            codes=["HTP002", "HTP004", "SSE022"], headers=JSON_HEADERS)
    example("HTP005-invalid-request-accepted", TEXT, scenario="invalid_model",
            about="an unknown model answered with a normal stream", codes=["HTP005"])
    example("HTP006-kept-open-after-terminal", TEXT, about="the body stayed open after response.completed",
            codes=["HTP006"], ending="kept-open", total=2.25)
    example("HTP007-connect-failed", b"", about="nothing listens on the port", codes=["HTP007"], status=None,
            ending="connect-error", detail="Connection refused", total=0.002)
    example("HTP008-tls-error", b"", about="a self-signed certificate", codes=["HTP008"], status=None,
            ending="tls-error", detail="[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: "
                                       "self-signed certificate (_ssl.c:1006)", total=0.01)
    example("HTP009-first-byte-timeout", b"", about="no response headers within the first-byte timeout",
            codes=["HTP009"], status=None, ending="first-byte-timeout", total=60.0)
    stalled = cut(TEXT, 6)
    example("HTP010-stalled", stalled, about="the stream stops after six events with the connection open",
            codes=["HTP010", "LIF006"], ending="idle-timeout", total=30.3, terminal=None)
    slow = cut(TEXT, 12)
    example("HTP011-total-timeout", slow, about="a slow stream still running at the total timeout",
            codes=["HTP011", "LIF006"], ending="total-timeout", total=300.0, terminal=None, largest_gap=25.0)
    dropped = cut(TEXT, 6, extra=40)
    example("HTP012-body-cut-off", dropped, about="the connection is dropped in the middle of an event",
            codes=["HTP012", "LIF006", "SSE004"], ending="disconnect", terminal=None,
            detail="peer closed connection without sending complete message body (incomplete chunked read)")
    big = compact(final_response(ONE_CALL))[:256]
    example("HTP013-body-cap-reached", big, scenario="reasoning_one_call_nonstream",
            about="a non-streaming answer larger than --max-bytes 200", codes=["HTP013"], ending="byte-cap",
            detail="more than 200 bytes", limits=ProbeLimits(max_bytes=200))
    example("HTP014-redirect-followed", TEXT, about="the endpoint redirected to another URL",
            codes=["HTP014"], redirects=[{"status": 307, "url": "https://api.example.com/v1/responses"}])
    reasoning_text = final_response(REASONING_TEXT)
    swapped = dict(reasoning_text, output=list(reversed(reasoning_text["output"])))
    example("HTP015-nonstream-output-order", compact(swapped), scenario="plain_text_nonstream",
            about="the non-streaming result lists the message before the reasoning item", codes=["HTP015"],
            headers=JSON_HEADERS)
    one_call = final_response(ONE_CALL)
    example("HTP016-nonstream-parity", compact(reasoning_text), scenario="reasoning_one_call_nonstream",
            about="the non-streaming result has a message where the stream had a function call",
            codes=["HTP016"], headers=JSON_HEADERS, reference=reference_of(ONE_CALL, "reasoning_one_call"))
    changed = json.loads(json.dumps(one_call))
    changed["output"][1]["arguments"] = '{"city":"Paris","unit":"fahrenheit"}'
    example("HTP017-nonstream-text-differs", compact(changed), scenario="reasoning_one_call_nonstream",
            about="the non-streaming call has other arguments than the streamed one", codes=["HTP017"],
            headers=JSON_HEADERS, reference=reference_of(ONE_CALL, "reasoning_one_call"))
    example("HTP018-nonstream-not-a-response", TEXT, scenario="plain_text_nonstream",
            about="an event stream sent although the request said stream: false",
            codes=["HTP002", "HTP018"], headers=SSE_HEADERS, events_count=0)
    # As llama-server does after every stream (captures/llama.cpp-probe): chunked, Keep-Alive announced, closed.
    example("HTP019-connection-closed-unannounced", TEXT,
            about="the server closed the connection right after a complete stream, without Connection: close",
            codes=["HTP019"], headers=[*SSE_HEADERS, ["transfer-encoding", "chunked"],
                                       ["keep-alive", "timeout=5, max=100"]],
            connection={"closed_by_server": True, "closed_after": 0.0002, "retried": None})
    # As sse-check proxy records a client that leaves mid-stream: not the server's doing, so no LIF006.
    example("HTP020-client-disconnected", cut(TEXT, 6, extra=40),
            about="the client disconnected after six events and a part of the seventh",
            codes=["HTP020"], ending="interrupted", detail="the client disconnected", terminal=None)
    # The request of issue 14's report, refused as a server should refuse it (no HTP001).
    invalid = {**SCENARIOS["plain_text"].request("gpt-4.1"), "input": 1}
    example("HTP021-invalid-request-refused", compact(ERRORS["malformed_input"]), request=invalid,
            about="a request whose input is a number, refused with HTTP 400 and a JSON error",
            codes=["HTP021"], status=400, reason="Bad Request")
    # The probe's malformed_input (input given as an object) failed by the server instead of refused.
    example("HTP024-invalid-request-server-error", error_500, scenario="malformed_input",
            about="the probe's malformed request (input given as an object) answered with HTTP 500",
            codes=["HTP024"], status=500, reason="Internal Server Error")
    # The real llama-server's answer (captures/llama.cpp/error_previous_response_id.sse) to a valid request.
    chained = {**SCENARIOS["plain_text"].request("gpt-4.1"), "previous_response_id": "resp_abc"}
    example("HTP022-unsupported-feature", (ROOT / "llama.cpp" / "error_previous_response_id.sse").read_bytes(),
            request=chained, about="llama-server refuses previous_response_id with HTTP 400",
            codes=["HTP022"], status=400, reason="Bad Request",
            headers=[["content-type", "application/json; charset=utf-8"]])
    rate_limited = compact(status_error(429))
    example("HTP025-status-retried", rate_limited, codes=["HTP025"], status=429, reason="Too Many Requests",
            about="HTTP 429 with Retry-After: 1, the first answer of a probe that retried it as openai-python does",
            headers=[*JSON_HEADERS, ["retry-after", "1"]],
            retry={"attempt": 1, "status": 429, "then": "retried", "retry": True, "wait": 1.0,
                   "basis": "Retry-After 1 s honoured", "client": "openai-python", "header": "retry-after",
                   "value": "1"})


if __name__ == "__main__":
    make_probe_set()
    make_http_examples()
    print(f"wrote {len(list(PROBE.glob('*.sse')))} probe captures and {len(list(HTTP.glob('*.sse')))} HTTP examples")
