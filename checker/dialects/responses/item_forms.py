"""Checks that need only an item's final form: its ids and, for a function call, its arguments.

An item reaches a client in one of three ways: announced (``output_item.added``, its events, its
``output_item.done``), done only (an ``output_item.done`` the stream never announced), or only in a snapshot
(listed in the ``output`` of ``response.in_progress`` or of the terminal response). Gateways that turn a Chat
Completions backend into a Responses stream often skip the announcement; the checks here must run on the
item all the same, so the machine calls them on every item's final form whichever way it came.

Pure functions: an item dict and a position in, findings out.
"""

from __future__ import annotations

from typing import Any

import orjson

from checker.findings import Finding, Position
from checker.rules import calls, ids

# OpenAI's id conventions per item type (IDS001).
ID_PREFIXES = {"message": "msg_", "reasoning": "rs_", "function_call": "fc_"}


def item_label(raw: dict[str, Any], index: int | None = None) -> str:
    item_id = raw.get("id")
    return item_id if isinstance(item_id, str) else f"#{index}"


def id_findings(raw: dict[str, Any], pos: Position) -> list[Finding]:
    """IDS001 (conventional prefixes) and IDS002 (a call's item id equal to its call_id) on one item."""
    out: list[Finding] = []
    item_id = raw.get("id") if isinstance(raw.get("id"), str) else None
    itype = raw.get("type") if isinstance(raw.get("type"), str) else None
    prefix = ID_PREFIXES.get(itype or "")
    if item_id is not None and prefix and not item_id.startswith(prefix):
        out.append(ids.ID_PREFIX.finding(pos, kind=f"{itype} item", id=item_id, prefix=prefix))
    call_id = raw.get("call_id")
    if itype == "function_call" and isinstance(call_id, str):
        if not call_id.startswith("call_"):
            out.append(ids.ID_PREFIX.finding(pos, kind="call", id=call_id, prefix="call_"))
        if call_id == item_id:
            out.append(ids.FC_ID_IS_CALL_ID.finding(pos, id=call_id))
    return out


def arguments_findings(raw: dict[str, Any], pos: Position, label: str) -> list[Finding]:
    """FNC001: a function call's final arguments must parse as JSON."""
    if raw.get("type") != "function_call":
        return []
    final = raw.get("arguments")
    if not isinstance(final, str):
        return []  # the schema reports a missing or mistyped field
    if raw.get("status") == "incomplete":
        # The server says the call was cut (max_output_tokens): its arguments are a prefix by design, and a
        # client must not run it. That the cut is reported honestly is LIF017's business.
        return []
    try:
        orjson.loads(final)
    except orjson.JSONDecodeError as exc:
        return [calls.ARGUMENTS_NOT_JSON.finding(pos, item=label, name=raw.get("name"), error=str(exc))]
    return []
