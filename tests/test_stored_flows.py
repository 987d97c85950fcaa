"""The stored-response checks (STO rules) on saved flows and on hand-made answers, without any network.

Each STO rule's bad flow (``captures/stored/STOxxx-*.flow.json``, written by captures/make_stored_flows.py from
the replay server with one ``stored`` fault) gives exactly the codes it declares, and the good flow none with
every feature supported. The smaller functions are checked on the edges the flows do not show: which answers
say a feature is absent, how a resumed stream can be wrong, which status paths a background response may take.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from checker.rules import RULES
from checker.surface.stored_answers import Answer, absent, response_differences
from checker.surface.stored_checks import (
    check_background,
    check_cancel,
    check_compact,
    check_retrieve,
    check_unknown_previous,
    resumption_difference,
    status_path_problem,
)
from checker.surface.stored_flow import answers_of, check_flow, flow_findings

ROOT = Path(__file__).resolve().parents[1]
STORED = ROOT / "captures" / "stored"
STO_RULES = sorted(code for code in RULES if code.startswith("STO"))
LLAMA_404 = {"error": {"message": "File Not Found", "type": "not_found_error", "code": 404}}


def flow(relative: str) -> dict[str, Any]:
    return json.loads((ROOT / "captures" / relative).read_text(encoding="utf-8"))


@pytest.mark.parametrize("code", STO_RULES)
def test_every_stored_rule_has_a_bad_flow_that_gives_what_it_declares(code: str) -> None:
    rule = RULES[code]
    assert rule.bad == f"stored/{code}-{rule.name}.flow.json"
    record = flow(rule.bad)
    assert code in record["expect"], f"{rule.bad} does not declare {code}"
    assert sorted({f.code for f in flow_findings(record)}) == record["expect"]


def test_the_good_flow_has_no_finding_and_every_feature_supported() -> None:
    record = flow("stored/good.flow.json")
    assert record["expect"] == [] and flow_findings(record) == []
    rows = check_flow(answers_of(record))
    assert [(row.feature, row.state) for row in rows] == [
        ("retrieve", "supported"), ("input_items", "supported"), ("resumption", "supported"), ("delete", "supported"),
        ("previous_response_id", "supported"), ("stateful tool use", "supported"), ("background", "supported"),
        ("cancel", "supported"), ("conversations", "supported"), ("compact", "supported")]
    assert all(RULES[code].good == "stored/good.flow.json" for code in STO_RULES)


def test_every_stored_flow_belongs_to_a_rule() -> None:
    used = {RULES[c].bad for c in STO_RULES} | {"stored/good.flow.json"}
    assert {p.relative_to(ROOT / "captures").as_posix() for p in STORED.glob("*.flow.json")} == used


def test_a_flow_answered_as_llama_server_does_is_all_unsupported() -> None:
    """llama-server (b11434): 404 "File Not Found" on every stored-response path, previous_response_id refused
    with a 400 that says it is not supported, background answered in the foreground."""
    good = answers_of(flow("stored/good.flow.json"))
    create = next(a for a in good if a.step == "create")
    final = dict(json.loads(create.stream.decode().split("data: ")[-1]))["response"]  # type: ignore[union-attr]
    stream = create.stream.replace(b'"store":true', b'"store":false')  # type: ignore[union-attr]
    answers = [Answer(step="create", method="POST", path="/v1/responses", request=create.request, status=200,
                      stream=stream)]
    for step, method in (("retrieve", "GET"), ("input_items", "GET"), ("resume", "GET"), ("delete", "DELETE"),
                         ("conversation_create", "POST"), ("compact", "POST"), ("poll_1", "GET"),
                         ("cancel", "POST")):
        answers.append(Answer(step=step, method=method, path=f"/v1/x/{step}?stream=true&starting_after=0",
                              status=404, body=LLAMA_404))
    refusal = {"error": {"code": 400, "message": "llama.cpp does not support 'previous_response_id'.",
                         "type": "invalid_request_error"}}
    answers += [Answer(step="unknown_previous", method="POST", status=400, body=refusal,
                       request={"previous_response_id": "resp_unknown"}),
                Answer(step="continue", method="POST", status=400, body=refusal),
                Answer(step="background", method="POST", status=200, body={**final, "status": "completed"})]
    rows = {row.feature: row for row in check_flow(answers)}
    assert {name: row.state for name, row in rows.items()} == {
        "retrieve": "unsupported", "input_items": "unsupported", "resumption": "unsupported",
        "delete": "unsupported", "previous_response_id": "unsupported", "stateful tool use": "unsupported",
        "background": "unsupported", "cancel": "unsupported", "conversations": "unsupported",
        "compact": "unsupported"}
    assert all(not row.findings for row in rows.values())
    assert "HTTP 404 (File Not Found)" in rows["retrieve"].why
    assert "in the foreground" in rows["background"].why


def test_absent_tells_a_missing_route_from_a_missing_object() -> None:
    assert absent(Answer(step="x", status=404, body=LLAMA_404))
    assert absent(Answer(step="x", status=405))
    assert absent(Answer(step="x", status=400, body={"error": {"message": "background is not supported"}}))
    assert not absent(Answer(step="x", status=404, body={"error": {"message": "Response with id 'resp_1' not found."}}))
    assert not absent(Answer(step="x", status=500, body={"error": {"message": "oops"}}))


def test_a_404_after_store_true_is_a_loss_not_an_absence() -> None:
    create = Answer(step="create", status=200, body={"id": "resp_1", "object": "response", "store": True,
                                                      "status": "completed", "output": []})
    verdict = check_retrieve(create, Answer(step="retrieve", status=404, body=LLAMA_404))
    assert verdict.state == "broken" and [f.code for f in verdict.findings] == ["STO002"]
    unsaid = Answer(step="create", status=200, body={"id": "resp_1", "status": "completed", "output": []})
    assert check_retrieve(unsaid, Answer(step="retrieve", status=404, body=LLAMA_404)).state == "unsupported"
    assert check_retrieve(unsaid, Answer(step="retrieve", status=500, body={})).findings[0].code == "STO002"


def test_response_differences_name_what_changed() -> None:
    streamed = {"id": "resp_1", "status": "completed", "usage": {"total_tokens": 3},
                "output": [{"type": "message", "id": "msg_1", "content": [{"type": "output_text", "text": "hi"}]}]}
    assert response_differences(streamed, {**streamed, "extra": None}) == []
    changed = {**streamed, "output": [{**streamed["output"][0], "content": []}], "usage": {"total_tokens": 4}}
    assert response_differences(streamed, changed) == ["output[0] (message msg_1): content differ", "usage differs"]
    assert response_differences(streamed, []) == ["it is not a Response object"]


def _events(*numbers: int, first: str = "response.output_text.delta") -> list[dict[str, Any]]:
    return [{"type": first if i == 0 else "response.output_text.delta", "sequence_number": n}
            for i, n in enumerate(numbers)]


def test_resumption_difference() -> None:
    expected = _events(5, 6, 7)
    assert resumption_difference(expected, _events(5, 6, 7), 4) is None
    assert "restarts from the beginning" in str(resumption_difference(expected, _events(0, 1, 2, 3, 4, 5, 6, 7,
                                                                                         first="response.created"), 4))
    assert "it starts at sequence_number 6: the events from 5 are skipped" == resumption_difference(expected,
                                                                                                 _events(6, 7), 4)
    assert "2 events, the stream had 3 after it" == resumption_difference(expected, _events(5, 6), 4)
    assert "no events, expected 3" == resumption_difference(expected, [], 4)


@pytest.mark.parametrize(("statuses", "problem"), [
    (["queued", "in_progress", "completed", "completed"], None),
    (["in_progress", "cancelled"], None),
    (["queued", "in_progress", "completed", "in_progress"], "poll 3 says in_progress after completed"),
    (["in_progress", "queued", "completed"], "poll 1 says queued after in_progress: it went back"),
    (["queued", "in_progress", "in_progress"], None),  # not ended yet: not checked (check_background)
    (["queued", "running"], "poll 1 says status 'running', which is no status of a response"),
    (["queued", 404], "poll 1 answered HTTP 404"),
])
def test_status_paths(statuses: list[Any], problem: str | None) -> None:
    found = status_path_problem(statuses)
    assert (found is None) if problem is None else (found is not None and found.startswith(problem))


def test_background_answered_in_the_foreground_is_unsupported() -> None:
    create = Answer(step="background", status=200, body={"id": "resp_1", "status": "completed", "output": []})
    verdict = check_background(create, [Answer(step="poll_1", status=404, body=LLAMA_404)])
    assert verdict.state == "unsupported" and not verdict.findings


def test_cancel_and_compact_edges() -> None:
    queued = Answer(step="cancel_background", status=200, body={"id": "resp_1", "status": "queued"})
    ran_on = check_cancel(queued, Answer(step="cancel", status=200, body={"id": "resp_1", "status": "in_progress"}),
                          None)
    assert [f.code for f in ran_on.findings] == ["STO009"]
    assert check_cancel(queued, Answer(step="cancel", status=405), None).state == "unsupported"
    assert check_compact(Answer(step="compact", status=200, body={"object": "response.compaction"})).findings
    assert check_compact(Answer(step="compact", status=404, body=LLAMA_404)).state == "unsupported"


@pytest.mark.parametrize(("status", "body", "code"), [
    (200, {"id": "resp_2", "status": "completed"}, "STO005"),
    (500, {"detail": "not found"}, "STO006"),
    (400, {"message": "not found"}, "STO006"),
    (400, {"error": {"message": "Previous response with id 'resp_x' not found.", "type": "invalid_request_error",
                     "param": "previous_response_id", "code": "previous_response_not_found"}}, None),
])
def test_unknown_previous_response_id(status: int, body: Any, code: str | None) -> None:
    verdict = check_unknown_previous(Answer(step="unknown_previous", status=status, body=body), "resp_x")
    assert [f.code for f in verdict.findings] == ([code] if code else [])


def test_a_background_response_still_running_after_the_polls_is_not_checked() -> None:
    create = Answer(step="background", status=200, body={"id": "resp_1", "status": "queued"})
    polls = [Answer(step=f"poll_{n}", status=200, body={"id": "resp_1", "status": "in_progress"}) for n in (1, 2)]
    verdict = check_background(create, polls)
    assert verdict.state == "not checked" and not verdict.findings and "after 2 polls" in verdict.why
