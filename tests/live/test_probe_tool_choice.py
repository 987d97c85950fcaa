"""The probe's tool-choice, custom-tool and JSON-mode flows (checker/surface/tool_choice.py, custom_tool.py,
json_mode.py) against a real replay server (``sse-check serve``) on loopback: a server that ignores the forced
tool, the custom tool or JSON mode (the defects the real llama-server b11434 has, docs/peers/) and one that
honours them; the capability rows, the readiness they feed, and the saved flow records judged again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from checker.surface.judging import judge_record
from checker.surface.record import FlowRecord
from checker.synth import ChatStreamBuilder, encode, encode_chat
from checker.synth.messages import MessagesStreamBuilder
from checker.synth.messages import encode as encode_messages
from checker.synth.responses import ResponsesStream, usage
from tests.live.conftest import ROOT, sse_check_json

CUSTOM_CAPTURE = ROOT / "captures" / "conforming" / "custom-tool.sse"
FLOWS = ("tool_choice", "custom_tool", "json_mode")


def responses_text(deltas: list[str]) -> bytes:
    stream = ResponsesStream("probe-tool-choice").start()
    stream.message(deltas)
    return encode(stream.completed(usage(20, len(deltas))).events)


def responses_call(name: str) -> bytes:
    stream = ResponsesStream("probe-tool-choice").start()
    stream.function_call(name, ['{"city": ', '"Tokyo"}'])
    return encode(stream.completed(usage(20, 5)).events)


def chat_call(name: str, arguments: str = '"Tokyo"}') -> bytes:
    return encode_chat(ChatStreamBuilder().tool_call(name, ['{"city": ', arguments]).chunks(usage=True))


def chat_text(deltas: list[str]) -> bytes:
    return encode_chat(ChatStreamBuilder().text(deltas).chunks(usage=True))


def messages_call(name: str) -> bytes:
    return encode_messages(MessagesStreamBuilder(name="probe-tool-choice").tool_use(name, ['{"city": "Tokyo"}'])
                           .events())


def custom_call(name: str) -> bytes:
    return CUSTOM_CAPTURE.read_bytes().replace(b"write_sql", name.encode())


def replay_folder(root: Path, answers: dict[str, bytes]) -> Path:
    """A replay folder answering each flow's step (``chat/tool_choice`` under ``chat/``) with the given body."""
    for name, body in answers.items():
        target = root / f"{name}.sse"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(body)
    return root


def probe(url: str, *more: str) -> tuple[int, dict[str, Any]]:
    picked = [arg for name in FLOWS for arg in ("-s", name)]
    return sse_check_json("probe", url, "--model", "m", "--api", "responses", "--api", "chat", "--api", "messages",
               *picked, *more)


def rows(report: dict[str, Any]) -> dict[str, tuple[str, str | None]]:
    return {row["feature"]: (row["status"], (row["finding"] or {}).get("code")) for row in report["capabilities"]
            if row["feature"].split(".")[0] in FLOWS}


def test_a_server_that_ignores_the_forced_tool_custom_tools_and_json_mode(serve: Any, tmp_path: Path) -> None:
    folder = replay_folder(tmp_path / "replay", {
        "tool_choice": responses_text(["It is ", "noon in Tokyo."]),  # forced get_time: answered in text
        # forced get_time: another tool called (with arguments its strict schema takes)
        "chat/tool_choice": chat_call("get_weather", '"Tokyo", "unit": "celsius"}'),
        "messages/tool_choice": messages_call("get_time"),  # honoured
        "custom_tool": responses_text(["print('hello world')"]),  # the custom tool's input, as text
        "json_mode": responses_text(["Sunny, ", "18 degrees."]),  # JSON mode ignored
        "chat/json_mode": chat_text(['{"weather": ', '"sunny"}']),
    })
    server = serve(str(folder))
    saved = tmp_path / "saved"
    code, report = probe(server.url, "--save", str(saved))
    assert code == 1
    assert rows(report) == {
        "tool_choice.responses": ("broken", "TCH001"), "tool_choice.chat": ("broken", "TCH001"),
        "tool_choice.messages": ("supported", None), "custom_tool.responses": ("broken", "TCH001"),
        "json_mode.responses": ("broken", "FMT001"), "json_mode.chat": ("supported", None)}
    why = {row["feature"]: row["why"] for row in report["capabilities"]}
    assert "the answer is text, with no call" in why["tool_choice.responses"]
    assert "the answer called get_weather instead" in why["tool_choice.chat"]
    assert "the custom tool run_python" in why["custom_tool.responses"]
    readiness = {row["client"]: row for row in report["readiness"]}
    assert readiness["openai-agents"]["verdict"] == "degraded"  # it sends ModelSettings.tool_choice as sent here
    assert "a tool forced by name" in readiness["openai-agents"]["because"]
    assert readiness["codex"]["verdict"] == "degraded"  # its freeform apply_patch is a custom tool
    # the saved records give the same verdicts when judged again, as lint gives the streams'
    record = FlowRecord.from_dict(json.loads((saved / "tool_choice.flow.json").read_text()))
    assert [f.code for _, f in judge_record(record)] == ["TCH001"]
    lint_code, linted = sse_check_json("lint", str(saved / "json_mode.answer.sse"))
    assert lint_code == 1 and [f["code"] for f in linted["files"][0]["findings"] if f["severity"] != "info"] \
        == ["FMT001"]


def test_a_server_that_honours_them_passes(serve: Any, tmp_path: Path) -> None:
    folder = replay_folder(tmp_path / "replay", {
        "tool_choice": responses_call("get_time"),
        "chat/tool_choice": chat_call("get_time"),
        "messages/tool_choice": messages_call("get_time"),
        "custom_tool": custom_call("run_python"),
        "json_mode": responses_text(['{"weather": ', '"sunny"}']),
        "chat/json_mode": chat_text(['{"weather": ', '"sunny"}']),
    })
    server = serve(str(folder))
    code, report = probe(server.url)
    assert {feature: status for feature, (status, _) in rows(report).items()} == {
        "tool_choice.responses": "supported", "tool_choice.chat": "supported", "tool_choice.messages": "supported",
        "custom_tool.responses": "supported", "json_mode.responses": "supported", "json_mode.chat": "supported"}
    codes = {f["code"] for entry in report["files"] for f in entry["findings"] if f["severity"] != "info"}
    assert not codes & {"TCH001", "TCH002", "TCH003", "FMT001", "FMT004"}, codes


def test_arguments_off_a_strict_tool_s_schema(serve: Any, tmp_path: Path) -> None:
    folder = replay_folder(tmp_path / "replay", {"chat/tool_choice": chat_call("get_time", '"Berlin"}')})
    server = serve(str(folder))
    code, report = sse_check_json("probe", server.url, "--model", "m", "--api", "chat", "-s", "tool_choice")
    assert code == 1
    row = next(r for r in report["capabilities"] if r["feature"] == "tool_choice.chat")
    assert (row["status"], row["finding"]["code"]) == ("broken", "TCH003")
    assert '/city: "Berlin" is not one of' in row["why"]
