"""The proxy's history checks of Anthropic Messages thinking blocks (RPL008-RPL010), case by case, on the good
conversation of captures/replay (a signed thinking block, a redacted_thinking block, a tool call) with one
thing changed each time; and the tracker keeping a Messages tool loop in one conversation whether the first
user message is a string or a list of one text block."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Callable

import pytest

from checker.live.history import Tracker, run_conversation
from checker.live.outcome import outcome_from_json

GOOD = Path(__file__).resolve().parents[2] / "captures" / "replay" / "good-messages.conversation.json"


def _conversation(change: Callable[[list[dict[str, Any]]], None] | None = None, *,
                  request: Callable[[dict[str, Any]], None] | None = None) -> list[set[str]]:
    """The codes of each exchange of the good conversation, its turn 2's assistant content changed first."""
    data = json.loads(GOOD.read_text())
    turn2 = data["exchanges"][1]["request"]
    if change is not None:
        change(turn2["messages"][1]["content"])
    if request is not None:
        request(turn2)
    return [{f.code for f in found} for found in run_conversation(data)]


def test_the_good_tool_loop_has_no_finding() -> None:
    assert _conversation() == [set(), set(), set()]


@pytest.mark.parametrize("change, code", [
    (lambda c: c[0].update(signature=""), "RPL008"),  # an empty signature is no signature
    (lambda c: c[0].update(thinking=c[0]["thinking"] + " "), "RPL009"),  # a trailing space is a change
    (lambda c: c[0].update(signature=c[0]["signature"][:-1] + "x"), "RPL009"),
    (lambda c: c[1].update(data=c[1]["data"][::-1]), "RPL009"),  # a redacted block comes back whole
    (lambda c: c.pop(1), "RPL009"),  # one of the two thinking blocks left out
    (lambda c: c.reverse(), "RPL009"),  # the tool_use first, the thinking after it
    (lambda c: c.insert(0, copy.deepcopy(c[0])), "RPL009"),  # a thinking block the server never sent
    (lambda c: c.__delitem__(slice(0, 2)), "RPL010"),  # neither thinking block
])
def test_each_way_of_sending_the_thinking_back_wrong(change: Callable[[list[dict[str, Any]]], None],
                                                     code: str) -> None:
    assert _conversation(change)[1] == {code}


def test_a_client_field_on_a_block_and_thinking_disabled_are_not_findings() -> None:
    # the fields of the block that count are its text, signature and data
    assert _conversation(lambda c: c[2].update(cache_control={"type": "ephemeral"}))[1] == set()
    # asking not to think, the client need not send the thinking back (Anthropic does not require it then)
    dropped = _conversation(lambda c: c.__delitem__(slice(0, 2)),
                            request=lambda r: r.update(thinking={"type": "disabled"}))
    assert dropped[1] == set()


def test_a_new_user_turn_may_leave_the_earlier_thinking_out_but_not_alter_it() -> None:
    def new_turn(request: dict[str, Any]) -> None:
        request["messages"][2]["content"].append({"type": "text", "text": "And in Berlin?"})

    assert _conversation(lambda c: c.__delitem__(slice(0, 2)), request=new_turn)[1] == set()
    edited = _conversation(lambda c: c[0].update(thinking="Something else."), request=new_turn)
    assert edited[1] == {"RPL009"}


def test_a_string_and_a_text_block_are_the_same_first_message() -> None:
    data = json.loads(GOOD.read_text())
    first, second = data["exchanges"][0], data["exchanges"][1]
    second["request"]["messages"][0]["content"] = [{"type": "text", "text": first["request"]["messages"][0]["content"],
                                                    "cache_control": {"type": "ephemeral"}}]
    tracker = Tracker()
    one, _ = tracker.begin(1, "messages", first["request"])
    tracker.finish(one, outcome_from_json("messages", first["response"]))
    two, found = tracker.begin(2, "messages", second["request"])
    assert two.predecessor is one and two.where == "c1#2" and found == []
    del second["request"]["messages"][1]["content"][0]["signature"]
    _, found = Tracker().begin(2, "messages", second["request"])  # no answer seen: nothing to compare with
    assert found == []
