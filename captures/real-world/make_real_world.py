"""Write the real-world corpus: one capture per server bug of docs/spec.md §2, with its expected findings and matrix.

Run from the project root: ``python captures/real-world/make_real_world.py``.
Deterministic, like ``captures/make_captures.py`` (whose stream builder it
reuses): each capture is a conforming stream with the one thing the server got
wrong, in the server's own surroundings (vLLM and Ollama count
``sequence_number`` from 0, llama.cpp sends none). Next to each ``X.sse``:

* ``X.expect.json``: ``{"openai": [codes]}``, the complete set of findings
  (checked by tests/test_corpus.py like every capture);
* ``X.clients.json``: the expected client matrix ``{client: verdict}``,
  checked by tests/test_client_oracles.py against sse-check's matrix *and*
  against the real openai-python and openai-node.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # checker/ and captures/, when not installed

from captures.generated_files import write_files  # noqa: E402

_spec = importlib.util.spec_from_file_location("make_captures", HERE.parent / "make_captures.py")
assert _spec is not None and _spec.loader is not None
mc = importlib.util.module_from_spec(_spec)
sys.modules["make_captures"] = mc
_spec.loader.exec_module(mc)

Event = dict[str, Any]
CLIENT_ORDER = ("openai-python", "openai-node", "codex", "openai-agents", "vercel-ai", "langchain",
                "positional", "open-responses")


def _from_zero(events: list[Event]) -> list[Event]:
    """vLLM and Ollama number events from 0 (docs/spec.md §2)."""
    for e in events:
        if "sequence_number" in e:
            e["sequence_number"] -= 1
    return events


def vllm_content_index_not_reset() -> list[Event]:
    # vLLM #23382, #35184, #45742: with gpt-oss the message's content_index continues the
    # reasoning item's count (1 instead of 0), and the OpenAI SDK raises IndexError.
    s = mc.Stream("real-world/vllm", model="openai/gpt-oss-20b",
                  reasoning={"effort": "medium", "summary": None}).start()
    s.reasoning_item(text=["The", " user", " asks", " for", " the", " capital", " of", " France", "."])
    s.message(["The", " capital", " of", " France", " is", " **", "Paris", "**", "."])
    s.completed(mc.usage(75, 31, reasoning_tokens=9))
    events = s.events
    message = events[mc.find(events, "response.output_item.added", 1)]["item"]["id"]
    for e in events:
        if e.get("item_id") == message and "content_index" in e:
            e["content_index"] = 1
    return _from_zero(events)


def litellm_no_content_part() -> list[Event]:
    # LiteLLM #20975 (and sub2api #2875): a chat-completions bridge streams output_text
    # deltas without content_part.added / content_part.done.
    s = mc.Stream("real-world/litellm", model="claude-sonnet-4-5").start()
    s.message(["Paris", " is", " the", " capital", " of", " France", "."])
    s.completed(mc.usage(14, 8))
    events = [e for e in s.events if not e["type"].startswith("response.content_part.")]
    return mc.renumber(events)


def ollama_summary_without_part() -> list[Event]:
    # Ollama (and LiteLLM #32777): reasoning summary deltas and summary_text.done with no
    # reasoning_summary_part.added / .done; openai-node has no part to append to.
    s = mc.Stream("real-world/ollama", model="gpt-oss:20b", reasoning={"effort": "medium", "summary": "auto"}).start()
    s.reasoning_item(summary=[["The", " user", " says", " hello", ";", " greet", " them", " back", "."]])
    s.message(["Hello", "!", " How", " can", " I", " help", " you", " today", "?"])
    s.completed(mc.usage(71, 29, reasoning_tokens=11))
    events = [e for e in s.events if not e["type"].startswith("response.reasoning_summary_part.")]
    return _from_zero(mc.renumber(events))


def llama_cpp_delayed_reasoning_done() -> list[Event]:
    # llama-server (PR #18486) sends every output_item.done in one burst at the end, so the
    # reasoning item's done arrives after the message was added and streamed, and no event
    # carries sequence_number. Here the indexes are present, as the OpenAI SDKs need them:
    # only the positional client and the Open Responses suite are affected.
    s = mc.Stream("real-world/llama.cpp", model="gpt-oss-20b-mxfp4.gguf",
                  reasoning={"effort": "medium", "summary": None}).start()
    s.reasoning_item(text=["We", " need", " 2", "+", "2", ".", " That", " is", " 4", "."])
    s.message(["2", " +", " 2", " =", " **", "4", "**"])
    s.completed(mc.usage(80, 20, reasoning_tokens=10))
    events = s.events
    done = events.pop(mc.find(events, "response.output_item.done", 0))
    events.insert(mc.find(events, "response.output_item.done", 0), done)
    for e in events:
        e.pop("sequence_number", None)
    return events


def codex_backend_empty_output() -> list[Event]:
    # OpenAI's own codex backend (chatgpt.com/backend-api/codex) with store:false: encrypted
    # reasoning and a call, then `output: []` in response.completed. codex reads the done items;
    # openai-agents-python reads only the final output and sees an empty turn.
    s = mc.Stream("real-world/codex", model="gpt-5-codex", tools=[mc.WEATHER_TOOL], store=False,
                  reasoning={"effort": "medium", "summary": "auto"}).start()
    s.reasoning_item(summary=[["**", "Checking", " the", " weather", "**\n\n", "I", "'ll", " call",
                               " get_weather", "."]],
                     encrypted="gAAAAABo7lF0cmVhbC13b3JsZC1jb2RleC1zdG9yZS1mYWxzZQ")
    s.function_call("get_weather", mc.WEATHER_ARGS)
    s.completed(mc.usage(2210, 71, reasoning_tokens=45, cached=2048))
    mc.completed_response(s.events)["output"] = []
    return s.events


def missing_terminal_event() -> list[Event]:
    # A proxy's idle timeout (or a crashed worker) closes the stream after the last item:
    # no response.completed. codex: "stream closed before response.completed".
    s = mc.Stream("real-world/cut").start()
    s.message(["Here", " is", " the", " summary", " you", " asked", " for", "."])
    s.completed(mc.usage(40, 9))
    return s.events[:-1]


# name -> (builder, expected codes under openai, expected matrix)
CORPUS: dict[str, tuple[Callable[[], list[Event]], list[str], dict[str, str]]] = {
    "vllm-content-index-not-reset": (
        vllm_content_index_not_reset, ["CNT002"],
        {"openai-python": "breaks", "openai-node": "breaks", "codex": "ok", "openai-agents": "ok",
         "vercel-ai": "ok",
         "langchain": "ok", "positional": "ok", "open-responses": "ok"},
    ),
    "litellm-no-content-part": (
        litellm_no_content_part, ["CNT004"],
        {"openai-python": "breaks", "openai-node": "breaks", "codex": "ok", "openai-agents": "ok",
         "vercel-ai": "ok",
         "langchain": "ok", "positional": "ok", "open-responses": "ok"},
    ),
    "ollama-summary-without-part": (
        ollama_summary_without_part, ["RSN001"],
        {"openai-python": "ok", "openai-node": "breaks", "codex": "ok", "openai-agents": "ok",
         "vercel-ai": "ok",
         "langchain": "ok", "positional": "ok", "open-responses": "ok"},
    ),
    "llama.cpp-delayed-reasoning-done": (
        llama_cpp_delayed_reasoning_done, ["ITM011", "LIF015"],
        {"openai-python": "ok", "openai-node": "ok", "codex": "ok", "openai-agents": "ok",
         "vercel-ai": "ok",
         "langchain": "ok", "positional": "breaks", "open-responses": "breaks"},
    ),
    "codex-backend-empty-output": (
        codex_backend_empty_output, ["REC005"],
        {"openai-python": "degraded", "openai-node": "degraded", "codex": "ok", "openai-agents": "ok",
         "vercel-ai": "ok",
         "langchain": "ok", "positional": "ok", "open-responses": "ok"},
    ),
    "missing-terminal-event": (
        missing_terminal_event, ["LIF006"],
        {"openai-python": "breaks", "openai-node": "degraded", "codex": "breaks", "openai-agents": "breaks",
         "vercel-ai": "ok",
         "langchain": "ok", "positional": "ok", "open-responses": "breaks"},
    ),
}


def render() -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for name, (build, codes, clients) in CORPUS.items():
        files[f"{name}.sse"] = mc.encode(build()).encode()
        files[f"{name}.expect.json"] = (json.dumps({"openai": sorted(codes)}, indent=2) + "\n").encode()
        ordered = {client: clients[client] for client in CLIENT_ORDER}
        files[f"{name}.clients.json"] = (json.dumps(ordered, indent=2) + "\n").encode()
    return files


def main() -> None:
    files = render()
    changed = write_files(files, HERE)
    print(f"{len(files)} files under {HERE}, {changed} written")


if __name__ == "__main__":
    main()
