"""Hosted-tool calls (checker/dialects/responses/hosted.py): each family's grammar, streamed input, indexes, and the fast path.

The conforming hosted-tool captures follow the order OpenAI really sends (recorded in vercel/ai's fixtures);
each case below breaks one thing in one of them and names the findings it must give, no more.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from checker.compat import matrix
from checker.engine import lint_bytes
from checker.findings import Position
from checker.dialects.responses.machine import ResponsesMachine
from checker.synth import encode

ROOT = Path(__file__).resolve().parents[1]
CAPTURES = ROOT / "captures"
Events = list[dict[str, Any]]


def _events(name: str) -> Events:
    text = (CAPTURES / "conforming" / f"{name}.sse").read_text(encoding="utf-8")
    return [json.loads(line[len("data: "):]) for line in text.splitlines() if line.startswith("data: ")]


def _find(events: Events, etype: str, nth: int = 0, **match: Any) -> int:
    hits = [i for i, e in enumerate(events)
            if e["type"] == etype and all(e.get(k) == v for k, v in match.items())]
    return hits[nth]


def _renumber(events: Events) -> Events:
    for n, event in enumerate(events, start=1):
        event["sequence_number"] = n
    return events


def _codes(events: Events, prefix: str = "") -> list[str]:
    return sorted({f.code for f in lint_bytes(encode(_renumber(events))).findings if f.code.startswith(prefix)})


def _drop(etype: str, nth: int = 0, **match: Any) -> Callable[[Events], Events]:
    def change(events: Events) -> Events:
        del events[_find(events, etype, nth, **match)]
        return events
    return change


def _move_after(etype: str, anchor: str, nth: int = 0) -> Callable[[Events], Events]:
    def change(events: Events) -> Events:
        moved = events.pop(_find(events, etype, nth))
        events.insert(_find(events, anchor) + 1, moved)
        return events
    return change


def _set(etype: str, nth: int = 0, **fields: Any) -> Callable[[Events], Events]:
    def change(events: Events) -> Events:
        events[_find(events, etype, nth)].update(fields)
        return events
    return change


def _without_progress(events: Events) -> Events:
    return [e for e in events if not e["type"].startswith("response.web_search_call.")]


def _added_completed_without_progress(events: Events) -> Events:
    events = _without_progress(events)
    for e in events:
        if e["type"] == "response.output_item.added" and e["item"]["type"] == "web_search_call":
            e["item"]["status"] = "completed"
    return events


def _failed_while_searching(events: Events) -> Events:
    del events[_find(events, "response.web_search_call.completed")]
    done = _find(events, "response.output_item.done")
    events[done]["item"]["status"] = "failed"
    events[-1]["response"]["output"][0]["status"] = "failed"
    return events


def _late_code_delta(events: Events) -> Events:
    delta = copy.deepcopy(events[_find(events, "response.code_interpreter_call_code.delta")])
    events.insert(_find(events, "response.code_interpreter_call.interpreting") + 1, delta)
    return events


def _second_code_done(events: Events) -> Events:
    at = _find(events, "response.code_interpreter_call_code.done")
    events.insert(at + 1, copy.deepcopy(events[at]))
    return events


def _code_cut_short(events: Events) -> Events:
    """max_output_tokens ends the code mid-stream: the call is done incomplete, the response incomplete."""
    first = _find(events, "response.code_interpreter_call_code.delta", 3)
    kept = [e for i, e in enumerate(events)
            if not (e["type"].startswith("response.code_interpreter_call") and i >= first)]
    code = "".join(e["delta"] for e in kept if e["type"] == "response.code_interpreter_call_code.delta")
    kept = kept[:_find(kept, "response.output_item.done") + 1]
    item = kept[-1]["item"]
    item.update(status="incomplete", code=code, outputs=[])
    terminal = copy.deepcopy(events[-1])
    terminal.update(type="response.incomplete")
    terminal["response"].update(status="incomplete", output=[copy.deepcopy(item)],
                                incomplete_details={"reason": "max_output_tokens"})
    return [*kept, terminal]


def _final_code_differs(events: Events) -> Events:
    events[-1]["response"]["output"][0]["code"] = "print(1)\n"
    return events


def _custom_input_done_differs(events: Events) -> Events:
    events[_find(events, "response.custom_tool_call_input.done")]["input"] = "SELECT 1"
    return events


def _custom_item_differs(events: Events) -> Events:
    events[_find(events, "response.output_item.done")]["item"]["input"] = "SELECT 1"
    events[-1]["response"]["output"][0]["input"] = "SELECT 1"
    return events


def _part_without_annotations(events: Events) -> Events:
    del events[_find(events, "response.content_part.added")]["part"]["annotations"]
    return events


def _without_annotation_events(events: Events) -> Events:
    """A gateway that puts the citations in the done part and item but never streams them."""
    return [e for e in events if e["type"] != "response.output_text.annotation.added"]


def _other_citation_at_done(events: Events) -> Events:
    part = events[_find(events, "response.content_part.done")]["part"]
    part["annotations"][0] = {**part["annotations"][0], "url": "https://example.com/"}
    return events


def _final_output_drops_citation(events: Events) -> Events:
    events[-1]["response"]["output"][2]["content"][0]["annotations"].pop()
    return events


def _shell_output_alone(events: Events) -> Events:
    """The shell call is not in this response (it came in an earlier one): outputs may only append."""
    call, done = _find(events, "response.output_item.added"), _find(events, "response.output_item.done")
    kept = [e for i, e in enumerate(events) if not (call <= i <= done)]
    for e in kept:
        if "output_index" in e:
            e["output_index"] -= 1
    kept[-1]["response"]["output"].pop(0)
    return kept


CASES: dict[str, tuple[str, Callable[[Events], Events], list[str]]] = {
    # web and file search: in_progress → searching → completed
    "searching dropped": ("web-search", _drop("response.web_search_call.searching"), ["HST001"]),
    "completed dropped": ("web-search", _drop("response.web_search_call.completed"), ["HST001"]),
    "no progress at all": ("web-search", _without_progress, ["HST001"]),
    "added already completed owes nothing": ("web-search", _added_completed_without_progress, []),  # HST only
    "failed while searching owes nothing more": ("web-search", _failed_while_searching, []),
    "searching after completed": ("web-search", _move_after("response.web_search_call.searching",
                                                           "response.web_search_call.completed"),
                                  ["HST001", "HST003"]),
    # code interpreter: in_progress → code → interpreting → completed
    "interpreting dropped": ("code-interpreter", _drop("response.code_interpreter_call.interpreting"), ["HST001"]),
    "code after its done": ("code-interpreter", _late_code_delta, ["HST005"]),
    "code done twice": ("code-interpreter", _second_code_done, ["HST005"]),
    "final output code differs": ("code-interpreter", _final_code_differs, ["REC004"]),
    "code cut short owes no done": ("code-interpreter", _code_cut_short, []),
    # image generation: in_progress → generating → partial_image* → completed
    "generating dropped": ("image-generation", _drop("response.image_generation_call.generating"), ["HST001"]),
    "partial image repeated index": ("image-generation",
                                     _set("response.image_generation_call.partial_image", 1, partial_image_index=0),
                                     ["HST006"]),
    # MCP: in_progress (repeated while arguments stream) → arguments → completed | failed
    "mcp in_progress after completed": ("mcp-call", _move_after("response.mcp_call.in_progress",
                                                                "response.mcp_call.completed", 1), ["HST003"]),
    "mcp failed instead of completed": ("mcp-call", _set("response.mcp_call.completed", type="response.mcp_call.failed"),
                                        []),
    "mcp listing never completes": ("mcp-call", _drop("response.mcp_list_tools.completed"), ["HST001"]),
    # custom tools: input.delta* → input.done
    "custom input done differs": ("custom-tool", _custom_input_done_differs, ["REC008", "REC009"]),
    "custom item differs": ("custom-tool", _custom_item_differs, ["REC009"]),
    "custom input done missing": ("custom-tool", _drop("response.custom_tool_call_input.done"), ["HST004"]),
    # annotations: annotation_index appends per part
    # a repeated index overwrites the first citation in openai-node's snapshot until content_part.done
    "annotation index repeated": ("web-search", _set("response.output_text.annotation.added", 1,
                                                     annotation_index=0), ["CNT009", "REC010"]),
    "part without annotations list": ("web-search", _part_without_annotations, ["CNT009", "SCH004"]),
    "annotations never streamed": ("web-search", _without_annotation_events, ["REC010"]),
    "done part cites another url": ("web-search", _other_citation_at_done, ["REC010"]),
    "final output drops a citation": ("web-search", _final_output_drops_citation, ["REC004"]),
    # shell: command_index of commands and outputs
    "shell command done differs": ("shell", _set("response.shell_call_command.done", command="rm -rf /"),
                                   ["REC008", "REC009"]),
    "shell output done differs": ("shell", _set("response.shell_call_output_content.done",
                                                output=[{"outcome": {"type": "exit", "exit_code": 0}, "stderr": "",
                                                         "stdout": "other\n"}]), ["REC008", "REC009"]),
    "shell output without its call appends": ("shell", _shell_output_alone, []),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_hosted_tool_defect_gives_exactly_its_findings(case: str) -> None:
    base, change, expected = CASES[case]
    # An item added already completed is ITM012's business (a warning that does not concern this module).
    prefix = "HST" if case == "added already completed owes nothing" else ""
    assert _codes(change(_events(base)), prefix) == sorted(expected)


def test_openai_repeats_mcp_call_in_progress_while_the_arguments_stream() -> None:
    events = _events("mcp-call")
    kinds = [e["type"] for e in events if e.get("item_id", "").startswith("mcp_")]
    assert kinds.count("response.mcp_call.in_progress") == 2  # as recorded from api.openai.com
    assert _codes(events) == []


def test_a_shell_output_past_the_calls_commands_breaks_openai_node_only() -> None:
    events = _events("shell")
    stray = copy.deepcopy(events[_find(events, "response.shell_call_output_content.delta", command_index=1)])
    stray["command_index"] = 2
    events.insert(_find(events, "response.shell_call_output_content.done", command_index=1) + 1, stray)
    verdicts = matrix(lint_bytes(encode(_renumber(events)))).verdicts()
    assert verdicts["openai-node"] == "breaks" and verdicts["openai-python"] == "ok"


@pytest.mark.parametrize("index, codes, node", [(2, ["CNT009"], "breaks"), (0, ["CNT009", "REC010"], "degraded")])
def test_an_annotation_index_breaks_openai_node_past_the_end_only(index: int, codes: list[str], node: str) -> None:
    """openai-node validateArrayIndex(annotations, i, 'annotation', allowAppend): past the end throws, a repeat
    overwrites the earlier citation (until content_part.done replaces the part)."""
    events = _set("response.output_text.annotation.added", 1, annotation_index=index)(_events("web-search"))
    result = lint_bytes(encode(_renumber(events)))
    assert [f.code for f in result.findings] == codes
    assert matrix(result).verdicts()["openai-node"] == node


def test_hosted_tool_deltas_take_the_fast_path() -> None:
    """After the first delta of a call's input, the next ones are appended without the general path (that both
    paths give the same findings is tests/test_engine_paths.py's)."""
    machine = ResponsesMachine()
    taken = []
    events = _events("code-interpreter")
    for n, event in enumerate(events):
        if machine.try_fast(event["type"], event):
            taken.append(event["type"])
            continue
        machine.handle(event, Position(line=n, byte=n, event_index=n))
    deltas = sum(1 for e in events if e["type"] == "response.code_interpreter_call_code.delta")
    assert taken.count("response.code_interpreter_call_code.delta") == deltas - 1


def test_reports_show_what_each_hosted_tool_call_streamed() -> None:
    """The text view of a report (item_texts, the HTML items block) shows a call's code, commands and outputs."""
    from checker.report.html_tables import items_block

    texts = lint_bytes((CAPTURES / "conforming" / "shell.sse").read_bytes(), keep_texts=True).texts
    assert texts is not None
    streamed = {(item["type"], t["label"]): t["text"] for item in texts for t in item["tool"]}
    assert streamed == {("shell_call", "command 0"): "ls -la", ("shell_call", "command 1"): "cat README.md",
                        ("shell_call_output", "output 0 stdout"): "total 8\nREADME.md\n",
                        ("shell_call_output", "output 1 stdout"): "# Demo\n"}
    code = lint_bytes((CAPTURES / "conforming" / "code-interpreter.sse").read_bytes(), keep_texts=True).texts
    assert code is not None and "random.randint" in items_block(code)
    assert lint_bytes((CAPTURES / "conforming" / "shell.sse").read_bytes()).texts is None


# --- the same defects made in OpenAI's own recordings (captures/real-openai) ----------------------------------

REAL = sorted((CAPTURES / "real-openai").glob("*.sse"))  # verbatim recordings only (edited/ is apart)
HOSTED_CODES = ("HST", "CNT009", "REC008", "REC009", "REC010")
MIDDLE_STAGES = ("response.web_search_call.searching", "response.file_search_call.searching",
                 "response.code_interpreter_call.interpreting", "response.image_generation_call.generating")


def _sse_events(path: Path) -> Events:
    events = []
    for block in path.read_text(encoding="utf-8").replace("\r\n", "\n").split("\n\n"):
        data = [line[len("data:"):].lstrip(" ") for line in block.split("\n") if line.startswith("data:")]
        if data and data != ["[DONE]"]:
            events.append(json.loads("\n".join(data)))
    return events


def _hosted(events: Events) -> list[str]:
    found = lint_bytes(encode(events)).findings
    return sorted({f.code for f in found if f.code.startswith(HOSTED_CODES)})


def _with(types: tuple[str, ...]) -> list[Any]:
    paths = [p for p in REAL if any(e["type"] in types for e in _sse_events(p))]
    return [pytest.param(p, id=p.name) for p in paths]


def test_the_recordings_hold_hosted_tool_calls_of_every_streaming_family() -> None:
    """(The one image generation recording was trimmed: it is in edited/, and rules/ and conforming/ cover it.)"""
    seen = {e["type"].split(".")[1] for p in REAL for e in _sse_events(p) if e["type"].count(".") >= 2}
    assert {"web_search_call", "file_search_call", "code_interpreter_call", "code_interpreter_call_code",
            "mcp_call", "mcp_call_arguments", "mcp_list_tools", "shell_call_command",
            "shell_call_output_content", "apply_patch_call_operation_diff", "output_text"} <= seen


@pytest.mark.parametrize("path", [pytest.param(p, id=p.name) for p in REAL])
def test_openai_s_own_streams_raise_no_hosted_tool_finding(path: Path) -> None:
    assert _hosted(_sse_events(path)) == []


@pytest.mark.parametrize("path", _with(MIDDLE_STAGES))
def test_a_dropped_progress_event_is_found_in_a_real_stream(path: Path) -> None:
    events = _sse_events(path)
    del events[next(i for i, e in enumerate(events) if e["type"] in MIDDLE_STAGES)]
    assert _hosted(events) == ["HST001"]


@pytest.mark.parametrize("path", _with(MIDDLE_STAGES))
def test_a_duplicated_progress_event_is_found_in_a_real_stream(path: Path) -> None:
    events = _sse_events(path)
    at = next(i for i, e in enumerate(events) if e["type"] in MIDDLE_STAGES)
    events.insert(at, copy.deepcopy(events[at]))
    assert _hosted(events) == ["HST002"]


@pytest.mark.parametrize("path", _with(("response.code_interpreter_call_code.done",
                                        "response.mcp_call_arguments.done", "response.shell_call_command.done")))
def test_a_done_value_that_differs_from_its_deltas_is_found_in_a_real_stream(path: Path) -> None:
    events = _sse_events(path)
    done = next(e for e in events if e["type"] in ("response.code_interpreter_call_code.done",
                                                   "response.mcp_call_arguments.done",
                                                   "response.shell_call_command.done"))
    field = {"response.code_interpreter_call_code.done": "code", "response.mcp_call_arguments.done": "arguments",
             "response.shell_call_command.done": "command"}[done["type"]]
    done[field] += " "
    assert _hosted(events) == ["REC008", "REC009"]  # the deltas differ from the done value, the item from it


@pytest.mark.parametrize("path", _with(("response.output_text.annotation.added",)))
def test_an_annotation_index_gap_is_found_in_a_real_stream(path: Path) -> None:
    events = _sse_events(path)
    last = [e for e in events if e["type"] == "response.output_text.annotation.added"][-1]
    last["annotation_index"] += 1
    assert _hosted(events) == ["CNT009"]
