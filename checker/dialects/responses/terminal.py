"""The terminal event (response.completed, .incomplete, .failed): its status, usage and truncation, the
items still open, and its final ``output`` reconciled with what the stream said of every item.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from checker.dialects.responses.final_forms import fingerprint, opaque, part_text
from checker.dialects.responses.item_state import Item
from checker.dialects.responses.item_tracking import ItemTracker
from checker.dialects.responses.lifecycle_table import MachineState
from checker.dialects.responses.shadow import MAX_ITEMS as SHADOW_LIMIT
from checker.dialects.responses.vocabulary import TERMINAL_STATUS
from checker.findings import Finding, Position, Severity
from checker.rules import lifecycle, reconcile
from checker.text import describe_difference


def check_terminal(etype: str, response: dict[str, Any], pos: Position, out: list[Finding], *, st: MachineState,
                   tracker: ItemTracker, request: dict[str, Any]) -> None:
    """Every check the terminal event ``etype`` carrying ``response`` is subject to."""
    _unfinished_items(etype, response, tracker, pos, out)
    status = response.get("status")
    if st.terminal_status is None and isinstance(status, str):
        st.terminal_status = status
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
        _usage(usage, pos, out)
        _truncation(etype, response, usage, st, request, pos, out)
    _unverifiable(etype, response, tracker, request, pos, out)
    if "output" in response and isinstance(response["output"], list):
        _final_output(etype, response["output"], tracker, pos, out)
        _final_statuses(etype, response["output"], tracker, pos, out)


def _unfinished_items(etype: str, response: dict[str, Any], tracker: ItemTracker, pos: Position,
                      out: list[Finding]) -> None:
    """LIF008: items with no output_item.done, and which of them the terminal's output does not list."""
    open_items = [it for it in tracker.items if not it.done]
    if not open_items:
        return
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


def _usage(usage: dict[str, Any], pos: Position, out: list[Finding]) -> None:
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


def _output_limit(response: dict[str, Any], request: dict[str, Any]) -> Any:
    limit = response.get("max_output_tokens")
    if type(limit) is not int:
        # A response may echo null; the request's limit still applied.
        limit = request.get("max_output_tokens")
    return limit


def _truncation(etype: str, response: dict[str, Any], usage: dict[str, Any], st: MachineState,
                request: dict[str, Any], pos: Position, out: list[Finding]) -> None:
    """LIF017: output cut by max_output_tokens must not be reported completed."""
    limit = _output_limit(response, request)
    produced = usage.get("output_tokens")
    if type(limit) is int and type(produced) is int and produced >= limit:
        st.truncated = True
        if etype == "response.completed":
            out.append(
                lifecycle.TRUNCATED_AS_COMPLETED.finding(pos, output_tokens=produced, max_output_tokens=limit)
            )


def _unverifiable(etype: str, response: dict[str, Any], tracker: ItemTracker, request: dict[str, Any],
                  pos: Position, out: list[Finding]) -> None:
    """LIF020: say which terminal checks could not run, instead of passing them silently."""
    usage = response.get("usage")
    if etype == "response.completed":
        limit = _output_limit(response, request)
        produced = usage.get("output_tokens") if isinstance(usage, dict) else None
        if type(limit) is int and type(produced) is not int:
            carried = "no usage" if "usage" not in response else (
                "usage null" if usage is None else "usage without an integer output_tokens")
            out.append(lifecycle.CHECK_NOT_RUN.finding(
                pos, check=f"truncation by max_output_tokens {limit} (LIF017)",
                reason=f"{etype} carries {carried}, so the tokens produced are unknown",
                details={"check": "LIF017", "max_output_tokens": limit}))
    if not isinstance(response.get("output"), list) and tracker.done_items:
        out.append(lifecycle.CHECK_NOT_RUN.finding(
            pos, check=f"the final output against the {len(tracker.done_items)} done item(s) (REC004)",
            reason=f"{etype} carries no output list", details={"check": "REC004"}))
    if tracker.shadow.overflowed and not tracker.reported_shadow_overflow:
        tracker.reported_shadow_overflow = True
        out.append(lifecycle.CHECK_NOT_RUN.finding(
            pos, check="the text of some items never announced (REC003/REC004)",
            reason=f"more than {SHADOW_LIMIT} such items; the rest were not kept", details={"check": "REC004"}))


def _final_output(etype: str, output: list[Any], tracker: ItemTracker, pos: Position, out: list[Finding]) -> None:
    """REC004: the final output should list every item in output order: a done one as it was done, an
    unfinished one as the final word on it (the recovery openai-python applies). Unfinished items themselves
    are LIF008's."""
    streamed = sorted(tracker.items,
                      key=lambda it: (it.output_index if it.output_index is not None else 1 << 30))
    if not output:
        if tracker.done_items:
            out.append(reconcile.COMPLETED_OUTPUT_EMPTY.finding(pos, type=etype, count=len(tracker.done_items)))
        return
    problems: list[str] = []
    opaque_differs: list[str] = []
    listed = _announced_output(output, tracker, problems)
    if len(listed) != len(streamed):
        problems.append(f"{len(listed)} item(s) in output, {len(streamed)} item(s) in the stream")
    for (index, final), item in zip(listed, streamed):
        _compare_final_item(index, final, item, problems, opaque_differs)
    for problem in problems[:5]:
        out.append(reconcile.COMPLETED_OUTPUT_MISMATCH.finding(pos, type=etype, detail=problem))
    if opaque_differs:
        named = ", ".join(opaque_differs[:3]) + (
            f" and {len(opaque_differs) - 3} more" if len(opaque_differs) > 3 else "")
        out.append(lifecycle.CHECK_NOT_RUN.finding(
            pos, check=f"encrypted_content of {named} against output_item.done (REC004)",
            reason="it differs and is opaque (OpenAI encrypts reasoning anew each time it serialises an item); "
                   "the rest of the item was compared", details={"check": "REC004", "what": "encrypted_content"}))


def _announced_output(output: list[Any], tracker: ItemTracker, problems: list[str]) -> list[tuple[int, Any]]:
    """The output entries to compare in output order with the stream's items. An item the stream never
    announced nor finished, but streamed text for, is reconciled here by its id with that text (see
    checker/dialects/responses/shadow.py); an id the stream never had is a problem."""
    listed: list[tuple[int, Any]] = []
    for index, final in enumerate(output):
        fid = final.get("id") if isinstance(final, dict) else None
        if isinstance(fid, str) and fid not in tracker.by_id:
            if fid in tracker.shadow:
                for what, diff in tracker.shadow.differences(fid, final):
                    problems.append(f"output[{index}] ({fid!r}) {what} differs from its streamed deltas ({diff})")
            else:
                problems.append(f"output[{index}] is {final.get('type')} {fid!r}, which the stream never had")
            continue
        listed.append((index, final))
    return listed


def _compare_final_item(index: int, final: Any, item: Item, problems: list[str], opaque_differs: list[str]) -> None:
    """One output entry against the stream's item at the same place."""
    if not isinstance(final, dict):
        problems.append(f"output[{index}] is not an object")
        return
    fid, ftype = final.get("id"), final.get("type")
    if (fid, ftype) != (item.id, item.type):
        problems.append(f"output[{index}] is {ftype} {fid!r}, the stream's item {index} is {item.type} {item.id!r}")
        return
    if item.final_fingerprint is None:
        if not item.done:
            for what, diff in _streamed_differences(item, final):
                problems.append(f"output[{index}] ({fid!r}) {what} differs from what was streamed ({diff})")
        return
    if fingerprint(final) != item.final_fingerprint:
        problems.append(f"output[{index}] ({fid!r}) differs from its output_item.done")
    sealed = opaque(final)
    if (sealed is None) != (item.final_opaque is None):  # its presence is comparable, its bytes are not
        where = "output_item.done" if sealed is None else "the final output"
        problems.append(f"output[{index}] ({fid!r}): only {where} carries encrypted_content")
    elif sealed != item.final_opaque:
        opaque_differs.append(f"output[{index}] ({fid!r})")


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
            text = part_text(listed[part.index]) if 0 <= part.index < len(listed) else None
            if text is not None and not part.text.equals(text):
                found.append((f"{key}[{part.index}] text", describe_difference(part.text.text(), text)))
    return found


def _final_statuses(etype: str, output: list[Any], tracker: ItemTracker, pos: Position, out: list[Finding]) -> None:
    """REC007: a done item's status in the terminal output must be the one its output_item.done gave."""
    for final in output:
        if not isinstance(final, dict) or not isinstance(final.get("id"), str):
            continue
        item = tracker.by_id.get(final["id"])
        status = final.get("status")
        # A done status that is not final is ITM013's; its later completion is no contradiction.
        if item is None or not item.done or item.done_status not in ("completed", "incomplete") \
                or not isinstance(status, str):
            continue
        if status != item.done_status:
            out.append(reconcile.ITEM_STATUS_CONTRADICTION.finding(
                pos, type=etype, item=item.label, final=status, done=item.done_status))
