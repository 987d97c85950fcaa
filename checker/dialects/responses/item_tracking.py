"""The output items of one response: added, found again by id or output_index, done, released.

Pairing is always by id, so llama.cpp's delayed reasoning ``output_item.done`` is understood as a legal
interleaving, reported by its own rule for positional clients. An item the stream never announced is kept
apart (checker/dialects/responses/shadow.py) for the final output's reconciliation.
"""

from __future__ import annotations

from typing import Any

from checker.dialects.responses import hosted, item_forms
from checker.dialects.responses.final_forms import created_complete, part_annotations, part_text, part_type
from checker.dialects.responses.item_state import Item, Part
from checker.dialects.responses.scopes import Scope
from checker.dialects.responses.shadow import ShadowItems
from checker.findings import Finding, Position
from checker.rules import ids, items
from checker.text import TextAccumulator

ID_PREFIXES = item_forms.ID_PREFIXES


class ItemTracker:
    """Every item of the stream, in added order, by id, by output_index and (function calls) by call_id."""

    def __init__(self, *, keep_texts: bool = False) -> None:
        # Keep done items' texts (for the reports' text view); otherwise
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
        self.snapshot_checked: set[str] = set()
        self.reported_shadow_overflow = False

    def added(self, event: dict[str, Any], pos: Position, out: list[Finding]) -> None:
        """response.output_item.added."""
        raw = event.get("item")
        if not isinstance(raw, dict):
            return  # the schema reports it
        index = event.get("output_index")
        item_id = raw.get("id") if isinstance(raw.get("id"), str) else None
        itype = raw.get("type") if isinstance(raw.get("type"), str) else None
        call_id = raw.get("call_id") if isinstance(raw.get("call_id"), str) else None
        item = Item(id=item_id, type=itype, output_index=index if type(index) is int else None,
                    added_at=pos.event_index, call_id=call_id,
                    name=raw.get("name") if isinstance(raw.get("name"), str) else None,
                    execution=raw.get("execution") if isinstance(raw.get("execution"), str) else None)
        item.tool = hosted.start(itype, raw, item.label, keep_texts=self.keep_texts)
        self._added_place(item, pos, out)
        self._added_ids(item, pos, out)
        if itype == "function_call" and call_id is not None:
            self._added_call(item, call_id, raw, pos, out)
        status = raw.get("status")
        item.had_status = "status" in raw
        if "status" in raw and status != "in_progress" and not created_complete(raw):
            out.append(items.ADDED_STATUS.finding(pos, status=status))
        # Parts an added item already carries count as added (and done).
        for key, parts in (("content", item.content), ("summary", item.summary)):
            initial = raw.get(key)
            if isinstance(initial, list):
                for n, part in enumerate(initial):
                    text = part_text(part)
                    parts.append(Part(index=n, type=part_type(part), text=TextAccumulator(text or ""),
                                      text_done=True, closed=True, cited=part_annotations(part)))
        self.items.append(item)
        if item_id is not None:
            # On a duplicate id the newest item wins: the events that follow are its.
            self.by_id[item_id] = item
        if item.output_index is not None:
            self.by_index.setdefault(item.output_index, item)

    def _added_place(self, item: Item, pos: Position, out: list[Finding]) -> None:
        """Where an added item goes: after every earlier item is done, at the next output_index."""
        # Interleaving: a positional client pairs this added with the next done.
        for earlier in self.items:
            if not earlier.done:
                out.append(
                    items.INTERLEAVED.finding(
                        pos, later_type=item.type, later=item.label, earlier_type=earlier.type, earlier=earlier.label
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

    def _added_ids(self, item: Item, pos: Position, out: list[Finding]) -> None:
        item_id, itype = item.id, item.type
        if item_id is None:
            out.append(ids.ITEM_ID_MISSING.finding(pos))
            return
        previous = self.by_id.get(item_id)
        if previous is not None:
            out.append(
                ids.DUPLICATE_ITEM_ID.finding(pos, id=item_id, first=previous.output_index, second=item.output_index)
            )
        prefix = ID_PREFIXES.get(itype or "")
        if prefix and not item_id.startswith(prefix):
            out.append(ids.ID_PREFIX.finding(pos, kind=f"{itype} item", id=item_id, prefix=prefix))

    def _added_call(self, item: Item, call_id: str, raw: dict[str, Any], pos: Position, out: list[Finding]) -> None:
        if call_id in self.call_ids:
            out.append(ids.DUPLICATE_CALL_ID.finding(pos, id=call_id))
        if not call_id.startswith("call_"):
            out.append(ids.ID_PREFIX.finding(pos, kind="call", id=call_id, prefix="call_"))
        if call_id == item.id:
            out.append(ids.FC_ID_IS_CALL_ID.finding(pos, id=call_id))
        self.call_ids.setdefault(call_id, item)
        args = raw.get("arguments")
        if isinstance(args, str) and args:
            item.arguments.append(args)

    def resolve(self, etype: str, event: dict[str, Any], pos: Position, out: list[Finding]) -> Item | None:
        """The item an item-scoped event names: by item_id, else by output_index (None: no such item)."""
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
                        pos, type=etype, item_id=item_id, index=index, holder=f"item {by_index.label!r}",
                        details={"type": etype, "item_id": item_id, "index": index, "expected": by_index.label},
                    )
                )
            elif by_index is None and type(index) is int:
                out.append(
                    # No item at that index (the gpt-oss reference server's *.done events, one index past their
                    # item's): the details leave "expected" out rather than carry a null.
                    items.ITEM_ID_MISMATCH.finding(pos, type=etype, item_id=item_id, index=index,
                                                   holder="empty (no output_item.added put an item there)",
                                                   details={"type": etype, "item_id": item_id, "index": index})
                )
            return item
        if by_index is not None:
            return by_index
        out.append(items.UNKNOWN_ITEM.finding(pos, type=etype, item=item_id if item_id is not None else index,
                                              index=index))
        return None

    def release(self, item: Item) -> None:
        """A done item's text is no longer compared with anything but by digest."""
        for part in (*item.content, *item.summary):
            part.text = part.text.compacted() if self.keep_texts else TextAccumulator()
            part.cited = []
        item.arguments = item.arguments.compacted() if self.keep_texts else TextAccumulator()

    def shell_call(self, call_id: str | None) -> hosted.ToolState | None:
        """The first shell call with this call_id (openai-node looks a shell output's call up this way)."""
        if call_id is None:
            return None
        for other in self.items:
            if other.type == "shell_call" and other.call_id == call_id:
                return other.tool
        return None

    def unannounced_event(self, etype: str, scope: Scope, event: dict[str, Any], pos: Position,
                          out: list[Finding]) -> None:
        """An item event resolve could not place (ITM004): keep its text by item_id for reconciliation."""
        item_id = event.get("item_id")
        if scope.target == "item" or not isinstance(item_id, str) or item_id in self.by_id:
            return
        out.extend(self.shadow.event(etype, scope.target, scope.role, scope.field, event, pos))

    def snapshot_items(self, response: dict[str, Any], terminal: bool, pos: Position, out: list[Finding]) -> None:
        """The final-form checks on items a snapshot lists that the stream never announced nor finished:
        their ids once, where first listed; a function call's arguments in the terminal response, which is
        what the SDKs return for it."""
        output = response.get("output")
        if not isinstance(output, list):
            return
        for index, final in enumerate(output):
            if not isinstance(final, dict):
                continue
            fid = final.get("id") if isinstance(final.get("id"), str) else None
            known = self.by_id.get(fid) if fid is not None else None
            if known is None and fid not in self.snapshot_checked:
                if fid is not None:
                    self.snapshot_checked.add(fid)
                out.extend(item_forms.id_findings(final, pos))
            if terminal and (known is None or not known.done):
                out.extend(item_forms.arguments_findings(final, pos, item_forms.item_label(final, index)))
