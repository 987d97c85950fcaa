"""Write the synthetic captures of the corpus: conforming streams and one broken stream per rule.

Run from the project root: ``python captures/make_captures.py``. The output is
deterministic (fixed ids, timestamps and texts), so re-running it changes no
byte unless this file changed. The real llama.cpp captures in
``captures/llama.cpp/`` are copies of recorded server output and are not
written here.

How the corpus is built
-----------------------
* ``conforming/*.sse``: streams as OpenAI's OpenAPI description 2.3.0 says
  they look (full response objects, ``sequence_number`` from 1,
  ``output_index`` / ``content_index`` on every scoped event, ``logprobs`` on
  text events, ``event:`` equal to ``type``), built by ``checker.synth.ResponsesStream`` (``Stream``
  here), the builder the tests and benchmarks use too.
* ``open-responses/*.sse``: streams as the Open Responses description wants them
  (a ``ResponseResource`` object, its own ``response.reasoning.delta/done``,
  ``data: [DONE]`` last): a text, the compliance suite's counting and
  tool-calling requests answered.
* ``rules/<CODE>-<name>.sse``: a conforming stream with exactly one thing
  broken (see ``RULE_CAPTURES``). Header comment lines say what is broken and
  which findings the capture produces (SSE comments are ignored by decoders):

      : about <what is broken>
      : profile <name>              (optional; default openai)
      : limits max-line-bytes=N max-event-bytes=M   (optional; any engine Limits field, kebab-case)
      : request {"max_output_tokens": 20}           (optional, one-line JSON)
      : expect <CODE>               (one line per code: the complete set)
      : known-engine-bug <what the engine gets wrong>   (optional; tests/test_corpus.py xfails it)

  Bodies that cannot carry comment lines (a JSON error body, an HTML page)
  declare their findings in a sidecar ``X.expect.json`` instead:
  ``{"openai": ["SSE022"]}``.
"""

from __future__ import annotations

import copy
import json
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # checker/ and captures/, when not installed

from captures.generated_files import write_files  # noqa: E402

# The one stream builder (checker/synth/): tests, benchmarks and this corpus write streams with it.
from checker.synth import ResponsesStream as Stream  # noqa: E402
from checker.synth import dumps, make_call_id, make_id, usage  # noqa: E402
from checker.synth.responses import CREATED_AT  # noqa: E402
from checker.synth import frame as encode_event  # noqa: E402 - text: capture bodies are joined with their header
from checker.synth import frames as encode  # noqa: E402

ROOT = Path(__file__).resolve().parent
Event = dict[str, Any]


# --- objects -----------------------------------------------------------------

WEATHER_TOOL = {
    "type": "function",
    "name": "get_weather",
    "description": "Get the current weather for a city.",
    "parameters": {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name, e.g. Paris"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["city", "unit"],
        "additionalProperties": False,
    },
    "strict": True,
}
TIME_TOOL = {
    "type": "function",
    "name": "get_time",
    "description": "Get the local time in a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    },
    "strict": True,
}


# --- the conforming streams --------------------------------------------------

HELLO = ["Hello", "!", " In", " French", " you", " say", " \"", "Bon", "jour", "\",", " and", " in", " Spanish",
         " \"", "¡", "Hola", "!\""]
REASONING = ["The", " user", " wants", " the", " weather", " in", " Paris", ".", " I", " should", " call",
             " get", "_weather", " with", " city", " Paris", " and", " metric", " units", "."]
WEATHER_ARGS = ["{\"", "city", "\":\"", "Paris", "\",\"", "unit", "\":\"", "c", "elsius", "\"}"]
TIME_ARGS = ["{\"", "city", "\":\"", "Paris", "\"}"]


def text_stream() -> Stream:
    s = Stream("text").start().message(HELLO)
    return s.completed(usage(14, 17))


def reasoning_text_stream() -> Stream:
    s = Stream("reasoning-text", model="gpt-oss-120b", reasoning={"effort": "low", "summary": None}).start()
    s.reasoning_item(text=["The", " user", " asks", " for", " 17", " times", " 23", ".", " 17", "×", "20", "=",
                           "340", ",", " 17", "×", "3", "=", "51", ",", " total", " 391", "."])
    s.message(["17", " ×", " 23", " =", " **", "391", "**", "."])
    return s.completed(usage(21, 31, reasoning_tokens=23))


def reasoning_function_call_stream() -> Stream:
    s = Stream("reasoning-function-call", model="gpt-oss-120b", tools=[WEATHER_TOOL],
               reasoning={"effort": "medium", "summary": None}).start()
    s.reasoning_item(text=REASONING)
    s.function_call("get_weather", WEATHER_ARGS)
    return s.completed(usage(86, 30, reasoning_tokens=20))


def parallel_function_calls_stream() -> Stream:
    s = Stream("parallel-function-calls", tools=[WEATHER_TOOL, TIME_TOOL]).start()
    s.function_call("get_weather", WEATHER_ARGS)
    s.function_call("get_time", TIME_ARGS)
    return s.completed(usage(131, 33))


def refusal_stream() -> Stream:
    s = Stream("refusal").start()
    s.refusal(["I", "’m", " sorry", ",", " but", " I", " can", "’t", " help", " with", " that", "."])
    return s.completed(usage(19, 12))


def reasoning_summary_stream() -> Stream:
    s = Stream("reasoning-summary", model="gpt-5-mini-2025-08-07",
               reasoning={"effort": "medium", "summary": "detailed"}).start()
    s.reasoning_item(
        summary=[
            ["**", "Compar", "ing", " the", " numbers", "**\n\n", "The", " user", " asks", " which", " is",
             " larger", ":", " 9", ".11", " or", " 9", ".9", "."],
            ["**", "Answer", "ing", "**\n\n", "Comparing", " tenths", ":", " 9", ".9", " has", " 9", " tenths",
             ",", " 9", ".11", " has", " 1", ",", " so", " 9", ".9", " is", " larger", "."],
        ],
        encrypted="gAAAAABo7lEXbm9uZS1vZi10aGlzLWlzLXJlYWwtZW5jcnlwdGVkLWNvbnRlbnQtanVzdC1hLXNoYXBl",
    )
    s.message(["9", ".9", " is", " larger", " than", " 9", ".11", "."])
    return s.completed(usage(18, 152, reasoning_tokens=128))


def incomplete_stream() -> Stream:
    s = Stream("incomplete", max_output_tokens=16).start()
    s.message(["Once", " upon", " a", " time", ",", " in", " a", " quiet", " village", " by", " the", " sea", ",",
               " there", " lived", " an"], status="incomplete")
    return s.incomplete(usage(12, 16))


def function_call_incomplete_stream() -> Stream:
    """A call cut by max_output_tokens 24, as the API describes it: the item and the response incomplete."""
    s = Stream("function-call-incomplete", tools=[WEATHER_TOOL, TIME_TOOL], tool_choice="required",
               max_output_tokens=24).start()
    s.function_call("get_weather", WEATHER_ARGS[:4])
    done = s.events[find(s.events, "response.output_item.done")]
    done["item"]["status"] = s.done_items[-1]["status"] = "incomplete"
    return s.incomplete(usage(64, 24))


def failed_stream() -> Stream:
    s = Stream("failed", model="gpt-5-mini-2025-08-07", reasoning={"effort": "medium", "summary": "auto"}).start()
    s.reasoning_item(summary=[["**", "Plan", "ning", "**\n\n", "I", " will", " outline", " the", " essay",
                               " first", "."]])
    return s.failed("server_error", "The server had an error while processing your request. Sorry about that!")


WEB_SEARCH_TOOL = {"type": "web_search", "filters": None, "search_context_size": "medium",
                   "user_location": {"type": "approximate", "city": None, "country": "US", "region": None,
                                     "timezone": None}}
MCP_TOOL = {"type": "mcp", "allowed_tools": None, "headers": None, "require_approval": "never",
            "server_description": "Documentation search", "server_label": "docs",
            "server_url": "https://mcp.example.com/mcp"}
CITY_TEXT = ["The", " 2024", " Summer", " Olympics", " were", " held", " in", " Paris", ",", " France", ".",
             " The", " 2028", " Games", " go", " to", " Los", " Angeles", "."]
ROLL_CODE = ["import", " random", "\n", "rolls", " =", " [random", ".randint", "(1", ",", " 6", ")", " for", " _",
             " in", " range", "(1000", ")]", "\n", "sum", "(rolls", ")", " /", " len", "(rolls", ")", "\n"]
IMAGE_B64 = "UklGRuIWGQBXRUJQVlA4IDYWGQDw2wSdASoABgAEPm0ylkikIqIhJFQ7CJANiWlu"


def _citation(url: str, title: str, start: int, end: int) -> dict[str, Any]:
    return {"type": "url_citation", "end_index": end, "start_index": start, "title": title, "url": url}


def web_search_stream() -> Stream:
    s = Stream("web-search", model="gpt-5-mini-2025-08-07", tools=[WEB_SEARCH_TOOL]).start()
    s.web_search_call("2024 Summer Olympics host city")
    s.web_search_call("2028 Summer Olympics host city")
    s.message(CITY_TEXT, annotations={
        11: _citation("https://www.olympics.com/en/paris-2024", "Paris 2024", 0, 49),
        19: _citation("https://la28.org/", "LA28", 50, 82),
    })
    return s.completed(usage(2210, 61))


def code_interpreter_stream() -> Stream:
    s = Stream("code-interpreter", model="gpt-5-mini-2025-08-07",
               tools=[{"type": "code_interpreter", "container": {"type": "auto"}}]).start()
    s.code_interpreter_call(ROLL_CODE, "3.488")
    s.message(["The", " average", " of", " 1000", " rolls", " was", " 3", ".488", "."])
    return s.completed(usage(1490, 96))


def image_generation_stream() -> Stream:
    s = Stream("image-generation", model="gpt-5-mini-2025-08-07",
               tools=[{"type": "image_generation", "background": "auto", "moderation": "auto", "n": 1,
                       "output_compression": 100, "output_format": "webp", "quality": "low", "size": "auto"}]).start()
    s.image_generation_call(2, IMAGE_B64)
    s.message(["Here", " is", " the", " echidna", "."])
    return s.completed(usage(2403, 112))


def mcp_call_stream() -> Stream:
    s = Stream("mcp-call", model="gpt-5-mini-2025-08-07", tools=[MCP_TOOL]).start()
    s.mcp_list_tools("docs", [{"annotations": {"read_only": True}, "description": "Search the documentation.",
                               "input_schema": {"type": "object", "properties": {"query": {"type": "string"}},
                                                "required": ["query"]},
                               "name": "search_docs"}])
    s.mcp_call("docs", "search_docs", ["{\"query\":", "\"streaming", " events\"}"],
               "Streaming events are documented under Responses > Streaming.")
    s.message(["See", " the", " Streaming", " section", " of", " the", " Responses", " docs", "."])
    return s.completed(usage(812, 54))


def shell_stream() -> Stream:
    s = Stream("shell", model="gpt-5.2-2025-12-11",
               tools=[{"type": "shell", "environment": {"type": "container_reference",
                                                        "container_id": make_id("cntr_", "shell/container")}}]).start()
    call_id = s.shell_call([["ls", " -", "la"], ["cat", " README", ".md"]])
    s.shell_call_output(call_id, ["total 8\nREADME.md\n", "# Demo\n"])
    s.message(["The", " folder", " holds", " README", ".md", "."])
    return s.completed(usage(940, 77))


def custom_tool_stream() -> Stream:
    s = Stream("custom-tool", model="gpt-5.2-codex", tool_choice="required",
               tools=[{"type": "custom", "name": "write_sql",
                       "description": "Write a SQL SELECT query to answer the user question.",
                       "format": {"type": "grammar", "syntax": "regex", "definition": "SELECT .+"}}]).start()
    s.custom_tool_call("write_sql", ["SELECT", " *", " FROM", " users", " WHERE", " age", " >", " 25"])
    return s.completed(usage(104, 19))


# What api.openai.com sends where the 2.3.0 description is stricter than the clients (captures/real-openai,
# tools/gen_schemas.py OVERLAYS): user and usage null in the opening snapshots, an MCP tool echoed with a null
# server_description, a web_search_call added without the action only its done form carries, and
# function_call_arguments.done without name.
WIRE_MCP_TOOL = {"type": "mcp", "server_label": "deepwiki", "server_url": "https://mcp.deepwiki.com/mcp",
                 "server_description": None, "allowed_tools": None, "headers": None, "require_approval": "never"}


def openai_wire_forms_stream() -> Stream:
    s = Stream("openai-wire-forms", model="gpt-5-mini-2025-08-07", tools=[WEB_SEARCH_TOOL, WIRE_MCP_TOOL, WEATHER_TOOL],
               opening_nulls=True).start()
    search_id = make_id("ws_", "openai-wire-forms/search")
    s.tool_item({"id": search_id, "type": "web_search_call", "status": "in_progress"},
                {"id": search_id, "type": "web_search_call", "status": "completed",
                 "action": {"type": "search", "query": "weather Paris today"}},
                ["response.web_search_call.in_progress", "response.web_search_call.searching",
                 "response.web_search_call.completed"])
    s.function_call("get_weather", WEATHER_ARGS, done_names=False)
    return s.completed(usage(312, 41))


PROGRAM_CALLER = {"type": "program", "caller_id": make_call_id("programmatic-call/program")}


def programmatic_call_stream() -> Stream:
    """Programmatic tool calling: a program's call to a function finishes in_progress, awaiting its output
    (captures/real-openai/vercel-programmatic-tool-calling-2.sse)."""
    s = Stream("programmatic-call", model="gpt-5.6-sol", tools=[WEATHER_TOOL]).start()
    s.function_call("get_weather", WEATHER_ARGS, caller=PROGRAM_CALLER, done_status="in_progress",
                    done_names=False)
    return s.completed(usage(402, 18))


def program_output_stream() -> Stream:
    """The program's result, which the server creates finished (captures/real-openai/
    vercel-programmatic-tool-calling-3.sse), then the answer."""
    s = Stream("program-output", model="gpt-5.6-sol", tools=[WEATHER_TOOL]).start()
    output_id = make_id("cmo_", "program-output/result")
    result = "{\"city\":\"Paris\",\"celsius\":18}"
    s.tool_item({"id": output_id, "type": "program_output", "status": "completed",
                 "call_id": PROGRAM_CALLER["caller_id"], "result": ""},
                {"id": output_id, "type": "program_output", "status": "completed",
                 "call_id": PROGRAM_CALLER["caller_id"], "result": result})
    s.message(["It", " is", " 18", " °C", " in", " Paris", "."])
    return s.completed(usage(455, 9))


CONFORMING: dict[str, Callable[[], Stream]] = {
    "openai-wire-forms": openai_wire_forms_stream,
    "programmatic-call": programmatic_call_stream,
    "program-output": program_output_stream,
    "text": text_stream,
    "reasoning-text": reasoning_text_stream,
    "reasoning-function-call": reasoning_function_call_stream,
    "parallel-function-calls": parallel_function_calls_stream,
    "refusal": refusal_stream,
    "reasoning-summary": reasoning_summary_stream,
    "incomplete": incomplete_stream,
    "function-call-incomplete": function_call_incomplete_stream,
    "failed": failed_stream,
    "web-search": web_search_stream,
    "code-interpreter": code_interpreter_stream,
    "image-generation": image_generation_stream,
    "mcp-call": mcp_call_stream,
    "shell": shell_stream,
    "custom-tool": custom_tool_stream,
}


def open_responses_text_stream() -> Stream:
    s = Stream("open-responses-text", flavor="open-responses").start().message(HELLO)
    return s.completed(usage(14, 17))


# The Open Responses compliance suite's requests (src/lib/compliance-tests.ts in openresponses/openresponses),
# answered as its specification's examples answer: "streaming-response" counts from 1 to 5,
# "tool-calling-streaming" calls get_weather for San Francisco (function_call_arguments.delta and .done, the
# function_call item added and done), and a reasoning model's answer streams response.reasoning.delta/done.
OR_WEATHER_TOOL = {"type": "function", "name": "get_weather", "description": "Get the current weather for a location",
                   "parameters": {"type": "object", "properties": {"location": {
                       "type": "string", "description": "The city and state, e.g. San Francisco, CA"}},
                       "required": ["location"]}, "strict": None}


def open_responses_counting_stream() -> Stream:
    s = Stream("open-responses-counting", flavor="open-responses").start()
    s.reasoning_item(text=["The user", " wants the numbers", " from 1 to 5."], summary=[["Count to five."]])
    s.message(["1", ", 2", ", 3", ", 4", ", 5", "."])
    return s.completed(usage(12, 31, reasoning_tokens=12))


def open_responses_tool_call_stream() -> Stream:
    s = Stream("open-responses-tool-call", flavor="open-responses", tools=[OR_WEATHER_TOOL]).start()
    s.function_call("get_weather", ['{"location"', ': "San Francisco', ', CA"}'])
    return s.completed(usage(64, 18))


# --- encoding ----------------------------------------------------------------


def header(about: str, expect: Iterable[str], *, profile: str | None = None, limits: str | None = None,
           request: dict[str, Any] | None = None, bug: str | None = None) -> str:
    lines = [f": about {about}"]
    if profile:
        lines.append(f": profile {profile}")
    if limits:
        lines.append(f": limits {limits}")
    if request is not None:
        lines.append(f": request {dumps(request)}")
    lines += [f": expect {code}" for code in sorted(set(expect))]
    if bug:
        lines.append(f": known-engine-bug {bug}")
    return "\n".join(lines) + "\n\n"


# --- helpers for breaking one thing -------------------------------------------


def find(events: list[Event], etype: str, nth: int = 0, **match: Any) -> int:
    """Index of the nth event of a type whose fields equal ``match``."""
    seen = 0
    for i, e in enumerate(events):
        if e.get("type") == etype and all(e.get(k) == v for k, v in match.items()):
            if seen == nth:
                return i
            seen += 1
    raise LookupError(f"no event {etype} #{nth} {match}")


def find_all(events: list[Event], etype: str) -> list[int]:
    return [i for i, e in enumerate(events) if e.get("type") == etype]


def renumber(events: list[Any]) -> list[Any]:
    """sequence_number 1, 2, 3… again after events were inserted or removed."""
    n = 0
    for e in events:
        if isinstance(e, dict) and "sequence_number" in e:
            n += 1
            e["sequence_number"] = n
    return events


def completed_response(events: list[Event]) -> dict[str, Any]:
    return events[-1]["response"]


@dataclass
class Capture:
    name: str  # file name under rules/, without .sse
    about: str
    expect: list[str]
    body: Callable[[], bytes | str]
    profile: str | None = None
    limits: str | None = None
    request: dict[str, Any] | None = None
    bug: str | None = None
    sidecar: dict[str, Any] | None = None  # expect.json (no header lines possible)


RULE_CAPTURES: list[Capture] = []


def capture(name: str, about: str, expect: list[str], **options: Any) -> Callable[[Callable[[], Any]], Any]:
    def register(fn: Callable[[], Any]) -> Callable[[], Any]:
        RULE_CAPTURES.append(Capture(name=name, about=about, expect=expect, body=fn, **options))
        return fn

    return register


def events_of(stream: Callable[[], Stream]) -> list[Event]:
    return stream().events


# === SSE: framing =============================================================


@capture("SSE001-byte-order-mark", "a UTF-8 BOM before the first byte of the stream", ["SSE001"])
def _() -> bytes:
    return b"\xef\xbb\xbf" + (HEAD + encode(events_of(text_stream))).encode()


@capture("SSE001-bom-before-data",
         "a UTF-8 BOM before the first line, which is `data:` (no `event:` lines): a decoder that keeps the BOM "
         "loses response.created", [], sidecar={"openai": ["SSE001", "SSE009"]})
def _() -> bytes:
    return b"\xef\xbb\xbf" + encode(events_of(text_stream), event_line=None).encode()


@capture("SSE002-lone-cr-line-ending", "every line ends in a lone CR (classic Mac line ends)", ["SSE002"])
def _() -> str:
    return (HEAD + encode(events_of(text_stream))).replace("\n", "\r")


@capture("SSE003-mixed-line-endings",
         "the lifecycle events end their lines in CRLF, the output events in LF (two writers)", ["SSE003"])
def _() -> str:
    out = HEAD
    for e in events_of(text_stream):
        out += encode_event(e, eol="\r\n" if e["type"].startswith("response.") and "output" not in e["type"]
                            and "content" not in e["type"] else "\n")
    return out


@capture("SSE004-trailing-partial-event",
         "the connection closes before the blank line after response.completed, so the terminal event "
         "is never dispatched", ["SSE004", "LIF006"])
def _() -> str:
    return (HEAD + encode(events_of(text_stream)))[:-1]


@capture("SSE004-trailing-cut-json",
         "the connection closes inside response.completed's JSON: a decoder that flushes the pending event "
         "parses half a JSON document", ["SSE004", "LIF006"])
def _() -> str:
    return (HEAD + encode(events_of(text_stream)))[:-200]


@capture("SSE005-invalid-utf8",
         "the server encodes its text as Latin-1: the e-acute of cafe is sent as the single byte E9", ["SSE005"])
def _() -> bytes:
    s = Stream("SSE005").start().message(["A", " caf", "é", " au", " lait", ",", " please", "."])
    s.completed(usage(11, 8))
    return (HEAD + encode(s.events)).encode("latin-1")


@capture("SSE006-data-not-json",
         "output_text.done is written by a string template that leaves a trailing comma, so it is not JSON "
         "and is lost", ["SSE006", "CNT007"])
def _() -> str:
    events: list[Any] = events_of(text_stream)
    i = find(events, "response.output_text.done")
    events[i] = dumps(events[i])[:-1] + ",}"
    out = HEAD
    for e in events:
        out += encode_event(e, event_line="response.output_text.done" if isinstance(e, str) else "type")
    return out


@capture("SSE007-data-not-object", "a heartbeat sent as `data: null` between two deltas", ["SSE007"])
def _() -> str:
    events: list[Any] = events_of(text_stream)
    events.insert(find(events, "response.output_text.delta", 5), "null")
    return HEAD + encode(events)


@capture("SSE008-event-type-mismatch",
         "the `event:` line of output_text.done still names the previous event (output_text.delta)", ["SSE008"])
def _() -> str:
    events = events_of(text_stream)
    i = find(events, "response.output_text.done")
    return HEAD + encode(events[:i]) + encode_event(events[i], event_line="response.output_text.delta") + encode(
        events[i + 1 :])


@capture("SSE009-missing-event-field", "data-only events: no `event:` line anywhere (pi #1983)", ["SSE009"])
def _() -> str:
    return HEAD + encode(events_of(text_stream), event_line=None)


@capture("SSE010-event-after-terminal",
         "a trailing newline delta is flushed after response.completed", ["SSE010"])
def _() -> str:
    events = events_of(text_stream)
    late = copy.deepcopy(events[find(events, "response.output_text.delta")])
    late["delta"] = "\n"
    late["sequence_number"] = events[-1]["sequence_number"] + 1
    return HEAD + encode(events + [late])


@capture("SSE011-done-sentinel-sent", "a Chat Completions style `data: [DONE]` after response.completed",
         ["SSE011"])
def _() -> str:
    return HEAD + encode(events_of(text_stream)) + "data: [DONE]\n\n"


@capture("SSE012-done-sentinel-missing",
         "an Open Responses stream that ends after response.completed without `data: [DONE]`", ["SSE012"],
         profile="open-responses")
def _() -> str:
    return HEAD + encode(open_responses_text_stream().events)


@capture("SSE013-event-without-data", "a keepalive sent as an `event: ping` block without data", ["SSE013"])
def _() -> str:
    events = events_of(text_stream)
    i = find(events, "response.output_text.delta", 8)
    return HEAD + encode(events[:i]) + "event: ping\n\n" + encode(events[i:])


@capture("SSE014-invalid-retry", "`retry: 3000ms` (not all digits) on the first event", ["SSE014"])
def _() -> str:
    return HEAD + "retry: 3000ms\n" + encode(events_of(text_stream))


@capture("SSE015-multi-line-data", "response.completed is pretty-printed over several `data:` lines",
         ["SSE015"])
def _() -> str:
    events = events_of(text_stream)
    pretty = json.dumps(events[-1], indent=2, ensure_ascii=False)
    last = "event: response.completed\n" + "".join(f"data: {line}\n" for line in pretty.split("\n")) + "\n"
    return HEAD + encode(events[:-1]) + last


@capture("SSE016-unknown-field", "a proxy writes an `x-request-id:` line into the first event", ["SSE016"])
def _() -> str:
    return HEAD + "x-request-id: req_5f1c2a9d7b3e4f60a8c1d2e3f4a5b6c7\n" + encode(events_of(text_stream))


@capture("SSE028-error-field-line", "llama-server's streamed error: an `error:` line, then `data: [DONE]`, "
         "with HTTP 200 (llama.cpp #14566)", ["SSE016", "SSE028", "SSE011", "LIF006"])
def _() -> str:
    return HEAD + ('error: {"code":400,"message":"the request exceeds the available context size, try increasing '
                   'it","type":"exceed_context_size_error","n_prompt_tokens":4390,"n_ctx":4096}\n\n'
                   "data: [DONE]\n\n")


@capture("SSE017-id-contains-nul", "event ids are sent, one of them with a NUL byte in it",
         ["SSE017", "SSE019"])
def _() -> bytes:
    out = HEAD
    for n, e in enumerate(events_of(text_stream), start=1):
        out += f"id: {n}" + ("\x00" if n == 6 else "") + "\n" + encode_event(e)
    return out.encode()


@capture("SSE018-keepalive-as-data", "a keepalive wrapped in data (`data: : ping`, llm-gateway#2053)",
         ["SSE018"])
def _() -> str:
    events: list[Any] = events_of(text_stream)
    events.insert(find(events, "response.output_text.delta", 8), ": ping")
    return HEAD + encode(events)


@capture("SSE019-nul-byte", "a keepalive comment line padded with NUL bytes", ["SSE019"])
def _() -> str:
    events = events_of(text_stream)
    i = find(events, "response.output_text.delta", 8)
    return HEAD + encode(events[:i]) + ": keepalive" + "\x00" * 8 + "\n\n" + encode(events[i:])


@capture("SSE019-nul-in-data", "a text delta carries a raw NUL byte inside its JSON string",
         ["SSE019", "SSE006", "REC001", "REC002", "REC003"])
def _() -> str:
    events = events_of(text_stream)
    i = find(events, "response.output_text.delta", 3)
    line = encode_event(events[i]).replace('"delta":"', '"delta":"\x00', 1)
    return HEAD + encode(events[:i]) + line + encode(events[i + 1:])


@capture("SSE020-line-too-long",
         "a 4 KiB padding comment (sent to defeat proxy buffering) is longer than the line limit of 2048 bytes",
         ["SSE020"], limits="max-line-bytes=2048 max-event-bytes=65536")
def _() -> str:
    events = events_of(text_stream)
    return HEAD + ": " + "." * 4096 + "\n\n" + encode(events)


@capture("SSE021-event-too-large",
         "response.completed (1.2 KB) is larger than the event limit of 1024 bytes, so it is skipped",
         ["SSE021", "LIF006"], limits="max-line-bytes=65536 max-event-bytes=1024")
def _() -> str:
    s = Stream("SSE021", instructions="You are a friendly assistant. Answer briefly.").start().message(HELLO)
    s.completed(usage(31, 17))
    assert max(len(dumps(e)) for e in s.events[:-1]) < 1024 < len(dumps(s.events[-1])), "adjust the limit"
    return HEAD + encode(s.events)


@capture("SSE022-not-an-event-stream", "an HTTP 400 JSON error body instead of an event stream", ["SSE022"],
         sidecar={"openai": ["SSE022"]})
def _() -> str:
    return dumps({"error": {"message": "Invalid value for 'input': expected a string or an array of input "
                                       "items.", "type": "invalid_request_error", "param": "input",
                            "code": "invalid_value"}}) + "\n"


@capture("SSE022-html", "a gateway's HTML error page (502 Bad Gateway) instead of an event stream",
         ["SSE022"], sidecar={"openai": ["SSE022"]})
def _() -> str:
    return ("<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway"
            "</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n")


@capture("SSE023-empty-stream", "the body holds nothing but these comment lines", ["SSE023"])
def _() -> str:
    return HEAD


@capture("SSE024-duplicate-json-key",
         "a proxy appends its own sequence_number to an event that already has one (the key appears twice)",
         ["SSE024"])
def _() -> str:
    events: list[Any] = events_of(text_stream)
    i = find(events, "response.output_text.delta", 3)
    events[i] = dumps(events[i])[:-1] + f',"sequence_number":{events[i]["sequence_number"]}}}'
    out = HEAD
    for e in events:
        out += encode_event(e, event_line="response.output_text.delta" if isinstance(e, str) else "type")
    return out


@capture("SSE025-number-out-of-range",
         "the response object echoes a 64-bit random seed (12345678901234567890, beyond 2^63 and 2^53)",
         ["SSE025"])
def _() -> str:
    events = events_of(text_stream)
    text = encode(events)
    return HEAD + text.replace('"top_p":1.0,', '"top_p":1.0,"seed":12345678901234567890,')


@capture("SSE026-json-too-deep",
         "a vendor debug event carries a span tree nested 80 levels deep (the limit is 64); it is skipped",
         ["SSE026"])
def _() -> str:
    events: list[Any] = events_of(text_stream)
    tree: dict[str, Any] = {"name": "sample", "children": []}
    for depth in range(80):
        tree = {"name": f"span{depth}", "children": [tree]}
    events.insert(find(events, "response.output_text.delta", 8),
                  {"type": "acme:trace", "sequence_number": 0, "trace": tree})
    return HEAD + encode(renumber(events))


@capture("SSE027-stream-limit-exceeded",
         "a runaway generation: the stream goes on past the event limit of 20 (set for this example)",
         ["SSE027"], limits="max-events=20")
def _() -> str:
    s = Stream("SSE027").start().message(["la"] * 40)
    s.completed(usage(9, 40))
    return HEAD + encode(s.events)


# === LIF: lifecycle ===========================================================


@capture("LIF001-first-event-not-created", "the stream starts at response.in_progress: no response.created",
         ["LIF001"])
def _() -> str:
    return HEAD + encode(renumber(events_of(text_stream)[1:]))


@capture("LIF002-duplicate-created", "response.created is sent a second time after response.in_progress",
         ["LIF002"])
def _() -> str:
    events = events_of(text_stream)
    events.insert(2, copy.deepcopy(events[0]))
    return HEAD + encode(renumber(events))


@capture("LIF003-in-progress-missing", "no response.in_progress: output starts right after response.created",
         ["LIF003"])
def _() -> str:
    events = events_of(text_stream)
    del events[1]
    return HEAD + encode(renumber(events))


@capture("LIF004-lifecycle-out-of-order", "a response.in_progress arrives after the output has started",
         ["LIF004"])
def _() -> str:
    events = events_of(text_stream)
    events.insert(find(events, "response.output_text.delta", 3), copy.deepcopy(events[1]))
    return HEAD + encode(renumber(events))


@capture("LIF005-repeated-in-progress", "response.in_progress is sent twice before the output starts",
         ["LIF005"])
def _() -> str:
    events = events_of(text_stream)
    events.insert(2, copy.deepcopy(events[1]))
    return HEAD + encode(renumber(events))


@capture("LIF006-missing-terminal-event",
         "the stream ends after the message's output_item.done: no response.completed", ["LIF006"])
def _() -> str:
    return HEAD + encode(events_of(text_stream)[:-1])


@capture("LIF006-cut-mid-text", "the connection drops in the middle of the text deltas", ["LIF006"])
def _() -> str:
    events = events_of(text_stream)
    return HEAD + encode(events[: find(events, "response.output_text.delta", 6)])


@capture("LIF007-multiple-terminal-events",
         "response.failed follows response.completed", ["LIF007", "SSE010"])
def _() -> str:
    events = events_of(text_stream)
    failed = copy.deepcopy(events[-1])
    failed["type"] = "response.failed"
    failed["sequence_number"] += 1
    failed["response"].update(status="failed", completed_at=None,
                              error={"code": "server_error", "message": "The server had an error."})
    return HEAD + encode(events + [failed])


@capture("LIF008-unfinished-items-at-terminal",
         "the message's output_item.done is never sent, yet response.completed lists the message",
         ["LIF008"])
def _() -> str:
    events = events_of(text_stream)
    del events[find(events, "response.output_item.done")]
    return HEAD + encode(renumber(events))


@capture("LIF009-terminal-status-mismatch",
         "response.completed carries a response whose status is still \"in_progress\"", ["LIF009"])
def _() -> str:
    events = events_of(text_stream)
    completed_response(events)["status"] = "in_progress"
    return HEAD + encode(events)


@capture("LIF010-failed-without-error", "response.failed with `error: null`", ["LIF010"])
def _() -> str:
    events = events_of(failed_stream)
    completed_response(events)["error"] = None
    return HEAD + encode(events)


@capture("LIF011-incomplete-without-reason", "response.incomplete with `incomplete_details: null`",
         ["LIF011"])
def _() -> str:
    events = events_of(incomplete_stream)
    completed_response(events)["incomplete_details"] = None
    return HEAD + encode(events)


@capture("LIF012-response-id-changed",
         "response.completed carries a different response id than response.created", ["LIF012"])
def _() -> str:
    events = events_of(text_stream)
    completed_response(events)["id"] = make_id("resp_", "another response")
    return HEAD + encode(events)


@capture("LIF013-error-event",
         "a flat `error` event (code, message, param) before response.failed", ["LIF013"])
def _() -> str:
    events = events_of(failed_stream)
    events.insert(len(events) - 1, {"type": "error", "sequence_number": 0, "code": "server_error",
                                    "message": "The server had an error while processing your request. "
                                               "Sorry about that!", "param": None})
    return HEAD + encode(renumber(events))


@capture("LIF014-top-level-error-field",
         "llama.cpp-style mid-stream error: `data: {\"error\": …}` without a type, and the stream ends",
         ["LIF014", "SCH007", "LIF006"])
def _() -> str:
    events: list[Any] = events_of(text_stream)
    cut = find(events, "response.output_text.delta", 6)
    error = dumps({"error": {"code": 500, "message": "context shift is disabled", "type": "server_error"}})
    return HEAD + encode(events[:cut]) + f"data: {error}\n\n"


@capture("LIF013-nested-error-event",
         "the error event in OpenAI's nested wire form ({type: error, error: {…}}, what api.openai.com sends, "
         "captures/real-openai/vercel-openai-error-1.sse) before response.failed: an error event, no schema error "
         "and no stray top-level error field", ["LIF013"])
def _() -> str:
    events = events_of(failed_stream)
    events.insert(len(events) - 1, {"type": "error", "sequence_number": 0, "error": {
        "type": "server_error", "code": "server_error",
        "message": "The server had an error while processing your request. Sorry about that!", "param": None}})
    return HEAD + encode(renumber(events))


@capture("LIF015-sequence-number-missing", "no event carries sequence_number (sub2api #7129)", ["LIF015"])
def _() -> str:
    events = events_of(text_stream)
    for e in events:
        del e["sequence_number"]
    return HEAD + encode(events)


@capture("LIF016-sequence-number-not-increasing",
         "one delta repeats the previous event's sequence_number", ["LIF016"])
def _() -> str:
    events = events_of(text_stream)
    i = find(events, "response.output_text.delta", 4)
    events[i]["sequence_number"] = events[i - 1]["sequence_number"]
    return HEAD + encode(events)


@capture("LIF017-truncation-reported-completed",
         "output_tokens reached max_output_tokens 20 and the text stops mid-sentence, but the response is "
         "reported completed", ["LIF017"], request={"max_output_tokens": 20})
def _() -> str:
    s = Stream("LIF017", max_output_tokens=20).start()
    s.message(["Here", " is", " a", " short", " story", ":", " Once", " upon", " a", " time", ",", " a", " fox",
               " found", " a", " lantern", " in", " the", " snow", " and"])
    s.completed(usage(12, 20))
    return HEAD + encode(s.events)


@capture("LIF017-request-not-echoed",
         "the request set max_output_tokens 20 and output_tokens reached 20, the response echoes "
         "`max_output_tokens: null` and is reported completed", ["LIF017"], request={"max_output_tokens": 20})
def _() -> str:
    s = Stream("LIF017-request").start()
    s.message(["Here", " is", " a", " short", " story", ":", " Once", " upon", " a", " time", ",", " a", " fox",
               " found", " a", " lantern", " in", " the", " snow", " and"])
    s.completed(usage(12, 20))
    return HEAD + encode(s.events)


@capture("LIF018-usage-malformed",
         "usage has no output_tokens_details (llama.cpp #22659)", ["LIF018"])
def _() -> str:
    events = events_of(text_stream)
    del completed_response(events)["usage"]["output_tokens_details"]
    return HEAD + encode(events)


@capture("LIF018-no-cache-write-tokens",
         "usage.input_tokens_details without cache_write_tokens, as OpenAI's streams recorded before mid-2026 "
         "(version skew: a known deviation of the reference server, info)", ["LIF018"])
def _() -> str:
    events = events_of(text_stream)
    del completed_response(events)["usage"]["input_tokens_details"]["cache_write_tokens"]
    return HEAD + encode(events)


@capture("LIF018-total-mismatch", "usage.total_tokens is not input_tokens + output_tokens", ["LIF018"])
def _() -> str:
    events = events_of(text_stream)
    completed_response(events)["usage"]["total_tokens"] = 17
    return HEAD + encode(events)


# === ITM: items ===============================================================


@capture("ITM001-output-index-missing", "no item-scoped event carries output_index", ["ITM001"])
def _() -> str:
    events = events_of(reasoning_function_call_stream)
    for e in events:
        e.pop("output_index", None)
    return HEAD + encode(events)


@capture("ITM002-output-index-not-appended",
         "the second function call is added at output_index 2 (a gap after 0)", ["ITM002"])
def _() -> str:
    events = events_of(parallel_function_calls_stream)
    for e in events:
        if e.get("output_index") == 1:
            e["output_index"] = 2
    return HEAD + encode(events)


@capture("ITM014-output-index-negative",
         "every index one below its place, the first item's events at -1 (the gpt-oss reference server adds its "
         "first item at -1)", ["ITM014", "ITM002"])
def _() -> str:
    events = events_of(reasoning_text_stream)
    for e in events:
        if type(e.get("output_index")) is int:
            e["output_index"] -= 1
    return HEAD + encode(events)


@capture("ITM003-output-index-reused",
         "both function calls are streamed at output_index 0 (the index is never incremented; LiteLLM #36375)",
         ["ITM003", "ITM005"])
def _() -> str:
    events = events_of(parallel_function_calls_stream)
    for e in events:
        if e.get("output_index") == 1:
            e["output_index"] = 0
    return HEAD + encode(events)


@capture("ITM004-event-for-unknown-item",
         "the argument events name the call_id as item_id instead of the fc_ item id", ["ITM004", "FNC002"])
def _() -> str:
    events = events_of(reasoning_function_call_stream)
    call = events[find(events, "response.output_item.added", 1)]["item"]
    for e in events:
        if e["type"].startswith("response.function_call_arguments."):
            e["item_id"] = call["call_id"]
    return HEAD + encode(events)


@capture("ITM004-text-for-unannounced-item",
         "the message is never added (no output_item.added, no content_part.added) and its text deltas carry "
         "no content_index: the clients fail on the missing item first", ["ITM004", "CNT001", "ITM008"])
def _() -> str:
    events = events_of(text_stream)
    del events[find(events, "response.content_part.added")]
    del events[find(events, "response.output_item.added")]
    for e in events:
        if e["type"] in ("response.output_text.delta", "response.output_text.done"):
            del e["content_index"]
    return HEAD + encode(renumber(events))


@capture("ITM005-item-id-mismatch",
         "function_call_arguments.done names the call's item_id but the reasoning item's output_index 0",
         ["ITM005"])
def _() -> str:
    events = events_of(reasoning_function_call_stream)
    events[find(events, "response.function_call_arguments.done")]["output_index"] = 0
    return HEAD + encode(events)


@capture("ITM006-event-after-item-done", "a last text delta arrives after the message's output_item.done",
         ["ITM006"])
def _() -> str:
    events = events_of(text_stream)
    late = copy.deepcopy(events[find(events, "response.output_text.delta")])
    late["delta"] = " "
    events.insert(len(events) - 1, late)
    return HEAD + encode(renumber(events))


@capture("ITM007-done-identity-changed",
         "output_item.done of the function call carries a freshly generated call_id", ["ITM007"])
def _() -> str:
    events = events_of(reasoning_function_call_stream)
    new = make_call_id("regenerated")
    events[find(events, "response.output_item.done", 1)]["item"]["call_id"] = new
    completed_response(events)["output"][1]["call_id"] = new
    return HEAD + encode(events)


@capture("ITM007-tool-search-call-id-changed",
         "a server-run tool_search_call changes its call_id between output_item.added and output_item.done",
         ["ITM007"])
def _() -> str:
    s = Stream("ITM007-tool-search").start()
    item_id, index = make_id("tsc_", "ITM007-tool-search/1"), s._index()
    added = {"id": item_id, "type": "tool_search_call", "call_id": make_call_id("tool-search"),
             "execution": "server", "arguments": {"query": "weather"}, "status": "in_progress"}
    done = {**added, "call_id": make_call_id("tool-search-regenerated"), "status": "completed"}
    s.emit({"type": "response.output_item.added", "sequence_number": s._seq(), "output_index": index,
            "item": added})
    s.emit({"type": "response.output_item.done", "sequence_number": s._seq(), "output_index": index,
            "item": done})
    s.done_items.append(copy.deepcopy(done))
    s.message(["No", " weather", " tool", " was", " found", "."])
    s.completed(usage(40, 12))
    return HEAD + encode(s.events)


@capture("ITM007-item-id-changed",
         "the message's output_item.done (same output_index) carries another id than its output_item.added",
         ["ITM007"])
def _() -> str:
    events = events_of(text_stream)
    new = make_id("msg_", "regenerated")
    events[find(events, "response.output_item.done")]["item"]["id"] = new
    completed_response(events)["output"][0]["id"] = new
    return HEAD + encode(events)


@capture("ITM007-done-output-index-moved",
         "the function call's output_item.done names output_index 5, where no item was added", ["ITM007"])
def _() -> str:
    events = events_of(reasoning_function_call_stream)
    events[find(events, "response.output_item.done", 1)]["output_index"] = 5
    return HEAD + encode(events)


@capture("ITM008-done-without-added",
         "a function call is sent only as output_item.done (no added, no argument events)",
         ["ITM008"])
def _() -> str:
    s = Stream("ITM008", tools=[WEATHER_TOOL]).start()
    s.message(["Let", " me", " check", " the", " weather", " in", " Paris", "."])
    s.function_call("get_weather", WEATHER_ARGS)
    s.completed(usage(84, 18))
    events = s.events
    first = find(events, "response.output_item.added", 1)
    last = find(events, "response.function_call_arguments.done")
    del events[first : last + 1]
    return HEAD + encode(renumber(events))


@capture("ITM009-duplicate-item-done", "the message's output_item.done is sent twice", ["ITM009"])
def _() -> str:
    events = events_of(text_stream)
    i = find(events, "response.output_item.done")
    events.insert(i + 1, copy.deepcopy(events[i]))
    return HEAD + encode(renumber(events))


@capture("ITM010-event-family-mismatch",
         "the reasoning item's text is streamed as response.output_text.delta/done (message events) "
         "instead of reasoning_text events", ["ITM010"])
def _() -> str:
    events = events_of(reasoning_text_stream)
    reasoning = events[find(events, "response.output_item.added")]["item"]["id"]
    rename = {"response.reasoning_text.delta": "response.output_text.delta",
              "response.reasoning_text.done": "response.output_text.done"}
    out = []
    for e in events:
        if e.get("item_id") == reasoning:
            if e["type"].startswith("response.content_part."):
                continue
            if e["type"] in rename:
                e["type"] = rename[e["type"]]
                e["logprobs"] = []
        out.append(e)
    return HEAD + encode(renumber(out))


@capture("ITM011-interleaved-items",
         "the second function call is added before the first one's output_item.done", ["ITM011"])
def _() -> str:
    events = events_of(parallel_function_calls_stream)
    first_done = find(events, "response.output_item.done")
    second_added = find(events, "response.output_item.added", 1)
    done = events.pop(first_done)
    events.insert(second_added, done)  # second_added shifted down by one: done goes right after it
    return HEAD + encode(renumber(events))


@capture("ITM011-delayed-reasoning-done",
         "llama.cpp style: the reasoning item's output_item.done comes in the final burst, after the message "
         "was added and streamed", ["ITM011"])
def _() -> str:
    events = events_of(reasoning_text_stream)
    done = events.pop(find(events, "response.output_item.done"))
    events.insert(find(events, "response.output_text.done"), done)
    return HEAD + encode(renumber(events))


@capture("ITM012-added-status-not-in-progress", "output_item.added announces the message as \"completed\"",
         ["ITM012"])
def _() -> str:
    events = events_of(text_stream)
    events[find(events, "response.output_item.added")]["item"]["status"] = "completed"
    return HEAD + encode(events)


@capture("ITM013-done-status-not-final", "output_item.done leaves the message's status \"in_progress\"",
         ["ITM013"])
def _() -> str:
    events = events_of(text_stream)
    events[find(events, "response.output_item.done")]["item"]["status"] = "in_progress"
    return HEAD + encode(events)


@capture("ITM013-direct-call-in-progress",
         "a function call the model made itself (no program caller) finishes in_progress: only a program's calls "
         "wait for their output by design (conforming/programmatic-call.sse)", ["ITM013"])
def _() -> str:
    s = Stream("direct-call-in-progress", tools=[WEATHER_TOOL]).start()
    s.function_call("get_weather", WEATHER_ARGS, done_status="in_progress")
    return HEAD + encode(s.completed(usage(86, 12)).events)


@capture("ITM012-call-added-completed",
         "a function call announced \"completed\" at output_item.added: only results the server creates "
         "(program_output, shell_call_output) are born finished (conforming/program-output.sse)", ["ITM012"])
def _() -> str:
    events = events_of(reasoning_function_call_stream)
    i = find(events, "response.output_item.added", 1)
    events[i]["item"]["status"] = "completed"
    return HEAD + encode(events)


# === CNT: content parts =======================================================


@capture("CNT001-content-index-missing", "no part-scoped event carries content_index", ["CNT001"])
def _() -> str:
    events = events_of(text_stream)
    for e in events:
        e.pop("content_index", None)
    return HEAD + encode(events)


@capture("CNT002-content-index-not-appended",
         "the message's only part is at content_index 1 (vLLM #45742)", ["CNT002"])
def _() -> str:
    events = events_of(text_stream)
    for e in events:
        if "content_index" in e:
            e["content_index"] = 1
    return HEAD + encode(events)


@capture("CNT002-not-reset-per-item",
         "content_index is not reset for the message: it continues at 1 after the reasoning part "
         "(vLLM #23382, #35184)", ["CNT002"])
def _() -> str:
    events = events_of(reasoning_text_stream)
    message = events[find(events, "response.output_item.added", 1)]["item"]["id"]
    for e in events:
        if e.get("item_id") == message and "content_index" in e:
            e["content_index"] = 1
    return HEAD + encode(events)


def two_part_message(name: str) -> Stream:
    """A message with two output_text parts (as after a tool-less 'commentary' split)."""
    s = Stream(name).start().message(["Paris", " is", " the", " capital", " of", " France", "."])
    s.completed(usage(9, 14))
    events = s.events
    # Append a second part to the message: added, deltas, done, part done, and fix the item and final output.
    msg = events[find(events, "response.output_item.added")]["item"]["id"]
    at = find(events, "response.output_item.done")
    second = ["It", " lies", " on", " the", " Seine", "."]
    text = "".join(second)
    base = {"item_id": msg, "output_index": 0, "content_index": 1}
    new = [{"type": "response.content_part.added", "sequence_number": 0, **base,
            "part": {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}}]
    new += [{"type": "response.output_text.delta", "sequence_number": 0, **base, "delta": d, "logprobs": []}
            for d in second]
    new += [{"type": "response.output_text.done", "sequence_number": 0, **base, "text": text, "logprobs": []},
            {"type": "response.content_part.done", "sequence_number": 0, **base,
             "part": {"type": "output_text", "annotations": [], "logprobs": [], "text": text}}]
    events[at:at] = new
    part = {"type": "output_text", "annotations": [], "logprobs": [], "text": text}
    events[find(events, "response.output_item.done")]["item"]["content"].append(copy.deepcopy(part))
    completed_response(events)["output"][0]["content"].append(copy.deepcopy(part))
    renumber(events)
    return s


@capture("CNT003-content-index-mismatch",
         "a two-part message whose first part is closed late: content_part.done for part 0 arrives after "
         "part 1 was opened", ["CNT003"])
def _() -> str:
    events = two_part_message("CNT003").events
    done0 = events.pop(find(events, "response.content_part.done", content_index=0))
    events.insert(find(events, "response.output_text.delta", content_index=1), done0)
    return HEAD + encode(renumber(events))


@capture("CNT003-delta-index-off-by-one",
         "the text deltas carry content_index 1 while the message's open part (added as 0) is 0",
         ["CNT003"])
def _() -> str:
    events = events_of(text_stream)
    for i in find_all(events, "response.output_text.delta"):
        events[i]["content_index"] = 1
    return HEAD + encode(events)


@capture("CNT004-delta-before-part",
         "reasoning text is streamed without a reasoning_text content part (no content_part.added/done)",
         ["CNT004"])
def _() -> str:
    events = events_of(reasoning_text_stream)
    reasoning = events[find(events, "response.output_item.added")]["item"]["id"]
    events = [e for e in events if not (e["type"].startswith("response.content_part.")
                                        and e.get("item_id") == reasoning)]
    return HEAD + encode(renumber(events))


@capture("CNT004-litellm-no-content-part",
         "LiteLLM style: the message's text deltas come without content_part.added or content_part.done "
         "(LiteLLM #20975)", ["CNT004"])
def _() -> str:
    events = [e for e in events_of(text_stream) if not e["type"].startswith("response.content_part.")]
    return HEAD + encode(renumber(events))


@capture("CNT005-part-not-done", "the message's content_part.done is never sent", ["CNT005"])
def _() -> str:
    events = events_of(text_stream)
    del events[find(events, "response.content_part.done")]
    return HEAD + encode(renumber(events))


@capture("CNT006-part-type-mismatch",
         "refusal text is streamed into a part announced as output_text", ["CNT006"])
def _() -> str:
    s = Stream("CNT006").start()
    s.refusal(["I", "’m", " sorry", ",", " but", " I", " can", "’t", " help", " with", " that", "."])
    s.completed(usage(19, 12))
    events = s.events
    text = "".join(e["delta"] for e in events if e["type"] == "response.refusal.delta")
    output_part = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
    events[find(events, "response.content_part.added")]["part"] = output_part
    done_part = dict(output_part, text=text)
    events[find(events, "response.content_part.done")]["part"] = done_part
    events[find(events, "response.output_item.done")]["item"]["content"] = [copy.deepcopy(done_part)]
    completed_response(events)["output"][0]["content"] = [copy.deepcopy(done_part)]
    return HEAD + encode(events)


@capture("CNT007-text-done-missing", "the reasoning part is closed without response.reasoning_text.done",
         ["CNT007"])
def _() -> str:
    events = events_of(reasoning_text_stream)
    del events[find(events, "response.reasoning_text.done")]
    return HEAD + encode(renumber(events))


@capture("CNT008-event-after-part-done",
         "a text delta arrives after content_part.done (before output_item.done)", ["CNT008"])
def _() -> str:
    events = events_of(text_stream)
    late = copy.deepcopy(events[find(events, "response.output_text.delta")])
    late["delta"] = " "
    events.insert(find(events, "response.content_part.done") + 1, late)
    return HEAD + encode(renumber(events))


# === RSN: reasoning summaries =================================================


@capture("RSN001-summary-delta-before-part",
         "summary deltas without reasoning_summary_part.added (the part is only closed)", ["RSN001"])
def _() -> str:
    events = events_of(reasoning_summary_stream)
    for i in reversed(find_all(events, "response.reasoning_summary_part.added")):
        del events[i]
    return HEAD + encode(renumber(events))


@capture("RSN001-ollama-no-summary-part",
         "Ollama style: summary deltas and summary_text.done with no reasoning_summary_part events at all",
         ["RSN001"])
def _() -> str:
    s = Stream("RSN001-ollama", model="gpt-oss:20b", reasoning={"effort": "medium", "summary": "auto"}).start()
    s.reasoning_item(summary=[["The", " user", " greets", " me", ";", " reply", " with", " a", " greeting",
                               "."]])
    s.message(["Hi", "!", " How", " can", " I", " help", "?"])
    s.completed(usage(10, 25, reasoning_tokens=10))
    events = [e for e in s.events if not e["type"].startswith("response.reasoning_summary_part.")]
    return HEAD + encode(renumber(events))


@capture("RSN002-summary-index-not-appended", "the first summary part is at summary_index 1", ["RSN002"])
def _() -> str:
    events = events_of(reasoning_summary_stream)
    for e in events:
        if "summary_index" in e:
            e["summary_index"] += 1
    return HEAD + encode(events)


@capture("RSN003-summary-index-mismatch",
         "summary part 0 is closed (reasoning_summary_part.done) only after summary part 1 was opened",
         ["RSN003"])
def _() -> str:
    events = events_of(reasoning_summary_stream)
    done0 = events.pop(find(events, "response.reasoning_summary_part.done", summary_index=0))
    events.insert(find(events, "response.reasoning_summary_text.delta", summary_index=1), done0)
    return HEAD + encode(renumber(events))


@capture("RSN004-summary-part-not-done",
         "the last summary part is never closed (no reasoning_summary_part.done)", ["RSN004"])
def _() -> str:
    events = events_of(reasoning_summary_stream)
    del events[find(events, "response.reasoning_summary_part.done", summary_index=1)]
    return HEAD + encode(renumber(events))


@capture("RSN005-event-after-summary-done",
         "a summary delta for part 0 arrives after its reasoning_summary_part.done", ["RSN005"])
def _() -> str:
    events = events_of(reasoning_summary_stream)
    late = copy.deepcopy(events[find(events, "response.reasoning_summary_text.delta")])
    late["delta"] = " "
    events.insert(find(events, "response.reasoning_summary_part.done") + 1, late)
    return HEAD + encode(renumber(events))


# === FNC: function calls ======================================================


@capture("FNC001-arguments-not-json", "the call's arguments stop before the closing brace", ["FNC001"])
def _() -> str:
    s = Stream("FNC001", model="gpt-oss-120b", tools=[WEATHER_TOOL],
               reasoning={"effort": "medium", "summary": None}).start()
    s.reasoning_item(text=REASONING)
    s.function_call("get_weather", WEATHER_ARGS[:-1] + ["\""])
    s.completed(usage(86, 29, reasoning_tokens=20))
    return HEAD + encode(s.events)


@capture("FNC002-arguments-done-missing", "no response.function_call_arguments.done", ["FNC002"])
def _() -> str:
    events = events_of(reasoning_function_call_stream)
    del events[find(events, "response.function_call_arguments.done")]
    return HEAD + encode(renumber(events))


@capture("FNC003-call-name-mismatch",
         "function_call_arguments.done names get_time, the item is get_weather", ["FNC003"])
def _() -> str:
    events = events_of(reasoning_function_call_stream)
    events[find(events, "response.function_call_arguments.done")]["name"] = "get_time"
    return HEAD + encode(events)


@capture("FNC004-arguments-after-done",
         "an argument delta arrives after function_call_arguments.done", ["FNC004"])
def _() -> str:
    events = events_of(reasoning_function_call_stream)
    late = copy.deepcopy(events[find(events, "response.function_call_arguments.delta")])
    late["delta"] = " "
    events.insert(find(events, "response.function_call_arguments.done") + 1, late)
    return HEAD + encode(renumber(events))


# === SCH: schema ==============================================================


@capture("SCH001-event-schema-violation", "text deltas carry `logprobs: null` instead of an array",
         ["SCH001"])
def _() -> str:
    events = events_of(text_stream)
    for i in find_all(events, "response.output_text.delta"):
        events[i]["logprobs"] = None
    return HEAD + encode(events)


@capture("SCH002-response-object-violation",
         "response.created carries a response without `output`",
         ["SCH002"])
def _() -> str:
    events = events_of(text_stream)
    del events[0]["response"]["output"]
    return HEAD + encode(events)


@capture("SCH002-error-code-outside-enum",
         "response.failed's error code is not in the published enum (insufficient_quota, as api.openai.com sends "
         "in captures/real-openai/vercel-openai-error-1.sse): a known deviation of the reference server, info",
         ["SCH002"])
def _() -> str:
    s = Stream("error-code-outside-enum").start()
    return HEAD + encode(s.failed("insufficient_quota", "You exceeded your current quota, please check your plan "
                                  "and billing details.").events)


@capture("SCH003-web-search-api-source",
         "a web_search_call's action lists a source {type: api, name}, as api.openai.com sends (the description: "
         "only {type: url, url}): a known deviation of the reference server, info", ["SCH003"])
def _() -> str:
    s = Stream("web-search-api-source", model="gpt-5-2025-08-07", tools=[WEB_SEARCH_TOOL]).start()
    search_id = make_id("ws_", "web-search-api-source/search")
    action = {"type": "search", "query": "weather Paris", "sources": [{"type": "api", "name": "oai-weather"}]}
    s.tool_item({"id": search_id, "type": "web_search_call", "status": "in_progress"},
                {"id": search_id, "type": "web_search_call", "status": "completed", "action": action},
                ["response.web_search_call.in_progress", "response.web_search_call.searching",
                 "response.web_search_call.completed"])
    s.message(["It", " is", " 18", " °C", " in", " Paris", "."])
    return HEAD + encode(s.completed(usage(9120, 41)).events)


@capture("SCH003-item-schema-violation", "the message item has no `role` (added, done and final output)",
         ["SCH003"])
def _() -> str:
    events = events_of(text_stream)
    for e in events:
        if "item" in e:
            e["item"].pop("role")
    completed_response(events)["output"][0].pop("role")
    return HEAD + encode(events)


@capture("SCH004-part-schema-violation",
         "content_part.added's output_text part has no `annotations`", ["SCH004"])
def _() -> str:
    events = events_of(text_stream)
    events[find(events, "response.content_part.added")]["part"].pop("annotations")
    return HEAD + encode(events)


@capture("SCH005-unknown-event-type", "an unprefixed non-OpenAI event `response.heartbeat` mid-stream",
         ["SCH005"])
def _() -> str:
    events = events_of(text_stream)
    events.insert(find(events, "response.output_text.delta", 8),
                  {"type": "response.heartbeat", "sequence_number": 0})
    return HEAD + encode(renumber(events))


@capture("SCH006-alias-event-type",
         "vLLM-style reasoning aliases: response.reasoning_part.added/done and response.reasoning.delta/done",
         ["SCH006"])
def _() -> str:
    events = events_of(reasoning_text_stream)
    reasoning = events[find(events, "response.output_item.added")]["item"]["id"]
    rename = {"response.content_part.added": "response.reasoning_part.added",
              "response.content_part.done": "response.reasoning_part.done",
              "response.reasoning_text.delta": "response.reasoning.delta",
              "response.reasoning_text.done": "response.reasoning.done"}
    for e in events:
        if e.get("item_id") == reasoning and e["type"] in rename:
            e["type"] = rename[e["type"]]
    return HEAD + encode(events)


@capture("SCH007-missing-type", "a proxy's heartbeat object without `type`", ["SCH007"])
def _() -> str:
    events: list[Any] = events_of(text_stream)
    i = find(events, "response.output_text.delta", 8)
    return HEAD + encode(events[:i]) + encode_event({"timestamp": CREATED_AT + 1}, event_line="heartbeat") + \
        encode(events[i:])


@capture("SCH008-logprobs-missing", "output_text delta and done events without `logprobs`", ["SCH008"])
def _() -> str:
    events = events_of(text_stream)
    for e in events:
        if e["type"] in ("response.output_text.delta", "response.output_text.done"):
            del e["logprobs"]
    return HEAD + encode(events)


@capture("SCH009-vendor-event", "a namespaced vendor event `acme:usage_update` mid-stream", ["SCH009"])
def _() -> str:
    events = events_of(text_stream)
    events.insert(find(events, "response.output_text.delta", 8),
                  {"type": "acme:usage_update", "sequence_number": 0, "output_tokens_so_far": 8})
    return HEAD + encode(renumber(events))


@capture("SCH010-wrong-api", "a legacy Completions stream (text_completion) answered /v1/responses", ["SCH010"])
def _() -> str:
    # The API without a dialect of its own: its stream is named, never checked. (A Chat Completions stream is
    # checked as one now; answered where a Responses stream is expected, `lint --dialect responses` or the
    # endpoint its meta records says SCH010 for it.)
    completion_id = "cmpl-" + make_id("", "SCH010", 29)
    out = HEAD
    for text, finish in [("Hello", None), ("!", None), ("", "stop")]:
        out += "data: " + dumps({"id": completion_id, "object": "text_completion", "created": CREATED_AT,
                                 "model": "gpt-3.5-turbo-instruct",
                                 "choices": [{"text": text, "index": 0, "logprobs": None,
                                              "finish_reason": finish}]}) + "\n\n"
    return out + "data: [DONE]\n\n"


# === REC: reconciliation ======================================================


@capture("REC001-done-text-mismatch",
         "output_text.done carries the text stripped of its closing quote; the deltas, part and item keep it",
         ["REC001"])
def _() -> str:
    events = events_of(text_stream)
    done = events[find(events, "response.output_text.done")]
    done["text"] = done["text"][:-1]
    return HEAD + encode(events)


@capture("REC002-part-done-mismatch", "content_part.done's part text misses the last delta", ["REC002"])
def _() -> str:
    events = events_of(text_stream)
    part = events[find(events, "response.content_part.done")]["part"]
    part["text"] = part["text"][: -len(HELLO[-1])]
    return HEAD + encode(events)


@capture("REC003-item-done-mismatch",
         "the call's output_item.done (and the final output) carry other arguments than were streamed",
         ["REC003"])
def _() -> str:
    events = events_of(reasoning_function_call_stream)
    changed = "{\"city\":\"Paris\",\"unit\":\"fahrenheit\"}"
    events[find(events, "response.output_item.done", 1)]["item"]["arguments"] = changed
    completed_response(events)["output"][1]["arguments"] = changed
    return HEAD + encode(events)


@capture("REC004-final-output-mismatch",
         "response.completed's output omits the reasoning item that was streamed and done (vLLM PR #38227)",
         ["REC004"])
def _() -> str:
    events = events_of(reasoning_function_call_stream)
    del completed_response(events)["output"][0]
    return HEAD + encode(events)


@capture("REC005-final-output-empty",
         "response.completed carries `output: []` after a message was streamed", ["REC005"])
def _() -> str:
    events = events_of(text_stream)
    completed_response(events)["output"] = []
    return HEAD + encode(events)


@capture("REC005-codex-store-false",
         "OpenAI's codex backend with store:false: encrypted reasoning and a call, then `output: []` in "
         "response.completed", ["REC005"])
def _() -> str:
    s = Stream("REC005-codex", model="gpt-5-codex", tools=[WEATHER_TOOL], store=False,
               reasoning={"effort": "medium", "summary": "auto"}).start()
    s.reasoning_item(summary=[["**", "Checking", " weather", "**\n\n", "I", "’ll", " call", " get", "_weather",
                               "."]],
                     encrypted="gAAAAABo7lF0c3RvcmUtZmFsc2UtcmVhc29uaW5nLWlzLWVuY3J5cHRlZC1oZXJl")
    s.function_call("get_weather", WEATHER_ARGS)
    s.completed(usage(1480, 64, reasoning_tokens=44, cached=1408))
    completed_response(s.events)["output"] = []
    return HEAD + encode(s.events)


@capture("LIF020-encrypted-content-not-compared",
         "response.completed carries the reasoning item with another encrypted_content than its output_item.done, "
         "as OpenAI re-encrypts it (captures/real-openai/pydantic-run.sse): said, not compared", ["LIF020"])
def _() -> str:
    events = events_of(reasoning_summary_stream)
    completed_response(events)["output"][0]["encrypted_content"] = (
        "gAAAAABo7lF4YW5vdGhlci1lbmNyeXB0aW9uLW9mLXRoZS1zYW1lLXJlYXNvbmluZy1pdGVt")
    return HEAD + encode(events)


@capture("REC004-encrypted-and-text-differ",
         "response.completed carries the reasoning item with another encrypted_content (not compared: LIF020) and "
         "the message with another text (compared: REC004) than their output_item.done", ["REC004", "LIF020"])
def _() -> str:
    events = events_of(reasoning_summary_stream)
    output = completed_response(events)["output"]
    output[0]["encrypted_content"] = "gAAAAABo7lF4YW5vdGhlci1lbmNyeXB0aW9uLW9mLXRoZS1zYW1lLXJlYXNvbmluZy1pdGVt"
    output[1]["content"][0]["text"] = "9.11 is larger than 9.9."
    return HEAD + encode(events)


@capture("REC006-arguments-done-mismatch",
         "function_call_arguments.done carries other arguments than the deltas (and the item keeps them)",
         ["REC006"])
def _() -> str:
    events = events_of(reasoning_function_call_stream)
    changed = "{\"city\":\"Paris\",\"unit\":\"fahrenheit\"}"
    events[find(events, "response.function_call_arguments.done")]["arguments"] = changed
    events[find(events, "response.output_item.done", 1)]["item"]["arguments"] = changed
    completed_response(events)["output"][1]["arguments"] = changed
    return HEAD + encode(events)


@capture("REC008-tool-done-mismatch",
         "code_interpreter_call_code.done carries other code than its deltas (the item keeps the done code)",
         ["REC008"])
def _() -> str:
    events = events_of(code_interpreter_stream)
    changed = "".join(ROLL_CODE).replace("1000", "100")
    events[find(events, "response.code_interpreter_call_code.done")]["code"] = changed
    events[find(events, "response.output_item.done")]["item"]["code"] = changed
    completed_response(events)["output"][0]["code"] = changed
    return HEAD + encode(events)


@capture("REC009-tool-item-done-mismatch",
         "the mcp_call's output_item.done (and the final output) carries other arguments than were streamed",
         ["REC009"])
def _() -> str:
    events = events_of(mcp_call_stream)
    changed = "{\"query\":\"errors\"}"
    events[find(events, "response.output_item.done", 1)]["item"]["arguments"] = changed
    completed_response(events)["output"][1]["arguments"] = changed
    return HEAD + encode(events)


# === HST: hosted tools ========================================================


@capture("HST001-tool-progress-missing",
         "the first web search call goes from in_progress to completed without web_search_call.searching",
         ["HST001"])
def _() -> str:
    events = events_of(web_search_stream)
    del events[find(events, "response.web_search_call.searching")]
    return HEAD + encode(renumber(events))


@capture("HST002-tool-progress-repeated", "code_interpreter_call.interpreting is sent twice", ["HST002"])
def _() -> str:
    events = events_of(code_interpreter_stream)
    at = find(events, "response.code_interpreter_call.interpreting")
    events.insert(at, copy.deepcopy(events[at]))
    return HEAD + encode(renumber(events))


@capture("HST003-tool-progress-out-of-order",
         "the last partial image arrives after image_generation_call.completed", ["HST003"])
def _() -> str:
    events = events_of(image_generation_stream)
    last = events.pop(find(events, "response.image_generation_call.partial_image", 1))
    events.insert(find(events, "response.image_generation_call.completed") + 1, last)
    return HEAD + encode(renumber(events))


@capture("HST004-tool-input-done-missing",
         "the MCP call streams its arguments but never sends mcp_call_arguments.done", ["HST004"])
def _() -> str:
    events = events_of(mcp_call_stream)
    del events[find(events, "response.mcp_call_arguments.done")]
    return HEAD + encode(renumber(events))


@capture("HST005-tool-input-after-done",
         "a delta of the first shell command arrives after its shell_call_command.done", ["HST005"])
def _() -> str:
    events = events_of(shell_stream)
    at = find(events, "response.shell_call_command.done", command_index=0)
    late = copy.deepcopy(events[find(events, "response.shell_call_command.delta", command_index=0)])
    late["delta"] = " -R"
    events.insert(at + 1, late)
    return HEAD + encode(renumber(events))


@capture("HST006-partial-image-index-not-appended",
         "the second partial image is numbered 2 instead of 1", ["HST006"])
def _() -> str:
    events = events_of(image_generation_stream)
    events[find(events, "response.image_generation_call.partial_image", 1)]["partial_image_index"] = 2
    return HEAD + encode(events)


@capture("HST007-shell-command-index-not-appended",
         "the second shell command is added at command_index 2 (and streamed there): openai-node throws "
         "\"missing command at index 2\"", ["HST007"])
def _() -> str:
    events = events_of(shell_stream)
    for i, e in enumerate(events):
        if e["type"].startswith("response.shell_call_command.") and e["command_index"] == 1:
            events[i]["command_index"] = 2
    return HEAD + encode(events)


@capture("HST008-shell-command-index-unknown",
         "a shell command delta names command_index 5 of a call with one command so far", ["HST008"])
def _() -> str:
    events = events_of(shell_stream)
    at = find(events, "response.shell_call_command.delta", command_index=0)
    stray = copy.deepcopy(events[at])
    stray.update(command_index=5, delta=" /tmp")
    events.insert(at + 1, stray)
    return HEAD + encode(renumber(events))


@capture("HST009-shell-output-index-unknown",
         "shell output arrives for command_index 2 of a call that ran two commands", ["HST009"])
def _() -> str:
    events = events_of(shell_stream)
    at = find(events, "response.shell_call_output_content.delta", command_index=1)
    stray = copy.deepcopy(events[at])
    stray.update(command_index=2, delta={"stderr": "cat: missing.md: No such file or directory\n"})
    events.insert(at + 1, stray)
    return HEAD + encode(renumber(events))


@capture("ITM004-shell-command-for-unknown-item",
         "a shell command delta names output_index 7, where no item was added: openai-node throws \"missing "
         "output at index 7\", openai-python never reads shell events", ["ITM004"])
def _() -> str:
    events = events_of(shell_stream)
    at = find(events, "response.shell_call_command.delta", command_index=0)
    stray = copy.deepcopy(events[at])
    stray.update(output_index=7, delta=" -h")
    events.insert(at + 1, stray)
    return HEAD + encode(renumber(events))


@capture("ITM010-shell-command-on-a-message",
         "a shell command is added to the message item (output_index 3): openai-node throws \"expected output "
         "item type 'shell_call', got 'message'\"", ["ITM010"])
def _() -> str:
    events = events_of(shell_stream)
    at = find(events, "response.content_part.added")
    stray = copy.deepcopy(events[find(events, "response.shell_call_command.added")])
    stray.update(output_index=events[at]["output_index"], command="echo")
    events.insert(at + 1, stray)
    return HEAD + encode(renumber(events))


@capture("CNT009-annotation-index-not-appended",
         "the second url citation is announced at annotation_index 2 (0, 2): openai-node throws \"missing "
         "annotation at index 2\"", ["CNT009"])
def _() -> str:
    events = events_of(web_search_stream)
    events[find(events, "response.output_text.annotation.added", 1)]["annotation_index"] = 2
    return HEAD + encode(events)


@capture("REC010-annotations-mismatch",
         "two url citations are streamed, but content_part.done, output_item.done and the final output keep only "
         "the first", ["REC010"])
def _() -> str:
    events = events_of(web_search_stream)
    del events[find(events, "response.content_part.done")]["part"]["annotations"][1]
    del events[find(events, "response.output_item.done", 2)]["item"]["content"][0]["annotations"][1]
    del completed_response(events)["output"][2]["content"][0]["annotations"][1]
    return HEAD + encode(events)


@capture("SCH005-openai-event-under-open-responses",
         "an Open Responses stream that streams reasoning with OpenAI's response.reasoning_text.delta/done, which "
         "the Open Responses description does not define (it names them response.reasoning.delta/done)",
         ["SCH005"], profile="open-responses")
def _() -> str:
    events = open_responses_counting_stream().events
    for event in events:
        if event["type"].startswith("response.reasoning."):
            event["type"] = event["type"].replace("response.reasoning.", "response.reasoning_text.")
    return HEAD + encode(events) + "data: [DONE]\n\n"


@capture("SCH002-open-responses-resource-incomplete",
         "an Open Responses stream whose response.created snapshot lacks completed_at, presence_penalty and "
         "frequency_penalty, which ResponseResource requires (user it does not require: present or not, no finding)",
         ["SCH002"], profile="open-responses")
def _() -> str:
    events = open_responses_text_stream().events
    for name in ("completed_at", "presence_penalty", "frequency_penalty"):
        del events[0]["response"][name]
    return HEAD + encode(events) + "data: [DONE]\n\n"


@capture("SCH005-apply-patch-diff-events",
         "an apply_patch call streams its diff with response.apply_patch_call_operation_diff.delta/done, events "
         "OpenAI sends but no published description has: openai-node throws on the first", ["SCH005"])
def _() -> str:
    s = Stream("SCH005-apply-patch", model="gpt-5.1-2025-11-13",
               tools=[{"type": "apply_patch"}]).start()
    index, item_id = s._index(), make_id("apc_", "SCH005-apply-patch/1", 50)
    call_id = make_call_id("SCH005-apply-patch/1")
    base = {"item_id": item_id, "output_index": index}
    deltas = ["+", "##", " Shopping", " list", "\n", "+", "-", " [", " ]", " Milk", "\n"]
    operation = {"type": "create_file", "diff": "", "path": "shopping.md"}
    s.emit({"type": "response.output_item.added", "sequence_number": s._seq(), "output_index": index,
            "item": {"id": item_id, "type": "apply_patch_call", "status": "in_progress", "call_id": call_id,
                     "operation": copy.deepcopy(operation)}})
    for delta in deltas:
        s.emit({"type": "response.apply_patch_call_operation_diff.delta", "sequence_number": s._seq(), **base,
                "delta": delta})
    s.emit({"type": "response.apply_patch_call_operation_diff.done", "sequence_number": s._seq(), **base,
            "diff": "".join(deltas)})
    operation["diff"] = "".join(deltas)
    s._hosted_done(index, {"id": item_id, "type": "apply_patch_call", "status": "completed", "call_id": call_id,
                           "operation": operation})
    s.completed(usage(1630, 40))
    return HEAD + encode(s.events)


# === IDS: ids =================================================================


@capture("IDS001-id-prefix", "the message id is a bare UUID-like `item_…` instead of `msg_…`", ["IDS001"])
def _() -> str:
    events = events_of(text_stream)
    old = events[find(events, "response.output_item.added")]["item"]["id"]
    return HEAD + encode(events).replace(old, "item_3f9c2d7e41b84a6c9e0d5f1a2b3c4d5e")


@capture("IDS002-item-id-equals-call-id",
         "the function call's item id is its call_id (llama.cpp PR #21174)", ["IDS002", "IDS001"])
def _() -> str:
    events = events_of(reasoning_function_call_stream)
    call = events[find(events, "response.output_item.added", 1)]["item"]
    return HEAD + encode(events).replace(call["id"], call["call_id"])


@capture("IDS003-duplicate-item-id",
         "both function calls have the same fc_ item id (their call ids differ)", ["IDS003"])
def _() -> str:
    events = events_of(parallel_function_calls_stream)
    first = events[find(events, "response.output_item.added")]["item"]["id"]
    second = events[find(events, "response.output_item.added", 1)]["item"]["id"]
    return HEAD + encode(events).replace(second, first)


@capture("IDS004-duplicate-call-id", "both function calls have the same call_id", ["IDS004"])
def _() -> str:
    events = events_of(parallel_function_calls_stream)
    first = events[find(events, "response.output_item.added")]["item"]["call_id"]
    second = events[find(events, "response.output_item.added", 1)]["item"]["call_id"]
    return HEAD + encode(events).replace(second, first)


@capture("IDS005-item-id-missing",
         "the function call item has no id, and its argument events no item_id (placed by output_index only)",
         ["IDS005", "SCH001"])
def _() -> str:
    events = events_of(parallel_function_calls_stream)
    second = events[find(events, "response.output_item.added", 1)]["item"]["id"]
    for e in events:
        if isinstance(e.get("item"), dict) and e["item"].get("id") == second:
            del e["item"]["id"]
        if e.get("item_id") == second:
            del e["item_id"]
    for item in completed_response(events)["output"]:
        if item.get("id") == second:
            del item["id"]
    return HEAD + encode(events)


# === Gateways: items never announced, statuses, snapshots, checks that cannot run =====
# A gateway that turns a Chat Completions backend into a Responses stream may stream an item's text without
# its output_item.added, finish it only in output_item.done or only in the terminal snapshot, contradict
# its own statuses and rewrite the response's fields between snapshots.


def _unannounced(events: list[Event], item_id: str, *, keep_done: bool) -> list[Event]:
    """Drop the item's announcement (added, content_part.added) and, unless ``keep_done``, its done."""
    drop = {"response.output_item.added", "response.content_part.added"} | (
        set() if keep_done else {"response.output_item.done"})
    kept = []
    for e in events:
        item = e.get("item") if isinstance(e.get("item"), dict) else {}
        if e.get("type") in drop and (item.get("id") == item_id or e.get("item_id") == item_id):
            continue
        kept.append(e)
    return renumber(kept)


GATEWAY_TEXT = [" for", " temperature", " in", " Paris", ",", " use", " get", "_weather", "."]


@capture("FNC001-unannounced-call",
         "a function call never announced: its argument deltas join to JSON, but function_call_arguments.done, "
         "output_item.done and response.completed carry `{{\"city\": …` (not JSON)",
         ["FNC001", "ITM004", "ITM008", "REC006"])
def _() -> str:
    events = events_of(reasoning_function_call_stream)
    call = events[find(events, "response.output_item.added", 1)]["item"]["id"]
    broken = "{" + "".join(WEATHER_ARGS)
    events[find(events, "response.function_call_arguments.done")]["arguments"] = broken
    events[find(events, "response.output_item.done", 1)]["item"]["arguments"] = broken
    completed_response(events)["output"][1]["arguments"] = broken
    return HEAD + encode(_unannounced(events, call, keep_done=True))


@capture("REC003-unannounced-done-text",
         "a message never announced: its deltas say ' for temperature in Paris, use get_weather.', its "
         "output_item.done and response.completed say ' for'", ["ITM004", "ITM008", "REC003"])
def _() -> str:
    s = Stream("REC003-unannounced").start().message(GATEWAY_TEXT)
    s.completed(usage(14, 9))
    events = s.events
    message = events[find(events, "response.output_item.added")]["item"]["id"]
    for i in (find(events, "response.output_item.done"),):
        events[i]["item"]["content"][0]["text"] = " for"
    completed_response(events)["output"][0]["content"][0]["text"] = " for"
    for etype in ("response.output_text.done", "response.content_part.done"):
        del events[find(events, etype)]
    return HEAD + encode(_unannounced(events, message, keep_done=True))


@capture("REC004-unannounced-text",
         "a message never announced nor done: its deltas say ' for temperature in Paris, use get_weather.', "
         "response.completed lists it with the text ' for'", ["ITM004", "REC004"])
def _() -> str:
    s = Stream("REC004-unannounced").start().message(GATEWAY_TEXT)
    s.completed(usage(14, 9))
    events = s.events
    message = events[find(events, "response.output_item.added")]["item"]["id"]
    completed_response(events)["output"][0]["content"][0]["text"] = " for"
    for etype in ("response.output_text.done", "response.content_part.done"):
        del events[find(events, etype)]
    return HEAD + encode(_unannounced(events, message, keep_done=False))


@capture("IDS002-snapshot-only-call",
         "a function call that only response.completed lists (never streamed), with its call_id as item id",
         ["IDS001", "IDS002", "REC004"])
def _() -> str:
    events = events_of(reasoning_function_call_stream)
    call = events[find(events, "response.output_item.added", 1)]["item"]["id"]
    events = [e for e in events if not ((isinstance(e.get("item"), dict) and e["item"].get("id") == call)
                                         or e.get("item_id") == call)]
    listed = completed_response(events)["output"][1]
    listed["id"] = listed["call_id"]
    return HEAD + encode(renumber(events))


@capture("REC007-item-status-contradiction",
         "the message's output_item.done says completed, response.completed lists it as incomplete",
         ["REC007"])
def _() -> str:
    events = events_of(text_stream)
    completed_response(events)["output"][0]["status"] = "incomplete"
    return HEAD + encode(events)


@capture("LIF019-snapshot-field-changed",
         "response.created and response.in_progress say `model: \"\"`, response.completed names the model",
         ["LIF019"])
def _() -> str:
    events = events_of(text_stream)
    for e in events[:2]:
        e["response"]["model"] = ""
    return HEAD + encode(events)


@capture("LIF019-parallel-tool-calls-changed",
         "parallel_tool_calls is true in the opening snapshots and false in response.completed", ["LIF019"])
def _() -> str:
    events = events_of(parallel_function_calls_stream)
    completed_response(events)["parallel_tool_calls"] = False
    return HEAD + encode(events)


@capture("LIF020-check-not-run",
         "the request set max_output_tokens 20; response.completed carries `usage: null`, so whether the answer "
         "was cut cannot be checked (the null usage itself is legal: openai-python types it Optional, codex reads "
         "it as an Option)", ["LIF020"],
         request={"max_output_tokens": 20})
def _() -> str:
    s = Stream("LIF020", max_output_tokens=20).start()
    s.message(["Here", " is", " a", " short", " story", ":", " Once", " upon", " a", " time", ",", " a", " fox",
               " found", " a", " lantern", " in", " the", " snow", " and"])
    s.completed(usage(12, 20))
    completed_response(s.events)["usage"] = None
    return HEAD + encode(s.events)


# --- writing -----------------------------------------------------------------

HEAD = ""  # set per capture by render() to the capture's header lines


def _bytes(body: bytes | str) -> bytes:
    return body.encode() if isinstance(body, str) else body


def render() -> dict[str, bytes]:
    """Every file this script writes, by path relative to captures/ (tests compare them with the files)."""
    global HEAD
    files: dict[str, bytes] = {}
    for name, build in CONFORMING.items():
        files[f"conforming/{name}.sse"] = _bytes(encode(build().events))
    for name, build in {"text": open_responses_text_stream, "reasoning": open_responses_counting_stream,
                        "function-call": open_responses_tool_call_stream}.items():
        files[f"open-responses/{name}.sse"] = _bytes(encode(build().events) + "data: [DONE]\n\n")
    for cap in RULE_CAPTURES:
        if cap.sidecar is not None:
            HEAD = ""
            files[f"rules/{cap.name}.expect.json"] = _bytes(json.dumps(cap.sidecar, indent=2) + "\n")
        else:
            HEAD = header(cap.about, cap.expect, profile=cap.profile, limits=cap.limits, request=cap.request,
                          bug=cap.bug)
            if cap.name.startswith("SSE003"):
                HEAD = HEAD.replace("\n", "\r\n")  # the header is written by the CRLF writer
        files[f"rules/{cap.name}.sse"] = _bytes(cap.body())
    HEAD = ""
    return files


def main() -> None:
    files = render()
    changed = write_files(files, ROOT)
    print(f"{len(files)} files under {ROOT}, {changed} written")


if __name__ == "__main__":
    main()
