"""The Anthropic Messages state machine: decoded event objects in, findings out (docs/spec.md §7).

Sans-I/O, like the Responses machine: the engine hands it one JSON object at a time with its position and
gets findings back; it never reads, waits or raises for a protocol problem. The state it keeps is what the
rules need and no more:

* the message: whether ``message_start`` came (and where), its id, whether ``message_delta`` and
  ``message_stop`` came, the stop reason and the output token count;
* the content blocks by ``index``: type, where they started, open or stopped, and what streamed into them
  (text and thinking as ``TextAccumulator``s, a tool's ``partial_json`` pieces until its stop, the signature).

Field shapes are the schemas' job (``schemas/anthropic``): a block event without an integer ``index`` is a
schema finding, and the machine leaves it alone. Usage is checked here, not by the schema (ANT006), because
the clients' failure depends on what message_start and message_delta carried together.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from checker.dialects.base import ItemSummary, StreamSummary
from checker.dialects.messages import fast_path
from checker.dialects.messages import vocabulary as v
from checker.findings import Finding, Position
from checker.rules import framing
from checker.rules import messages as r
from checker.text import TextAccumulator

_TOOL_FIELDS = ("id", "name")


@dataclass(slots=True)
class Block:
    index: int
    type: str | None
    started_at: int | None  # the event index of its content_block_start
    id: str | None = None
    name: str | None = None
    text: TextAccumulator = field(default_factory=TextAccumulator)  # text, thinking
    json: list[str] = field(default_factory=list)  # a tool's partial_json pieces
    initial_input: Any = None  # a tool's input as content_block_start gave it
    signature: str = ""
    data: str | None = None  # redacted_thinking's
    stopped: bool = False
    reported_open: bool = False  # ANT012 said so already


class MessagesMachine:
    """One Anthropic Messages stream's state."""

    def __init__(self, *, request: dict[str, Any] | None = None, known_types: frozenset[str] | None = None,
                 keep_texts: bool = False) -> None:
        self.request = request or {}
        self.known_types = known_types
        self.keep_texts = keep_texts
        self.started_at: int | None = None
        self.message_id: str | None = None
        self.blocks: dict[int, Block] = {}
        self.appended = 0  # content_block_start events seen: the blocks the clients' snapshot holds
        self.next_index = 0
        self.delta_at: int | None = None
        self.stop_reason: str | None = None
        self.output_tokens: int | None = None
        self.stopped = False
        self.error_seen = False
        self.terminals: list[str] = []
        self.events = 0
        # ANT001 at the first message event before message_start, reported once message_start comes (without
        # one, ANT002 says what happened instead).
        self._early: Finding | None = None
        self._tool_ids: dict[str, int] = {}
        self._cut_inputs: list[Finding] = []  # ANT017 for cut tool inputs, until the stop_reason is known
        self._first_reason: Any = None  # the first message_delta's stop_reason
        # The block the last fast-path delta went to: (delta type, index, block).
        self._run: tuple[str, int, Block] | None = None

    # -- the protocol ----------------------------------------------------------------------------------------

    @property
    def terminated(self) -> bool:
        return self.stopped

    def handle(self, event: dict[str, Any], pos: Position) -> list[Finding]:
        self.events += 1
        self._run = None
        etype = event.get("type")
        out: list[Finding] = []
        if etype == v.PING:
            return out
        if self.stopped:
            out.append(framing.AFTER_TERMINAL.finding(pos, what=f"event {etype!r}", terminal=v.MESSAGE_STOP))
            return out
        if etype == v.ERROR:
            self.error_seen = True
            out.append(r.ERROR_EVENT.finding(pos, detail=_error_detail(event)))
            return out
        if etype not in v.MESSAGE_EVENTS:
            if self.known_types is None or etype not in self.known_types:
                out.append(r.UNKNOWN_EVENT.finding(pos, type=str(etype)))
            return out
        if etype == v.MESSAGE_START:
            self._message_start(event, pos, out)
            return out
        if self.started_at is None and self._early is None:
            self._early = r.START_NOT_FIRST.finding(pos, type=etype)
        if etype == v.BLOCK_DELTA:
            self._block_delta(event, pos, out)
        elif etype == v.BLOCK_START:
            self._block_start(event, pos, out)
        elif etype == v.BLOCK_STOP:
            self._block_stop(event, pos, out)
        elif etype == v.MESSAGE_DELTA:
            self._message_delta(event, pos, out)
        else:
            self._message_stop(pos, out)
        return out

    # The run of deltas a fast-path delta starts (checker/dialects/messages/fast_path.py), bound as a method.
    run_spec = fast_path.run_spec

    def try_fast(self, etype: str, event: dict[str, Any]) -> bool:
        """A schema-valid delta of the block the previous delta went to, or a ping: nothing to report.

        Only the state changes of ``handle`` for that event, and only when ``handle`` would report nothing."""
        if etype == v.PING:
            self.events += 1
            return True
        run = self._run
        if etype != v.BLOCK_DELTA or self.stopped:
            return False
        delta = event["delta"]  # schema-valid: an object with a known delta type
        kind = delta.get("type")
        if run is None or run[0] != kind or event["index"] != run[1]:
            return False
        block = run[2]
        if kind == "input_json_delta":
            block.json.append(delta["partial_json"])
        elif kind == "text_delta":
            block.text.append(delta["text"])
        elif kind == "thinking_delta":
            block.text.append(delta["thinking"])
        else:
            return False
        self.events += 1
        return True

    def finish(self, end: Position) -> list[Finding]:
        out: list[Finding] = []
        if self.error_seen:
            return out  # the error event said why the message is not whole
        if self.started_at is None:
            if self._early is not None:  # message events came, never their message_start
                out.append(r.START_MISSING.finding(end))
            return out
        if self.stopped:
            return out
        before = "the end of the stream"
        self._close_open_blocks(end, before, out)
        out.extend(self._cut_inputs)  # no message_delta said the message was cut
        self._cut_inputs = []
        if self.delta_at is None:
            out.append(r.DELTA_MISSING.finding(end, before=before))
        out.append(r.STOP_MISSING.finding(end))
        return out

    def summary(self) -> StreamSummary:
        items = tuple(ItemSummary(id=b.id, type=b.type, output_index=b.index, done=b.stopped,
                                  added_at=b.started_at) for b in self._ordered())
        return StreamSummary(terminal=self.terminals[0] if self.terminals else None, terminals=tuple(self.terminals),
                             response_id=self.message_id, truncated=self.stop_reason == "max_tokens", items=items,
                             texts=self.block_texts() if self.keep_texts else None, stop_reason=self.stop_reason)

    # -- what the stream carried ----------------------------------------------------------------------------

    def block_texts(self) -> list[dict[str, Any]]:
        """Each block as the stream built it, in index order: what a client's final message should hold."""
        texts = []
        for b in self._ordered():
            entry: dict[str, Any] = {"index": b.index, "type": b.type, "done": b.stopped, "id": b.id,
                                     "name": b.name}
            if b.type in v.TOOL_BLOCKS:
                entry["input"] = "".join(b.json) if b.json else None
                entry["initial_input"] = b.initial_input
            elif b.type == v.REDACTED_THINKING:
                entry["data"] = b.data
            else:
                entry["text"] = b.text.text()
                if b.type == v.THINKING:
                    entry["signature"] = b.signature
            texts.append(entry)
        return texts

    def _ordered(self) -> list[Block]:
        return [self.blocks[i] for i in sorted(self.blocks)]

    # -- the message ------------------------------------------------------------------------------------------

    def _message_start(self, event: dict[str, Any], pos: Position, out: list[Finding]) -> None:
        if self.started_at is not None:
            out.append(r.START_REPEATED.finding(pos, first=self.started_at))
            return
        self.started_at = pos.event_index if pos.event_index is not None else 0
        if self._early is not None:
            out.append(self._early)
        message = event.get("message")
        if not isinstance(message, dict):
            return  # the schema's finding
        mid = message.get("id")
        self.message_id = mid if isinstance(mid, str) else None
        if not (isinstance(mid, str) and mid.startswith(v.MESSAGE_ID_PREFIX)):
            out.append(r.MESSAGE_ID_PREFIX.finding(pos, id=str(mid)))
        content = message.get("content")
        if isinstance(content, list) and content:
            out.append(r.START_CONTENT.finding(pos, count=len(content)))
        usage = message.get("usage")
        problem = _usage_problem(usage, ("input_tokens", "output_tokens"))
        if problem:
            out.append(r.USAGE_MALFORMED.finding(pos, pointer="/message/usage", where="message_start usage",
                                                 detail=problem))

    def _message_delta(self, event: dict[str, Any], pos: Position, out: list[Finding]) -> None:
        first = self.delta_at
        delta = event.get("delta")
        reason = delta.get("stop_reason") if isinstance(delta, dict) else None
        if first is None:
            self.delta_at = pos.event_index if pos.event_index is not None else 0
            self._first_reason = reason
            self._close_open_blocks(pos, "message_delta", out)
        usage = event.get("usage")
        problem = _usage_problem(usage, ("output_tokens",))
        if problem or not isinstance(usage, dict):
            out.append(r.USAGE_MALFORMED.finding(pos, pointer="/usage", where="message_delta usage",
                                                 detail=problem or "no usage object"))
        else:
            tokens = usage["output_tokens"]
            if first is not None and self.output_tokens is not None and tokens < self.output_tokens:
                out.append(r.STOP_REASON_CHANGED.finding(
                    pos, what=f"lowers usage.output_tokens to {tokens}", first=first, before=self.output_tokens))
            self.output_tokens = tokens
        if first is None and self._cut_inputs:
            if reason != "max_tokens":
                out.extend(self._cut_inputs)
            self._cut_inputs = []
        if not isinstance(reason, str):
            # Only the first message_delta must carry it: a later one may change other fields alone.
            if first is None:
                out.append(r.STOP_REASON_MISSING.finding(pos, pointer="/delta/stop_reason"))
            return
        if self.stop_reason is not None:
            if reason != self.stop_reason:
                out.append(r.STOP_REASON_CHANGED.finding(
                    pos, what=f"changes stop_reason to {reason!r}", first=first, before=repr(self.stop_reason)))
            else:
                out.append(r.STOP_REASON_REPEATED.finding(pos, reason=reason, first=first))
            self.stop_reason = reason
            return
        self.stop_reason = reason
        why = self._inconsistency(reason)
        if why:
            out.append(r.STOP_REASON_INCONSISTENT.finding(pos, pointer="/delta/stop_reason", stop_reason=reason,
                                                          why=why))

    def _inconsistency(self, reason: str) -> str | None:
        tools = [b.index for b in self._ordered() if b.type == v.TOOL_USE]
        if tools and reason not in ("tool_use", "max_tokens", "pause_turn"):
            return f"content block {tools[0]} is a tool_use block"
        if reason == "tool_use" and not tools:
            return "no tool_use block was sent"
        limit = self.request.get("max_tokens")
        if (type(limit) is int and type(self.output_tokens) is int and self.output_tokens >= limit
                and reason not in ("max_tokens", "tool_use")):
            return f"usage.output_tokens ({self.output_tokens}) reached the request's max_tokens ({limit})"
        return None

    def _message_stop(self, pos: Position, out: list[Finding]) -> None:
        if self.delta_at is None:
            self._close_open_blocks(pos, "message_stop", out)
            out.extend(self._cut_inputs)  # no message_delta said the message was cut
            self._cut_inputs = []
            out.append(r.DELTA_MISSING.finding(pos, before="message_stop"))
        self.stopped = True
        self.terminals.append(v.MESSAGE_STOP)

    def _close_open_blocks(self, pos: Position, before: str, out: list[Finding]) -> None:
        for block in self._ordered():
            if not block.stopped and not block.reported_open:
                block.reported_open = True
                out.append(r.NOT_STOPPED.finding(pos, index=block.index, block=block.type, before=before))
                self._check_final(block, pos, out)

    # -- content blocks -------------------------------------------------------------------------------------

    def _block_start(self, event: dict[str, Any], pos: Position, out: list[Finding]) -> None:
        index, content = event.get("index"), event.get("content_block")
        # Both SDKs append every content_block_start's block to their snapshot, whatever its index says
        # (anthropic-sdk-python lib/streaming/_messages.py accumulate_event: content.append; anthropic-sdk-typescript
        # src/lib/MessageStream.ts: content.push), and index that list by the later events' index.
        self.appended += 1
        if type(index) is not int:
            return  # the schema's finding
        if self.delta_at is not None:
            out.append(r.BLOCK_AFTER_DELTA.finding(pos, type=v.BLOCK_START))
        known = self.blocks.get(index)
        still_open = next((b.index for b in self.blocks.values() if not b.stopped and not b.reported_open), None)
        if still_open is not None and known is None:
            out.append(r.INTERLEAVED.finding(pos, index=index, open=still_open))
        if known is not None:
            out.append(r.BLOCK_REPEATED.finding(pos, index=index, first=known.started_at))
            return
        if index != self.next_index:
            # `started`: the blocks the clients' snapshot holds, which they index by the events' index.
            out.append(r.BLOCK_ORDER.finding(pos, got=index, expected=self.next_index, started=self.appended - 1))
        self.next_index = max(self.next_index, index + 1)
        content = content if isinstance(content, dict) else {}
        kind = content.get("type")
        kind = kind if isinstance(kind, str) else None  # any JSON may be there (the schema says what is wrong)
        block = Block(index=index, type=kind, started_at=pos.event_index)
        self.blocks[index] = block
        if kind in v.TOOL_BLOCKS:
            self._tool_start(block, content, pos, out)
        elif kind == v.REDACTED_THINKING:
            data = content.get("data")
            block.data = data if isinstance(data, str) else None
            if not block.data:
                out.append(r.REDACTED_DATA.finding(pos, index=index))
        elif kind == v.THINKING:
            block.text.append(_str(content.get("thinking")))
            block.signature = _str(content.get("signature"))
        elif kind == v.TEXT:
            block.text.append(_str(content.get("text")))

    def _tool_start(self, block: Block, content: dict[str, Any], pos: Position, out: list[Finding]) -> None:
        tid, name = content.get("id"), content.get("name")
        block.id = tid if isinstance(tid, str) else None
        block.name = name if isinstance(name, str) else None
        block.initial_input = content.get("input")
        prefix = v.TOOL_ID_PREFIXES[block.type or v.TOOL_USE]
        if not block.id:
            out.append(r.TOOL_ID_REPEATED.finding(pos, id=str(tid), index=block.index, first="none: it has no id"))
            return
        if not block.id.startswith(prefix):
            out.append(r.TOOL_ID_PREFIX.finding(pos, block=block.type, index=block.index, id=block.id,
                                                prefix=prefix))
        first = self._tool_ids.setdefault(block.id, block.index)
        if first != block.index:
            out.append(r.TOOL_ID_REPEATED.finding(pos, id=block.id, index=block.index, first=first))

    def _block_delta(self, event: dict[str, Any], pos: Position, out: list[Finding]) -> None:
        block = self._addressed(event, pos, out)
        if self.delta_at is not None:
            out.append(r.BLOCK_AFTER_DELTA.finding(pos, type=v.BLOCK_DELTA))
        delta = event.get("delta")
        if block is None or not isinstance(delta, dict):
            return
        kind = delta.get("type")
        if not isinstance(kind, str) or kind not in v.DELTA_BLOCKS:
            return  # an unknown delta type: the schema's finding
        allowed = v.DELTA_BLOCKS[kind]
        if block.type not in allowed:
            out.append(r.DELTA_MISMATCH.finding(pos, delta=kind, index=block.index, block=block.type))
            return
        piece = delta.get(v.DELTA_FIELD[kind])
        if kind == "input_json_delta":
            block.json.append(_str(piece))
        elif kind == "signature_delta":
            block.signature = _str(piece)
        elif kind != "citations_delta":
            block.text.append(_str(piece))
        if not block.stopped and self.delta_at is None and kind != "signature_delta":
            self._run = (kind, block.index, block)

    def _block_stop(self, event: dict[str, Any], pos: Position, out: list[Finding]) -> None:
        block = self._addressed(event, pos, out)
        if self.delta_at is not None:
            out.append(r.BLOCK_AFTER_DELTA.finding(pos, type=v.BLOCK_STOP))
        if block is None or block.stopped:
            return
        block.stopped = True
        self._check_final(block, pos, out)

    def _addressed(self, event: dict[str, Any], pos: Position, out: list[Finding]) -> Block | None:
        """The started block an event's index names (None: the finding is made, or the schema's)."""
        index, etype = event.get("index"), event.get("type")
        if type(index) is not int:
            return None
        block = self.blocks.get(index)
        if block is None:
            out.append(r.BEFORE_START.finding(pos, type=etype, index=index, started=self.appended))
            return None
        if block.stopped:
            out.append(r.AFTER_STOP.finding(pos, type=etype, index=index))
            return None if etype == v.BLOCK_STOP else block
        return block

    def _check_final(self, block: Block, pos: Position, out: list[Finding]) -> None:
        """What a block must be when it ends: a signed thinking block, a tool input that is a JSON object."""
        if block.type == v.THINKING and not block.signature:
            what = " (its signature_delta is empty)" if block.signature == "" and block.stopped else ""
            out.append(r.SIGNATURE_MISSING.finding(pos, index=block.index, what=what))
        elif block.type in v.TOOL_BLOCKS and any(block.json):
            # Only empty partial_json pieces (a tool without arguments): both SDKs keep the start's input, {}.
            joined = "".join(block.json)
            block.json = [joined]
            problem = _json_object_problem(joined)
            if problem:
                what, error, kind = problem
                if kind == "cut" and joined.lstrip().startswith('"'):
                    # A JSON string cut short, not an object: no partial parse makes an input of it, whatever
                    # cut it (vLLM's forced tool under max_tokens: captures/vllm/messages/tool_choice.forced).
                    what, kind = "a JSON object (a cut JSON string)", "cut-string"
                # A cut input is by design when the message was cut (stop_reason max_tokens, not known yet):
                # held until message_delta says, as a cut function call of a response marked incomplete.
                if kind == "cut" and self.delta_at is not None and self._first_reason == "max_tokens":
                    return
                target = self._cut_inputs if kind == "cut" and self.delta_at is None else out
                target.append(r.TOOL_INPUT.finding(
                    pos, details={"index": block.index, "block": block.type, "name": str(block.name), "what": what,
                                  "error": error, "kind": kind},
                    block=block.type, index=block.index, name=str(block.name), what=what, error=error))


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _usage_problem(usage: Any, fields: tuple[str, ...]) -> str | None:
    if not isinstance(usage, dict):
        return "no usage object" if usage is None else f"usage is {type(usage).__name__}, not an object"
    for name in fields:
        value = usage.get(name)
        if type(value) is not int:
            return f"no integer usage.{name}" if value is None else f"usage.{name} is {value!r}, not an integer"
    return None


def _json_object_problem(text: str) -> tuple[str, str, str] | None:
    """(what the text is not, the parser's error, its kind) or None for a JSON object. Kinds: ``cut`` (a JSON
    text that stops before its end), ``trailing`` (a whole JSON value, then more), ``invalid`` (wrong inside),
    ``not-object`` (valid JSON of another type). Partial parsers (the SDKs') read the first two as the value
    so far and fail on the third."""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return _json_error_kind(text)
    if not isinstance(value, dict):
        return ("a JSON object", f"it is a JSON {type(value).__name__}", "not-object")
    return None


def _json_error_kind(text: str) -> tuple[str, str, str]:
    import json

    stripped = text.strip()
    try:
        _, end = json.JSONDecoder().raw_decode(stripped)
    except json.JSONDecodeError as exc:
        cut = exc.pos >= len(stripped) or exc.msg.startswith("Unterminated string")
        return ("complete JSON" if cut else "JSON", f"{exc.msg} at char {exc.pos}", "cut" if cut else "invalid")
    except RecursionError:
        return ("JSON", "nested too deeply", "invalid")
    return ("JSON", f"extra data after the value at char {end}", "trailing")


def _error_detail(event: dict[str, Any]) -> str:
    error = event.get("error")
    if isinstance(error, dict):
        kind, message = error.get("type"), error.get("message")
        return f"{kind}: {message}" if kind and message else orjson.dumps(error).decode()[:120]
    return orjson.dumps(error).decode()[:120] if error is not None else "no error object"
