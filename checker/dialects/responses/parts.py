"""An item's content and summary parts, and a function call's arguments: the events that write into them.

Functions of one item: they read and change only the ``Item`` and ``Part`` they are given (no other item,
no lifecycle), and append what they find to ``out``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from checker.dialects.responses import hosted
from checker.dialects.responses.final_forms import part_annotations, part_text, part_type
from checker.dialects.responses.item_state import Item, Part
from checker.dialects.responses.scopes import ANNOTATION_ADDED, TEXT_DONE_TYPE, Scope
from checker.findings import Finding, Position
from checker.rules import calls, content, reasoning, reconcile
from checker.text import TextAccumulator, describe_difference


@dataclass(frozen=True, slots=True)
class PartRules:
    """The rules one kind of part (content or summary) breaks, which differ only by family."""
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


def content_event(etype: str, scope: Scope, item: Item, event: dict[str, Any], pos: Position,
                  out: list[Finding]) -> None:
    _part_event(etype, scope, item, "content", event, pos, out)


def summary_event(etype: str, scope: Scope, item: Item, event: dict[str, Any], pos: Position,
                  out: list[Finding]) -> None:
    _part_event(etype, scope, item, "summary", event, pos, out)


def _part_event(etype: str, scope: Scope, item: Item, key: str, event: dict[str, Any], pos: Position,
                out: list[Finding]) -> None:
    parts = item.content if key == "content" else item.summary
    rules = PART_RULES[key]
    raw_index = event.get("content_index" if key == "content" else "summary_index")
    index = raw_index if type(raw_index) is int else None
    if scope.role == "part_added":
        expected = len(parts)
        if index is not None and index != expected:
            out.append(rules.not_appended.finding(pos, got=index, expected=expected))
        part = event.get("part")
        initial = part_text(part) if isinstance(part, dict) else None
        parts.append(Part(index=index if index is not None else expected, type=part_type(part),
                          text=TextAccumulator(initial or ""), cited=part_annotations(part)))
        return
    found = _locate_part(etype, scope, item, parts, index, pos, out, rules)
    if found is None:
        return
    if scope.part_type is not None and found.type is not None and found.type != scope.part_type:
        out.append(content.PART_TYPE_MISMATCH.finding(pos, type=etype, part_type=found.type))
    if scope.role == "delta":
        delta = event.get(scope.field or "delta")
        if isinstance(delta, str):
            found.text.append(delta)
    elif etype == ANNOTATION_ADDED:
        _annotation(item, found, event, pos, out)
    elif scope.role == "text_done":
        _text_done(etype, scope, item, found, event, pos, out, rules)
    elif scope.role == "part_done":
        _part_done(item, key, found, event, pos, out)


def _locate_part(etype: str, scope: Scope, item: Item, parts: list[Part], index: int | None, pos: Position,
                 out: list[Finding], rules: PartRules) -> Part | None:
    """The open part an event writes into (None: it has none, reported), creating one for a delta or a text
    done that arrived before its part was added."""
    part = find_part(parts, index)
    if part is None and parts and index is not None and not parts[-1].closed:
        # An index no part has while a part is open: the index is wrong,
        # the text belongs to the open part. (With every part closed it is
        # a new part that was never added: handled below.)
        out.append(rules.index_mismatch.finding(pos, type=etype, got=index, expected=parts[-1].index))
        part = parts[-1]
        index = None
    if part is None:
        if scope.role not in ("delta", "text_done"):
            out.append(rules.after_done.finding(pos, type=etype, index=index, item=item.label))
            return None
        out.append(rules.before_part.finding(pos, type=etype, item=item.label, index=index,
                                             # FindingDetails' index is an int: an event without one has none
                                             details={"type": etype, "item": item.label,
                                                      **({"index": index} if index is not None else {})}))
        part = Part(index=index if index is not None else len(parts), type=scope.part_type,
                    text=TextAccumulator(), implicit=True)
        parts.append(part)
    if part.closed:
        out.append(rules.after_done.finding(pos, type=etype, index=part.index, item=item.label))
        return None
    open_part = parts[-1]
    if index is not None and part is not open_part:
        out.append(rules.index_mismatch.finding(pos, type=etype, got=index, expected=open_part.index))
    return part


def _text_done(etype: str, scope: Scope, item: Item, part: Part, event: dict[str, Any], pos: Position,
               out: list[Finding], rules: PartRules) -> None:
    if part.text_done:
        out.append(rules.after_done.finding(pos, type=etype, index=part.index, item=item.label))
        return
    part.text_done = True
    final = event.get(scope.field or "text")
    if isinstance(final, str) and not part.text.equals(final):
        out.append(
            reconcile.TEXT_DONE_MISMATCH.finding(pos, type=etype, diff=describe_difference(part.text.text(), final))
        )


def _part_done(item: Item, key: str, part: Part, event: dict[str, Any], pos: Position, out: list[Finding]) -> None:
    if not part.text_done and not part.implicit:
        text_done_missing(item, key, part, pos, out)
    part.closed = True
    done_part = event.get("part")
    text = part_text(done_part) if isinstance(done_part, dict) else None
    if text is not None and not part.text.equals(text):
        out.append(reconcile.PART_DONE_MISMATCH.finding(pos, diff=describe_difference(part.text.text(), text)))
    compare_annotations("content_part.done", item, part, done_part, pos, out)


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


def compare_annotations(where: str, item: Item, part: Part, final: Any, pos: Position, out: list[Finding]) -> None:
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


def find_part(parts: list[Part], index: int | None) -> Part | None:
    if not parts:
        return None
    if index is None:
        # No index to go by: the open part, else the last one.
        return parts[-1]
    for part in reversed(parts):
        if part.index == index:
            return part
    return None


def text_done_missing(item: Item, key: str, part: Part, pos: Position, out: list[Finding]) -> None:
    done_type = TEXT_DONE_TYPE.get(part.type or "", "the text .done event")
    label = f"{'content' if key == 'content' else 'summary'} part {part.index}"
    out.append(
        content.TEXT_DONE_MISSING.finding(
            pos, part=label, item=item.label, done_type=done_type,
            details={"done_type": done_type, "item": item.label, "index": part.index},
        )
    )


def close_parts(item: Item, key: str, parts: list[Part], pos: Position, out: list[Finding]) -> None:
    """At output_item.done: every part still open is closed, and reported unless a delta created it."""
    for part in parts:
        if part.closed:
            continue
        if not part.implicit:
            rule = content.PART_NOT_DONE if key == "content" else reasoning.SUMMARY_PART_NOT_DONE
            out.append(rule.finding(pos, item=item.label, index=part.index))
        if not part.text_done:
            text_done_missing(item, key, part, pos, out)
        part.closed = True


def compare_parts(item: Item, key: str, parts: list[Part], final: list[Any], pos: Position,
                  out: list[Finding]) -> None:
    """The parts an output_item.done lists against those streamed: their number, texts and annotations."""
    if len(final) != len(parts):
        out.append(
            reconcile.ITEM_DONE_MISMATCH.finding(
                pos, what=key, diff=f"{len(final)} part(s) at done, {len(parts)} streamed"
            )
        )
    for part, final_part in zip(parts, final):
        if key == "content":
            compare_annotations("output_item.done", item, part, final_part, pos, out)
        text = part_text(final_part)
        if text is None:
            continue
        if not part.text.equals(text):
            out.append(
                reconcile.ITEM_DONE_MISMATCH.finding(
                    pos, what=f"{key}[{part.index}] text", diff=describe_difference(part.text.text(), text)
                )
            )


def args_event(etype: str, scope: Scope, item: Item, event: dict[str, Any], pos: Position,
               out: list[Finding]) -> None:
    """function_call_arguments.delta and .done."""
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
