"""Write the synthetic Chat Completions captures: conforming streams and one broken stream per CHT rule.

Run from the project root: ``python captures/make_chat_captures.py``. Deterministic (fixed ids, timestamps and
texts), so a re-run changes no byte unless this file changed; tests/test_chat_corpus.py checks that the files
on disk are what it writes. The streams are built by ``checker.synth.ChatStreamBuilder`` (what OpenAI sends,
docs/spec.md §6); each broken capture is a conforming stream with one thing changed, with header comment lines
(ignored by SSE decoders) saying what is broken and the complete set of findings it produces:

    : about <what is broken>
    : profile <name>          (optional; default openai)
    : request {...}           (optional, one-line JSON: the request the stream answers)
    : expect <CODE>           (one line per code)

* ``chat/conforming/*.sse``: clean under every profile;
* ``chat/rules/CHT0nn-<name>.sse``: the bad example of each CHT rule;
* ``chat/framing/*.sse``: the engine's framing rules on a chat stream ([DONE] missing, data after it, a cut
  last event, data that is not JSON).
"""

from __future__ import annotations

import copy
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent))

from captures.generated_files import write_files  # noqa: E402
from checker.synth import ChatStreamBuilder, encode_chat  # noqa: E402

Chunk = dict[str, Any]
TEXT = ["The capital", " of France", " is Paris."]
ARGS = ['{"city"', ': "Paris"', "}"]
WEATHER_TOOL = {"type": "function", "function": {"name": "get_weather", "description": "The weather in a city.",
                                                  "parameters": {"type": "object",
                                                                 "properties": {"city": {"type": "string"}},
                                                                 "required": ["city"]}}}
TOOLS = {"tools": [WEATHER_TOOL]}
TIME_TOOL = {"type": "function", "function": {**WEATHER_TOOL["function"], "name": "get_time",
                                               "description": "The local time in a city."}}
# The captures whose answer calls both functions declare both: an agent runs only the tools it declared
# (the Agents SDK fails a call to another: "Tool get_time not found"), which the stream is not to blame for.
TWO_TOOLS = {"tools": [WEATHER_TOOL, TIME_TOOL]}
USAGE = {"stream_options": {"include_usage": True}}


def text() -> ChatStreamBuilder:
    return ChatStreamBuilder().text(TEXT)


def call(*names: str) -> ChatStreamBuilder:
    builder = ChatStreamBuilder()
    for name in names or ("get_weather",):
        builder.tool_call(name, ARGS)
    return builder


def chunks(builder: ChatStreamBuilder, **options: Any) -> list[Chunk]:
    return list(builder.chunks(**options))


def render_one(body: bytes, *, about: str | None = None, expect: tuple[str, ...] = (), profile: str | None = None,
               request: dict[str, Any] | None = None) -> bytes:
    head = []
    if about is not None:
        head.append(f": about {about}")
        if profile:
            head.append(f": profile {profile}")
        if request is not None:
            head.append(f": request {json.dumps(request, separators=(',', ':'))}")
        head += [f": expect {code}" for code in expect]
    return ("".join(line + "\n" for line in head) + ("\n" if head else "")).encode() + body


# --- conforming -------------------------------------------------------------------------------------------

CONFORMING: dict[str, tuple[Callable[[], bytes], dict[str, Any] | None]] = {
    "text": (lambda: encode_chat(text().chunks()), None),
    "refusal": (lambda: encode_chat(ChatStreamBuilder().refusal(["I can't", " help with that."]).chunks()), None),
    "tool-call": (lambda: encode_chat(call().chunks()), TOOLS),
    "parallel-tool-calls": (lambda: encode_chat(call("get_weather", "get_time").chunks()), TWO_TOOLS),
    "text-then-tool-call": (lambda: encode_chat(ChatStreamBuilder().text(["Let me check."])
                                                .tool_call("get_weather", ARGS).chunks()), TOOLS),
    "two-choices": (lambda: encode_chat(ChatStreamBuilder().text(TEXT).text(["Paris."], choice=1).chunks()),
                    {"n": 2}),
    # n: 2 as OpenAI streams it: the choices' chunks in turn; choice 0 answers with text then a call, choice 1
    # with text only (the report draws a lane per choice; neither is late).
    "two-choices-interleaved": (lambda: encode_chat(ChatStreamBuilder().text(["Let me check."])
                                                    .tool_call("get_weather", ARGS).text(TEXT, choice=1)
                                                    .chunks(usage=True, interleave=True)),
                                {"n": 2, **TOOLS, **USAGE}),
    "usage": (lambda: encode_chat(text().chunks(usage=True)), USAGE),
    "length": (lambda: encode_chat(ChatStreamBuilder().text(TEXT).chunks(finish_reason="length", usage=True)),
               {"max_tokens": 3, **USAGE}),
}


# --- one broken stream per rule -------------------------------------------------------------------------------


def _set(chunk: Chunk, path: str, value: Any) -> Chunk:
    """A copy of ``chunk`` with the value at a slash path (``choices/0/delta/role``) set; ``...`` deletes."""
    chunk = copy.deepcopy(chunk)
    node: Any = chunk
    keys = [int(k) if k.isdigit() else k for k in path.split("/")]
    for key in keys[:-1]:
        node = node[key]
    if value is ...:
        del node[keys[-1]]
    else:
        node[keys[-1]] = value
    return chunk


def _insert(items: list[Chunk], at: int, chunk: Chunk) -> list[Chunk]:
    return items[:at] + [chunk] + items[at:]


def _identity_changed() -> list[Chunk]:
    items = chunks(text())
    return items[:2] + [_set(c, "model", "gpt-test-2") for c in items[2:]]


def _created_changed() -> list[Chunk]:
    items = chunks(text())
    return items[:2] + [_set(c, "created", c["created"] + 1) for c in items[2:]]


def _schema() -> list[Chunk]:
    items = chunks(text())
    items[-1] = _set(items[-1], "choices/0/finish_reason", "done")
    return items


def _role_missing() -> list[Chunk]:
    items = chunks(text())
    items[0] = _set(items[0], "choices/0/delta/role", ...)
    return items


def _role_repeated() -> list[Chunk]:
    items = chunks(text())
    items[2] = _set(items[2], "choices/0/delta/role", "assistant")
    return items


def _choice_skips() -> list[Chunk]:
    items = chunks(ChatStreamBuilder().text(TEXT).text(["Paris."], choice=1))
    return [_set(c, "choices/0/index", 2) if c["choices"][0]["index"] == 1 else c for c in items]


def _after_finish() -> list[Chunk]:
    items = chunks(text())
    return items + [_set(items[1], "choices/0/delta/content", " And Lyon.")]


def _finish_repeated() -> list[Chunk]:
    items = chunks(text())
    return items + [_set(items[-1], "choices/0/finish_reason", "length")]


def _finish_missing() -> list[Chunk]:
    return chunks(text())[:-1]


def _calls_under_stop() -> list[Chunk]:
    return chunks(call(), finish_reason="stop")


def _length_as_stop() -> list[Chunk]:
    return chunks(text(), usage=True)


def _tool_index_missing() -> list[Chunk]:
    items = chunks(call())
    extra = _set(items[2], "choices/0/delta/tool_calls/0/index", ...)
    return _insert(items, 3, _set(extra, "choices/0/delta/tool_calls/0/function/arguments", ""))


def _tool_start_no_id() -> list[Chunk]:
    items = chunks(call())
    items[1] = _set(items[1], "choices/0/delta/tool_calls/0/id", ...)
    return items


def _tool_id_repeated() -> list[Chunk]:
    items = chunks(call())
    items[2] = _set(items[2], "choices/0/delta/tool_calls/0/id", items[1]["choices"][0]["delta"]["tool_calls"][0]["id"])
    return items


def _tool_name_changed() -> list[Chunk]:
    items = chunks(call())
    items[3] = _set(items[3], "choices/0/delta/tool_calls/0/function/name", "get_forecast")
    return items


def _tool_index_shared() -> list[Chunk]:
    items = chunks(call("get_weather", "get_time"))
    return [_set(c, "choices/0/delta/tool_calls/0/index", 0) if c["choices"] and c["choices"][0]["delta"]
            .get("tool_calls") else c for c in items]


def _tool_id_duplicate() -> list[Chunk]:
    items = chunks(call("get_weather", "get_time"))
    first = items[1]["choices"][0]["delta"]["tool_calls"][0]["id"]
    return [_set(c, "choices/0/delta/tool_calls/0/id", first) if c["choices"] and "id" in
            (c["choices"][0]["delta"].get("tool_calls") or [{}])[0] else c for c in items]


def _arguments_cut() -> list[Chunk]:
    items = chunks(call())
    return items[:4] + items[5:]


def _arguments_object() -> list[Chunk]:
    items = chunks(call())
    items[2] = _set(items[2], "choices/0/delta/tool_calls/0/function/arguments", {"city": "Paris"})
    return items[:3] + items[5:]


def _arguments_in_full() -> list[Chunk]:
    items = chunks(call())
    items[3] = _set(items[3], "choices/0/delta/tool_calls/0/function/arguments", '{"city": "Paris"')
    return items


def _usage_not_last() -> list[Chunk]:
    items = chunks(text(), usage=True)
    return items + [_set(items[-2], "choices/0/finish_reason", None)]


def _usage_with_choices() -> list[Chunk]:
    items = chunks(text(), usage=True)
    usage = items[-1]["usage"]
    return items[:-2] + [_set(items[-2], "usage", usage)]


def _usage_totals() -> list[Chunk]:
    items = chunks(text(), usage=True)
    items[-1] = _set(items[-1], "usage/total_tokens", 99)
    return items


def _usage_missing() -> list[Chunk]:
    return chunks(text())


def _error_mid_stream() -> list[Chunk]:
    items = chunks(text())
    error = {"error": {"message": "The server had an error while processing your request.", "type": "server_error",
                       "param": None, "code": None}}
    return items[:2] + [error]


def _reasoning_content() -> list[Chunk]:
    return chunks(ChatStreamBuilder().reasoning(["Paris is", " the capital."]).text(TEXT))


def _empty_chunk() -> list[Chunk]:
    # What Azure OpenAI sends first: the prompt's filter results in a chunk without choices or identity.
    azure = {"choices": [], "created": 0, "id": "", "model": "", "object": "",
             "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": {}}]}
    return [azure] + chunks(text())


def _tool_type_null() -> list[Chunk]:
    # Writer's shape (captures/cassettes/openllmetry/writer-*): later fragments carry id, type and name as null.
    items = chunks(call())
    for n in (2, 3, 4):
        items[n] = _set(_set(_set(items[n], "choices/0/delta/tool_calls/0/id", None),
                             "choices/0/delta/tool_calls/0/type", None),
                        "choices/0/delta/tool_calls/0/function/name", None)
    return items


def _message_in_chunk() -> list[Chunk]:
    # Writer's shape: every streamed choice carries a message object beside its delta, with tool_calls: null.
    message = {"content": None, "role": "assistant", "tool_calls": None, "refusal": None}
    return [_set(c, "choices/0/message", message) for c in chunks(text())]


def _identity_resent() -> list[Chunk]:
    # LM Studio's shape (lmstudio-bug-tracker #649): later fragments carry an empty id and name, and the type.
    items = chunks(call())
    for n in (2, 3, 4):
        items[n] = _set(_set(_set(items[n], "choices/0/delta/tool_calls/0/id", ""),
                             "choices/0/delta/tool_calls/0/type", "function"),
                        "choices/0/delta/tool_calls/0/function/name", "")
    return items


# code-name -> (what is broken, chunks, request, expected codes, profile)
RULES: dict[str, tuple[str, Callable[[], list[Chunk]], dict[str, Any] | None, tuple[str, ...]]] = {
    "CHT001-chunk-identity-changed": ("from the third chunk on, another model", _identity_changed, None, ("CHT001",)),
    "CHT002-chunk-schema-violation": ("finish_reason 'done', not one of the enum", _schema, None, ("CHT002",)),
    "CHT003-role-missing": ("the first delta has no role, and no later one has", _role_missing, None, ("CHT003",)),
    "CHT004-role-repeated": ("a content delta repeats role: assistant", _role_repeated, None, ("CHT004",)),
    "CHT005-choice-index-invalid": ("the second choice is numbered 2", _choice_skips, None, ("CHT005",)),
    "CHT006-delta-after-finish": ("content after the finish_reason chunk", _after_finish, None, ("CHT006",)),
    "CHT007-finish-reason-repeated": ("a second finish_reason (length)", _finish_repeated, None, ("CHT007",)),
    "CHT008-finish-reason-missing": ("no chunk carries a finish_reason", _finish_missing, None, ("CHT008",)),
    "CHT009-finish-reason-tool-calls-mismatch": ("a tool call finished with stop", _calls_under_stop, TOOLS,
                                                 ("CHT009",)),
    "CHT010-finish-reason-length-mismatch": ("max_tokens 4 used whole, finish_reason stop", _length_as_stop,
                                             {"max_tokens": 3, **USAGE}, ("CHT010",)),
    "CHT011-tool-call-index-missing": ("a tool-call fragment without index", _tool_index_missing, TOOLS,
                                       ("CHT011",)),
    "CHT012-tool-call-start-incomplete": ("the first fragment of the call has no id", _tool_start_no_id, TOOLS,
                                          ("CHT012",)),
    "CHT013-tool-call-identity-repeated": ("a later fragment repeats the call's id", _tool_id_repeated, TOOLS,
                                           ("CHT013",)),
    "CHT014-tool-call-identity-changed": ("a later fragment names another function", _tool_name_changed, TOOLS,
                                          ("CHT014",)),
    "CHT015-tool-call-index-shared": ("two calls streamed at index 0", _tool_index_shared, TWO_TOOLS,
                                      ("CHT015", "CHT017")),
    "CHT016-tool-call-id-duplicate": ("two calls with one id", _tool_id_duplicate, TWO_TOOLS, ("CHT016",)),
    "CHT017-tool-arguments-invalid-json": ("the arguments lose a fragment: {\"city\"}", _arguments_cut, TOOLS,
                                           ("CHT017",)),
    "CHT018-tool-arguments-not-a-string": ("the arguments sent as an object", _arguments_object, TOOLS,
                                           ("CHT018",)),
    "CHT019-tool-arguments-repeated-in-full": ("a fragment resends the arguments so far", _arguments_in_full,
                                               TOOLS, ("CHT017", "CHT019")),
    "CHT020-usage-chunk-not-last": ("a chunk after the usage chunk", _usage_not_last, USAGE, ("CHT020",)),
    "CHT021-usage-chunk-has-choices": ("usage on the finish chunk, no separate usage chunk", _usage_with_choices,
                                       USAGE, ("CHT021",)),
    "CHT022-usage-totals-inconsistent": ("total_tokens 99", _usage_totals, USAGE, ("CHT022",)),
    "CHT023-usage-chunk-missing": ("include_usage asked, no usage chunk", _usage_missing, USAGE, ("CHT023",)),
    "CHT024-error-in-stream": ("an error object after two chunks", _error_mid_stream, None, ("CHT024",)),
    "CHT025-vendor-reasoning-field": ("reasoning as reasoning_content deltas (llama.cpp, vLLM)",
                                      _reasoning_content, None, ("CHT025",)),
    "CHT027-chunk-created-changed": ("from the third chunk on, created one second later", _created_changed, None,
                                     ("CHT027",)),
    "CHT028-tool-call-type-null": ("later tool-call fragments with id, type and name null (Writer)",
                                   _tool_type_null, TOOLS, ("CHT002", "CHT028")),
    "CHT029-choice-message-in-chunk": ("a message object (tool_calls: null) in every streamed choice (Writer)",
                                       _message_in_chunk, None, ("CHT029",)),
    "CHT030-tool-call-identity-resent": ("later tool-call fragments with an empty id and name, and the type "
                                         "(LM Studio)", _identity_resent, TOOLS, ("CHT030",)),
    "CHT026-chunk-without-choices": ("Azure's prompt-filter chunk (no choices, object '') first", _empty_chunk,
                                     None, ("CHT002", "CHT026")),
}


# --- framing on a chat stream (the engine's rules) -------------------------------------------------------------------


def _framing() -> dict[str, bytes]:
    plain = encode_chat(text().chunks())
    body = encode_chat(text().chunks(), done=False)
    cut = body[: body.rindex(b"data: ") + 40]
    broken = body.replace(b'{"content":" of France"}', b'{"content":" of France"', 1)
    return {
        "done-missing": render_one(body, about="the stream ends without data: [DONE]", expect=("SSE012",)),
        "after-done": render_one(plain + body[: body.index(b"\n\n") + 2], about="a chunk after data: [DONE]",
                                 expect=("SSE010",)),
        "cut-last-event": render_one(cut, about="the last chunk cut mid-JSON, no [DONE]",
                                     expect=("SSE004", "SSE012", "CHT008")),
        "invalid-json": render_one(broken + b"data: [DONE]\n\n", about="a chunk whose JSON is cut short",
                                   expect=("SSE006",)),
    }


def render() -> dict[str, bytes]:
    """Every file this script writes: path relative to captures/ → bytes."""
    files: dict[str, bytes] = {}
    for name, (build, request) in CONFORMING.items():
        files[f"chat/conforming/{name}.sse"] = build()
        if request is not None:  # the whole request a client sends: the sidecar is the request the stream answers
            ask = [{"role": "user", "content": "What is the capital of France?"}]
            whole = {"model": "gpt-4o-mini", "messages": ask, "stream": True, **request}
            files[f"chat/conforming/{name}.request.json"] = (json.dumps(whole, indent=2) + "\n").encode()
    for name, (about, build, request, expect) in RULES.items():
        files[f"chat/rules/{name}.sse"] = render_one(encode_chat(build()), about=about, expect=expect,
                                                     request=request)
    for name, body in _framing().items():
        files[f"chat/framing/{name}.sse"] = body
    return files


def main() -> int:
    files = render()
    write_files(files, ROOT, prune=[ROOT / "chat" / folder for folder in ("conforming", "rules", "framing")])
    print(f"make_chat_captures: {len(files)} files in {ROOT / 'chat'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
