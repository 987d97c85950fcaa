"""Defects gateways cause (issue 14, "Defects missed on gateways"), on synthetic streams built for each case.

The rule captures (captures/rules/FNC001-unannounced-call.sse, REC003-unannounced-done-text.sse,
REC004-unannounced-text.sse, IDS002-snapshot-only-call.sse, REC007-…, LIF019-…, LIF020-…) pin the codes;
these tests pin what the findings say and the cases around them.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from checker.engine import lint_bytes
from checker.findings import Finding
from checker.synth import StreamBuilder, encode

Event = dict[str, Any]


def stream(builder: StreamBuilder, **options: Any) -> list[Event]:
    return [copy.deepcopy(e) for e in builder.events(**options)]  # the builder shares item objects between events


def findings(events: list[Event], **options: Any) -> list[Finding]:
    return lint_bytes(encode(events), **options).findings


def only(found: list[Finding], code: str) -> list[Finding]:
    return [f for f in found if f.code == code]


def unannounce(events: list[Event], item_id: str, *, keep_done: bool) -> list[Event]:
    drop = {"response.output_item.added", "response.content_part.added"}
    if not keep_done:
        drop.add("response.output_item.done")
    return [e for e in events if not (e["type"] in drop and (e.get("item_id") == item_id
                                                             or (e.get("item") or {}).get("id") == item_id))]


def item_id(events: list[Event], n: int = 0) -> str:
    return [e for e in events if e["type"] == "response.output_item.added"][n]["item"]["id"]


def test_final_text_of_an_unannounced_message_is_reconciled_by_id_and_the_difference_named() -> None:
    events = stream(StreamBuilder().message([" for", " temperature", " in", " Paris"]))
    msg = item_id(events)
    events = [e for e in events if e["type"] not in ("response.output_text.done", "response.content_part.done")]
    events[-1]["response"]["output"][0]["content"][0]["text"] = " for"
    found = findings(unannounce(events, msg, keep_done=False))
    (rec004,) = only(found, "REC004")
    assert "content[0] text differs from its streamed deltas" in rec004.message
    assert "' temperature in Pari" in rec004.message and "item(s) in output" not in rec004.message


def test_an_unannounced_item_that_agrees_with_its_deltas_has_no_reconciliation_finding() -> None:
    events = stream(StreamBuilder().message(["Hel", "lo"]).function_call("f", ['{"x"', ":1}"]))
    call = item_id(events, 1)
    found = findings(unannounce(events, call, keep_done=True))
    assert {f.code for f in found} == {"ITM004", "ITM008"}


def test_a_done_only_item_counts_for_the_output_indexes_that_follow() -> None:
    events = stream(StreamBuilder().function_call("f", ["{}"]).message(["ok"]))
    found = findings(unannounce(events, item_id(events, 0), keep_done=True))
    assert "ITM002" not in {f.code for f in found}  # the message at output_index 1 follows the done-only call


@pytest.mark.parametrize("terminal", ["completed", "incomplete"])
def test_a_done_status_contradicted_by_the_terminal_output(terminal: str) -> None:
    events = stream(StreamBuilder().message(["a", "b"]), terminal=terminal, max_output_tokens=2)
    done = next(e for e in events if e["type"] == "response.output_item.done")
    done["item"]["status"] = "completed"
    events[-1]["response"]["output"][0]["status"] = "incomplete" if terminal == "incomplete" else "in_progress"
    (rec007,) = only(findings(events), "REC007")
    assert rec007.details["done"] == "completed" and rec007.details["final"] != "completed"


def test_snapshot_fields_compare_as_json_values_and_leave_service_tier_and_reasoning_out() -> None:
    events = stream(StreamBuilder().message(["a"]))
    created, completed = events[0]["response"], events[-1]["response"]
    created.update(temperature=1, service_tier="auto", reasoning={"effort": None, "summary": None})
    completed.update(temperature=1.0, service_tier="default", reasoning={"effort": "medium", "summary": "auto"})
    assert only(findings(events), "LIF019") == []
    completed["tools"] = [{"type": "function", "name": "other"}]
    completed["model"] = completed["model"] + "-2"
    changed = only(findings(events), "LIF019")
    assert sorted(f.details["field"] for f in changed) == ["model", "tools"]


def test_a_field_only_one_snapshot_carries_is_not_a_change() -> None:
    events = stream(StreamBuilder().message(["a"]))
    for e in events[:-1]:
        if "response" in e:
            e["response"] = {k: e["response"][k] for k in ("id", "object", "status")}  # llama-server's opening ones
    assert only(findings(events), "LIF019") == []


def test_truncation_that_cannot_be_checked_is_said_once_and_only_with_a_limit() -> None:
    events = stream(StreamBuilder().message(["a", "b"]))
    events[-1]["response"]["usage"] = None
    assert only(findings(events), "LIF020") == []  # no limit: nothing to check
    (info,) = only(findings(events, request={"max_output_tokens": 2}), "LIF020")
    assert info.severity.name == "INFO" and "usage null" in info.message and "LIF017" in info.message
    del events[-1]["response"]["usage"]
    (info,) = only(findings(events, request={"max_output_tokens": 2}), "LIF020")
    assert "no usage" in info.message


def test_an_incomplete_call_is_not_held_to_json_arguments() -> None:
    events = stream(StreamBuilder().function_call("f", ['{"x"', ":"]), terminal="incomplete", max_output_tokens=3)
    done = next(e for e in events if e["type"] == "response.output_item.done")
    assert done["item"]["arguments"] == '{"x":'
    done["item"]["status"] = "incomplete"
    for item in events[-1]["response"]["output"]:
        item["status"] = "incomplete"
    assert "FNC001" not in {f.code for f in findings(events)}
    done["item"]["status"] = "completed"
    assert "FNC001" in {f.code for f in findings(copy.deepcopy(events))}


def test_an_unannounced_call_whose_arguments_done_names_another_function() -> None:
    events = stream(StreamBuilder().function_call("get_weather", ['{"x"', ":1}"]))
    next(e for e in events if e["type"] == "response.function_call_arguments.done")["name"] = "get_time"
    found = findings(unannounce(events, item_id(events), keep_done=True))
    (fnc003,) = only(found, "FNC003")
    assert (fnc003.details["done"], fnc003.details["item_name"]) == ("get_time", "get_weather")
