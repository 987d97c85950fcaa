"""What was streamed for items the stream never announced, kept by ``item_id`` for reconciliation.

An event for an item without ``output_item.added`` is reported where it arrives (ITM004), and the
machine's own item state cannot take it: there is no item to put it in. Its text still reaches clients
(openai-python places it by ``output_index``), and the item's final form (an ``output_item.done`` without
added, or the terminal response's output) must agree with it. So the text and arguments of such events are
kept here, by the ``item_id`` they name, and compared with the final form when it comes: the deltas with a
text ``.done`` (REC001), a ``content_part.done`` (REC002), ``function_call_arguments.done`` (REC006), and
the whole item with its ``output_item.done`` or the terminal output (REC003/REC004, through
:meth:`ShadowItems.differences`).

Memory: texts are :class:`TextAccumulator`s (bounded); at most ``MAX_ITEMS`` items are kept, and the caller
is told once when more arrive (see :attr:`ShadowItems.overflowed`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from checker.dialects.responses.final_forms import part_text as _part_text
from checker.findings import Finding, Position
from checker.rules import reconcile
from checker.text import TextAccumulator, describe_difference

MAX_ITEMS = 10_000


@dataclass(slots=True)
class ShadowItem:
    """What was streamed for one item never announced: its texts (by part index) and arguments."""

    content: dict[int, TextAccumulator] = field(default_factory=dict)
    summary: dict[int, TextAccumulator] = field(default_factory=dict)
    arguments: TextAccumulator | None = None
    name: str | None = None  # the name function_call_arguments.done gave


class ShadowItems:
    def __init__(self) -> None:
        self._items: dict[str, ShadowItem] = {}
        self.overflowed = False  # more than MAX_ITEMS unannounced items: the rest are not reconciled

    def __contains__(self, item_id: object) -> bool:
        return item_id in self._items

    def event(self, etype: str, target: str, role: str, text_field: str | None, event: dict[str, Any],
              pos: Position) -> list[Finding]:
        """One content, summary or arguments event of an unannounced item (``event["item_id"]`` a string)."""
        item_id = event["item_id"]
        item = self._items.get(item_id)
        if item is None:
            if len(self._items) >= MAX_ITEMS:
                self.overflowed = True
                return []
            item = self._items[item_id] = ShadowItem()
        if target == "args":
            return self._arguments(item, role, event, pos)
        if target not in ("content", "summary"):
            return []
        parts = item.content if target == "content" else item.summary
        raw_index = event.get("content_index" if target == "content" else "summary_index")
        index = raw_index if type(raw_index) is int else 0
        if role == "part_added":
            part = event.get("part")
            text = _part_text(part)
            parts[index] = TextAccumulator(text or "")
            return []
        acc = parts.setdefault(index, TextAccumulator())
        if role == "delta":
            delta = event.get(text_field or "delta")
            if isinstance(delta, str):
                acc.append(delta)
        elif role == "text_done":
            final = event.get(text_field or "text")
            if isinstance(final, str) and not acc.equals(final):
                return [reconcile.TEXT_DONE_MISMATCH.finding(pos, type=etype,
                                                             diff=describe_difference(acc.text(), final))]
        elif role == "part_done":
            text = _part_text(event.get("part"))
            if text is not None and not acc.equals(text):
                return [reconcile.PART_DONE_MISMATCH.finding(pos, diff=describe_difference(acc.text(), text))]
        return []

    @staticmethod
    def _arguments(item: ShadowItem, role: str, event: dict[str, Any], pos: Position) -> list[Finding]:
        if item.arguments is None:
            item.arguments = TextAccumulator()
        if role == "delta":
            delta = event.get("delta")
            if isinstance(delta, str):
                item.arguments.append(delta)
            return []
        if isinstance(event.get("name"), str):
            item.name = event["name"]
        final = event.get("arguments")
        if not isinstance(final, str) or item.arguments.equals(final):
            return []
        found = reconcile.ARGUMENTS_DONE_MISMATCH.finding(
            pos, diff=describe_difference(item.arguments.text(), final))
        item.arguments = TextAccumulator(final)  # as for announced calls: arguments.done is the final word
        return [found]

    def differences(self, item_id: str, final: dict[str, Any]) -> list[tuple[str, str]]:
        """(what, how) for each text of ``final`` that contradicts what was streamed for ``item_id``."""
        item = self._items.get(item_id)
        if item is None:
            return []
        found: list[tuple[str, str]] = []
        args = final.get("arguments")
        if item.arguments is not None and isinstance(args, str) and not item.arguments.equals(args):
            found.append(("arguments", describe_difference(item.arguments.text(), args)))
        for key, parts in (("content", item.content), ("summary", item.summary)):
            listed = final.get(key)
            if not parts or not isinstance(listed, list):
                continue
            for index, acc in sorted(parts.items()):
                text = _part_text(listed[index]) if 0 <= index < len(listed) else None
                if text is None:
                    found.append((f"{key}[{index}] text", f"streamed {len(acc)} character(s), the item has no "
                                                          f"{key} part {index}"))
                elif not acc.equals(text):
                    found.append((f"{key}[{index}] text", describe_difference(acc.text(), text)))
        return found

    def name(self, item_id: str) -> str | None:
        """The function name the item's function_call_arguments.done gave, if any."""
        item = self._items.get(item_id)
        return item.name if item is not None else None

    def discard(self, item_id: str) -> None:
        self._items.pop(item_id, None)
