"""The live replay (``sse-check replay --live``, ``sse-check probe --replay``) against ``sse-check serve``.

The server is a real ``sse-check serve`` process over ``captures/replay/llama.cpp`` (``replay_server`` in
conftest.py: the real llama-server replay experiment, three of its turns derived, see its README),
answering each request by its body: the live replay drops the probe's scenario header, so every answer
below also shows that the turn-2 bodies are built exactly as recorded. Offline: the reuse computation and
the RPL1xx rules on the measurement fixtures of ``captures/replay/live``.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from checker.cli import main
from checker.live.outcome import OutcomeCollector
from checker.replay import live
from checker.rules import RULES

if TYPE_CHECKING:  # the fixtures come from tests/live/conftest.py
    from conftest import ServerProcess

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = ROOT / "captures"
RECORDED_CHAT = ROOT / "captures" / "replay" / "llama.cpp-chat"  # recorded from the real server, all of it
RECORDED = CAPTURES / "replay" / "llama.cpp"
FIXTURES = CAPTURES / "replay" / "live"
MODEL = "tiny-qwen3-random"
LIVE_RULES = sorted(code for code in RULES if code.startswith("RPL1"))
# The cache table of the recorded set: (family, variant) -> (input_tokens, cached_tokens, cache_n, stopped)
TABLE = {
    ("continue", "exact"): (384, 284, 284, "reasoning"),
    ("continue", "dropped"): (370, 273, 273, "prompt"),
    ("continue", "altered"): (384, 279, 279, "reasoning-partial"),
    ("new_user", "exact"): (382, 273, 273, "prompt"),
    ("new_user", "dropped"): (382, 273, 273, "prompt"),
    ("new_user", "altered"): (382, 273, 273, "prompt"),
}


def run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "checker", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=timeout, env={**os.environ, "NO_COLOR": "1", "OPENAI_API_KEY": ""})
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    return proc


def run_here(*args: str) -> tuple[int, str, str]:
    """The CLI in this process (the server is the real process here)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    assert "Traceback" not in err.getvalue()
    return code, out.getvalue(), err.getvalue()


def live_json(url: str, *args: str) -> tuple[int, dict[str, Any]]:
    code, out, err = run_here("replay", "--live", url, "--model", MODEL, "--format", "json", *args)
    assert out.startswith("{"), out[:300] + err
    return code, json.loads(out)


def variants(report: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(f["family"], v["variant"]): v for f in report["families"] for v in f["variants"]}


def codes(report: dict[str, Any]) -> list[str]:
    return sorted(f["code"] for f in report["findings"])


# --- offline: the requests ---------------------------------------------------------------------------------


def _recorded_turn1() -> dict[str, Any]:
    collector = OutcomeCollector("responses")
    collector.feed((RECORDED / "replay-turn1.sse").read_bytes())
    return live.turn1_output("responses", collector.close().output)


def _as_sent(body: dict[str, Any]) -> str:
    return json.dumps({"model": MODEL, **body, "stream": True}, indent=2, ensure_ascii=False) + "\n"


def test_the_recorded_requests_are_byte_for_byte_what_the_live_replay_sends() -> None:
    assert (RECORDED / "replay-turn1.request.json").read_text() == _as_sent(live.turn1_body("responses"))
    turn1 = _recorded_turn1()
    for family, variant in live.PAIRS:
        body = live.turn2_body("responses", turn1, family, variant)
        assert body is not None
        assert (RECORDED / f"replay-{family}-{variant}.request.json").read_text() == _as_sent(body), (family, variant)


def test_turn2_bodies_keep_drop_or_alter_the_reasoning_item_and_nothing_else() -> None:
    turn1 = _recorded_turn1()
    exact = live.turn2_body("responses", turn1, "continue", "exact")
    dropped = live.turn2_body("responses", turn1, "continue", "dropped")
    altered = live.turn2_body("responses", turn1, "continue", "altered")
    new_user = live.turn2_body("responses", turn1, "new_user", "exact")
    assert exact and dropped and altered and new_user
    items = exact["input"]
    assert items[1] == turn1["items"][0]  # the reasoning item exactly as emitted
    assert [i.get("type") for i in items] == [None, "reasoning", "function_call", "function_call",
                                              "function_call_output", "function_call_output"]
    assert dropped["input"] == [items[0], *items[2:]]
    assert altered["input"][1]["content"][0]["text"] == " temperature they green think cold it table data are"
    assert {k: v for k, v in altered["input"][1].items() if k != "content"} == \
        {k: v for k, v in items[1].items() if k != "content"}
    assert new_user["input"] == [*items, {"role": "user", "content": live.FOLLOW_UP}]
    assert exact["tool_choice"] == "auto" and live.turn1_body("responses")["tool_choice"] == "required"
    assert items[4]["output"] == '{"temperature": 18, "unit": "fahrenheit", "condition": "cloudy"}'


def test_alter_text_changes_the_middle_word_only() -> None:
    assert live.alter_text("a b c") == "a cold c"
    assert live.alter_text("x cold y") == "x warm y"
    assert live.alter_text("  \n12 ") is None
    assert live.altered_reasoning_item({"type": "reasoning", "summary": [], "encrypted_content": "x"}) is None
    summary_only = {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Plan the call"}]}
    assert live.altered_reasoning_item(summary_only)["summary"][0]["text"] == "Plan cold call"  # type: ignore[index]
    assert live.turn2_body("responses", {"items": [{"type": "reasoning", "summary": [], "encrypted_content": "e"}]},
                           "continue", "altered") is None


def test_chat_bodies_follow_the_case_file_rule_in_the_continue_family() -> None:
    message = {"role": "assistant", "content": "", "reasoning_content": "Check the weather first.",
               "tool_calls": [{"id": "call_1", "type": "function",
                               "function": {"name": "get_time", "arguments": "{\"city\":\"Paris\"}"}}]}
    turn1 = live.turn1_output("openai-chat", [message], "reasoning_content")
    exact = live.turn2_body("openai-chat", turn1, "continue", "exact")
    dropped = live.turn2_body("openai-chat", turn1, "continue", "dropped")
    altered = live.turn2_body("openai-chat", turn1, "continue", "altered")
    new_user = live.turn2_body("openai-chat", turn1, "new_user", "exact")
    assert exact and dropped and altered and new_user
    assert exact["messages"] == [
        {"role": "user", "content": live.PROMPT},
        {"role": "assistant", "content": "", "reasoning_content": "Check the weather first.",
         "tool_calls": message["tool_calls"]},
        {"role": "tool", "tool_call_id": "call_1", "content": "{\"time\": \"14:05\"}"},
    ]
    assert "reasoning_content" not in dropped["messages"][1]
    assert altered["messages"][1]["reasoning_content"] == "Check the cold first."
    # the new turn sends the earlier reasoning on purpose: the point is to see whether the template keeps it
    assert new_user["messages"] == [*exact["messages"], {"role": "user", "content": live.FOLLOW_UP}]
    reasoning_field = live.turn1_output("openai-chat", [{**message, "reasoning": "r", "reasoning_content": None}],
                                        "reasoning")
    assert live.turn2_body("openai-chat", reasoning_field, "continue", "exact")["messages"][1]["reasoning"] == "r"  # type: ignore[index]


# --- offline: the reuse computation and the rules ------------------------------------------------------------


def test_reuse_is_placed_against_the_previous_prompt_the_reasoning_and_the_output() -> None:
    turn1 = live.Counts(status=200, input_tokens=275, output_tokens=77, reasoning_tokens=9,
                        reasoning_source="deltas", after_reasoning=("function_call", "function_call"))
    bounds = live.boundaries(turn1)
    assert bounds == live.Boundaries(275, 284, 352)
    where = {n: live.where_stopped(n, bounds, turn1).at for n in (0, 200, 273, 275, 279, 284, 300, 344, 352)}
    assert where == {0: "none", 200: "prompt-partial", 273: "prompt", 275: "prompt", 279: "reasoning-partial",
                     284: "reasoning", 300: "reasoning", 344: "output", 352: "output"}
    assert live.where_stopped(284, bounds, turn1).text == "after the reasoning, before the tool calls"
    assert live.where_stopped(279, bounds, turn1).text == "inside the reasoning (≈4 of 9 reasoning tokens)"


def test_the_recorded_numbers_give_the_table_and_only_the_informational_finding() -> None:
    measurement = live.measurement_from_dict(json.loads((FIXTURES / "llama.cpp.json").read_text()))
    analysis = live.analyse(measurement)
    for (family, variant), (tokens, cached, cache_n, stopped) in TABLE.items():
        row = analysis.row(family, variant)
        assert row is not None and row.stop is not None
        assert (row.turn2.input_tokens, row.turn2.cached_tokens, row.turn2.cache_n, row.stop.at) == \
            (tokens, cached, cache_n, stopped)
    assert analysis.row("continue", "exact").reuse == pytest.approx(284 / 275)  # type: ignore[union-attr]
    assert analysis.template == "drops"
    (finding,) = analysis.findings
    assert finding.code == "RPL102"
    assert "after the reasoning, before the tool calls (284 of 384 prompt tokens cached" in finding.message


def _fixture_codes(path: Path) -> tuple[list[str], list[str]]:
    data = json.loads(path.read_text())
    found = [f.code for f in live.analyse(live.measurement_from_dict(data)).findings]
    return sorted(set(found)), sorted(data["expect"])


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.json")), ids=lambda p: p.name)
def test_every_measurement_fixture_gives_exactly_what_it_declares(path: Path) -> None:
    found, expected = _fixture_codes(path)
    assert found == expected


@pytest.mark.parametrize("code", LIVE_RULES)
def test_every_live_replay_rule_fires_on_its_bad_example_and_not_on_its_good_one(code: str) -> None:
    rule = RULES[code]
    assert rule.bad.startswith("replay/live/") and rule.good.startswith("replay/live/")
    assert code in _fixture_codes(CAPTURES / rule.bad)[0]
    assert code not in _fixture_codes(CAPTURES / rule.good)[0]


def test_the_cache_lost_warning_names_the_three_numbers() -> None:
    data = json.loads((FIXTURES / "RPL101-replayed-reasoning-cache-lost.json").read_text())
    (finding,) = live.analyse(live.measurement_from_dict(data)).findings
    assert finding.severity.name == "WARNING"
    assert finding.message.startswith("replayed reasoning not rendered as generated: prefix cache lost (continue: "
                                      "the exact replay reused 273 cached tokens, no more than the controls: "
                                      "dropped 273, altered 273)")


def test_zero_everywhere_and_no_reasoning_cannot_be_measured() -> None:
    turn1 = live.Counts(status=200, input_tokens=10, output_tokens=5)
    zero = live.Measurement(dialect="responses", pairs=tuple(
        live.Pair(family=f, variant=v, turn1=turn1, turn2=live.Counts(status=200, input_tokens=20, cached_tokens=0))
        for f, v in live.PAIRS))
    (finding,) = live.analyse(zero).findings
    assert finding.code == "RPL105" and "0 cached tokens on every request" in finding.message
    none = live.Measurement(dialect="responses", pairs=(), unmeasured="turn 1 produced no reasoning")
    assert [f.message for f in live.analyse(none).findings] == [
        "the live replay cannot measure the prefix cache: turn 1 produced no reasoning"]


# --- live: against sse-check serve captures/replay/llama.cpp --------------------------------------------------


def test_the_live_replay_prints_the_cache_table_of_both_families(replay_server: ServerProcess) -> None:
    proc = run("replay", "--live", replay_server.url, "--model", MODEL, "--profile", "llama.cpp")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    lines = out.splitlines()
    tables = {family: lines.index(next(line for line in lines if line.startswith(f"{family}: ")))
              for family in live.FAMILIES}
    for (family, variant), (tokens, cached, cache_n, _) in TABLE.items():
        row = next(line for line in lines[tables[family]:] if line.startswith(f"{variant} "))
        assert row.split()[:5] == [variant, "200", str(tokens), str(cached), str(cache_n)], row
    assert "after the reasoning, before the tool calls" in out
    assert "inside the reasoning (≈4 of 9 reasoning tokens)" in out
    assert "boundaries: previous prompt 275 · + reasoning ≈284 · + whole output ≈352" in out
    # 284 cached of a 275-token previous prompt is "103%": the line under the table says what above 100% means
    joined = " ".join(out.split())
    assert "103%" in out and "above 100%: the cache went on into the reasoning or output that followed it" in joined
    assert "the template drops the earlier turn's reasoning at a new user message" in out
    assert "RPL102 info" in " ".join(out.split()) and "RPL101" not in out
    assert "turn 1 (sent before each turn 2): 6× HTTP 200 · input_tokens 275 · output_tokens 77" in out
    assert "12 request(s), 0 failed at --fail-on warning" in out


def test_the_json_report_and_every_answer_picked_by_its_body(replay_server: ServerProcess) -> None:
    code, report = live_json(replay_server.url, "--profile", "llama.cpp")
    assert code == 0
    assert (report["command"], report["mode"], report["target"]["dialect"]) == ("replay", "live", "responses")
    assert report["target"]["url"] == replay_server.url + "/v1/responses"
    assert codes(report) == ["RPL102"]
    assert report["aborted"] is None and report["unmeasured"] is None
    assert [f["family"] for f in report["families"]] == ["continue", "new_user"]
    assert report["families"][1]["template"] == "drops"
    rows = variants(report)
    for pair, (tokens, cached, cache_n, stopped) in TABLE.items():
        row = rows[pair]
        assert (row["status"], row["input_tokens"], row["cached_tokens"], row["cache_n"], row["stopped"]["at"]) == \
            (200, tokens, cached, cache_n, stopped)
        assert row["boundaries"] == {"previous_prompt": 275, "reasoning_end": 284, "output_end": 352}
        assert row["request"] == f"replay-{pair[0]}-{pair[1]}" and row["verdict"]["failed"] is False
    assert rows[("continue", "exact")]["reuse_vs_previous_prompt"] == round(284 / 275, 4)
    # what each turn 2 sent back, as the proxy's history checks judge it (the controls break them on purpose)
    assert {p: [f["code"] for f in rows[p]["sent_back"]] for p in live.PAIRS} == {
        ("continue", "exact"): [], ("continue", "dropped"): ["RPL003"], ("continue", "altered"): ["RPL001"],
        ("new_user", "exact"): [], ("new_user", "dropped"): [], ("new_user", "altered"): ["RPL001"]}
    # 12 requests, each answered from the capture its body matches (the scenario header is not sent)
    requests = report["requests"]
    assert [(r["name"], r["turn"]) for r in requests] == [
        (f"replay-{f}-{v}{suffix}", turn) for f, v in live.PAIRS for suffix, turn in (("-turn1", 1), ("", 2))]
    for request in requests:
        expected = "replay-turn1" if request["turn"] == 1 else request["name"]
        assert request["http"]["replayed_as"] == expected, request["name"]
        assert request["http"]["status"] == 200 and not request["failed"]
    measurement = report["measurement"]
    assert live.analyse(live.measurement_from_dict(measurement)).template == "drops"
    assert report["summary"]["requests"] == 12 and report["summary"]["failed"] is False


def test_probe_replay_runs_the_same_replay_and_saves_what_lint_agrees_with(replay_server: ServerProcess,
                                                                            tmp_path: Path) -> None:
    saved = tmp_path / "saved"
    proc = run("probe", replay_server.url, "--model", MODEL, "--replay", "--format", "json", "--save", str(saved))
    assert proc.returncode == 1, proc.stderr  # the openai profile: llama.cpp's streams fail it
    report = json.loads(proc.stdout)
    assert codes(report) == ["RPL102"]
    assert variants(report)[("continue", "exact")]["cached_tokens"] == 284
    failing = {f["code"] for r in report["requests"] for f in r["findings"] if f["severity"] == "error"}
    assert {"ITM001", "CNT001"} <= failing
    assert len(list(saved.glob("*.sse"))) == 12 and len(list(saved.glob("*.meta.json"))) == 12
    code, out, _ = run_here("lint", str(saved), "--profile", "llama.cpp", "--format", "json")
    assert code == 0, out
    linted = {Path(f["path"]).name.removesuffix(".sse"): {x["code"] for x in f["findings"]}
              for f in json.loads(out)["files"]}
    code, again = live_json(replay_server.url, "--profile", "llama.cpp")
    assert linted == {r["name"]: {f["code"] for f in r["findings"]} for r in again["requests"]}


def test_a_server_rejecting_the_replayed_reasoning_item(serve: Any, tmp_path: Path) -> None:
    """llama-server answers HTTP 400 to a reasoning item it cannot read; here, to the one it emitted."""
    shutil.copytree(RECORDED, tmp_path / "set")
    message = "'summary' is required and 'content' must be a non-empty array in a reasoning item"
    for family in live.FAMILIES:
        stem = tmp_path / "set" / f"replay-{family}-exact"
        stem.with_suffix(".sse").write_text(json.dumps({"error": {"code": 400, "message": message,
                                                                  "type": "invalid_request_error"}}))
        stem.with_suffix(".headers.txt").write_text("HTTP/1.1 400 Bad Request\nContent-Type: application/json\n")
    server = serve(str(tmp_path / "set"))
    code, report = live_json(server.url, "--profile", "llama.cpp")
    assert code == 1
    assert codes(report) == ["RPL104", "RPL104"]
    first = report["findings"][0]
    assert first["severity"] == "error"
    assert first["message"] == (f"the server rejected the continue request that sends the reasoning back exactly "
                                f"as it emitted it: HTTP 400 ({message}); the same request without the reasoning "
                                "was accepted")
    rows = variants(report)
    assert rows[("continue", "exact")]["status"] == 400 and rows[("continue", "exact")]["error"] == message
    assert rows[("continue", "dropped")]["cached_tokens"] == 273
    exact = next(r for r in report["requests"] if r["name"] == "replay-continue-exact")
    # A valid request refused with an error about the reasoning item it carries: that item type is unsupported.
    (refused,) = [f for f in exact["findings"] if f["code"] == "HTP022"]
    assert refused["message"].startswith("feature not supported: input item type 'reasoning' (HTTP 400: ")
    code, out, _ = run_here("replay", "--live", server.url, "--model", MODEL, "--profile", "llama.cpp")
    text = " ".join(out.split())
    assert code == 1 and "RPL104 error the server rejected the continue request" in text
    assert f"HTTP 400 ({message}); the same request without the reasoning was accepted" in text


# --- the chat dialect (a synthetic set: no chat replay was recorded) ---------------------------------------------


def _chunk(delta: dict[str, Any] | None, finish: str | None = None, **extra: Any) -> bytes:
    obj: dict[str, Any] = {"choices": [] if delta is None else [{"finish_reason": finish, "index": 0,
                                                                  "delta": delta}],
                           "created": 1796021265, "id": "chatcmpl-live", "model": MODEL,
                           "object": "chat.completion.chunk", **extra}
    return b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n"


def _usage(prompt: int, cached: int, completion: int) -> bytes:
    usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
             "prompt_tokens_details": {"cached_tokens": cached}}
    return _chunk(None, usage=usage, timings={"cache_n": cached, "prompt_n": prompt - cached})


def _chat_set(folder: Path) -> None:
    """A llama.cpp-shaped chat replay set; its numbers are chosen (the template keeps earlier reasoning)."""
    folder.mkdir()
    words = [" temperature", " they", " green", " think", " look", " it", " table", " data", " are"]
    calls = [("call_a", "get_weather", "{\"city\":\"Tokyo\",\"unit\":\"fahrenheit\"}"),
             ("call_b", "get_time", "{ \"city\":\"Paris\" }")]
    turn1 = [_chunk({"role": "assistant", "content": None})]
    turn1 += [_chunk({"reasoning_content": w}) for w in words]
    for n, (call_id, name, arguments) in enumerate(calls):
        turn1.append(_chunk({"tool_calls": [{"index": n, "id": call_id, "type": "function",
                                             "function": {"name": name, "arguments": ""}}]}))
        turn1.append(_chunk({"tool_calls": [{"index": n, "function": {"arguments": arguments}}]}))
    turn1 += [_chunk({}, "tool_calls"), _usage(275, 0, 77), b"data: [DONE]\n\n"]
    body = b"".join(turn1)
    head = "HTTP/1.1 200 OK\nContent-Type: text/event-stream\n"

    def write(name: str, request: dict[str, Any], stream: bytes) -> None:
        (folder / f"{name}.sse").write_bytes(stream)
        (folder / f"{name}.headers.txt").write_text(head)
        (folder / f"{name}.request.json").write_text(json.dumps({"model": MODEL, **request, "stream": True}))

    write("chat-turn1", live.turn1_body("openai-chat"), body)
    collector = OutcomeCollector("chat")
    collector.feed(body)
    outcome = collector.close()
    parsed = live.turn1_output("openai-chat", outcome.output, outcome.reasoning_field)
    numbers = {("continue", "exact"): (380, 284), ("continue", "dropped"): (366, 273),
               ("continue", "altered"): (380, 279), ("new_user", "exact"): (392, 284),
               ("new_user", "dropped"): (378, 273), ("new_user", "altered"): (392, 279)}
    for (family, variant), (prompt, cached) in numbers.items():
        request = live.turn2_body("openai-chat", parsed, family, variant)
        assert request is not None
        answer = _chunk({"role": "assistant", "content": " for dark"}) + _chunk({}, "stop") + \
            _usage(prompt, cached, 13) + b"data: [DONE]\n\n"
        write(f"chat-{family}-{variant}", request, answer)


def test_the_chat_dialect_measures_reasoning_content_sent_back(serve: Any, tmp_path: Path) -> None:
    _chat_set(tmp_path / "chat")
    server = serve(str(tmp_path / "chat"))
    code, report = live_json(server.url, "--dialect", "openai-chat", "--profile", "llama.cpp")
    assert code == 0, report
    assert report["target"]["url"] == server.url + "/v1/chat/completions"
    rows = variants(report)
    assert [rows[p]["cached_tokens"] for p in live.PAIRS] == [284, 273, 279, 284, 273, 279]
    assert rows[("continue", "exact")]["stopped"]["at"] == "reasoning"
    assert report["families"][1]["template"] == "keeps"
    assert codes(report) == ["RPL102", "RPL103"]
    # Each answer is checked as Chat Completions: turn 1's reasoning_content is llama.cpp's documented CHT025.
    found = [f for r in report["requests"] for f in r["findings"]]
    assert {f["code"] for f in found} == {"CHT025"} and all(f["known_deviation"] for f in found), found
    turn1 = report["measurement"]["pairs"][0]["turn1"]
    assert (turn1["input_tokens"], turn1["reasoning_tokens"], turn1["reasoning_source"]) == (275, 9, "deltas")
    assert turn1["after_reasoning"] == ["function_call", "function_call"]


def test_the_recorded_chat_requests_are_what_the_live_replay_sends() -> None:
    collector = OutcomeCollector("chat")
    collector.feed((RECORDED_CHAT / "replay-turn1.sse").read_bytes())
    answer = collector.close()
    turn1 = live.turn1_output("openai-chat", answer.output, answer.reasoning_field)
    assert (RECORDED_CHAT / "replay-turn1.request.json").read_text() == _as_sent(live.turn1_body("openai-chat"))
    for family, variant in live.PAIRS:
        body = live.turn2_body("openai-chat", turn1, family, variant)
        assert body is not None
        assert (RECORDED_CHAT / f"replay-{family}-{variant}.request.json").read_text() == _as_sent(body), variant


def test_the_real_servers_chat_replay_served_back_gives_its_table(serve: Any) -> None:
    """captures/replay/llama.cpp-chat: every answer recorded from the real llama-server b11434 (no derived one);
    served back, the chat live replay shows the real server's cache table."""
    server = serve(str(RECORDED_CHAT))
    code, report = live_json(server.url, "--dialect", "openai-chat", "--profile", "llama.cpp")
    assert report["aborted"] is None and report["unmeasured"] is None, report
    rows = variants(report)
    assert [(rows[p]["input_tokens"], rows[p]["cached_tokens"]) for p in live.PAIRS] == [
        (384, 284), (370, 273), (384, 279), (382, 273), (382, 273), (382, 273)]
    assert report["families"][1]["template"] == "drops"
    assert codes(report) == ["RPL102"] and code == 0
    assert [[f["code"] for f in rows[p]["sent_back"]] for p in live.PAIRS] == [
        [], ["RPL004"], ["RPL005"], ["RPL006"], [], ["RPL006"]]  # RPL006: earlier-turn reasoning sent on purpose


# --- usage errors ----------------------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("args, message", [
    (["replay", "--live", "http://127.0.0.1:9"], "--live needs --model"),
    (["replay", "cases/reasoning-replay.json", "--live", "http://127.0.0.1:9", "--model", "m"], "not both"),
    (["replay", "--live", "http://127.0.0.1:9", "--model", "m", "--format", "junit"], "text or json"),
    (["replay", "--live", "http://127.0.0.1:9", "--model", "m", "--thinking-budget", "16"],
     "--thinking-budget applies to --dialect anthropic"),
    (["replay", "--live", "http://127.0.0.1:9", "--model", "m", "--dialect", "anthropic", "--thinking-budget", "0"],
     "--thinking-budget must be a positive number"),
    (["replay", "--live", "http://127.0.0.1:9", "--model", "m", "--profile", "nope"], "unknown profile"),
    (["replay"], "case files (CASES.json...) or --live URL"),
    (["probe", "http://127.0.0.1:9", "--model", "m", "--replay", "--scenario", "plain_text"], "do not apply"),
])
def test_usage_errors_exit_2_with_one_line(args: list[str], message: str) -> None:
    code, out, err = run_here(*args)
    assert code == 2 and message in err and err.count("\n") == 1, err


def test_an_unreachable_server_exits_2() -> None:
    url = f"http://127.0.0.1:{_free_port()}"
    code, out, err = run_here("replay", "--live", url, "--model", MODEL)
    assert code == 2
    assert err.startswith(f"sse-check: nothing replayed: cannot connect to {url}/v1/responses")
    assert err.count("\n") == 1 and out == ""  # one line, not a report of nothing
