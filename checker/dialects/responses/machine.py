"""The Responses state machine: decoded event objects in, findings out.

Theory of operation
-------------------
The machine is sans-I/O (h11's model): the engine hands it one JSON object at
a time with its position and receives findings back; it never reads, waits or
raises for a protocol problem. It keeps exactly the state the rules of docs/spec.md §2
need:

* the lifecycle state of the response, moved by ``LIFECYCLE`` below: a table
  of (state, kind of event) → (next state, rule broken or None). An event that
  arrives where the table has no row breaks a rule; the table is the grammar.
* the output items, by id and by ``output_index`` (pairing is always by id,
  so llama.cpp's delayed reasoning ``output_item.done`` is understood as a
  legal interleaving, reported by its own rule for positional clients);
* per item, its content parts and summary parts (index, type, open/closed),
  and the text or arguments streamed into each, as ``TextAccumulator``s so
  memory stays bounded by the open items.

Field *shapes* (types, required fields) are the schemas' job, not this
module's: a missing ``output_index`` is reported once, by the schema check,
and the machine simply pairs by id. Item-scoped events are described by
``SCOPES``: which item type they belong to, whether they target a content
part, a summary part or the arguments, and what role they play.

Where code may live: rules are raised only through the registry's ``Rule``
objects; positions come from the caller; nothing here knows about profiles
(the engine applies them to the findings).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from checker.dialects.base import ItemSummary, StreamSummary
from checker.dialects.responses import hosted, item_forms
from checker.findings import Finding, Position, Severity
from checker.rules import calls, content, framing, ids, items, lifecycle, reasoning, reconcile, schema
from checker.dialects.responses.shadow import MAX_ITEMS as SHADOW_LIMIT
from checker.dialects.responses.shadow import ShadowItems
from checker.dialects.responses.snapshots import SnapshotFields
from checker.dialects.responses.vocabulary import TERMINAL_STATUS, TERMINAL_TYPES
from checker.text import HASH_SLICE, TextAccumulator, blake2b, describe_difference, hash_text

# --- lifecycle ---------------------------------------------------------------
# Kinds of event as the lifecycle sees them.
CREATED, QUEUED, IN_PROGRESS, ITEM, TERMINAL, OTHER = "created", "queued", "in_progress", "item", "terminal", "other"

# (state, kind) -> (next state, rule code broken on the way or None).
# States: start → created → [queued] → in_progress → output → terminal.
LIFECYCLE: dict[tuple[str, str], tuple[str, str | None]] = {
    ("start", CREATED): ("created", None),
    ("created", QUEUED): ("queued", None),
    ("created", IN_PROGRESS): ("in_progress", None),
    ("queued", IN_PROGRESS): ("in_progress", None),
    ("in_progress", ITEM): ("output", None),
    ("output", ITEM): ("output", None),
    ("created", ITEM): ("output", "LIF003"),
    ("queued", ITEM): ("output", "LIF003"),
    ("in_progress", IN_PROGRESS): ("in_progress", "LIF005"),
    ("in_progress", QUEUED): ("in_progress", "LIF004"),
    ("output", IN_PROGRESS): ("output", "LIF004"),
    ("output", QUEUED): ("output", "LIF004"),
    ("queued", QUEUED): ("queued", "LIF004"),
    ("created", TERMINAL): ("terminal", None),
    ("queued", TERMINAL): ("terminal", None),
    ("in_progress", TERMINAL): ("terminal", None),
    ("output", TERMINAL): ("terminal", None),
}
# Anything but response.created first breaks LIF001 (reported once; the
# stream is then read on as if it had started); CREATED again breaks LIF002.
for _state in ("created", "queued", "in_progress", "output"):
    LIFECYCLE[(_state, CREATED)] = (_state, "LIF002")
    LIFECYCLE[(_state, OTHER)] = (_state, None)
LIFECYCLE.update(
    {
        ("start", QUEUED): ("queued", "LIF001"),
        ("start", IN_PROGRESS): ("in_progress", "LIF001"),
        ("start", ITEM): ("output", "LIF001"),
        ("start", TERMINAL): ("terminal", "LIF001"),
        ("start", OTHER): ("start", "LIF001"),
    }
)

LIFECYCLE_KIND = {
    "response.created": CREATED,
    "response.queued": QUEUED,
    "response.in_progress": IN_PROGRESS,
    "response.completed": TERMINAL,
    "response.incomplete": TERMINAL,
    "response.failed": TERMINAL,
}


# --- item-scoped events ------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Scope:
    item_type: str | None  # the item type the event belongs to (None: message or reasoning, by part)
    target: str  # "item" | "content" | "summary" | "args" | "tool" (a hosted-tool call's own events)
    role: str  # "added", "done", "delta", "text_done", "part_added", "part_done", "other"
    part_type: str | None = None  # the part type a text event writes into
    field: str | None = None  # the JSON field carrying the delta or final text


SCOPES: dict[str, Scope] = {
    "response.output_item.added": Scope(None, "item", "added"),
    "response.output_item.done": Scope(None, "item", "done"),
    "response.content_part.added": Scope(None, "content", "part_added"),
    "response.content_part.done": Scope(None, "content", "part_done"),
    "response.output_text.delta": Scope("message", "content", "delta", "output_text", "delta"),
    "response.output_text.done": Scope("message", "content", "text_done", "output_text", "text"),
    "response.output_text.annotation.added": Scope("message", "content", "other", "output_text"),
    "response.refusal.delta": Scope("message", "content", "delta", "refusal", "delta"),
    "response.refusal.done": Scope("message", "content", "text_done", "refusal", "refusal"),
    "response.reasoning_text.delta": Scope("reasoning", "content", "delta", "reasoning_text", "delta"),
    "response.reasoning_text.done": Scope("reasoning", "content", "text_done", "reasoning_text", "text"),
    "response.reasoning_summary_part.added": Scope("reasoning", "summary", "part_added"),
    "response.reasoning_summary_part.done": Scope("reasoning", "summary", "part_done"),
    "response.reasoning_summary_text.delta": Scope("reasoning", "summary", "delta", "summary_text", "delta"),
    "response.reasoning_summary_text.done": Scope("reasoning", "summary", "text_done", "summary_text", "text"),
    "response.function_call_arguments.delta": Scope("function_call", "args", "delta", None, "delta"),
    "response.function_call_arguments.done": Scope("function_call", "args", "text_done", None, "arguments"),
}
# Hosted-tool events (progress, streamed input, shell commands and output): their item must exist and be open,
# and checker/dialects/responses/hosted.py follows each call's grammar.
for _etype, _item_type in hosted.EVENT_ITEM_TYPES.items():
    SCOPES.setdefault(_etype, Scope(_item_type, "tool", "other"))
ANNOTATION_ADDED = "response.output_text.annotation.added"

DELTA_SCOPES = {name: scope for name, scope in SCOPES.items() if scope.role == "delta"}

# Which text event closes a part of each type.
TEXT_DONE_TYPE = {
    "output_text": "response.output_text.done",
    "refusal": "response.refusal.done",
    "reasoning_text": "response.reasoning_text.done",
    "summary_text": "response.reasoning_summary_text.done",
}
# Which item type may hold a content part of each type.
PART_OWNER = {"output_text": "message", "refusal": "message", "reasoning_text": "reasoning"}

# vLLM-style aliases, handled as their canonical event after being reported.
ALIASES = {
    "response.reasoning_part.added": "response.content_part.added",
    "response.reasoning_part.done": "response.content_part.done",
    "response.reasoning.delta": "response.reasoning_text.delta",
    "response.reasoning.done": "response.reasoning_text.done",
    "response.reasoning_summary.delta": "response.reasoning_summary_text.delta",
    "response.reasoning_summary.done": "response.reasoning_summary_text.done",
}

ID_PREFIXES = item_forms.ID_PREFIXES
# Items the SDKs let go without an id until their done (openai-python _compatible_output_id, openai-node
# validateResponseOutputItemIdentity), and those whose call_id openai-node routes by (hasRoutedOutputCallIdentity).
OPTIONAL_ID_TYPES = frozenset({"function_call", "custom_tool_call"})
ROUTED_CALL_TYPES = frozenset({"function_call", "custom_tool_call", "shell_call", "shell_call_output"})


@dataclass(slots=True)
class Part:
    index: int
    type: str | None
    text: TextAccumulator
    implicit: bool = False  # created for a delta that arrived without its part
    text_done: bool = False
    closed: bool = False
    # The part's annotations (canonical JSON) as streamed; None: it has no annotations list to add to.
    cited: list[bytes | str] | None = field(default_factory=list)


@dataclass(slots=True)
class Item:
    id: str | None
    type: str | None
    output_index: int | None
    added_at: int | None
    call_id: str | None = None
    name: str | None = None
    done: bool = False
    content: list[Part] = field(default_factory=list)
    summary: list[Part] = field(default_factory=list)
    arguments: TextAccumulator = field(default_factory=TextAccumulator)
    arguments_done: bool = False
    had_status: bool = False  # the added item carried a status
    # What the item's output_item.done said, for the final-output comparison.
    final_fingerprint: bytes | None = None
    done_status: str | None = None  # its status at output_item.done (REC007 compares the terminal's)
    announced: bool = True  # False: known only from an output_item.done without added
    tool: hosted.ToolState | None = None  # a hosted-tool call's progress and streamed input
    final_opaque: bytes | None = None  # a digest of its encrypted_content (see _opaque)

    @property
    def label(self) -> str:
        return self.id if self.id is not None else f"#{self.output_index}"


@dataclass(slots=True)
class MachineState:
    lifecycle: str = "start"
    response_id: str | None = None
    first_created: int | None = None
    first_in_progress: int | None = None
    terminal_type: str | None = None
    terminal_index: int | None = None
    # Every terminal event's type in stream order (a second one is LIF007): which the clients saw.
    terminals: list[str] = field(default_factory=list)
    last_sequence: int | None = None
    events: int = 0
    truncated: bool = False
    reported_first: bool = False


class ResponsesMachine:
    """Consumes Responses event objects in order; returns findings per event."""

    def __init__(self, *, request: dict[str, Any] | None = None, known_types: frozenset[str] | None = None,
                 keep_texts: bool = False) -> None:
        self.state = MachineState()
        self.request = request or {}
        self.known_types = known_types
        # The deltas the fast path may take: those the profile's description defines (an undefined one, such as
        # OpenAI's reasoning_text.delta under Open Responses, is reported on the general path, every time).
        self._fast_scopes = DELTA_SCOPES if known_types is None else {
            name: scope for name, scope in DELTA_SCOPES.items() if name in known_types}
        # Keep done items' texts (for item_texts(), the reports' text view); otherwise
        # a done item's text is released, so memory holds only the open items' text.
        self.keep_texts = keep_texts
        self.items: list[Item] = []  # in added order
        self.by_id: dict[str, Item] = {}
        self.by_index: dict[int, Item] = {}
        self.call_ids: dict[str, Item] = {}
        self.done_items: list[Item] = []
        # Items the stream never announced: their streamed text (by item_id), and which of those only seen in
        # a snapshot have had their final-form checks (item_forms), so each is checked once.
        self.shadow = ShadowItems()
        self._snapshot_checked: set[str] = set()
        self._reported_shadow_overflow = False
        self.snapshot_fields = SnapshotFields()
        # The delta run: (type, item_id, output_index, index field, its value, text) of the last delta the fast
        # path took. The general path clears it; until then the same ids mean the same open part (see try_fast).
        self._run: tuple[str, str | None, int | None, str | None, int | None, TextAccumulator] | None = None
        # A hosted-tool input delta the general path took may start a run (see _tool_event).
        self._next_run: tuple[str, str | None, int | None, str | None, int | None, TextAccumulator] | None = None

    # -- entry points ---------------------------------------------------------

    @property
    def terminated(self) -> bool:
        return self.state.lifecycle == "terminal"

    def handle(self, event: dict[str, Any], pos: Position) -> list[Finding]:
        """One decoded event object (with a string ``type``) at ``pos``."""
        etype: str = event["type"]
        st = self.state
        if self.try_fast(etype, event):
            return []
        self._run = None  # the general path may close parts, finish items, change the lifecycle
        out: list[Finding] = []
        st.events += 1
        self._sequence(event, pos, out)
        if st.lifecycle == "terminal":
            out.append(
                framing.AFTER_TERMINAL.finding(pos, what=f"event {etype!r}", terminal=st.terminal_type)
            )
            if etype in TERMINAL_TYPES:
                st.terminals.append(etype)
                out.append(
                    lifecycle.MULTIPLE_TERMINAL.finding(
                        pos, type=etype, first=st.terminal_type, first_index=st.terminal_index
                    )
                )
            return out
        sent = etype  # the type as the stream named it (before an alias is resolved)
        if etype in ALIASES:
            canonical = ALIASES[etype]
            if self.known_types is None or etype not in self.known_types:
                # Open Responses names reasoning text events response.reasoning.*: under its profile they are
                # the spec's own, not an alias (its schema set knows them); elsewhere clients reject them.
                out.append(schema.ALIAS_EVENT.finding(pos, type=etype, canonical=canonical))
            etype = canonical
        kind = LIFECYCLE_KIND.get(etype)
        if kind is None:
            kind = ITEM if etype in SCOPES else OTHER
        self._lifecycle(etype, kind, event, pos, out)
        if kind in (CREATED, QUEUED, IN_PROGRESS, TERMINAL):
            self._response_event(etype, event, pos, out)
        elif kind == ITEM:
            scope = SCOPES[etype]
            if self.known_types is not None and sent not in self.known_types and sent not in ALIASES:
                # An event the profile's description does not define: OpenAI's own newer events
                # (apply_patch_call_operation_diff.*) that no published description has, or under Open Responses
                # OpenAI's names it does not adopt (response.reasoning_text.*, hosted-tool events). Still unknown
                # for the clients of that description, but the machine follows the item it belongs to.
                out.append(schema.UNKNOWN_EVENT.finding(pos, type=etype))
            self._item_event(etype, scope, event, pos, out)
            if self._next_run is not None:
                if not out:  # only a delta that broke nothing may start a run
                    self._run = self._next_run
                self._next_run = None
        elif etype == "error":
            out.append(lifecycle.ERROR_EVENT.finding(pos, detail=_error_text(event),
                                                     nested=isinstance(event.get("error"), dict)))
        elif self.known_types is not None and etype not in self.known_types:
            if ":" in etype:
                out.append(schema.VENDOR_EVENT.finding(pos, type=etype))
            else:
                out.append(schema.UNKNOWN_EVENT.finding(pos, type=etype))
        return out

    def try_fast(self, etype: str, event: dict[str, Any]) -> bool:
        """The hot path: a well-placed delta into an open part. True when fully handled.

        Applies exactly the state changes of the general path, and only when
        the general path would report nothing; anything unusual returns False
        and takes the general path.
        """
        get = event.get
        st = self.state
        run = self._run
        if run is not None and run[0] == etype:
            # The next delta of the same part: since the last one only fast-path events came, which change no
            # item, part or lifecycle, the same ids (of the same JSON types) still name the same open part.
            index, part_index = get("output_index"), get(run[3]) if run[3] is not None else None
            delta, seq = get("delta"), get("sequence_number")
            last = st.last_sequence
            if (
                get("item_id") == run[1]
                and (index is None or type(index) is int) and index == run[2]
                and (part_index is None or type(part_index) is int) and part_index == run[4]
                and type(delta) is str
                and (seq is None or (type(seq) is int and (last is None or seq > last)))
            ):
                run[5].append(delta)
                if seq is not None:
                    st.last_sequence = seq
                st.events += 1
                return True
        scope = self._fast_scopes.get(etype)
        if scope is None:
            return False
        if st.lifecycle != "output":
            return False
        item_id = get("item_id")
        if type(item_id) is not str:
            return False
        item = self.by_id.get(item_id)
        if item is None or item.done or item.type != scope.item_type:
            return False
        index = get("output_index")
        if index is not None and (type(index) is not int or self.by_index.get(index) is not item):
            return False
        delta = get("delta")
        if type(delta) is not str:
            return False
        seq = get("sequence_number")
        last = st.last_sequence
        if seq is not None and (type(seq) is not int or (last is not None and seq <= last)):
            return False
        target = scope.target
        if target == "args":
            if item.arguments_done:
                return False
            item.arguments.append(delta)
            self._run = (etype, item_id, index, None, None, item.arguments)
        else:
            parts = item.content if target == "content" else item.summary
            if not parts:
                return False
            part = parts[-1]
            field_name = "content_index" if target == "content" else "summary_index"
            part_index = get(field_name)
            if part.closed or part.text_done or (part_index is not None and part_index != part.index):
                return False
            if part.type is not None and part.type != scope.part_type:
                return False
            part.text.append(delta)
            if part_index is None or type(part_index) is int:
                self._run = (etype, item_id, index, field_name, part_index, part.text)
        if seq is not None:
            st.last_sequence = seq
        st.events += 1
        return True

    def finish(self, pos: Position) -> list[Finding]:
        """End of stream."""
        if self.state.lifecycle != "terminal":
            return [lifecycle.MISSING_TERMINAL.finding(pos)]
        return []

    def summary(self) -> StreamSummary:
        """What the stream was (the seam's contract, checker/dialects/base.py): the engine reads this, never
        ``state`` or ``items``."""
        st = self.state
        return StreamSummary(
            terminal=st.terminal_type, terminals=tuple(st.terminals), response_id=st.response_id,
            truncated=st.truncated,
            items=tuple(ItemSummary(it.id, it.type, it.output_index, it.done, it.added_at) for it in self.items),
            texts=self.item_texts() if self.keep_texts else None,
        )

    def item_texts(self) -> list[dict[str, Any]]:
        """Read-only export for reports: what each item accumulated, in added order.

        Texts are as streamed (deltas, or what the added item carried); past
        ``KEEP_CHARS`` only the kept prefix exists, and ``exact`` says so.
        """
        def parts(items: list[Part]) -> list[dict[str, Any]]:
            return [{"index": p.index, "type": p.type, "text": p.text.text(), "exact": p.text.exact}
                    for p in items]

        return [
            {"id": it.id, "type": it.type, "output_index": it.output_index, "done": it.done,
             "name": it.name, "call_id": it.call_id, "content": parts(it.content), "summary": parts(it.summary),
             "arguments": it.arguments.text(), "arguments_exact": it.arguments.exact,
             "tool": it.tool.texts() if it.tool is not None else []}
            for it in self.items
        ]

    # -- lifecycle ------------------------------------------------------------

    def _sequence(self, event: dict[str, Any], pos: Position, out: list[Finding]) -> None:
        seq = event.get("sequence_number")
        if type(seq) is not int:
            return  # presence and type are the schema's findings
        last = self.state.last_sequence
        if last is not None and seq <= last:
            out.append(lifecycle.SEQUENCE_ORDER.finding(pos, got=seq, previous=last))
        self.state.last_sequence = seq if last is None else max(seq, last)

    def _lifecycle(self, etype: str, kind: str, event: dict[str, Any], pos: Position, out: list[Finding]) -> None:
        st = self.state
        next_state, broken = LIFECYCLE.get((st.lifecycle, kind), (st.lifecycle, None))
        if broken == "LIF001":
            if not st.reported_first:
                st.reported_first = True
                out.append(lifecycle.FIRST_NOT_CREATED.finding(pos, type=etype))
        elif broken == "LIF002":
            out.append(lifecycle.DUPLICATE_CREATED.finding(pos, first=st.first_created))
        elif broken == "LIF003":
            out.append(lifecycle.IN_PROGRESS_MISSING.finding(pos, type=etype))
        elif broken == "LIF004":
            after = "output items started" if st.lifecycle == "output" else f"response.{st.lifecycle}"
            out.append(lifecycle.LIFECYCLE_ORDER.finding(pos, type=etype, after=after))
        elif broken == "LIF005":
            out.append(lifecycle.REPEATED_IN_PROGRESS.finding(pos, first=st.first_in_progress))
        if kind == CREATED and st.first_created is None:
            st.first_created = pos.event_index
        if kind == IN_PROGRESS and st.first_in_progress is None:
            st.first_in_progress = pos.event_index
        st.lifecycle = next_state

    def _response_event(self, etype: str, event: dict[str, Any], pos: Position, out: list[Finding]) -> None:
        st = self.state
        response = event.get("response")
        if not isinstance(response, dict):
            response = {}
        rid = response.get("id")
        if isinstance(rid, str):
            if st.response_id is None:
                st.response_id = rid
                if not rid.startswith("resp_"):
                    out.append(ids.ID_PREFIX.finding(pos, kind="response", id=rid, prefix="resp_"))
            elif rid != st.response_id:
                out.append(lifecycle.RESPONSE_ID_CHANGED.finding(pos, type=etype, id=rid, first=st.response_id))
        out.extend(self.snapshot_fields.observe(etype, response, pos))
        self._snapshot_items(etype, response, pos, out)
        if etype in TERMINAL_TYPES:
            st.terminal_type = etype
            st.terminal_index = pos.event_index
            st.terminals.append(etype)
            self._terminal(etype, response, pos, out)

    def _terminal(self, etype: str, response: dict[str, Any], pos: Position, out: list[Finding]) -> None:
        open_items = [it for it in self.items if not it.done]
        if open_items:
            # Which open items the terminal's output does not list: the SDKs accept an
            # unfinished item only when the final output repeats it (checker/compat.py).
            final = response.get("output")
            listed = [(o.get("id"), o.get("call_id")) for o in final if isinstance(o, dict)] \
                if isinstance(final, list) else []
            unlisted = [it.label for it in open_items
                        if not any((it.id is not None and it.id == i) or (it.call_id is not None and it.call_id == c)
                                   for i, c in listed)]
            found = lifecycle.UNFINISHED_ITEMS.finding(
                pos, type=etype, items=", ".join(it.label for it in open_items), unlisted=unlisted)
            if etype != "response.completed" or not unlisted:
                # The SDKs raise only at response.completed for an item its output does not list; otherwise
                # they keep the partial item (failed, incomplete) or the listed one: a warning, not an error.
                found = replace(found, severity=Severity.WARNING)
            out.append(found)
        status = response.get("status")
        expected = TERMINAL_STATUS[etype]
        if status != expected:
            out.append(lifecycle.STATUS_MISMATCH.finding(pos, type=etype, status=status, expected=expected))
        if etype == "response.failed" and not response.get("error"):
            out.append(lifecycle.FAILED_WITHOUT_ERROR.finding(pos))
        if etype == "response.incomplete":
            details = response.get("incomplete_details")
            if not (isinstance(details, dict) and details.get("reason")):
                out.append(lifecycle.INCOMPLETE_WITHOUT_REASON.finding(pos))
        usage = response.get("usage")
        if isinstance(usage, dict):
            self._usage(usage, pos, out)
            limit = response.get("max_output_tokens")
            if type(limit) is not int:
                # A response may echo null; the request's limit still applied.
                limit = self.request.get("max_output_tokens")
            produced = usage.get("output_tokens")
            if type(limit) is int and type(produced) is int and produced >= limit:
                self.state.truncated = True
                if etype == "response.completed":
                    out.append(
                        lifecycle.TRUNCATED_AS_COMPLETED.finding(
                            pos, output_tokens=produced, max_output_tokens=limit
                        )
                    )
        self._unverifiable(etype, response, pos, out)
        if "output" in response and isinstance(response["output"], list):
            self._final_output(etype, response["output"], pos, out)
            self._final_statuses(etype, response["output"], pos, out)

    def _usage(self, usage: dict[str, Any], pos: Position, out: list[Finding]) -> None:
        # Presence and integer types are the schema's (classified as LIF018);
        # the arithmetic is not a shape, so it is checked here.
        i, o, t = usage.get("input_tokens"), usage.get("output_tokens"), usage.get("total_tokens")
        if type(i) is int and type(o) is int and type(t) is int and i + o != t:
            out.append(
                lifecycle.USAGE_MALFORMED.finding(
                    pos, pointer="/response/usage/total_tokens",
                    detail=f"total_tokens {t} is not input_tokens {i} + output_tokens {o}",
                )
            )

    def _final_output(self, etype: str, output: list[Any], pos: Position, out: list[Finding]) -> None:
        # The final output should list every item in output order: a done one as
        # it was done, an unfinished one as the final word on it (the recovery
        # openai-python applies). Unfinished items themselves are LIF008's.
        done = sorted(self.items, key=lambda it: (it.output_index if it.output_index is not None else 1 << 30))
        if not output:
            if self.done_items:
                out.append(reconcile.COMPLETED_OUTPUT_EMPTY.finding(pos, type=etype, count=len(self.done_items)))
            return
        problems: list[str] = []
        opaque: list[str] = []
        # An item the stream never announced nor finished, but streamed text for, is reconciled by its id
        # with that text (see checker/dialects/responses/shadow.py); the others are compared in output order.
        listed: list[tuple[int, Any]] = []
        for index, final in enumerate(output):
            fid = final.get("id") if isinstance(final, dict) else None
            if isinstance(fid, str) and fid not in self.by_id:
                if fid in self.shadow:
                    for what, diff in self.shadow.differences(fid, final):
                        problems.append(f"output[{index}] ({fid!r}) {what} differs from its streamed deltas ({diff})")
                else:
                    problems.append(f"output[{index}] is {final.get('type')} {fid!r}, which the stream never had")
                continue
            listed.append((index, final))
        if len(listed) != len(done):
            problems.append(f"{len(listed)} item(s) in output, {len(done)} item(s) in the stream")
        for (index, final), item in zip(listed, done):
            if not isinstance(final, dict):
                problems.append(f"output[{index}] is not an object")
                continue
            fid, ftype = final.get("id"), final.get("type")
            if (fid, ftype) != (item.id, item.type):
                problems.append(f"output[{index}] is {ftype} {fid!r}, the stream's item {index} is {item.type} {item.id!r}")
                continue
            if item.final_fingerprint is None:
                if not item.done:
                    for what, diff in _streamed_differences(item, final):
                        problems.append(f"output[{index}] ({fid!r}) {what} differs from what was streamed ({diff})")
                continue
            if _fingerprint(final) != item.final_fingerprint:
                problems.append(f"output[{index}] ({fid!r}) differs from its output_item.done")
            sealed = _opaque(final)
            if (sealed is None) != (item.final_opaque is None):  # its presence is comparable, its bytes are not
                where = "output_item.done" if sealed is None else "the final output"
                problems.append(f"output[{index}] ({fid!r}): only {where} carries encrypted_content")
            elif sealed != item.final_opaque:
                opaque.append(f"output[{index}] ({fid!r})")
        for problem in problems[:5]:
            out.append(reconcile.COMPLETED_OUTPUT_MISMATCH.finding(pos, type=etype, detail=problem))
        if opaque:
            listed_opaque = ", ".join(opaque[:3]) + (f" and {len(opaque) - 3} more" if len(opaque) > 3 else "")
            out.append(lifecycle.CHECK_NOT_RUN.finding(
                pos, check=f"encrypted_content of {listed_opaque} against output_item.done (REC004)",
                reason="it differs and is opaque (OpenAI encrypts reasoning anew each time it serialises an item); "
                       "the rest of the item was compared", details={"check": "REC004", "what": "encrypted_content"}))

    def _final_statuses(self, etype: str, output: list[Any], pos: Position, out: list[Finding]) -> None:
        """REC007: a done item's status in the terminal output must be the one its output_item.done gave."""
        for final in output:
            if not isinstance(final, dict) or not isinstance(final.get("id"), str):
                continue
            item = self.by_id.get(final["id"])
            status = final.get("status")
            # A done status that is not final is ITM013's; its later completion is no contradiction.
            if item is None or not item.done or item.done_status not in ("completed", "incomplete") \
                    or not isinstance(status, str):
                continue
            if status != item.done_status:
                out.append(reconcile.ITEM_STATUS_CONTRADICTION.finding(
                    pos, type=etype, item=item.label, final=status, done=item.done_status))

    def _unverifiable(self, etype: str, response: dict[str, Any], pos: Position, out: list[Finding]) -> None:
        """LIF020: say which terminal checks could not run, instead of passing them silently."""
        usage = response.get("usage")
        if etype == "response.completed":
            limit = response.get("max_output_tokens")
            if type(limit) is not int:
                limit = self.request.get("max_output_tokens")
            produced = usage.get("output_tokens") if isinstance(usage, dict) else None
            if type(limit) is int and type(produced) is not int:
                carried = "no usage" if "usage" not in response else (
                    "usage null" if usage is None else "usage without an integer output_tokens")
                out.append(lifecycle.CHECK_NOT_RUN.finding(
                    pos, check=f"truncation by max_output_tokens {limit} (LIF017)",
                    reason=f"{etype} carries {carried}, so the tokens produced are unknown",
                    details={"check": "LIF017", "max_output_tokens": limit}))
        if not isinstance(response.get("output"), list) and self.done_items:
            out.append(lifecycle.CHECK_NOT_RUN.finding(
                pos, check=f"the final output against the {len(self.done_items)} done item(s) (REC004)",
                reason=f"{etype} carries no output list", details={"check": "REC004"}))
        if self.shadow.overflowed and not self._reported_shadow_overflow:
            self._reported_shadow_overflow = True
            out.append(lifecycle.CHECK_NOT_RUN.finding(
                pos, check="the text of some items never announced (REC003/REC004)",
                reason=f"more than {SHADOW_LIMIT} such items; the rest were not kept", details={"check": "REC004"}))

    # -- items the stream never announced -------------------------------------

    def _unannounced_event(self, etype: str, scope: Scope, event: dict[str, Any], pos: Position,
                           out: list[Finding]) -> None:
        """An item event _resolve could not place (ITM004): keep its text by item_id for reconciliation."""
        item_id = event.get("item_id")
        if scope.target == "item" or not isinstance(item_id, str) or item_id in self.by_id:
            return
        out.extend(self.shadow.event(etype, scope.target, scope.role, scope.field, event, pos))

    def _done_unannounced(self, raw: dict[str, Any], item_id: str | None, index: Any, pos: Position,
                          out: list[Finding]) -> None:
        """An output_item.done without added (ITM008): the item exists from here on, and every check of a
        final form runs on it as on an announced item's done."""
        itype = raw.get("type") if isinstance(raw.get("type"), str) else None
        call_id = raw.get("call_id") if isinstance(raw.get("call_id"), str) else None
        item = Item(id=item_id, type=itype, output_index=index if type(index) is int else None, added_at=None,
                    call_id=call_id, name=raw.get("name") if isinstance(raw.get("name"), str) else None,
                    done=True, announced=False)
        item.done_status = raw.get("status") if isinstance(raw.get("status"), str) else None
        label = item.label
        out.extend(item_forms.id_findings(raw, pos))
        if itype == "function_call" and call_id is not None:
            if call_id in self.call_ids:
                out.append(ids.DUPLICATE_CALL_ID.finding(pos, id=call_id))
            self.call_ids.setdefault(call_id, item)
        if "status" in raw and item.done_status not in ("completed", "incomplete"):
            out.append(items.DONE_STATUS.finding(pos, status=raw.get("status"),
                                                 details={"status": raw.get("status"), "item_type": itype}))
        if item_id is not None:
            streamed_name = self.shadow.name(item_id)
            if streamed_name is not None and item.name is not None and streamed_name != item.name:
                out.append(calls.NAME_MISMATCH.finding(pos, done=streamed_name, item_name=item.name))
            for what, diff in self.shadow.differences(item_id, raw):
                out.append(reconcile.ITEM_DONE_MISMATCH.finding(pos, what=what, diff=diff))
            self.shadow.discard(item_id)
        out.extend(item_forms.arguments_findings(raw, pos, label))
        # What a client holds of the item is its done form: that is its text from here on.
        for key, parts in (("content", item.content), ("summary", item.summary)):
            final = raw.get(key)
            if isinstance(final, list):
                for n, part in enumerate(final):
                    parts.append(Part(index=n, type=_part_type(part), text=TextAccumulator(_part_text(part) or ""),
                                      text_done=True, closed=True))
        if isinstance(raw.get("arguments"), str):
            item.arguments = TextAccumulator(raw["arguments"])
            item.arguments_done = True
        item.final_fingerprint = _fingerprint(raw)
        item.final_opaque = _opaque(raw)
        if item_id is None:
            return  # nothing can name it again; its checks are done
        self.items.append(item)
        self.done_items.append(item)
        self.by_id[item_id] = item
        if item.output_index is not None:
            self.by_index.setdefault(item.output_index, item)
        self._release(item)

    def _snapshot_items(self, etype: str, response: dict[str, Any], pos: Position, out: list[Finding]) -> None:
        """The final-form checks on items a snapshot lists that the stream never announced nor finished:
        their ids once, where first listed; a function call's arguments in the terminal response, which is
        what the SDKs return for it."""
        output = response.get("output")
        if not isinstance(output, list):
            return
        terminal = etype in TERMINAL_TYPES
        for index, final in enumerate(output):
            if not isinstance(final, dict):
                continue
            fid = final.get("id") if isinstance(final.get("id"), str) else None
            known = self.by_id.get(fid) if fid is not None else None
            if known is None and fid not in self._snapshot_checked:
                if fid is not None:
                    self._snapshot_checked.add(fid)
                out.extend(item_forms.id_findings(final, pos))
            if terminal and (known is None or not known.done):
                out.extend(item_forms.arguments_findings(final, pos, item_forms.item_label(final, index)))

    # -- items ----------------------------------------------------------------

    def _item_event(self, etype: str, scope: Scope, event: dict[str, Any], pos: Position, out: list[Finding]) -> None:
        if scope.role == "added" and scope.target == "item":
            self._added(event, pos, out)
            return
        if scope.role == "done" and scope.target == "item":
            self._done(event, pos, out)
            return
        item = self._resolve(etype, event, pos, out)
        if item is None:
            self._unannounced_event(etype, scope, event, pos, out)
            return
        if item.done:
            out.append(items.AFTER_ITEM_DONE.finding(pos, type=etype, item=item.label))
            return
        expected_type = scope.item_type
        if expected_type is None and scope.target == "content":
            part = event.get("part")
            expected_type = PART_OWNER.get(_part_type(part) or "")
        if expected_type is not None and item.type is not None and item.type != expected_type:
            out.append(items.FAMILY_MISMATCH.finding(pos, type=etype, item_type=item.type, item=item.label))
            return
        if scope.target == "content":
            self._content_event(etype, scope, item, event, pos, out)
        elif scope.target == "summary":
            self._summary_event(etype, scope, item, event, pos, out)
        elif scope.target == "args":
            self._args_event(etype, scope, item, event, pos, out)
        elif scope.target == "tool" and item.tool is not None:
            self._tool_event(etype, item, item.tool, event, pos, out)

    def _tool_event(self, etype: str, item: Item, tool: hosted.ToolState, event: dict[str, Any], pos: Position,
                    out: list[Finding]) -> None:
        call_id = item.call_id
        appended = tool.event(etype, event, pos, out, lambda: self._shell_call(call_id))
        if appended is None or etype not in hosted.INPUT_DELTAS:
            return
        # The next delta of the same input, with the same ids, changes nothing but this text: the fast path
        # may append it (try_fast's run), exactly as the general path would.
        item_id, index = event.get("item_id"), event.get("output_index")
        command = event.get("command_index") if etype == hosted.COMMAND_DELTA else None
        if (item_id is None or type(item_id) is str) and (index is None or type(index) is int) \
                and (command is None or type(command) is int):
            self._next_run = (etype, item_id, index, "command_index" if command is not None else None, command,
                              appended)

    def _shell_call(self, call_id: str | None) -> hosted.ToolState | None:
        """The first shell call with this call_id (openai-node looks a shell output's call up this way)."""
        if call_id is None:
            return None
        for other in self.items:
            if other.type == "shell_call" and other.call_id == call_id:
                return other.tool
        return None

    def _resolve(self, etype: str, event: dict[str, Any], pos: Position, out: list[Finding]) -> Item | None:
        item_id = event.get("item_id")
        index = event.get("output_index")
        by_index = self.by_index.get(index) if type(index) is int else None
        if isinstance(item_id, str):
            item = self.by_id.get(item_id)
            if item is None:
                out.append(items.UNKNOWN_ITEM.finding(pos, type=etype, item=item_id, index=index))
                return None
            if by_index is not None and by_index is not item:
                out.append(
                    items.ITEM_ID_MISMATCH.finding(
                        pos, type=etype, item_id=item_id, index=index, expected=by_index.label
                    )
                )
            elif by_index is None and type(index) is int:
                out.append(
                    items.ITEM_ID_MISMATCH.finding(pos, type=etype, item_id=item_id, index=index, expected=None)
                )
            return item
        if by_index is not None:
            return by_index
        out.append(items.UNKNOWN_ITEM.finding(pos, type=etype, item=item_id if item_id is not None else index,
                                              index=index))
        return None

    def _added(self, event: dict[str, Any], pos: Position, out: list[Finding]) -> None:
        raw = event.get("item")
        if not isinstance(raw, dict):
            return  # the schema reports it
        index = event.get("output_index")
        item_id = raw.get("id") if isinstance(raw.get("id"), str) else None
        itype = raw.get("type") if isinstance(raw.get("type"), str) else None
        call_id = raw.get("call_id") if isinstance(raw.get("call_id"), str) else None
        item = Item(id=item_id, type=itype, output_index=index if type(index) is int else None,
                    added_at=pos.event_index, call_id=call_id,
                    name=raw.get("name") if isinstance(raw.get("name"), str) else None)
        item.tool = hosted.start(itype, raw, item.label, keep_texts=self.keep_texts)
        # Interleaving: a positional client pairs this added with the next done.
        for earlier in self.items:
            if not earlier.done:
                out.append(
                    items.INTERLEAVED.finding(
                        pos, later_type=itype, later=item.label, earlier_type=earlier.type, earlier=earlier.label
                    )
                )
                break
        if item.output_index is not None:
            other = self.by_index.get(item.output_index)
            if other is not None:
                out.append(items.OUTPUT_INDEX_REUSED.finding(pos, index=item.output_index, other=other.label))
            elif item.output_index != len(self.items):
                out.append(
                    items.OUTPUT_INDEX_NOT_APPENDED.finding(pos, got=item.output_index, expected=len(self.items))
                )
        if item_id is None:
            out.append(ids.ITEM_ID_MISSING.finding(pos))
        else:
            previous = self.by_id.get(item_id)
            if previous is not None:
                out.append(
                    ids.DUPLICATE_ITEM_ID.finding(pos, id=item_id, first=previous.output_index, second=item.output_index)
                )
            prefix = ID_PREFIXES.get(itype or "")
            if prefix and not item_id.startswith(prefix):
                out.append(ids.ID_PREFIX.finding(pos, kind=f"{itype} item", id=item_id, prefix=prefix))
        if itype == "function_call" and call_id is not None:
            if call_id in self.call_ids:
                out.append(ids.DUPLICATE_CALL_ID.finding(pos, id=call_id))
            if not call_id.startswith("call_"):
                out.append(ids.ID_PREFIX.finding(pos, kind="call", id=call_id, prefix="call_"))
            if call_id == item_id:
                out.append(ids.FC_ID_IS_CALL_ID.finding(pos, id=call_id))
            self.call_ids.setdefault(call_id, item)
            args = raw.get("arguments")
            if isinstance(args, str) and args:
                item.arguments.append(args)
        status = raw.get("status")
        item.had_status = "status" in raw
        if "status" in raw and status != "in_progress" and not _created_complete(raw):
            out.append(items.ADDED_STATUS.finding(pos, status=status))
        # Parts an added item already carries count as added (and done).
        for key, parts in (("content", item.content), ("summary", item.summary)):
            initial = raw.get(key)
            if isinstance(initial, list):
                for n, part in enumerate(initial):
                    text = _part_text(part)
                    parts.append(Part(index=n, type=_part_type(part), text=TextAccumulator(text or ""),
                                      text_done=True, closed=True, cited=_annotations(part)))
        self.items.append(item)
        if item_id is not None:
            # On a duplicate id the newest item wins: the events that follow are its.
            self.by_id[item_id] = item
        if item.output_index is not None:
            self.by_index.setdefault(item.output_index, item)

    def _done(self, event: dict[str, Any], pos: Position, out: list[Finding]) -> None:
        raw = event.get("item")
        if not isinstance(raw, dict):
            return
        item_id = raw.get("id") if isinstance(raw.get("id"), str) else None
        index = event.get("output_index")
        item = self.by_id.get(item_id) if item_id is not None else None
        if item is None and type(index) is int:
            # The SDKs find the added item by output_index, whatever id the done item carries: a changed id is
            # the same item's identity changing, not an item that was never added.
            item = self.by_index.get(index)
        if item is None:
            out.append(items.DONE_WITHOUT_ADDED.finding(pos, item=item_id if item_id is not None else index))
            self._done_unannounced(raw, item_id, index, pos, out)
            return
        self._done_identity(item, raw, index, pos, out)
        done_id = raw.get("id")
        if isinstance(done_id, str) and done_id != item.id and not item.done:
            # What a client keeps is the done form: the item is known by its done id from here on (ITM007 has
            # reported the change), so the final output is compared with that.
            item.id = done_id
            self.by_id.setdefault(done_id, item)
        if item.done:
            out.append(items.DUPLICATE_DONE.finding(pos, item=item.label))
            return
        item.done = True
        self.done_items.append(item)
        item.done_status = raw.get("status") if isinstance(raw.get("status"), str) else None
        # A done item's status must be final; its absence matters only where the
        # added item had one (OpenAI's reasoning items carry none at all).
        status = raw.get("status")
        # A hosted-tool call may also end failed (its schemas' status enums say so; the schema judges the rest).
        ended = ("completed", "incomplete", "failed") if item.tool is not None else ("completed", "incomplete")
        if ("status" in raw or item.had_status) and status not in ended and not _awaits_program(raw):
            out.append(items.DONE_STATUS.finding(pos, status=status, details={"status": status,
                                                                              "item_type": item.type}))
        if item.type == "function_call":
            self._done_function_call(item, raw, pos, out)
        if item.tool is not None:
            item.tool.done(raw, pos, out)
        for key, parts in (("content", item.content), ("summary", item.summary)):
            self._close_parts(item, key, parts, pos, out)
            final = raw.get(key)
            if isinstance(final, list) and parts:
                self._compare_parts(item, key, parts, final, pos, out)
        item.final_fingerprint = _fingerprint(raw)
        item.final_opaque = _opaque(raw)
        self._release(item)

    def _done_identity(self, item: Item, raw: dict[str, Any], index: Any, pos: Position, out: list[Finding]) -> None:
        """An output_item.done must keep its added item's identity, compared the way the SDKs compare it.

        openai-python (``_output_identity``, ``_compatible_output_id``) compares the type, the id and the
        ``call_id`` of every item type; openai-node (``validateResponseOutputItemIdentity``) the type, the id
        and the ``call_id`` of function, custom tool and shell calls. Both let a function or custom tool call
        that was added without an id gain one at done. The details say which item type and whether another
        item holds the done's output_index, which decides what each client does (checker/compat.py).
        """
        done_id = raw.get("id") if isinstance(raw.get("id"), str) else None
        done_type = raw.get("type") if isinstance(raw.get("type"), str) else None
        done_call = raw.get("call_id") if isinstance(raw.get("call_id"), str) else None
        gains_optional_id = item.id is None and item.type in OPTIONAL_ID_TYPES
        moved = type(index) is int and item.output_index is not None and index != item.output_index
        other = self.by_index.get(index) if moved else None
        for fname, added, done in (
            ("type", item.type, done_type),
            ("id", item.id, item.id if gains_optional_id else done_id),
            ("call_id", item.call_id, done_call),
            ("output_index", item.output_index, index if moved else item.output_index),
        ):
            if added != done:
                out.append(items.DONE_IDENTITY.finding(
                    pos, field=fname, added=added, done=done, item_type=item.type,
                    routed_call=item.type in ROUTED_CALL_TYPES,
                    other=other.label if other is not None else None))

    def _release(self, item: Item) -> None:
        """A done item's text is no longer compared with anything but by digest."""
        for part in (*item.content, *item.summary):
            part.text = part.text.compacted() if self.keep_texts else TextAccumulator()
            part.cited = []
        item.arguments = item.arguments.compacted() if self.keep_texts else TextAccumulator()

    def _done_function_call(self, item: Item, raw: dict[str, Any], pos: Position, out: list[Finding]) -> None:
        if not item.arguments_done:
            out.append(calls.ARGUMENTS_DONE_MISSING.finding(pos, item=item.label))
        final = raw.get("arguments")
        if not isinstance(final, str):
            return
        streamed = item.arguments
        if (len(streamed) or item.arguments_done) and not streamed.equals(final):
            out.append(
                reconcile.ITEM_DONE_MISMATCH.finding(
                    pos, what="arguments", diff=describe_difference(streamed.text(), final)
                )
            )
        out.extend(item_forms.arguments_findings(raw, pos, item.label))

    def _close_parts(self, item: Item, key: str, parts: list[Part], pos: Position, out: list[Finding]) -> None:
        for part in parts:
            if part.closed:
                continue
            if not part.implicit:
                rule = content.PART_NOT_DONE if key == "content" else reasoning.SUMMARY_PART_NOT_DONE
                out.append(rule.finding(pos, item=item.label, index=part.index))
            if not part.text_done:
                self._text_done_missing(item, key, part, pos, out)
            part.closed = True

    def _text_done_missing(self, item: Item, key: str, part: Part, pos: Position, out: list[Finding]) -> None:
        done_type = TEXT_DONE_TYPE.get(part.type or "", "the text .done event")
        label = f"{'content' if key == 'content' else 'summary'} part {part.index}"
        out.append(
            content.TEXT_DONE_MISSING.finding(
                pos, part=label, item=item.label, done_type=done_type,
                details={"done_type": done_type, "item": item.label, "index": part.index},
            )
        )

    def _compare_parts(
        self, item: Item, key: str, parts: list[Part], final: list[Any], pos: Position, out: list[Finding]
    ) -> None:
        if len(final) != len(parts):
            out.append(
                reconcile.ITEM_DONE_MISMATCH.finding(
                    pos, what=key, diff=f"{len(final)} part(s) at done, {len(parts)} streamed"
                )
            )
        for part, final_part in zip(parts, final):
            if key == "content":
                self._compare_annotations("output_item.done", item, part, final_part, pos, out)
            text = _part_text(final_part)
            if text is None:
                continue
            if not part.text.equals(text):
                out.append(
                    reconcile.ITEM_DONE_MISMATCH.finding(
                        pos, what=f"{key}[{part.index}] text", diff=describe_difference(part.text.text(), text)
                    )
                )

    # -- parts ----------------------------------------------------------------

    def _content_event(
        self, etype: str, scope: Scope, item: Item, event: dict[str, Any], pos: Position, out: list[Finding]
    ) -> None:
        self._part_event(etype, scope, item, item.content, "content_index", event, pos, out, PART_RULES["content"])

    def _summary_event(
        self, etype: str, scope: Scope, item: Item, event: dict[str, Any], pos: Position, out: list[Finding]
    ) -> None:
        self._part_event(etype, scope, item, item.summary, "summary_index", event, pos, out, PART_RULES["summary"])

    def _part_event(
        self,
        etype: str,
        scope: Scope,
        item: Item,
        parts: list[Part],
        index_field: str,
        event: dict[str, Any],
        pos: Position,
        out: list[Finding],
        rules: "PartRules",
    ) -> None:
        raw_index = event.get(index_field)
        index = raw_index if type(raw_index) is int else None
        if scope.role == "part_added":
            expected = len(parts)
            if index is not None and index != expected:
                out.append(rules.not_appended.finding(pos, got=index, expected=expected))
            part = event.get("part")
            initial = _part_text(part) if isinstance(part, dict) else None
            parts.append(Part(index=index if index is not None else expected, type=_part_type(part),
                              text=TextAccumulator(initial or ""), cited=_annotations(part)))
            return
        part = self._find_part(parts, index)
        if part is None and parts and index is not None and not parts[-1].closed:
            # An index no part has while a part is open: the index is wrong,
            # the text belongs to the open part. (With every part closed it is
            # a new part that was never added: handled below.)
            out.append(rules.index_mismatch.finding(pos, type=etype, got=index, expected=parts[-1].index))
            part = parts[-1]
            index = None
        if part is None:
            if scope.role in ("delta", "text_done"):
                out.append(rules.before_part.finding(pos, type=etype, item=item.label, index=index,
                                                     details={"type": etype, "item": item.label}))
                part = Part(index=index if index is not None else len(parts), type=scope.part_type,
                            text=TextAccumulator(), implicit=True)
                parts.append(part)
            else:
                out.append(rules.after_done.finding(pos, type=etype, index=index, item=item.label))
                return
        if part.closed:
            out.append(rules.after_done.finding(pos, type=etype, index=part.index, item=item.label))
            return
        open_part = parts[-1]
        if index is not None and part is not open_part:
            out.append(rules.index_mismatch.finding(pos, type=etype, got=index, expected=open_part.index))
        if scope.part_type is not None and part.type is not None and part.type != scope.part_type:
            out.append(content.PART_TYPE_MISMATCH.finding(pos, type=etype, part_type=part.type))
        if scope.role == "delta":
            delta = event.get(scope.field or "delta")
            if isinstance(delta, str):
                part.text.append(delta)
        elif etype == ANNOTATION_ADDED:
            self._annotation(item, part, event, pos, out)
        elif scope.role == "text_done":
            if part.text_done:
                out.append(rules.after_done.finding(pos, type=etype, index=part.index, item=item.label))
                return
            part.text_done = True
            final = event.get(scope.field or "text")
            if isinstance(final, str) and not part.text.equals(final):
                out.append(
                    reconcile.TEXT_DONE_MISMATCH.finding(
                        pos, type=etype, diff=describe_difference(part.text.text(), final)
                    )
                )
        elif scope.role == "part_done":
            if not part.text_done and not part.implicit:
                self._text_done_missing(item, "content" if rules is PART_RULES["content"] else "summary",
                                        part, pos, out)
            part.closed = True
            done_part = event.get("part")
            text = _part_text(done_part) if isinstance(done_part, dict) else None
            if text is not None and not part.text.equals(text):
                out.append(
                    reconcile.PART_DONE_MISMATCH.finding(pos, diff=describe_difference(part.text.text(), text))
                )
            self._compare_annotations("content_part.done", item, part, done_part, pos, out)

    @staticmethod
    def _annotation(item: Item, part: Part, event: dict[str, Any], pos: Position, out: list[Finding]) -> None:
        """annotation_index appends to the part's annotations, from 0 (openai-node validates it so)."""
        got = event.get("annotation_index")
        if type(got) is not int:
            return  # the schema's finding
        cited = part.cited
        held = None if cited is None else len(cited)
        if held is None or got != held:
            expected = "none (the part has no annotations list)" if held is None else held
            out.append(content.ANNOTATION_INDEX.finding(
                pos, got=got, expected=expected, index=part.index, item=item.label,
                details={"got": got, "expected": held, "index": part.index, "item": item.label}))
        if cited is None:
            part.cited = cited = []
        annotation = hosted.canonical(event.get("annotation"))
        if 0 <= got < len(cited):
            cited[got] = annotation  # openai-node writes at annotation_index: a repeat replaces
        else:
            cited.append(annotation)

    @staticmethod
    def _compare_annotations(where: str, item: Item, part: Part, final: Any, pos: Position,
                             out: list[Finding]) -> None:
        """The annotations a done part or item carries against those added by events (openai-node then
        replaces its streamed part, so from here on the done ones are what the part holds)."""
        if part.type != "output_text" or not isinstance(final, dict):
            return
        done = final.get("annotations")
        if not isinstance(done, list):
            return
        cited = part.cited or []
        forms = [hosted.canonical(a) for a in done]
        if forms == cited:
            return
        if len(forms) != len(cited):
            detail = f"{len(cited)} added, {len(forms)} at {where}"
        else:
            first = next(n for n, (a, b) in enumerate(zip(cited, forms)) if a != b)
            detail = f"annotation {first} differs"
        out.append(reconcile.ANNOTATIONS_MISMATCH.finding(pos, where=where, index=part.index, item=item.label,
                                                          detail=detail))
        part.cited = forms

    @staticmethod
    def _find_part(parts: list[Part], index: int | None) -> Part | None:
        if not parts:
            return None
        if index is None:
            # No index to go by: the open part, else the last one.
            return parts[-1]
        for part in reversed(parts):
            if part.index == index:
                return part
        return None

    # -- function-call arguments ----------------------------------------------

    def _args_event(
        self, etype: str, scope: Scope, item: Item, event: dict[str, Any], pos: Position, out: list[Finding]
    ) -> None:
        if item.arguments_done:
            out.append(calls.ARGUMENTS_AFTER_DONE.finding(pos, type=etype, item=item.label))
            return
        if scope.role == "delta":
            delta = event.get("delta")
            if isinstance(delta, str):
                item.arguments.append(delta)
            return
        item.arguments_done = True
        name = event.get("name")
        if isinstance(name, str) and item.name is not None and name != item.name:
            out.append(calls.NAME_MISMATCH.finding(pos, done=name, item_name=item.name))
        final = event.get("arguments")
        if isinstance(final, str) and not item.arguments.equals(final):
            out.append(
                reconcile.ARGUMENTS_DONE_MISMATCH.finding(pos, diff=describe_difference(item.arguments.text(), final))
            )
            item.arguments = TextAccumulator(final)


@dataclass(frozen=True, slots=True)
class PartRules:
    not_appended: Any
    index_mismatch: Any
    before_part: Any
    after_done: Any


PART_RULES = {
    "content": PartRules(
        content.CONTENT_INDEX_NOT_APPENDED, content.CONTENT_INDEX_CHANGED, content.DELTA_BEFORE_PART,
        content.AFTER_PART_DONE,
    ),
    "summary": PartRules(
        reasoning.SUMMARY_INDEX_NOT_APPENDED, reasoning.SUMMARY_INDEX_MISMATCH,
        reasoning.SUMMARY_DELTA_WITHOUT_PART, reasoning.AFTER_SUMMARY_DONE,
    ),
}


def _streamed_differences(item: Item, final: dict[str, Any]) -> list[tuple[str, str]]:
    """(what, how) for each text of ``final`` that contradicts what was streamed into an unfinished item."""
    found: list[tuple[str, str]] = []
    args = final.get("arguments")
    if item.type == "function_call" and len(item.arguments) and isinstance(args, str) \
            and not item.arguments.equals(args):
        found.append(("arguments", describe_difference(item.arguments.text(), args)))
    for key, parts in (("content", item.content), ("summary", item.summary)):
        listed = final.get(key)
        if not isinstance(listed, list):
            continue
        for part in parts:
            text = _part_text(listed[part.index]) if 0 <= part.index < len(listed) else None
            if text is not None and not part.text.equals(text):
                found.append((f"{key}[{part.index}] text", describe_difference(part.text.text(), text)))
    return found


def _part_type(part: Any) -> str | None:
    if isinstance(part, dict) and isinstance(part.get("type"), str):
        return part["type"]
    return None


def _annotations(part: Any) -> list[bytes | str] | None:
    """The annotations a part holds, canonical (None: it has no annotations list to append to)."""
    if isinstance(part, dict) and part.get("type") == "output_text":
        held = part.get("annotations")
        return [hosted.canonical(a) for a in held] if isinstance(held, list) else None
    return []


def _part_text(part: Any) -> str | None:
    """The text a part carries: `text`, or `refusal` for refusal parts."""
    if not isinstance(part, dict):
        return None
    value = part.get("refusal") if part.get("type") == "refusal" else part.get("text")
    return value if isinstance(value, str) else None


def _fingerprint(item: dict[str, Any]) -> bytes:
    """What must agree between an item's output_item.done and the final output, as a
    digest: done items are kept until the terminal event, their texts need not be."""
    return _digest(_identity_and_texts(item))


def _digest(value: Any) -> bytes:
    """A 16-byte digest of ``value`` (tuples, lists and scalars), equal for equal values. A long string (an
    item's 18 MB text) is hashed on its own, in slices (checker.text.hash_text), not inside one repr of the
    whole value: that repr and its encoding would cost three times the text, when the terminal event holding
    it is in memory too. Its place in the repr gives its length, so where each long string starts is fixed."""
    long_texts: list[str] = []

    def shape(v: Any) -> Any:
        if type(v) is str and len(v) > HASH_SLICE:
            long_texts.append(v)
            return ("<text>", len(v))
        if type(v) is tuple or type(v) is list:
            return (type(v).__name__, tuple(shape(x) for x in v))
        return v

    digest = blake2b(repr(shape(value)).encode("utf-8", "surrogatepass"), digest_size=16)
    for text in long_texts:
        hash_text(digest, text)
    return digest.digest()


def _identity_and_texts(item: dict[str, Any]) -> tuple[Any, ...]:
    def texts(key: str) -> tuple[Any, ...]:
        parts = item.get(key)
        if not isinstance(parts, list):
            return ()
        return tuple((_part_type(p), _part_text(p), hosted.canonical(p.get("annotations")) if isinstance(p, dict)
                      else None) for p in parts)

    return (
        item.get("id"),
        item.get("type"),
        item.get("call_id"),
        item.get("name"),
        item.get("arguments"),
        texts("content"),
        texts("summary"),
        hosted.final_fields(item),
    )


def _opaque(item: dict[str, Any]) -> bytes | None:
    """A digest of the item's encrypted reasoning, None without one. OpenAI encrypts it anew for each
    serialisation (captures/real-openai: the same reasoning item's encrypted_content differs between
    output_item.done and response.completed), so two copies can only be compared for presence; that they
    differ is said (LIF020: a check that cannot run), not taken as a changed item."""
    sealed = item.get("encrypted_content")
    if sealed is None:
        return None
    return _digest(sealed)


def _created_complete(raw: dict[str, Any]) -> bool:
    """An item the server creates already finished: the result of a tool the server ran (program_output, whose
    status cannot be in_progress in openai-python's ProgramOutput; shell_call_output, added completed by
    api.openai.com in captures/real-openai/vercel-openai-shell-skills-1.sse). Such an item has no
    in-progress phase to report."""
    item_type = raw.get("type")
    return raw.get("status") == "completed" and isinstance(item_type, str) and item_type.endswith("_output")


def _awaits_program(raw: dict[str, Any]) -> bool:
    """A function call that a program made (programmatic tool calling, `caller: {type: program}`): OpenAI
    finishes its item in_progress by design, the call still waiting for the output the client sends back
    (captures/real-openai/vercel-programmatic-tool-calling-1.sse, -2.sse)."""
    caller = raw.get("caller")
    return raw.get("type") == "function_call" and isinstance(caller, dict) and caller.get("type") == "program"


def _error_text(event: dict[str, Any]) -> str:
    nested = event.get("error")
    err = nested if isinstance(nested, dict) else event
    code, message = err.get("code"), err.get("message")
    return f"{code}: {message}" if code else str(message)
