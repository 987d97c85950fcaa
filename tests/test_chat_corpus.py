"""The Chat Completions dialect on its corpus (captures/chat): recognition, the machine, the declared findings.

tests/test_corpus.py checks every capture of captures/chat like the others (the exact declared codes, under
each declared profile, whole, byte by byte and in random chunks). Here: the synthetic captures are what
captures/make_chat_captures.py writes; a chat stream is recognised and checked by the chat machine; its hot
path changes nothing; the real llama-server captures and their non-streamed answers are what their README
says; and the machine's own edge cases.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from generators import assert_written, load_generator
from test_corpus import declaration, rel

from checker import dialects
from checker.dialects.chat.machine import ChatMachine
from checker.engine import LintResult, StreamLinter
from checker.findings import Position
from checker.profiles import PROFILES, get_profile
from checker.run_template import RunTemplates
from checker.schemas import load_schema_set
from checker.synth import ChatStreamBuilder, encode_chat

ROOT = Path(__file__).resolve().parents[1]
CHAT = ROOT / "captures" / "chat"
ALL = sorted(CHAT.rglob("*.sse"))
LLAMA = sorted((CHAT / "llama.cpp").glob("*.sse"))
POS = Position(line=1, byte=0, event_index=0)


def _lint(data: bytes, profile: str = "openai", request: dict[str, Any] | None = None, **options: Any) -> LintResult:
    linter = StreamLinter(profile=get_profile(profile), request=request, **options)
    linter.feed(data)
    return linter.close()


def _generator() -> Any:
    return load_generator(ROOT / "captures" / "make_chat_captures.py")


def test_the_synthetic_chat_captures_are_what_the_generator_writes() -> None:
    on_disk = [path for folder in ("conforming", "rules", "framing") for path in (CHAT / folder).iterdir()]
    assert_written(_generator().render(), ROOT / "captures", on_disk, "captures/make_chat_captures.py")


def test_every_cht_rule_has_its_bad_capture_in_the_generator() -> None:
    from checker.rules import RULES

    names = {name[:6] for name in _generator().RULES}
    assert names == {code for code in RULES if code.startswith("CHT")}


# --- recognition ------------------------------------------------------------------------------------------------


def test_a_chat_stream_is_recognised_and_checked_as_chat() -> None:
    data = encode_chat(ChatStreamBuilder().text(["Hi"]).chunks())
    result = _lint(data)
    assert (result.dialect, result.findings) == ("chat", [])
    assert dialects.for_endpoint("/v1/chat/completions") is dialects.get("chat")
    assert dialects.recognise({"object": "chat.completion.chunk", "choices": []})[0] is dialects.get("chat")
    # A Responses event is not a chat chunk, nor is the legacy completions' text_completion.
    chat = dialects.get("chat")
    assert chat.recognise({"type": "response.created"}) is None
    assert chat.recognise({"object": "text_completion", "choices": []}) is None


def test_the_done_sentinel_is_required_and_nothing_may_follow_it() -> None:
    plain = encode_chat(ChatStreamBuilder().text(["Hi"]).chunks(), done=False)
    assert [f.code for f in _lint(plain).findings] == ["SSE012"]
    assert [f.code for f in _lint(plain + b"data: [DONE]\n\n" + plain[:plain.index(b"\n\n") + 2]).findings] \
        == ["SSE010"]


@pytest.mark.parametrize("path", sorted((CHAT / "conforming").glob("*.sse")), ids=rel)
@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_conforming_chat_captures_are_clean_under_every_profile(path: Path, profile: str) -> None:
    result = _lint(path.read_bytes(), profile, declaration(path).request)
    assert (result.dialect, [f.message for f in result.findings]) == ("chat", [])


# --- the hot path ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ALL, ids=rel)
def test_fast_and_full_paths_agree_on_chat_captures(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data, request = path.read_bytes(), declaration(path).request
    fast = {profile: _lint(data, profile, request) for profile in PROFILES}
    monkeypatch.setattr(ChatMachine, "try_fast", lambda self, etype, event: False)
    for profile, quick in fast.items():
        slow = _lint(data, profile, request, trace=True)
        assert slow.findings == quick.findings, profile
        assert (slow.events, slow.terminals, slow.response_id) == (quick.events, quick.terminals, quick.response_id)


def test_the_fast_path_is_taken_on_content_deltas(monkeypatch: pytest.MonkeyPatch) -> None:
    taken: list[Any] = []
    original = ChatMachine.try_fast

    def spy(self: ChatMachine, etype: Any, event: dict[str, Any]) -> bool:
        accepted = original(self, etype, event)
        taken.append(accepted)
        return accepted

    monkeypatch.setattr(ChatMachine, "try_fast", spy)
    # Without run templates (checker/run_template.py), which take the deltas after the first by their bytes.
    monkeypatch.setattr(RunTemplates, "start", lambda *args: None)
    _lint(encode_chat(ChatStreamBuilder().text(["a", "b", "c", "d"]).chunks()))
    assert sum(taken) >= 3


# --- the machine ----------------------------------------------------------------------------------------------


def _feed(chunks: list[dict[str, Any]], **options: Any) -> tuple[list[str], ChatMachine]:
    machine = ChatMachine(keep_texts=True, **options)
    codes: list[str] = []
    for n, chunk in enumerate(chunks):
        pos = Position(line=n + 1, byte=n, event_index=n)
        if not machine.try_fast("chat.completion.chunk", chunk):
            codes += [f.code for f in machine.handle(chunk, pos)]
    codes += [f.code for f in machine.finish(POS)]
    return codes, machine


def test_the_machine_reconciles_every_delta_field_into_its_choice() -> None:
    builder = ChatStreamBuilder().reasoning(["Think", "ing"]).text(["Hel", "lo"]).refusal(["No"], choice=1)
    builder.tool_call("f", ['{"a"', ": 1}"])
    codes, machine = _feed(list(builder.chunks()), request={"n": 2})
    assert codes == ["CHT025"]
    assert machine.summary().texts is not None
    first, second = machine.choice_texts()
    assert (first["reasoning_content"], first["content"], second["refusal"]) == ("Thinking", "Hello", "No")
    assert first["tool_calls"][0]["arguments"] == '{"a": 1}' and first["finish_reason"] == "tool_calls"
    assert machine.summary().terminals == ("finish_reason tool_calls", "finish_reason stop")


def test_a_bool_index_is_not_choice_one() -> None:
    chunks = list(ChatStreamBuilder().text(["a"]).text(["b"], choice=1).chunks())
    chunks.append(ChatStreamBuilder().chunk([{"index": True, "delta": {"content": "x"}, "finish_reason": None}]))
    codes, _ = _feed(chunks, request={"n": 2})
    assert codes == ["CHT005"]


def test_a_changed_identity_is_reported_once_per_field_with_the_last_value() -> None:
    builder = ChatStreamBuilder().text(["a", "b", "c"])
    chunks = list(builder.chunks())
    chunks[2]["model"] = chunks[3]["model"] = "other"
    machine = ChatMachine()
    found = []
    for n, chunk in enumerate(chunks):
        found += machine.handle(chunk, Position(line=n + 1, byte=n, event_index=n))
    found += machine.finish(POS)
    (finding,) = found
    assert finding.position.event_index == 2 and finding.details["chunks"] == 2
    assert finding.details["last_differs"] is False  # the last chunk names the first model again



def _identity_findings(chunks: list[dict[str, Any]]) -> list[Any]:
    machine = ChatMachine()
    found = []
    for n, chunk in enumerate(chunks):
        found += machine.handle(chunk, Position(line=n + 1, byte=n, event_index=n))
    return found + machine.finish(POS)


def test_a_system_fingerprint_first_given_on_a_later_chunk_is_no_change() -> None:
    """vLLM sends system_fingerprint on the last chunk only (captures/vllm/chat): both SDKs' final completions
    carry that value, so it is no change of identity; a second, different value is one, as is a null after it.
    The model is kept from the first chunk by openai-python, so a model first given later still is a change."""
    chunks = list(ChatStreamBuilder(system_fingerprint=None).text(["a", "b", "c"]).chunks())
    chunks[-1]["system_fingerprint"] = "fp_late"
    assert _identity_findings(chunks) == []
    chunks[-2]["system_fingerprint"] = "fp_first"
    (changed,) = _identity_findings(chunks)
    assert changed.code == "CHT001"
    assert (changed.details["before"], changed.details["after"]) == ("fp_first", "fp_late")
    chunks = list(ChatStreamBuilder().text(["a", "b"]).chunks())
    chunks[-1]["system_fingerprint"] = None
    assert [f.code for f in _identity_findings(chunks)] == ["CHT001"]
    chunks = list(ChatStreamBuilder().text(["a", "b"]).chunks())
    del chunks[0]["model"]
    assert [f.details["field"] for f in _identity_findings(chunks)] == ["model"]

def test_usage_totals_are_checked() -> None:
    chunks = list(ChatStreamBuilder().text(["a"]).chunks(usage=True))
    chunks[-1]["usage"]["completion_tokens_details"]["reasoning_tokens"] = 5
    codes, _ = _feed(chunks, request={"stream_options": {"include_usage": True}})
    assert codes == ["CHT022"]



def test_a_tool_call_cut_by_the_token_limit_is_not_invalid_arguments() -> None:
    """A call whose choice finished with "length" was cut by max_tokens, as finish_reason says (the real
    llama-server's function_call_truncated); the same cut arguments with "tool_calls" are CHT017."""
    cut = ChatStreamBuilder().tool_call("get_weather", ['{"city": ', '"Par'])
    codes, _ = _feed(list(cut.chunks(finish_reason="length")), request={"max_tokens": 5})
    assert "CHT017" not in codes
    cut = ChatStreamBuilder().tool_call("get_weather", ['{"city": ', '"Par'])
    codes, _ = _feed(list(cut.chunks()))
    assert "CHT017" in codes

# --- the real llama-server -------------------------------------------------------------------------------------


def test_the_real_llama_server_corpus_is_complete() -> None:
    assert {p.stem for p in LLAMA} == {"plain", "reasoning", "usage", "tool_call", "two_tool_calls",
                                       "max_tokens_cut"}
    for path in LLAMA:
        for suffix in (".request.json", ".headers.txt", ".nonstream.json", ".expect.json"):
            assert path.with_name(path.stem + suffix).is_file(), (rel(path), suffix)


@pytest.mark.parametrize("path", LLAMA, ids=rel)
def test_llama_server_streams_are_clean_under_its_profile_but_its_documented_deviations(path: Path) -> None:
    result = _lint(path.read_bytes(), "llama.cpp", declaration(path).request)
    assert result.dialect == "chat"
    assert all(f.known_deviation for f in result.findings), [f.message for f in result.findings]


@pytest.mark.parametrize("path", LLAMA, ids=rel)
def test_llama_server_non_streamed_answers_lack_only_logprobs_and_refusal(path: Path) -> None:
    """The README's finding: the non-streamed answer omits choices[].logprobs and message.refusal, which
    CreateChatCompletionResponse requires (nullable); nothing else departs from the schema."""
    answer = json.loads(path.with_name(path.stem + ".nonstream.json").read_text())
    violations = load_schema_set("chat").validate_object("CreateChatCompletionResponse", answer)
    assert {(v.pointer, v.keyword) for v in violations} == {("/choices/0/logprobs", "required"),
                                                            ("/choices/0/message/refusal", "required")}
