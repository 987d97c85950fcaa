"""response.output_item.done: the item's final form against its added form and what was streamed into it.

What a client keeps of an item is its done form, so from here on the item is compared by digest
(checker/dialects/responses/final_forms.py) and its streamed text is released.
"""

from __future__ import annotations

from typing import Any

from checker.dialects.responses import item_forms
from checker.dialects.responses.final_forms import awaits_program, fingerprint, opaque, part_text, part_type
from checker.dialects.responses.item_state import Item, Part
from checker.dialects.responses.item_tracking import ItemTracker
from checker.dialects.responses.parts import close_parts, compare_parts
from checker.findings import Finding, Position
from checker.rules import calls, ids, items, reconcile
from checker.text import TextAccumulator, describe_difference

# Items the SDKs let go without an id until their done (openai-python _compatible_output_id, openai-node
# validateResponseOutputItemIdentity), and those whose call_id openai-node routes by (hasRoutedOutputCallIdentity).
OPTIONAL_ID_TYPES = frozenset({"function_call", "custom_tool_call"})
ROUTED_CALL_TYPES = frozenset({"function_call", "custom_tool_call", "shell_call", "shell_call_output"})


def done(tracker: ItemTracker, event: dict[str, Any], pos: Position, out: list[Finding]) -> None:
    raw = event.get("item")
    if not isinstance(raw, dict):
        return
    item_id = raw.get("id") if isinstance(raw.get("id"), str) else None
    index = event.get("output_index")
    item = tracker.by_id.get(item_id) if item_id is not None else None
    if item is None and type(index) is int:
        # The SDKs find the added item by output_index, whatever id the done item carries: a changed id is
        # the same item's identity changing, not an item that was never added.
        item = tracker.by_index.get(index)
    if item is None:
        out.append(items.DONE_WITHOUT_ADDED.finding(pos, item=item_id if item_id is not None else index))
        _done_unannounced(tracker, raw, item_id, index, pos, out)
        return
    _done_identity(tracker, item, raw, index, pos, out)
    done_id = raw.get("id")
    if isinstance(done_id, str) and done_id != item.id and not item.done:
        # What a client keeps is the done form: the item is known by its done id from here on (ITM007 has
        # reported the change), so the final output is compared with that.
        item.id = done_id
        tracker.by_id.setdefault(done_id, item)
    if item.done:
        out.append(items.DUPLICATE_DONE.finding(pos, item=item.label))
        return
    item.done = True
    tracker.done_items.append(item)
    _done_status(item, raw, pos, out)
    if item.type == "function_call":
        _done_function_call(item, raw, pos, out)
    if item.tool is not None:
        item.tool.done(raw, pos, out)
    for key, parts in (("content", item.content), ("summary", item.summary)):
        close_parts(item, key, parts, pos, out)
        final = raw.get(key)
        if isinstance(final, list) and parts:
            compare_parts(item, key, parts, final, pos, out)
    item.final_fingerprint = fingerprint(raw)
    item.final_opaque = opaque(raw)
    tracker.release(item)


def _done_status(item: Item, raw: dict[str, Any], pos: Position, out: list[Finding]) -> None:
    """A done item's status must be final; its absence matters only where the added item had one (OpenAI's
    reasoning items carry none at all)."""
    item.done_status = raw.get("status") if isinstance(raw.get("status"), str) else None
    status = raw.get("status")
    # A hosted-tool call may also end failed (its schemas' status enums say so; the schema judges the rest).
    ended = ("completed", "incomplete", "failed") if item.tool is not None else ("completed", "incomplete")
    if ("status" in raw or item.had_status) and status not in ended and not awaits_program(raw):
        out.append(items.DONE_STATUS.finding(pos, status=status, details={"status": status,
                                                                          "item_type": item.type}))


def _done_identity(tracker: ItemTracker, item: Item, raw: dict[str, Any], index: Any, pos: Position,
                   out: list[Finding]) -> None:
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
    other = tracker.by_index.get(index) if moved else None
    for fname, added, done_value in (
        ("type", item.type, done_type),
        ("id", item.id, item.id if gains_optional_id else done_id),
        ("call_id", item.call_id, done_call),
        ("output_index", item.output_index, index if moved else item.output_index),
    ):
        if added != done_value:
            out.append(items.DONE_IDENTITY.finding(
                pos, field=fname, added=added, done=done_value, item_type=item.type,
                routed_call=item.type in ROUTED_CALL_TYPES,
                other=other.label if other is not None else None))


def _done_function_call(item: Item, raw: dict[str, Any], pos: Position, out: list[Finding]) -> None:
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


def _done_unannounced(tracker: ItemTracker, raw: dict[str, Any], item_id: str | None, index: Any, pos: Position,
                      out: list[Finding]) -> None:
    """An output_item.done without added (ITM008): the item exists from here on, and every check of a
    final form runs on it as on an announced item's done."""
    itype = raw.get("type") if isinstance(raw.get("type"), str) else None
    call_id = raw.get("call_id") if isinstance(raw.get("call_id"), str) else None
    item = Item(id=item_id, type=itype, output_index=index if type(index) is int else None, added_at=None,
                call_id=call_id, name=raw.get("name") if isinstance(raw.get("name"), str) else None,
                execution=raw.get("execution") if isinstance(raw.get("execution"), str) else None,
                done=True, announced=False)
    item.done_status = raw.get("status") if isinstance(raw.get("status"), str) else None
    out.extend(item_forms.id_findings(raw, pos))
    if itype == "function_call" and call_id is not None:
        if call_id in tracker.call_ids:
            out.append(ids.DUPLICATE_CALL_ID.finding(pos, id=call_id))
        tracker.call_ids.setdefault(call_id, item)
    if "status" in raw and item.done_status not in ("completed", "incomplete"):
        out.append(items.DONE_STATUS.finding(pos, status=raw.get("status"),
                                             details={"status": raw.get("status"), "item_type": itype}))
    if item_id is not None:
        _reconcile_shadow(tracker, item, item_id, raw, pos, out)
    out.extend(item_forms.arguments_findings(raw, pos, item.label))
    _take_final_form(item, raw)
    if item_id is None:
        return  # nothing can name it again; its checks are done
    tracker.items.append(item)
    tracker.done_items.append(item)
    tracker.by_id[item_id] = item
    if item.output_index is not None:
        tracker.by_index.setdefault(item.output_index, item)
    tracker.release(item)


def _reconcile_shadow(tracker: ItemTracker, item: Item, item_id: str, raw: dict[str, Any], pos: Position,
                      out: list[Finding]) -> None:
    """What the stream sent for an item it never announced, against the item's done form."""
    streamed_name = tracker.shadow.name(item_id)
    if streamed_name is not None and item.name is not None and streamed_name != item.name:
        out.append(calls.NAME_MISMATCH.finding(pos, done=streamed_name, item_name=item.name))
    for what, diff in tracker.shadow.differences(item_id, raw):
        out.append(reconcile.ITEM_DONE_MISMATCH.finding(pos, what=what, diff=diff))
    tracker.shadow.discard(item_id)


def _take_final_form(item: Item, raw: dict[str, Any]) -> None:
    """What a client holds of an item known only from its done is that form: its text from here on."""
    for key, parts in (("content", item.content), ("summary", item.summary)):
        final = raw.get(key)
        if isinstance(final, list):
            for n, part in enumerate(final):
                parts.append(Part(index=n, type=part_type(part), text=TextAccumulator(part_text(part) or ""),
                                  text_done=True, closed=True))
    if isinstance(raw.get("arguments"), str):
        item.arguments = TextAccumulator(raw["arguments"])
        item.arguments_done = True
    item.final_fingerprint = fingerprint(raw)
    item.final_opaque = opaque(raw)
