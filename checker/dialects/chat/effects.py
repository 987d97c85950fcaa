"""What each finding on a Chat Completions stream does to the clients (the chat client matrix).

Two clients, each the call its users make:

* openai-python 3.57.0: ``client.chat.completions.stream(...)`` then ``get_final_completion()``
  (src/openai/lib/streaming/chat/_completions.py ChatCompletionStreamState, accumulate_delta in
  src/openai/lib/streaming/_deltas.py, the decoder in src/openai/_streaming.py). Its plain
  ``create(stream=True)`` iteration shares the decoder and accumulates nothing: it fails only where the
  decoder does (the APIError on an error object, invalid JSON), which tests/test_chat_oracles.py checks too;
* openai-node 7.59.0: ``client.chat.completions.stream(...)`` then ``finalChatCompletion()``
  (src/lib/ChatCompletionStream.ts, src/core/streaming.ts).

Every verdict here is checked against the real SDKs on every capture of captures/chat
(tests/test_chat_oracles.py): "breaks" iff the client raises; "ok" iff it returns exactly what was streamed;
"degraded" when it returns something else (the difference is in the symptom).
"""

from __future__ import annotations

from checker.dialects.base import (
    add_column,
    rule_clients,
    ClientEffects, Condition, Effect, EndEffect, Verdict, nothing_streamed, on_field,
)
from checker.dialects.chat import vercel_effects
from checker.dialects.chat.vocabulary import FINISH_PREFIX
from checker.findings import Finding

CLIENTS = ("openai-python", "openai-node", "openai-agents", "vercel-ai", "langchain")
_PY_LENGTH = ("get_final_completion() raises LengthFinishReasonError: Could not parse response content as the "
              "length limit was reached")
_PY_FILTER = ("get_final_completion() raises ContentFilterFinishReasonError: Could not parse response content as "
              "the request was rejected by the content filter")
_NODE_BAD_JSON = "OpenAIError: Error reading response: malformed server-sent event JSON."
# LangChain's ChatOpenAI and the Agents SDK read the stream with openai-python's decoder (their own pinned openai 3.60.0).
_LC_DECODER = "the error of openai-python's decoder (UnicodeDecodeError, json.JSONDecodeError), raised in the user's loop"
_NODE_BAD_STRUCTURED = "OpenAIError: Error reading response: invalid structured output JSON."
_NODE_CUT_STRUCTURED = "LengthFinishReasonError: Could not parse response content as the length limit was reached"


def _breaks(symptom: str, when: object = None) -> Effect:
    return Effect(Verdict.BREAKS, symptom, when)  # type: ignore[arg-type]


def _degrades(symptom: str, when: object = None) -> Effect:
    return Effect(Verdict.DEGRADED, symptom, when)  # type: ignore[arg-type]


def _detail(key: str, *values: object) -> object:
    return lambda f, r: f.details.get(key) in values


def _last_differs(f: Finding, r: object) -> bool:
    return f.details.get("last_differs") is True


def _finish_differs(f: Finding, r: object) -> bool:
    # Both SDKs keep the last finish_reason: the same one sent again leaves the final completion as streamed.
    return f.details.get("finish") != f.details.get("first")


def _never_got_a_role(f: Finding, r: object) -> bool:
    # A later delta that brings the role is CHT004's finding; without one the choice has no role at all.
    index = f.details.get("index")
    return not any(o.code == "CHT004" and o.details.get("index") == index for o in r.findings)  # type: ignore[attr-defined]


def _names_missing(f: Finding, r: object) -> bool:
    missing = str(f.details.get("missing", ""))
    return "type" in missing or "name" in missing


def _role_changed(f: Finding, r: object) -> bool:
    return bool(f.details.get("change"))


def _not_type(f: Finding, r: object) -> bool:
    return f.details.get("field") != "type"


def _partial_json_cut(f: Finding, r: object) -> bool:
    return f.details.get("json_complete") is False


BY_RULE: dict[str, dict[str, tuple[Effect, ...]]] = {
    # -- framing (the engine's rules, as they touch a chat stream) --------------------------------------
    "SSE004": {"openai-node": (_breaks(_NODE_BAD_JSON, when=_partial_json_cut),)},
    "SSE005": {"openai-python": (_breaks("UnicodeDecodeError: 'utf-8' codec can't decode byte …"),),
               "openai-node": (_degrades("the bytes decode as U+FFFD: the text is corrupted"),),
               "langchain": (_breaks(_LC_DECODER),),
               "openai-agents": (_breaks(_LC_DECODER),)},
    "SSE006": {"openai-python": (_breaks("json.JSONDecodeError on the chunk's data"),),
               "openai-node": (_breaks(_NODE_BAD_JSON),),
               "langchain": (_breaks(_LC_DECODER),),
               "openai-agents": (_breaks(_LC_DECODER),)},
    "SSE013": {"openai-python": (_breaks("json.JSONDecodeError: Expecting value (an event with empty data)"),),
               "openai-node": (_breaks(_NODE_BAD_JSON),),
               "langchain": (_breaks(_LC_DECODER),),
               "openai-agents": (_breaks(_LC_DECODER),)},
    "SSE018": {"openai-python": (_breaks("json.JSONDecodeError: the keepalive is parsed as JSON"),),
               "openai-node": (_breaks(_NODE_BAD_JSON),),
               "langchain": (_breaks(_LC_DECODER),),
               "openai-agents": (_breaks(_LC_DECODER),)},
    # Both SDKs stop reading at [DONE] (openai-python Stream.__stream__, openai-node Stream): what follows it
    # is never seen, and the completion is the one [DONE] ended.
    "SSE010": {},
    # JSON.parse rounds an integer beyond 2^53 and both SDKs finish: the fields the final completion is read for
    # (ids, text, tool calls, usage counts) are strings or small integers; a vendor's seed or request id number
    # beyond 2^53 (captures/chat/vendors/seed-beyond-2-53.sse) is rounded in a field no one reads. Measured:
    # openai-node 7.59.0 and openai-python 3.57.0 return the streamed completion (tests/test_chat_oracles.py).
    "SSE025": {},
    # An `error:` line is dispatched by neither decoder: a stream of nothing else ends without a chunk.
    "SSE028": {"openai-python": (_breaks("AssertionError: get_final_completion() on a stream without a chunk (the "
                                         "server's error was never dispatched)", when=nothing_streamed),),
               "openai-node": (_breaks("OpenAIError: request ended without sending any chunks", when=nothing_streamed),),
               # Measured (checker.oracles.runner.run_batch, langchain-openai and openai-agents of their pins) on
               # llama.cpp's answer to an over-long prompt read as chat (an `error:` line, then [DONE]): LangChain
               # raises, the Agents SDK's run returns with no output. (A capture file of it reads as Responses:
               # nothing in it names the chat dialect; probe and proxy know it from the endpoint.)
               "langchain": (_breaks("ValueError: No generation chunks were returned", when=nothing_streamed),),
               "openai-agents": (_degrades("the run returns no output: the server's error reads as an empty answer",
                                           when=nothing_streamed),)},
    # -- chunks -------------------------------------------------------------------------------------------
    "CHT001": {
        "openai-python": (
            _degrades("ChatCompletionStream skips a chunk whose object is not chat.completion.chunk "
                      "(_is_valid_chat_completion_chunk_weak): its deltas are lost", when=_detail("field", "object")),
            _degrades("get_final_completion().system_fingerprint is the last chunk's {last!r}",
                      when=lambda f, r: f.details.get("field") == "system_fingerprint" and _last_differs(f, r)),
        ),
        "openai-node": (_degrades("finalChatCompletion() has the last chunk's {field} {last!r}", when=_last_differs),),
    },
    "CHT027": {"openai-node": (_degrades("finalChatCompletion() has the last chunk's created {last!r}",
                                         when=_last_differs),)},
    "CHT003": {"openai-node": (_breaks("OpenAIError: missing role for choice {index}", when=_never_got_a_role),)},
    "CHT004": {
        "openai-python": (_degrades("the final message's role is the roles concatenated (\"assistantassistant\")"),),
        "openai-node": (_degrades("the final message's role is the last one, {role!r}", when=_role_changed),),
    },
    "CHT005": {
        "openai-python": (_breaks("IndexError: list index out of range (the choice snapshot is looked up by "
                                  "index)", when=lambda f, r: str(f.details.get("problem", "")).startswith(
                                      ("skips", "not an integer"))),
                          # choices[-1] is Python's last choice (or, before any, an IndexError that appends a
                          # new one): the chunks of the negative index merge into another choice
                          # (src/openai/lib/streaming/chat/_completions.py _accumulate_chunk).
                          _degrades("the chunk's delta merges into choices[{choice}] of the snapshot (a negative "
                                    "index is Python's count from the end): the final choices are mixed",
                                    when=lambda f, r: f.details.get("problem") == "negative")),
        "openai-node": (
            _breaks("OpenAIError: Cannot read properties of undefined (reading 'message')",
                    when=lambda f, r: str(f.details.get("problem", "")).startswith("skips")),
            _breaks("OpenAIError: Chat completion stream contains an invalid choice index: {choice}"),
        ),
    },
    "CHT006": {
        "openai-python": (_degrades("content.done / tool_calls.function.arguments.done already fired with the text "
                                    "before it; the final message has the late delta"),),
        "openai-node": (_degrades("the content.done event already fired with the text before it; the final "
                                  "message has the late delta"),),
    },
    "CHT007": {
        "openai-python": (_breaks(_PY_LENGTH, when=_detail("finish", "length")),
                          _breaks(_PY_FILTER, when=_detail("finish", "content_filter")),
                          _degrades("the final finish_reason is the last one, {finish!r}", when=_finish_differs)),
        "openai-node": (_degrades("the final finish_reason is the last one, {finish!r}", when=_finish_differs),),
    },
    "CHT008": {"openai-node": (_breaks("OpenAIError: missing finish_reason for choice {index}"),)},
    # -- tool calls --------------------------------------------------------------------------------------------
    "CHT011": {
        "openai-python": (_breaks("RuntimeError: Expected list delta entry to have an `index` key; …"),),
        "openai-node": (_breaks("OpenAIError: Chat completion stream contains an invalid tool call index: …"),),
        "openai-agents": (_breaks("ModelBehaviorError: Tool invocations require a non-empty string call ID before execution."),),
    },
    "CHT012": {
        "openai-node": (_breaks("OpenAIError: missing choices[{index}].tool_calls[{call}].type (or function.name)",
                                when=_names_missing),
                        _degrades("finalChatCompletion() invents the id (call_<uuid>): the tool result answers a "
                                  "call the server never made")),
        "openai-agents": (_breaks("ModelBehaviorError: the call cannot be run (no call ID, or no tool of that name)"),),
    },
    "CHT013": {"openai-python": (_degrades("the final call's {field} is the values concatenated "
                                           "({value!r} twice)", when=_not_type),)},
    "CHT014": {
        "openai-python": (_degrades("the final call's {field} is the two values concatenated", when=_not_type),),
        "openai-node": (_degrades("the final call's {field} is the last one, {after!r}"),),
    },
    "CHT015": {
        "openai-python": (_degrades("the two calls become one: ids, names and arguments concatenated"),),
        "openai-node": (_degrades("the two calls become one, named {name!r}, with both calls' arguments"),),
        "openai-agents": (_breaks("ModelBehaviorError: Invalid JSON input for tool … (the two calls' arguments are one text)"),),
    },
    "CHT018": {
        "openai-python": (_degrades("accumulate_delta drops the object: the final arguments lack it"),),
        "openai-node": (_degrades("the object is appended as a string: the arguments read \"[object Object]\""),),
        "langchain": (_breaks("pydantic ValidationError: 1 validation error for AIMessageChunk (the arguments are "
                              "not a string)"),),
        "openai-agents": (_breaks("TypeError: can only concatenate str (not \"dict\") to str"),),
    },
    # The Agents SDK runs each tool call it assembled (a function tool per name) and checks the calls first.
    "CHT016": {"openai-agents": (_breaks("ModelBehaviorError: Model reused a tool call ID for a different invocation "
                                         "in one response. Use a unique call ID for each tool invocation."),)},
    "CHT017": {"openai-agents": (_breaks("ModelBehaviorError: Invalid JSON input for tool {name}"),)},
    "CHT019": {"openai-agents": (_breaks("ModelBehaviorError: Invalid JSON input for tool {name} (the arguments "
                                         "twice)"),)},
    "CHT028": {"openai-python": (_breaks("AssertionError: assert new_tool.type == \"function\" (the null type "
                                         "replaced the call's in accumulate_delta)"),)},
    "CHT029": {"openai-node": (
        _breaks("Error: no tool call snapshot (the chunk's message replaced the streamed tool calls)",
                when=_detail("effect", "calls")),
        _breaks("OpenAIError: Chat completion stream contains an unsafe snapshot tool-call collection",
                when=_detail("effect", "null")),
        _degrades("finalChatCompletion()'s message is the last chunk's message object: what the deltas built "
                  "before it is lost", when=_detail("effect", "lost")),
    )},
    # -- usage, errors, vendor fields ----------------------------------------------------------------------
    # What each SDK's final usage is, the machine works out at the end (message_fields.late_usage_findings):
    # a repeated usage chunk (Groq, Hugging Face) leaves both with the streamed usage, and nothing differs.
    "CHT020": {
        "openai-python": (_degrades("get_final_completion().usage is the last chunk's: {python}, not the usage "
                                    "chunk's", when=lambda f, r: f.details.get("python") != "the same"),),
        "openai-node": (_degrades("finalChatCompletion().usage is the last one a chunk carried: {node}, not the "
                                  "usage chunk's", when=lambda f, r: f.details.get("node") != "the same"),),
    },
    "CHT024": {
        "openai-python": (_breaks("APIError: the error's message (Stream.__stream__)"),),
        "openai-node": (_breaks("APIError: the error's message (Stream, legacy mode)"),),
        "langchain": (_breaks("APIError: the error's message (openai-python's Stream)"),),
        "openai-agents": (_breaks("APIError: the error's message (openai-python's Stream)"),),
    },
    "CHT025": {"openai-node": (_degrades("finalChatCompletion() keeps only the last {field} fragment: the "
                                         "reasoning text is lost", when=_detail("fragments", "several")),)},
    # -- structured output: with a json_schema response_format openai-node parses each choice's content
    # (src/lib/parser.ts parseResponseFormatContent; isParseableResponseFormat) and refuses a cut one
    # (src/lib/ChatCompletionStream.ts); openai-python parses only a pydantic response_format, not a dict.
    "FMT001": {"openai-node": (_breaks(_NODE_BAD_STRUCTURED, when=_detail("kind", "json_schema")),)},
    "FMT006": {"openai-node": (_breaks(_NODE_CUT_STRUCTURED, when=_detail("kind", "json_schema")),)},
}


# CHT002 on a field the accumulators dereference. openai-python src/openai/lib/streaming/chat/_completions.py
# (ChatCompletionStreamState: `for choice in chunk.choices`, `choice.delta.to_dict()`, `choice.logprobs.content`;
# src/openai/lib/streaming/_deltas.py accumulate_delta: each tool-call entry's `index`, its `function` merged as
# an object); openai-node src/lib/ChatCompletionStream.ts (#accumulateChatCompletion: `chunk.choices` iterated,
# each choice's `delta` destructured, "missing role for choice", "tool call snapshot missing `type`"). A wrong
# text field is carried into the final message as it came (a number where text belongs). Schema findings on the
# other fields no client reads (CHT002 names no client): they stay ok.
_CHOICE = ("/choices/N",)
_BOTH_READ = (on_field((), ("", "/choices"), missing=("choices",)), on_field((), _CHOICE),
              on_field((), _CHOICE, keywords=(), missing=("delta",)), on_field((), ("/choices/N/delta",)),
              on_field((), ("/choices/N/delta/tool_calls/N",)))
_PY_READS = (on_field((), ("/choices/N/logprobs", "/choices/N/delta/tool_calls/N/function")),)


def _not_null(f: Finding, r: object) -> bool:
    # The schema finding's typed detail of the offending value (checker.schema_errors.value_facts).
    return f.details.get("value_type") != "null"


def _all(*conditions: Condition) -> Condition:
    return lambda f, r: all(c(f, r) for c in conditions)


# openai-node keeps a delta's role only when it is truthy (``if (role) choice.message.role = role``): a null role
# after the first delta is skipped, and a first delta without one is CHT003's (openllmetry's local5002 cassette:
# a null role on the usage chunk, and openai-node 7.59.0 returns the completion).
_NODE_READS = (_all(on_field((), ("/choices/N/delta/role",), keywords=("type", "enum")), _not_null),
               on_field((), ("/choices/N/delta/tool_calls/N/type",), keywords=("enum",)))


def _any(*conditions: Condition) -> Condition:
    return lambda f, r: any(c(f, r) for c in conditions)


BY_RULE["CHT002"] = {
    "openai-python": (
        _breaks("AttributeError/TypeError/KeyError: ChatCompletionStreamState reads {pointer}", when=_any(*_BOTH_READ, *_PY_READS)),
        _degrades("the final message carries {pointer} as it came, not as text",
                  when=on_field((), ("/choices/N/delta/content", "/choices/N/delta/refusal"))),
    ),
    "openai-node": (
        _breaks("OpenAIError: ChatCompletionStream reads {pointer} (Cannot read properties of …)",
                when=_any(*_BOTH_READ, *_NODE_READS)),
        # A null one is skipped as a falsy value is (``if (id)``, ``if (fn?.name)``, ``if (content)``).
        _degrades("the final message carries {pointer} as it came, not as the streamed text",
                  when=_all(on_field((), ("/choices/N/delta/content", "/choices/N/delta/tool_calls/N/id",
                                          "/choices/N/delta/tool_calls/N/function/name")), _not_null)),
    ),
}


def _ended_with(*reasons: str) -> object:
    ends = {FINISH_PREFIX + reason for reason in reasons}
    return lambda r: any(t in ends for t in r.terminals)


def _refused(result: object) -> bool:
    return any("refusal" in item.parts for item in result.items)  # type: ignore[attr-defined]


def _call_cut_by_length(result: object) -> bool:
    # The token limit ended the answer while a choice streamed a tool call: the call's arguments stop mid-JSON
    # (a model whose call was whole would have finished with "tool_calls").
    return (FINISH_PREFIX + "length" in result.terminals  # type: ignore[attr-defined]
            and any("tool_calls" in item.parts for item in result.items))  # type: ignore[attr-defined]


def _cut_before_anything_visible(result: object) -> bool:
    # The token limit ended the answer before any text, refusal or tool call: a choice that streamed reasoning
    # only (or nothing). The Agents SDK takes that for a spent budget, not an answer, and raises.
    return (FINISH_PREFIX + "length" in result.terminals  # type: ignore[attr-defined]
            and not any({"content", "refusal", "tool_calls"} & set(item.parts)
                        for item in result.items))  # type: ignore[attr-defined]


AT_END: dict[str, tuple[EndEffect, ...]] = {
    "openai-agents": (
        EndEffect(Verdict.BREAKS, "ModelRefusalError: Model refused to produce output: … (a choice refuses, as a "
                                  "conforming stream may; the run raises it)", _refused,  # type: ignore[arg-type]
                  "openai-agents-python src/agents/exceptions.py (ModelRefusalError, raised by the run for a refusal; "
                  "measured, tests/test_real_clients.py)"),
        EndEffect(Verdict.BREAKS, "ModelBehaviorError: Invalid JSON input for tool … (a choice ends with {terminal} "
                                  "inside a tool call, as a conforming stream may; the run executes the cut call)",
                  _call_cut_by_length,  # type: ignore[arg-type]
                  "openai-agents-python src/agents/tool.py (_parse_function_tool_json_input, run on every call the "
                  "model made; measured on captures/llama.cpp-probe/chat/function_call_truncated.sse, "
                  "tests/test_real_clients.py)"),
        EndEffect(Verdict.BREAKS, "ModelBehaviorError: Chat Completions stream terminated with finish_reason='length' "
                                  "but produced no assistant text, tool call, or refusal. (a choice ends with "
                                  "{terminal} before any of them, as a conforming stream may)",
                  _cut_before_anything_visible,  # type: ignore[arg-type]
                  "openai-agents-python src/agents/models/chatcmpl_stream_handler.py (the stream's end, "
                  "raise_on_length_truncation, on for OpenAIChatCompletionsModel); measured on "
                  "captures/transformers/chat/function_call_truncated.sse, tests/test_real_clients.py)"),
    ),
    "openai-python": (
        EndEffect(Verdict.BREAKS, f"{_PY_LENGTH} (a choice ends with {{terminal}}, as a conforming stream may; "
                                  "get_final_completion() returns only an uncut completion)",
                  _ended_with("length"),  # type: ignore[arg-type]
                  "openai-python src/openai/lib/_parsing/_completions.py (parse_chat_completion)"),
        EndEffect(Verdict.BREAKS, f"{_PY_FILTER} (a choice ends with {{terminal}}, as a conforming stream may)", _ended_with("content_filter"),  # type: ignore[arg-type]
                  "openai-python src/openai/lib/_parsing/_completions.py (parse_chat_completion)"),
    ),
}


# The Vercel AI SDK's column: its rows and its end (checker/dialects/chat/vercel_effects.py).
add_column(BY_RULE, vercel_effects.BY_RULE, rule_clients)
AT_END[vercel_effects.VAI] = vercel_effects.AT_END


def effects() -> ClientEffects:
    return ClientEffects(clients=CLIENTS, by_rule=BY_RULE, at_end=AT_END, normal_end=FINISH_PREFIX + "stop",
                         proven=("openai-python", "openai-node"), by_design=frozenset({"FMT006"}),
                         check_order=("HTP", "SSE", "CHT"))
