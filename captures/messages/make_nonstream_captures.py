"""Write the Anthropic Messages stream/non-stream pairs of ``captures/messages/nonstream/``.

Run from the project root: ``python captures/messages/make_nonstream_captures.py`` (deterministic). Each pair is
what ``sse-check serve`` replays for one request asked both ways: ``X.sse`` the stream (what Anthropic's API sends,
``checker.synth.messages``), ``X.nonstream.json`` the answer to the same request with ``stream: false`` (the
``Message`` that stream builds, with its own message and tool ids: another request's). ``X.nonstream.expect.json``
declares what ``sse-check probe --api messages`` reports on the non-streamed scenario whose streamed pair is
``X`` (``messages/X_nonstream``), under the default profile; tests/live/test_messages_nonstream.py probes them.

* ``conforming/``: the answer is the stream's message: nothing to report.
* ``broken/``: ``plain_text``'s answer says something else than its stream (HTP017); ``reasoning_one_call``'s
  answer signs no thinking block and gives its call an OpenAI id (``call_…``), where the stream had ``toolu_…``
  (ANT013, ANT015, and HTP016 for the prefix that differs from the stream's).
"""

from __future__ import annotations

import copy
import json
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parents[1]))

from captures.generated_files import write_files  # noqa: E402
from checker.synth.messages import MessagesStreamBuilder, encode, make_id  # noqa: E402

Message = dict[str, Any]


def streams() -> dict[str, MessagesStreamBuilder]:
    """The streamed pairs, named after the probe scenarios that replay them (checker/live/scenarios.py)."""
    return {
        "plain_text": MessagesStreamBuilder(name="nonstream-plain").text(
            ["Paris is mild", " today: 18 °C", " and sunny."]),
        "reasoning_one_call": MessagesStreamBuilder(name="nonstream-call")
        .thinking(["The user is going to Berlin;", " I need its weather first."])
        .tool_use("get_weather", ['{"city": "Ber', 'lin", "unit": ', '"celsius"}']),
    }


def final_message(events: Iterable[dict[str, Any]], name: str) -> Message:
    """The message a stream builds (as the SDKs accumulate it), with the ids another request would get."""
    message: Message = {}
    partial: dict[int, str] = {}
    for event in events:
        etype = event["type"]
        if etype == "message_start":
            message = copy.deepcopy(event["message"])
            message["id"] = make_id("msg_", f"{name}-nonstream")
        elif etype == "content_block_start":
            block = dict(event["content_block"])
            if block["type"] == "tool_use":
                block["id"] = make_id("toolu_", f"{name}-nonstream/{event['index']}")
            message["content"].append(block)
        elif etype == "content_block_delta":
            delta, block = event["delta"], message["content"][event["index"]]
            if delta["type"] == "input_json_delta":
                partial[event["index"]] = partial.get(event["index"], "") + delta["partial_json"]
            else:
                field = delta["type"].removesuffix("_delta")
                block[field] = block.get(field, "") + delta[field]
        elif etype == "message_delta":
            message.update(event["delta"])
            message["usage"] = {**message["usage"], **event["usage"]}
    for index, text in partial.items():
        message["content"][index]["input"] = json.loads(text)
    return message


def _other_text(message: Message) -> Message:
    message["content"][0]["text"] = "Paris is cold today: 4 °C and raining."
    return message


def _unsigned_openai_call(message: Message) -> Message:
    message["content"][0]["signature"] = ""
    message["content"][1]["id"] = make_id("call_", "nonstream-call")
    return message


# folder -> scenario -> (how its answer departs from the stream's message, the codes the probe reports)
PAIRS: dict[str, dict[str, tuple[Callable[[Message], Message] | None, list[str]]]] = {
    "conforming": {"plain_text": (None, []), "reasoning_one_call": (None, [])},
    "broken": {"plain_text": (_other_text, ["HTP017"]),
               "reasoning_one_call": (_unsigned_openai_call, ["ANT013", "ANT015", "HTP016"])},
}


def build() -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for folder, pairs in PAIRS.items():
        for name, (breaker, expected) in pairs.items():
            builder = streams()[name]
            events = list(builder.events(ping=False))
            about = f"about the streamed half of a pair ({folder}): {name}.nonstream.json is the same request's " \
                    "answer with stream: false"
            files[f"nonstream/{folder}/{name}.sse"] = b": " + about.encode() + b"\n\n" + encode(events)
            answer = final_message(events, builder.name)
            answer = breaker(answer) if breaker is not None else answer
            files[f"nonstream/{folder}/{name}.nonstream.json"] = (json.dumps(answer, indent=2, ensure_ascii=False)
                                                                  + "\n").encode()
            declared = json.dumps({"openai": expected}) + "\n"
            files[f"nonstream/{folder}/{name}.nonstream.expect.json"] = declared.encode()
    return files


def main() -> int:
    files = build()
    write_files(files, ROOT)
    print(f"wrote {len(files)} files under {ROOT / 'nonstream'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
