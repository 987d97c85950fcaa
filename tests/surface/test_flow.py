"""Flows as data: references to earlier answers, and how a step is built from them."""

from __future__ import annotations

import pytest

from checker.surface.flow import Step, UnresolvedReference, references, resolve, step_body, step_path

ANSWERS = {
    "model": "qwen3",
    "create": {"id": "resp_1", "output": [
        {"type": "reasoning", "id": "rs_1"},
        {"type": "function_call", "call_id": "call_7", "name": "get_weather", "arguments": "{\"city\":\"Paris\"}"},
        {"type": "function_call", "call_id": "call_8", "name": "get_time", "arguments": "{}"},
    ]},
}


def test_a_whole_string_reference_is_the_value_itself_and_a_part_of_a_string_is_text() -> None:
    assert resolve("{create.output}", ANSWERS) == ANSWERS["create"]["output"]
    assert resolve("id {create.id}!", ANSWERS) == "id resp_1!"
    assert resolve({"n": ["{create.output[-1].call_id}"]}, ANSWERS) == {"n": ["call_8"]}
    assert resolve("{create.output[1]}", ANSWERS)["call_id"] == "call_7"


def test_a_selector_picks_the_first_element_with_a_field_of_that_value() -> None:
    assert resolve("{create.output[type=function_call].call_id}", ANSWERS) == "call_7"
    assert resolve("{model}", ANSWERS) == "qwen3"


def test_braces_that_name_no_earlier_step_are_kept_as_they_are() -> None:
    text = '{"city": "Paris"} and {later.id} and {{x}}'
    assert resolve(text, ANSWERS) == text


@pytest.mark.parametrize("template, detail", [
    ("{create.nothing}", "create's answer has no 'nothing' here"),
    ("{create.output[9]}", "create's answer has no element [9] here"),
    ("{create.output[type=message].id}", "create's answer has no element with type 'message'"),
])
def test_a_reference_into_a_missing_field_says_which(template: str, detail: str) -> None:
    with pytest.raises(UnresolvedReference) as caught:
        resolve(template, ANSWERS)
    assert caught.value.detail == detail and caught.value.source == "create"


def test_a_null_field_is_missing_too() -> None:
    with pytest.raises(UnresolvedReference):
        resolve("{create.id}", {"create": {"id": None}})


def test_paths_are_quoted_and_bodies_may_be_built_by_a_function() -> None:
    step = Step(name="get", method="GET", path="/responses/{create.id}/x?after={create.output[0].id}")
    assert step_path(step, {"create": {"id": "a/b c", "output": [{"id": "rs 1"}]}}) == "/responses/a%2Fb%20c/x?after=rs%201"
    built = Step(name="next", body=lambda answers: {"previous_response_id": answers["create"]["id"]})
    assert step_body(built, ANSWERS) == {"previous_response_id": "resp_1"}
    assert references({"a": ["{create.id}", "{model} {x.y}"]}) == ["create", "model", "x"]
