"""Run templates (checker/run_template.py) change no finding: streams whose deltas carry every kind of text
(quotes, escapes, control characters, digits, colons, brackets, non-ASCII) and chunks that break the run
give the same result with and without them, and the schema reading behind them refuses what it should."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checker.engine import LintResult, StreamLinter
from checker.run_template import RunTemplates, build, free_in_schema
from checker.sse import SSEDecoder, SSEEvent
from checker.synth import ChatStreamBuilder, encode_chat

_TEXTS = st.one_of(
    st.sampled_from([" w00", "", "\"", "\\", "\\n", "a:b", "{[", "1234567890123456", "é", "\u2028", "\x01", "💥",
                     "\\u00e9", "}", "\"x\":1"]),
    st.text(max_size=12),
)


def _lint(data: bytes, *, chunk: int = 97, **options: Any) -> LintResult:
    linter = StreamLinter(**options)
    for start in range(0, len(data), chunk):
        linter.feed(data[start:start + chunk])
    return linter.close()


def _same(a: LintResult, b: LintResult) -> None:
    assert a.findings == b.findings
    assert (a.events, a.bytes, a.terminals, a.response_id, a.texts) == (b.events, b.bytes, b.terminals,
                                                                        b.response_id, b.texts)


def _edit(chunks: list[dict[str, Any]], edits: list[tuple[int, str]]) -> list[dict[str, Any]]:
    """Chunks with some broken: an id changed, a role repeated, a finish_reason early, a key in another order,
    an obfuscation field, a vendor reasoning field."""
    chunks = [orjson.loads(orjson.dumps(c)) for c in chunks]
    for at, how in edits:
        chunk = chunks[at % len(chunks)]
        choice = (chunk.get("choices") or [{}])[0]
        if how == "id":
            chunk["id"] = "chatcmpl-other"
        elif how == "role" and "delta" in choice:
            choice["delta"]["role"] = "assistant"
        elif how == "finish" and "delta" in choice:
            choice["finish_reason"] = "stop"
        elif how == "order":
            chunks[at % len(chunks)] = dict(reversed(list(chunk.items())))
        elif how == "obfuscation":
            chunk["obfuscation"] = f"x{at}"
        elif how == "reasoning" and "delta" in choice:
            choice["delta"] = {"reasoning_content": choice["delta"].get("content", "")}
    return chunks


@settings(max_examples=60, deadline=None)
@given(texts=st.lists(_TEXTS, min_size=1, max_size=25),
       edits=st.lists(st.tuples(st.integers(0, 40), st.sampled_from(["id", "role", "finish", "order", "obfuscation",
                                                                   "reasoning"])), max_size=3),
       chunk=st.sampled_from([7, 97, 4096]))
def test_chat_runs_change_nothing(texts: list[str], edits: list[tuple[int, str]], chunk: int) -> None:
    chunks = _edit(list(ChatStreamBuilder().text(texts).chunks()), edits)
    data = encode_chat(chunks)
    with_runs = _lint(data, chunk=chunk, keep_texts=True)
    patch = pytest.MonkeyPatch()
    try:
        patch.setattr(RunTemplates, "start", lambda *args: None)
        without = _lint(data, chunk=chunk, keep_texts=True)
    finally:
        patch.undo()
    _same(with_runs, without)


def test_runs_are_taken_and_agree_on_a_long_chat_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    """Guards the test above: the templates are used at all (a run of plain deltas, with obfuscation), by the
    engine and by the decoder (whole events, SSEDecoder.run)."""
    decoded: list[int] = []
    original = SSEDecoder.feed

    def spy(self: SSEDecoder, chunk: bytes) -> list[Any]:
        before = self.events_dispatched
        items = original(self, chunk)
        decoded.append(self.events_dispatched - before - sum(1 for item in items if isinstance(item, SSEEvent)))
        return items

    builder = ChatStreamBuilder().text([f" w{i}" for i in range(200)])
    chunks = [{**c, "obfuscation": "abc"} for c in builder.chunks()]
    data = encode_chat(chunks)
    monkeypatch.setattr(SSEDecoder, "feed", spy)
    fast = _lint(data, keep_texts=True, chunk=1024)
    assert sum(decoded) >= 150  # taken whole by the decoder
    monkeypatch.setattr(RunTemplates, "start", lambda *args: None)
    _same(fast, _lint(data, keep_texts=True))


@pytest.mark.parametrize(("schema_set", "etype", "path", "kind", "free"), [
    ("chat", "chat.completion.chunk", ("choices", 0, "delta", "content"), "text", True),
    ("chat", "chat.completion.chunk", ("choices", 0, "delta", "reasoning_content"), "text", True),
    ("chat", "chat.completion.chunk", ("obfuscation",), "text", True),
    ("chat", "chat.completion.chunk", ("choices", 0, "delta", "role"), "text", False),  # an enum
    ("chat", "chat.completion.chunk", ("object",), "text", False),  # an enum
    ("chat", "chat.completion.chunk", ("choices", 0, "finish_reason"), "text", False),
    ("openai", "response.output_text.delta", ("delta",), "text", True),
    ("openai", "response.output_text.delta", ("sequence_number",), "number", True),
    ("openai", "response.output_text.delta", ("type",), "text", False),
    ("openai", "response.output_text.delta", ("delta",), "number", False),
])
def test_free_in_schema(schema_set: str, etype: str, path: tuple[Any, ...], kind: str, free: bool) -> None:
    assert free_in_schema(schema_set, etype, path, kind) is free


def test_a_hole_is_placed_only_where_it_is_sure() -> None:
    taken: list[tuple[str, int, int | None]] = []
    take = lambda text, count, number: taken.append((text, count, number))  # noqa: E731
    obj = {"a": {"t": "x"}, "b": {"t": "x"}}
    data = orjson.dumps(obj)
    assert build(data, obj, None, ("a", "t"), None, (), None, take) is None  # written twice: which one is the hole?
    obj = {"t": "é\n"}
    assert build(orjson.dumps(obj), obj, None, ("t",), None, (), None, take) is None  # an escape in the value
    obj = {"n": 5, "m": 55, "item_id": "i1", "t": "x"}
    made = build(orjson.dumps(obj), obj, "ev", ("t",), ("n",), (), 5, take)
    assert made is not None
    match, wire, flush = made
    assert match(b'{"n":7,"m":55,"item_id":"i1","t":"yz"}')
    assert not match(b'{"n":8,"m":55,"item_id":"i2","t":"yz"}')  # another id (a pinned hole)
    assert not match(b'{"n":07,"m":55,"item_id":"i1","t":"yz"}')  # not a JSON number
    assert not match(b'{"n":8,"m":55,"item_id":"i1","t":"y\\"z"}')  # an escape: the usual path
    assert not match(b'{"n":1234567890123456,"m":55,"item_id":"i1","t":"y"}')  # 16 digits: the usual path
    assert not match(b'{"n":7,"m":55,"item_id":"i1","t":"y"}')  # not above the last number
    assert match(b'{"n":9,"m":55,"item_id":"i1","t":"\xc3\xa9"}')
    block = b'event: ev\ndata: {"n":10,"m":55,"item_id":"i1","t":"a"}\n\nevent: ev\ndata: {"n":11,"m"'
    second = block.index(b"event", 1)
    assert wire is not None and wire(block, 0, len(block), 5) == (second, 1)  # the second is cut
    assert wire(block, second, len(block), 5) == (second, 0)  # cut: the decoder's usual path
    flush()
    assert taken == [("yzéa", 3, 10)]


def test_responses_runs_agree_with_sequence_numbers_out_of_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """A delta whose sequence number does not rise leaves the run for the usual path (and its finding)."""
    from checker.synth import StreamBuilder, encode_event

    events = list(StreamBuilder().message([f" w{i}" for i in range(40)]).events())
    for event in events:
        if event.get("sequence_number") == 20:
            event["sequence_number"] = 12
    data = b"".join(encode_event(e) for e in events)
    fast = _lint(data, keep_texts=True)
    assert fast.findings
    monkeypatch.setattr(RunTemplates, "start", lambda *args: None)
    _same(fast, _lint(data, keep_texts=True))


@settings(max_examples=40, deadline=None)
@given(texts=st.lists(_TEXTS, min_size=1, max_size=25), chunk=st.sampled_from([7, 97, 4096]),
       drop=st.sets(st.integers(0, 30), max_size=2), obfuscation=st.booleans())
def test_responses_runs_change_nothing(texts: list[str], chunk: int, drop: set[int], obfuscation: bool) -> None:
    """Deltas of every kind of text, some sequence numbers missing (a gap is legal, a missing one is not),
    OpenAI's obfuscation field or not: the same result with and without templates."""
    from checker.synth import StreamBuilder, encode_event

    events = list(StreamBuilder().message(texts).events())
    for n, event in enumerate(events):
        if event.get("type") == "response.output_text.delta":
            if n in drop:
                del event["sequence_number"]
            if obfuscation:
                event["obfuscation"] = "x" * (n % 5)
    data = b"".join(encode_event(e) for e in events)
    with_runs = _lint(data, chunk=chunk, keep_texts=True)
    patch = pytest.MonkeyPatch()
    try:
        patch.setattr(RunTemplates, "start", lambda *args: None)
        without = _lint(data, chunk=chunk, keep_texts=True)
    finally:
        patch.undo()
    _same(with_runs, without)


def test_responses_deltas_start_a_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """Guards the test above: a Responses message's deltas make a template (text and sequence number holes)."""
    from checker.synth import StreamBuilder, encode_event

    made: list[Any] = []
    original = RunTemplates.start
    monkeypatch.setattr(RunTemplates, "start", lambda self, *args: made.append(original(self, *args)) or made[-1])
    data = b"".join(encode_event(e) for e in StreamBuilder().message([f" w{i}" for i in range(50)]).events())
    assert not _lint(data).findings
    assert any(template is not None for template in made)


@pytest.mark.parametrize("max_events", [3, 150, 333])
def test_the_event_limit_stops_a_run_where_it_stops_the_stream(max_events: int) -> None:
    from checker.engine import Limits

    data = encode_chat(list(ChatStreamBuilder().text([f" w{i}" for i in range(400)]).chunks()))
    with_runs = _lint(data, chunk=4096, keep_texts=True, limits=Limits(max_events=max_events))
    patch = pytest.MonkeyPatch()
    try:
        patch.setattr(RunTemplates, "start", lambda *args: None)
        without = _lint(data, chunk=4096, keep_texts=True, limits=Limits(max_events=max_events))
    finally:
        patch.undo()
    assert [f.code for f in with_runs.findings].count("SSE027") == 1
    _same(with_runs, without)


def test_a_limit_met_in_the_first_event_of_a_chunk_counts_the_rest(monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine decodes a chunk's first event apart during a run: a stop there leaves the same result."""
    from checker.engine import Limits

    data = encode_chat(list(ChatStreamBuilder().text([f" w{i}" for i in range(60)]).chunks()))
    cut = data.index(b"\n\n", 3000) - 5  # inside an event: the next chunk's first event ends the limit
    events = data[:cut].count(b"\n\n") + 1
    runs: list[LintResult] = []
    for disabled in (False, True):
        with monkeypatch.context() as patch:
            if disabled:
                patch.setattr(RunTemplates, "start", lambda *args: None)
            linter = StreamLinter(limits=Limits(max_events=events))
            linter.feed(data[:cut])
            linter.feed(data[cut:])
            runs.append(linter.close())
    _same(*runs)
    assert runs[0].bytes == len(data)


def _edit_messages(events: list[dict[str, Any]], edits: list[tuple[int, str]]) -> list[dict[str, Any]]:
    """Anthropic events with some broken: a delta sent to another block, a delta of the wrong type for its block,
    a ping in a run, a delta after its block stopped, members in another order, a vendor member, a text that is
    not a string, an unknown delta type."""
    events = [orjson.loads(orjson.dumps(e)) for e in events]
    for at, how in edits:
        n = at % len(events)
        event = events[n]
        delta = event.get("delta") if event.get("type") == "content_block_delta" else None
        if how == "index" and delta is not None:
            event["index"] += 1
        elif how == "kind" and delta is not None and "text" in delta:
            event["delta"] = {"type": "thinking_delta", "thinking": delta["text"]}
        elif how == "ping":
            events.insert(n, {"type": "ping"})
        elif how == "after_stop" and delta is not None:
            events.append(dict(event))
            events[-1], events[-2] = events[-2], events[-1]
        elif how == "order":
            events[n] = dict(reversed(list(event.items())))
        elif how == "vendor" and delta is not None:
            delta["x_vendor"] = at
        elif how == "number" and delta is not None and "text" in delta:
            delta["text"] = at
        elif how == "unknown" and delta is not None:
            delta["type"] = "mystery_delta"
    return events


@settings(max_examples=60, deadline=None)
@given(text=st.lists(_TEXTS, min_size=1, max_size=20), thinking=st.lists(_TEXTS, max_size=10),
       tool=st.lists(_TEXTS, max_size=10),
       edits=st.lists(st.tuples(st.integers(0, 60), st.sampled_from(["index", "kind", "ping", "after_stop", "order",
                                                                   "vendor", "number", "unknown"])), max_size=3),
       chunk=st.sampled_from([7, 97, 4096]), event_line=st.booleans())
def test_messages_runs_change_nothing(text: list[str], thinking: list[str], tool: list[str],
                                      edits: list[tuple[int, str]], chunk: int, event_line: bool) -> None:
    """Text, thinking and tool-input deltas of every kind of text, some events broken, with and without ``event:``
    lines: the same result with and without templates."""
    from checker.dialects.messages import DIALECT as MESSAGES
    from checker.synth.messages import MessagesStreamBuilder, encode

    builder = MessagesStreamBuilder()
    if thinking:
        builder.thinking(thinking)
    builder.text(text)
    if tool:
        builder.tool_use("get_weather", tool)
    data = encode(_edit_messages(list(builder.events()), edits), event_line=event_line)
    for dialect in (None, MESSAGES):
        options: dict[str, Any] = {"keep_texts": True} if dialect is None else {"keep_texts": True, "dialect": dialect}
        with_runs = _lint(data, chunk=chunk, **options)
        patch = pytest.MonkeyPatch()
        try:
            patch.setattr(RunTemplates, "start", lambda *args: None)
            without = _lint(data, chunk=chunk, **options)
        finally:
            patch.undo()
        _same(with_runs, without)


@pytest.mark.parametrize("kind", ["text", "thinking", "tool_use"])
def test_messages_deltas_start_a_run(monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    """Guards the test above: each kind of Anthropic delta makes a template, and its events are taken whole by
    the decoder."""
    from checker.synth.messages import MessagesStreamBuilder, encode

    made: list[Any] = []
    original = RunTemplates.start
    monkeypatch.setattr(RunTemplates, "start", lambda self, *args: made.append(original(self, *args)) or made[-1])
    pieces = [f" w{i}" for i in range(200)]
    builder = MessagesStreamBuilder()
    if kind == "tool_use":
        builder.tool_use("f", ['{"a": "', *pieces, '"}'])
    else:
        getattr(builder, kind)(pieces)
    data = encode(builder.events())
    fast = _lint(data, chunk=1024, keep_texts=True)
    assert not fast.findings
    assert any(template is not None for template in made)
    monkeypatch.setattr(RunTemplates, "start", lambda *args: None)
    _same(fast, _lint(data, chunk=1024, keep_texts=True))


@pytest.mark.parametrize(("event", "path", "free"), [
    ({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "a"}}, ("delta", "text"),
     True),
    ({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "a"}},
     ("delta", "thinking"), True),
    ({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{"}},
     ("delta", "partial_json"), True),
    ({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "s"}},
     ("delta", "signature"), True),
    # A citation member of a text delta: the citations_delta branch (whose citation is an object) is ruled out
    # by the type, and the others do not declare it; of a citations delta, it is not a free string.
    ({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "citation": "a"}},
     ("delta", "citation"), True),
    ({"type": "content_block_delta", "index": 0, "delta": {"type": "citations_delta", "citation": "a"}},
     ("delta", "citation"), False),
    # The discriminator itself is never a free hole (a const), in any branch.
    ({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "a"}}, ("delta", "type"),
     False),
])
def test_free_in_schema_reads_anyof_branches(event: dict[str, Any], path: tuple[Any, ...], free: bool) -> None:
    assert free_in_schema("anthropic", "content_block_delta", path, "text", event) is free
    assert free_in_schema("anthropic", "content_block_delta", path, "text", event) is free  # the cached answer


def test_no_template_for_an_event_that_no_event_of_its_kind_follows(monkeypatch: pytest.MonkeyPatch) -> None:
    """A template is made from the second event of a run: messages of one delta make none (their deltas are
    apart), a message of two deltas makes one from its second, and the result is the same as without
    templates."""
    from checker.schemas import SchemaSet
    from checker.synth import StreamBuilder, encode_event

    compiled = SchemaSet("openai", walk=False)  # validators at first use: the hot path (and runs) from the start
    made: list[Any] = []
    original = RunTemplates.start
    monkeypatch.setattr(RunTemplates, "start", lambda self, *args: made.append((args[0], original(self, *args)))
                        or made[-1][1])
    builder = StreamBuilder()
    for _ in range(3):
        builder.message([" w"])
    data = b"".join(encode_event(e) for e in builder.reasoning([" r"]).message([" a", " b"]).events())
    fast = _lint(data, chunk=len(data), schema_set=compiled)
    assert not fast.findings
    built = [index for index, template in made if template is not None]
    assert len(made) >= 3 and len(built) == 1  # the lone deltas asked for templates and got none
    assert built[0] - 1 == made[-2][0]  # made from the second delta, the first one's request refused
    monkeypatch.setattr(RunTemplates, "start", lambda *args: None)
    _same(fast, _lint(data, chunk=len(data), schema_set=compiled))
