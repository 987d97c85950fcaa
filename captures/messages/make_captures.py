"""Write the synthetic Anthropic Messages captures: conforming streams and one broken stream per rule.

Run from the project root: ``python captures/messages/make_captures.py``. The output is deterministic, so
re-running it changes no byte unless this file changed. Streams are built by
``checker.synth.messages.MessagesStreamBuilder`` (what Anthropic's API sends, docs/spec.md §7)
and then broken in exactly one way; each capture's header says what is broken and which findings it
produces (``: about``, ``: request``, ``: expect``; tests/test_corpus.py reads them). The real llama-server
captures in ``llama.cpp/`` are recorded, not written here.

* ``conforming/*.sse``: streams that must lint clean (a header with ``: about`` and no ``: expect``);
* ``rules/<CODE>-<name>.sse``: one per rule of the ANT family, and the framing rules whose client effects
  differ for this dialect (an ``event:`` name that disagrees with the type, a missing ``event:`` line, an
  event after ``message_stop``).
"""

from __future__ import annotations

import copy
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parents[1]))

from captures.generated_files import write_files  # noqa: E402
from checker.synth.messages import MessagesStreamBuilder, make_id  # noqa: E402

Event = dict[str, Any]
Frame = tuple[str | None, Event]  # (the event: line, or None for none; the data)


def text_stream(name: str = "text") -> MessagesStreamBuilder:
    return MessagesStreamBuilder(name=name).text(["Hello", "! How can", " I help you today?"])


def tool_stream(name: str = "thinking-tool-use") -> MessagesStreamBuilder:
    return (MessagesStreamBuilder(name=name)
            .thinking(["The user wants the weather", " in Paris. I should call the tool."])
            .text(["Let me check the weather in Paris."])
            .tool_use("get_weather", ['{"city": "Pa', 'ris", "unit": ', '"celsius"}']))


def frames(events: list[Event]) -> list[Frame]:
    return [(e["type"], e) for e in events]


def encode(items: list[Frame], header: list[str]) -> bytes:
    out = [f": {line}\n" for line in header]
    if out:
        out.append("\n")
    for name, data in items:
        head = f"event: {name}\n" if name is not None else ""
        text = json.dumps(data, separators=(',', ':'), ensure_ascii=False, default=lambda _: "\u0000CUT")
        text = text.split('"\\u0000CUT', 1)[0]  # a _CUT_JSON value: the JSON stops there
        out.append(f"{head}data: {text}\n\n")
    return "".join(out).encode()


def where(items: list[Frame], etype: str, index: int | None = None, nth: int = 0) -> int:
    """The position of the ``nth`` event of ``etype`` (for block events: of block ``index``)."""
    found = [n for n, (_, e) in enumerate(items) if e["type"] == etype and (index is None or e.get("index") == index)]
    return found[nth]


def delta(index: int, kind: str, field: str, piece: str) -> Frame:
    event = {"type": "content_block_delta", "index": index, "delta": {"type": kind, field: piece}}
    return ("content_block_delta", event)


# --- conforming ----------------------------------------------------------------------------------------------

def conforming() -> dict[str, tuple[list[Frame], list[str]]]:
    two_tools = (MessagesStreamBuilder(name="two-tools").text(["I'll check both cities."])
                 .tool_use("get_weather", ['{"city": "Paris"}']).tool_use("get_weather", ['{"city": ', '"Tokyo"}']))
    cut = MessagesStreamBuilder(name="max-tokens").text(["Once upon", " a time", " there"])
    cut_events = list(cut.events(stop_reason="max_tokens"))
    cut_events[-2]["usage"]["output_tokens"] = 3
    early_ping = list(text_stream("ping-first").events())
    early_ping.insert(0, {"type": "ping"})
    early_ping.insert(4, {"type": "ping"})
    no_input = MessagesStreamBuilder(name="tool-no-arguments").tool_use("get_time", [])
    return {
        "text": (frames(list(text_stream().events())), ["about a text answer, as Anthropic's API streams it"]),
        "thinking-tool-use": (frames(list(tool_stream().events())),
                              ["about extended thinking (signed), a text block and a tool call"]),
        "redacted-thinking": (frames(list(MessagesStreamBuilder(name="redacted").redacted_thinking()
                                            .text(["The answer is 42."]).events())),
                              ["about a redacted_thinking block (its data whole at the start, no delta)"]),
        "two-tools": (frames(list(two_tools.events())), ["about two tool calls in one message"]),
        "max-tokens": (frames(cut_events), ["about an answer cut by the request's max_tokens",
                                            'request {"max_tokens": 3}']),
        "ping-anywhere": (frames(early_ping), ["about ping events before message_start and between deltas"]),
        "tool-no-arguments": (frames(list(no_input.events())),
                              ["about a tool call without input_json_delta (its input is the start's {})"]),
    }


# --- one broken stream per rule ------------------------------------------------------------------------------

Breaker = Callable[[list[Frame]], list[Frame]]


def _insert(at: Callable[[list[Frame]], int], *new: Frame) -> Breaker:
    def apply(items: list[Frame]) -> list[Frame]:
        n = at(items)
        return items[:n] + list(new) + items[n:]
    return apply


def _drop(etype: str, index: int | None = None, nth: int = 0) -> Breaker:
    def apply(items: list[Frame]) -> list[Frame]:
        n = where(items, etype, index, nth)
        return items[:n] + items[n + 1:]
    return apply


def _edit(etype: str, change: Callable[[Event], None], index: int | None = None, nth: int = 0) -> Breaker:
    def apply(items: list[Frame]) -> list[Frame]:
        n = where(items, etype, index, nth)
        name, data = items[n]
        data = copy.deepcopy(data)
        change(data)
        return items[:n] + [(name, data)] + items[n + 1:]
    return apply


def _move_block_start_first(items: list[Frame]) -> list[Frame]:
    n = where(items, "content_block_start", 0)
    return [items[n]] + items[:n] + items[n + 1:]


def _move_after(items: list[Frame], n: int, anchor: int) -> list[Frame]:
    """Move the event at ``n`` to just after the one at ``anchor`` (anchor > n)."""
    moved = items[n]
    rest = items[:n] + items[n + 1:]
    return rest[:anchor] + [moved] + rest[anchor:]


def _set(path: str, value: Any) -> Callable[[Event], None]:
    def change(event: Event) -> None:
        node = event
        keys = path.split("/")
        for key in keys[:-1]:
            node = node[key]
        if value is _DELETE:
            del node[keys[-1]]
        else:
            node[keys[-1]] = value
    return change


_DELETE = object()
_CUT_JSON = object()  # encode() writes the event's JSON cut short


def _renumber(old: int, new: int) -> Breaker:
    def apply(items: list[Frame]) -> list[Frame]:
        out = []
        for name, data in items:
            if data.get("index") == old:
                data = {**data, "index": new}
            out.append((name, data))
        return out
    return apply


def _without_event_line(etype: str, index: int | None = None, nth: int = 0) -> Breaker:
    def apply(items: list[Frame]) -> list[Frame]:
        n = where(items, etype, index, nth)
        return items[:n] + [(None, items[n][1])] + items[n + 1:]
    return apply


def _rename(etype: str, name: str, index: int | None = None, nth: int = 0) -> Breaker:
    def apply(items: list[Frame]) -> list[Frame]:
        n = where(items, etype, index, nth)
        return items[:n] + [(name, items[n][1])] + items[n + 1:]
    return apply


def _error_after_first_delta(items: list[Frame]) -> list[Frame]:
    n = where(items, "content_block_delta", 0) + 1
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    return items[:n] + [("error", error)]


def _tool_id(tid: str) -> Callable[[Event], None]:
    return _set("content_block/id", tid)


def _second_tool_same_id(items: list[Frame]) -> list[Frame]:
    first = where(items, "content_block_start", 1)
    second = where(items, "content_block_start", 2)
    tid = items[first][1]["content_block"]["id"]
    name, data = items[second]
    data = copy.deepcopy(data)
    data["content_block"]["id"] = tid
    return items[:second] + [(name, data)] + items[second + 1:]


def _block_after_message_delta(items: list[Frame]) -> list[Frame]:
    n = where(items, "message_delta") + 1
    late = [("content_block_start", {"type": "content_block_start", "index": 1,
                                     "content_block": {"type": "text", "text": ""}}),
            delta(1, "text_delta", "text", " (late)"),
            ("content_block_stop", {"type": "content_block_stop", "index": 1})]
    return items[:n] + late + items[n:]


def _then(*breakers: Breaker) -> Breaker:
    def apply(items: list[Frame]) -> list[Frame]:
        for breaker in breakers:
            items = breaker(items)
        return items
    return apply


TWO_TOOLS = "two-tools"
# name -> (base stream, breaker, header lines after `about`, expected codes)
RULE_CAPTURES: dict[str, tuple[str, Breaker, str, list[str], tuple[str, ...]]] = {
    "ANT001-message-start-not-first": (
        "text", _move_block_start_first, "content_block_start comes before message_start", [], ("ANT001",)),
    "ANT002-message-start-missing": (
        "text", _drop("message_start"), "the stream has no message_start", [], ("ANT002",)),
    "ANT003-message-start-repeated": (
        "text", _insert(lambda items: where(items, "content_block_delta", 0, 1),
                        ("message_start", {"type": "message_start", "message": {
                            "id": make_id("msg_", "again"), "type": "message", "role": "assistant",
                            "model": "claude-sonnet-4-5", "content": [], "stop_reason": None, "stop_sequence": None,
                            "usage": {"input_tokens": 25, "output_tokens": 1}}})),
        "a second message_start in the middle of the text", [], ("ANT003",)),
    "ANT004-message-id-prefix": (
        "text", _edit("message_start", _set("message/id", "chatcmpl-5Yq3mS0pXkR2vLh8")),
        "the message id is a Chat Completions id (chatcmpl-…), as llama-server sends it", [], ("ANT004",)),
    "ANT005-message-start-content-not-empty": (
        "text", _edit("message_start", _set("message/content", [{"type": "text", "text": "Hello"}])),
        "message_start carries a text block already", [], ("ANT005",)),
    "ANT006-message-usage-malformed": (
        "text", _edit("message_start", _set("message/usage", _DELETE)),
        "message_start's message has no usage", [], ("ANT006",)),
    "ANT006-message-delta-usage-missing": (
        "text", _edit("message_delta", _set("usage", _DELETE)),
        "message_delta has no usage", [], ("ANT006",)),
    "ANT007-block-index-out-of-order": (
        "thinking-tool-use", _renumber(1, 3), "the text block is started as index 3 after block 0", [],
        ("ANT007",)),
    "ANT008-block-index-repeated": (
        "text", _insert(lambda items: where(items, "content_block_delta", 0, 1),
                        ("content_block_start", {"type": "content_block_start", "index": 0,
                                                 "content_block": {"type": "text", "text": ""}})),
        "content block 0 is started a second time between its deltas", [], ("ANT008",)),
    "ANT009-delta-type-mismatch": (
        "thinking-tool-use", _edit("content_block_delta", _set("delta", {"type": "text_delta", "text": " Paris"}),
                                   index=0, nth=1),
        "a text_delta goes to the thinking block", [], ("ANT009",)),
    "ANT010-block-event-before-start": (
        "text", _insert(lambda items: where(items, "content_block_stop", 0) + 1,
                        delta(1, "text_delta", "text", " More."),
                        ("content_block_stop", {"type": "content_block_stop", "index": 1})),
        "a delta and a stop for block 1, which was never started", [], ("ANT010",)),
    "ANT011-block-event-after-stop": (
        "text", _insert(lambda items: where(items, "content_block_stop", 0) + 1,
                        delta(0, "text_delta", "text", " Anything else?")),
        "a text_delta for block 0 after its content_block_stop", [], ("ANT011",)),
    "ANT012-block-not-stopped": (
        "thinking-tool-use", _drop("content_block_stop", 2),
        "the tool_use block has no content_block_stop", [], ("ANT012",)),
    "ANT013-thinking-signature-missing": (
        "thinking-tool-use", _edit("content_block_delta", _set("delta/signature", ""), index=0, nth=2),
        "the thinking block's signature_delta is empty, as llama-server sends it", [], ("ANT013",)),
    "ANT014-redacted-thinking-data-missing": (
        "redacted-thinking", _edit("content_block_start", _set("content_block/data", ""), index=0),
        "a redacted_thinking block with empty data", [], ("ANT014",)),
    "ANT015-tool-id-prefix": (
        "thinking-tool-use", _edit("content_block_start", _tool_id("call_8bbc04a6bd3e4c2b"), index=2),
        "the tool_use id is a Chat Completions call id", [], ("ANT015",)),
    "ANT016-tool-id-repeated": (
        TWO_TOOLS, _second_tool_same_id, "both tool_use blocks have the same id", [], ("ANT016",)),
    "ANT017-tool-input-not-json": (
        "thinking-tool-use", _edit("content_block_delta", _set("delta/partial_json", 'celsius}'), index=2, nth=2),
        "the joined partial_json is not JSON (an unquoted value)", [], ("ANT017",)),
    "ANT017-tool-input-trailing": (
        "thinking-tool-use", _edit("content_block_delta", _set("delta/partial_json", '"celsius"}}'), index=2, nth=2),
        "the joined partial_json has a brace too many after the object", [], ("ANT017",)),
    "ANT017-tool-input-cut": (
        "thinking-tool-use", _drop("content_block_delta", 2, 2),
        "the joined partial_json stops before its end (cut)", [], ("ANT017",)),
    "ANT018-message-delta-missing": (
        "text", _drop("message_delta"), "message_stop comes without message_delta", [], ("ANT018",)),
    "ANT019-stop-reason-changed": (
        "text", _insert(lambda items: where(items, "message_stop"),
                        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "max_tokens",
                                                                             "stop_sequence": None},
                                           "usage": {"output_tokens": 9}})),
        "a second message_delta changes the stop_reason to max_tokens", [], ("ANT019",)),
    "ANT027-stop-reason-repeated": (
        "text", _insert(lambda items: where(items, "message_stop"),
                        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn",
                                                                             "stop_sequence": None},
                                           "usage": {"output_tokens": 9}})),
        "a second message_delta sends the same stop_reason again", [], ("ANT027",)),
    "ANT020-stop-reason-missing": (
        "text", _edit("message_delta", _set("delta/stop_reason", None)), "message_delta's stop_reason is null", [],
        ("ANT020",)),
    "ANT021-stop-reason-inconsistent": (
        "thinking-tool-use", _edit("message_delta", _set("delta/stop_reason", "end_turn")),
        "a tool_use block was sent, the stop_reason is end_turn", [], ("ANT021",)),
    "ANT021-max-tokens-not-reported": (
        "text", _edit("message_delta", _set("usage/output_tokens", 3)),
        "the output reached the request's max_tokens, the stop_reason is end_turn",
        ['request {"max_tokens": 3}'], ("ANT021",)),
    "ANT022-message-stop-missing": (
        "text", _drop("message_stop"), "the stream ends after message_delta, without message_stop", [],
        ("ANT022",)),
    "ANT023-message-error-event": (
        "text", _error_after_first_delta, "an overloaded_error event after the first delta ends the stream", [],
        ("ANT023",)),
    "ANT024-block-after-message-delta": (
        "text", _block_after_message_delta, "a second text block starts after message_delta", [], ("ANT024",)),
    "ANT026-block-started-while-open": (
        "thinking-tool-use", lambda items: _move_after(items, where(items, "content_block_stop", 0),
                                                       where(items, "content_block_stop", 1)),
        "the thinking block is stopped only after the text block (llama-server's order)", [], ("ANT026",)),
    "ANT025-unknown-message-event": (
        "text", _insert(lambda items: where(items, "message_delta"),
                        ("message_metadata", {"type": "message_metadata", "metadata": {"region": "eu"}})),
        "a server's own event type between the blocks and message_delta", [], ("ANT025",)),
    "SSE006-delta-not-json": (
        "text", _edit("content_block_delta", _set("delta/text", _CUT_JSON), index=0, nth=1),
        "one text delta's data is cut in the middle of its JSON", [], ("SSE006",)),
    "SSE008-event-name-ping": (
        "text", _rename("content_block_delta", "ping", index=0, nth=1),
        "a text delta sent under `event: ping`", [], ("SSE008",)),
    "SSE009-delta-without-event-line": (
        "text", _without_event_line("content_block_delta", index=0, nth=1),
        "one text delta has no `event:` line", [], ("SSE009",)),
    "SSE009-stop-without-event-line": (
        "text", _without_event_line("message_stop"),
        "message_stop has no `event:` line", [], ("SSE009",)),
    "SSE009-no-event-lines": (
        "text", lambda items: [(None, data) for _, data in items],
        "no event has an `event:` line (data only, as a chat stream is framed)", [], ("SSE009",)),
    "SSE010-event-after-message-stop": (
        "text", lambda items: items + [delta(0, "text_delta", "text", " (after the end)")],
        "a text delta after message_stop", [], ("SSE010",)),
}


def bases() -> dict[str, list[Frame]]:
    return {name: items for name, (items, _) in conforming().items()}


def build() -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for name, (items, header) in conforming().items():
        files[f"conforming/{name}.sse"] = encode(items, header)
    base = bases()
    for name, (stream, breaker, about, extra, expected) in RULE_CAPTURES.items():
        items = breaker(copy.deepcopy(base[stream]))
        header = [f"about {about}", *extra, *(f"expect {code}" for code in expected)]
        files[f"rules/{name}.sse"] = encode(items, header)
    return files


def main() -> int:
    files = build()
    write_files(files, ROOT)
    print(f"wrote {len(files)} captures under {ROOT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
