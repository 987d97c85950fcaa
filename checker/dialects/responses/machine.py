"""The Responses state machine: decoded event objects in, findings out.

Theory of operation
-------------------
The machine is sans-I/O (h11's model): the engine hands it one JSON object at
a time with its position and receives findings back; it never reads, waits or
raises for a protocol problem. It keeps exactly the state the rules of docs/spec.md §2
need, each kind in its own module of this package:

* the lifecycle state of the response, moved by ``LIFECYCLE``
  (lifecycle_table.py): a table of (state, kind of event) → (next state, rule
  broken or None). An event that arrives where the table has no row breaks a
  rule; the table is the grammar.
* the output items, by id and by ``output_index`` (item_tracking.py,
  item_done.py; pairing is always by id, so llama.cpp's delayed reasoning
  ``output_item.done`` is understood as a legal interleaving, reported by its
  own rule for positional clients);
* per item, its content parts and summary parts (index, type, open/closed),
  and the text or arguments streamed into each (parts.py), as
  ``TextAccumulator``s so memory stays bounded by the open items;
* the terminal event's checks and the final output's reconciliation (terminal.py);
* the hot path for well-placed deltas (fast_path.py), which must report
  exactly what this general path would.

Field *shapes* (types, required fields) are the schemas' job, not this
module's: a missing ``output_index`` is reported once, by the schema check,
and the machine simply pairs by id. Item-scoped events are described by
``SCOPES`` (scopes.py): which item type they belong to, whether they target a
content part, a summary part or the arguments, and what role they play.

Where code may live: rules are raised only through the registry's ``Rule``
objects; positions come from the caller; nothing here knows about profiles
(the engine applies them to the findings).
"""

from __future__ import annotations

from typing import Any

from checker.dialects.base import ItemSummary, StreamSummary
from checker.dialects.responses import fast_path, hosted, item_done, parts
from checker.dialects.responses.fast_path import Run
from checker.dialects.responses.final_forms import part_type
from checker.dialects.responses.item_state import Item, Part
from checker.dialects.responses.item_tracking import ItemTracker
from checker.dialects.responses.lifecycle_table import (
    CREATED,
    IN_PROGRESS,
    ITEM,
    LIFECYCLE,
    LIFECYCLE_KIND,
    OTHER,
    QUEUED,
    TERMINAL,
    MachineState,
    advance,
    check_sequence,
)
from checker.dialects.responses.scopes import ALIASES, PART_OWNER, SCOPES, Scope
from checker.dialects.responses.snapshots import SnapshotFields
from checker.dialects.responses.terminal import check_terminal
from checker.dialects.responses.vocabulary import TERMINAL_TYPES
from checker.findings import Finding, Position
from checker.rules import framing, ids, items, lifecycle, schema

# Re-exported: the names other modules and tests know the machine's tables by.
__all__ = ["LIFECYCLE", "LIFECYCLE_KIND", "Item", "MachineState", "Part", "ResponsesMachine", "SCOPES", "Scope"]


class ResponsesMachine:
    """Consumes Responses event objects in order; returns findings per event."""

    def __init__(self, *, request: dict[str, Any] | None = None, known_types: frozenset[str] | None = None,
                 keep_texts: bool = False) -> None:
        self.state = MachineState()
        self.request = request or {}
        self.known_types = known_types
        self.fast_scopes = fast_path.fast_scopes(known_types)
        # Keep done items' texts (for item_texts(), the reports' text view); otherwise
        # a done item's text is released, so memory holds only the open items' text.
        self.keep_texts = keep_texts
        self.tracker = ItemTracker(keep_texts=keep_texts)
        # The tracker's tables under the machine's names (the same objects: the fast path reads them directly).
        self.items: list[Item] = self.tracker.items  # in added order
        self.by_id: dict[str, Item] = self.tracker.by_id
        self.by_index: dict[int, Item] = self.tracker.by_index
        self.snapshot_fields = SnapshotFields()
        # The fast path's delta run (see fast_path.Run); the general path clears it.
        self.run: Run | None = None
        # A hosted-tool input delta the general path took may start a run (see _tool_event).
        self.next_run: Run | None = None

    # -- entry points ---------------------------------------------------------

    @property
    def terminated(self) -> bool:
        return self.state.lifecycle == "terminal"

    # The hot path and the run it may start, bound as methods here (checker/dialects/responses/fast_path.py).
    try_fast = fast_path.try_fast
    run_spec = fast_path.run_spec

    def handle(self, event: dict[str, Any], pos: Position) -> list[Finding]:
        """One decoded event object (with a string ``type``) at ``pos``."""
        etype: str = event["type"]
        st = self.state
        if self.try_fast(etype, event):
            return []
        self.run = None  # the general path may close parts, finish items, change the lifecycle
        out: list[Finding] = []
        st.events += 1
        check_sequence(st, event, pos, out)
        if st.lifecycle == "terminal":
            self._after_terminal(etype, pos, out)
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
        advance(st, etype, kind, pos, out)
        if kind in (CREATED, QUEUED, IN_PROGRESS, TERMINAL):
            self._response_event(etype, event, pos, out)
        elif kind == ITEM:
            self._scoped_event(etype, sent, event, pos, out)
        elif etype == "error":
            out.append(lifecycle.ERROR_EVENT.finding(pos, detail=_error_text(event),
                                                     nested=isinstance(event.get("error"), dict)))
        elif self.known_types is not None and etype not in self.known_types:
            if ":" in etype:
                out.append(schema.VENDOR_EVENT.finding(pos, type=etype))
            else:
                out.append(schema.UNKNOWN_EVENT.finding(pos, type=etype))
        return out

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
            truncated=st.truncated, terminal_status=st.terminal_status,
            items=tuple(ItemSummary(it.id, it.type, it.output_index, it.done, it.added_at,
                                    tuple(part.type or "" for part in it.content), it.execution)
                  for it in self.items),
            texts=self.item_texts() if self.keep_texts else None,
        )

    def item_texts(self) -> list[dict[str, Any]]:
        """Read-only export for reports: what each item accumulated, in added order.

        Texts are as streamed (deltas, or what the added item carried); past
        ``KEEP_CHARS`` only the kept prefix exists, and ``exact`` says so.
        """
        def texts(held: list[Part]) -> list[dict[str, Any]]:
            return [{"index": p.index, "type": p.type, "text": p.text.text(), "exact": p.text.exact}
                    for p in held]

        return [
            {"id": it.id, "type": it.type, "output_index": it.output_index, "done": it.done,
             "name": it.name, "call_id": it.call_id, "content": texts(it.content), "summary": texts(it.summary),
             "arguments": it.arguments.text(), "arguments_exact": it.arguments.exact,
             "tool": it.tool.texts() if it.tool is not None else []}
            for it in self.items
        ]

    # -- the general path -----------------------------------------------------

    def _after_terminal(self, etype: str, pos: Position, out: list[Finding]) -> None:
        """Any event after the terminal one; a second terminal event is LIF007 too."""
        st = self.state
        out.append(framing.AFTER_TERMINAL.finding(pos, what=f"event {etype!r}", terminal=st.terminal_type))
        if etype in TERMINAL_TYPES:
            st.terminals.append(etype)
            out.append(
                lifecycle.MULTIPLE_TERMINAL.finding(pos, type=etype, first=st.terminal_type,
                                                    first_index=st.terminal_index)
            )

    def _response_event(self, etype: str, event: dict[str, Any], pos: Position, out: list[Finding]) -> None:
        """response.created, .queued, .in_progress and the terminal events: the response they carry."""
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
        self.tracker.snapshot_items(response, etype in TERMINAL_TYPES, pos, out)
        if etype in TERMINAL_TYPES:
            st.terminal_type = etype
            st.terminal_index = pos.event_index
            st.terminals.append(etype)
            check_terminal(etype, response, pos, out, st=st, tracker=self.tracker, request=self.request)

    def _scoped_event(self, etype: str, sent: str, event: dict[str, Any], pos: Position, out: list[Finding]) -> None:
        """An item-scoped event (``sent`` is its type as the stream named it, ``etype`` after aliases)."""
        if self.known_types is not None and sent not in self.known_types and sent not in ALIASES:
            # An event the profile's description does not define: OpenAI's own newer events
            # (apply_patch_call_operation_diff.*) that no published description has, or under Open Responses
            # OpenAI's names it does not adopt (response.reasoning_text.*, hosted-tool events). Still unknown
            # for the clients of that description, but the machine follows the item it belongs to.
            out.append(schema.UNKNOWN_EVENT.finding(pos, type=etype))
        index = event.get("output_index")
        if type(index) is int and index < 0:
            out.append(items.NEGATIVE_OUTPUT_INDEX.finding(pos, type=etype, index=index))
        self._item_event(etype, SCOPES[etype], event, pos, out)
        if self.next_run is not None:
            if not out:  # only a delta that broke nothing may start a run
                self.run = self.next_run
            self.next_run = None

    def _item_event(self, etype: str, scope: Scope, event: dict[str, Any], pos: Position, out: list[Finding]) -> None:
        if scope.role == "added" and scope.target == "item":
            self.tracker.added(event, pos, out)
            return
        if scope.role == "done" and scope.target == "item":
            item_done.done(self.tracker, event, pos, out)
            return
        item = self.tracker.resolve(etype, event, pos, out)
        if item is None:
            self.tracker.unannounced_event(etype, scope, event, pos, out)
            return
        if item.done:
            out.append(items.AFTER_ITEM_DONE.finding(pos, type=etype, item=item.label))
            return
        expected_type = scope.item_type
        if expected_type is None and scope.target == "content":
            expected_type = PART_OWNER.get(part_type(event.get("part")) or "")
        if expected_type is not None and item.type is not None and item.type != expected_type:
            out.append(items.FAMILY_MISMATCH.finding(pos, type=etype, item_type=item.type, item=item.label))
            return
        if scope.target == "content":
            parts.content_event(etype, scope, item, event, pos, out)
        elif scope.target == "summary":
            parts.summary_event(etype, scope, item, event, pos, out)
        elif scope.target == "args":
            parts.args_event(etype, scope, item, event, pos, out)
        elif scope.target == "tool" and item.tool is not None:
            self._tool_event(etype, item, item.tool, event, pos, out)

    def _tool_event(self, etype: str, item: Item, tool: hosted.ToolState, event: dict[str, Any], pos: Position,
                    out: list[Finding]) -> None:
        call_id = item.call_id
        appended = tool.event(etype, event, pos, out, lambda: self.tracker.shell_call(call_id))
        self.next_run = fast_path.tool_input_run(etype, event, appended)


def _error_text(event: dict[str, Any]) -> str:
    nested = event.get("error")
    err = nested if isinstance(nested, dict) else event
    code, message = err.get("code"), err.get("message")
    return f"{code}: {message}" if code else str(message)
