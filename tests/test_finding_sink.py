"""checker/finding_sink.py: what is reported of a lint's findings (selection, profile, deferral, collapsing)."""

from __future__ import annotations

from checker.finding_sink import FindingSink
from checker.findings import Finding, Position, Severity
from checker.profiles import OPENAI, KnownDeviation, Profile, StreamFacts
from checker.rules import calls, framing, lifecycle


def _at(byte: int, line: int = 1) -> Position:
    return Position(line=line, byte=byte)


def _cut_call(byte: int = 10) -> Finding:
    return calls.ARGUMENTS_NOT_JSON.finding(_at(byte), item="fc_1", name="f", error="unexpected end")


def _missing_sequence(byte: int, etype: str = "response.output_text.delta") -> Finding:
    return lifecycle.SEQUENCE_MISSING.finding(_at(byte), type=etype)


# A profile like llama.cpp's: a deviation decided only at the end of the stream, one decided at once, a
# severity override and a disabled rule.
PROFILE = Profile(
    name="test",
    description="a test profile",
    severity={framing.DONE_SENT.code: Severity.ERROR},
    disabled=frozenset({framing.MULTILINE_DATA.code}),
    known_deviations=(
        KnownDeviation(code=calls.ARGUMENTS_NOT_JSON.code, description="cut calls",
                       when_stream=lambda f, facts: facts.truncated),
        KnownDeviation(code=lifecycle.SEQUENCE_MISSING.code, description="no sequence numbers"),
    ),
)


def test_select_and_ignore_are_case_insensitive_code_prefixes() -> None:
    sink = FindingSink(OPENAI, select=["sse", "lif015"], ignore=["sse01"])
    assert sink.wanted("SSE004") and sink.wanted("LIF015")
    assert not sink.wanted("SSE012")  # ignored
    assert not sink.wanted("LIF001")  # not selected
    assert not sink.wanted("SCH001")


def test_a_rule_the_profile_disables_is_never_reported() -> None:
    sink = FindingSink(PROFILE)
    out: list[Finding] = []
    sink.emit(framing.MULTILINE_DATA.finding(_at(0), count=2), out)
    sink.settle(StreamFacts())
    assert out == [] and sink.findings() == []


def test_the_profile_applies_its_severity_and_its_known_deviations() -> None:
    sink = FindingSink(PROFILE)
    out: list[Finding] = []
    sink.emit(framing.DONE_SENT.finding(_at(5)), out)
    sink.emit(_missing_sequence(9), out)
    assert framing.DONE_SENT.severity != Severity.ERROR
    assert [(f.code, f.severity, f.known_deviation) for f in out] == [
        (framing.DONE_SENT.code, Severity.ERROR, None),
        (lifecycle.SEQUENCE_MISSING.code, Severity.INFO, "no sequence numbers"),
    ]


def test_repeats_are_collapsed_into_the_first_with_their_count() -> None:
    sink = FindingSink(OPENAI)
    out: list[Finding] = []
    for byte in (30, 60, 90):
        sink.emit(_missing_sequence(byte), out)
    sink.emit(_missing_sequence(120, "response.output_text.done"), out)  # another message: its own finding
    sink.settle(StreamFacts())
    assert [f.position.byte for f in out] == [30, 120]  # emit reports first occurrences only
    assert [(f.position.byte, f.occurrences) for f in sink.findings()] == [(30, 3), (120, 1)]


def test_without_collapsing_every_finding_is_reported() -> None:
    sink = FindingSink(OPENAI, collapse=False)
    reported = sink.emit_all([_missing_sequence(30), _missing_sequence(60)])
    sink.settle(None)
    assert [f.position.byte for f in reported] == [30, 60]
    assert [(f.position.byte, f.occurrences) for f in sink.findings()] == [(30, 1), (60, 1)]


def test_a_deviation_that_needs_the_stream_is_held_until_the_facts_are_known() -> None:
    for truncated, severity in ((True, Severity.INFO), (False, calls.ARGUMENTS_NOT_JSON.severity)):
        sink = FindingSink(PROFILE)
        out: list[Finding] = []
        sink.emit(_cut_call(), out)
        assert out == []  # held back: its verdict depends on how the stream ends
        settled: list[Finding] = []
        sink.settle(StreamFacts(truncated=truncated), settled)
        assert [(f.code, f.severity) for f in settled] == [(calls.ARGUMENTS_NOT_JSON.code, severity)]
        assert sink.findings() == settled


def test_after_settling_findings_are_judged_at_once_by_the_facts() -> None:
    sink = FindingSink(PROFILE)
    sink.settle(StreamFacts(truncated=True))
    out: list[Finding] = []
    sink.emit(_cut_call(), out)
    assert [(f.code, f.severity) for f in out] == [(calls.ARGUMENTS_NOT_JSON.code, Severity.INFO)]
    # Settled without facts (findings not about a stream's end): the stream-dependent deviation never holds.
    sink = FindingSink(PROFILE)
    sink.settle(None)
    assert [f.severity for f in sink.emit_all([_cut_call()])] == [calls.ARGUMENTS_NOT_JSON.severity]


def test_deferred_findings_come_after_the_others_and_the_report_is_in_stream_order() -> None:
    sink = FindingSink(PROFILE)
    out: list[Finding] = []
    sink.emit(_cut_call(byte=50), out)
    sink.emit(framing.DONE_SENT.finding(_at(80, line=9)), out)
    sink.emit(framing.DONE_SENT.finding(_at(20, line=3)), out)  # same message: collapsed into the first
    sink.emit(framing.EMPTY_STREAM.finding(_at(80, line=8), what=""), out)
    sink.settle(StreamFacts(truncated=False), out)
    assert [f.code for f in out] == [framing.DONE_SENT.code, framing.EMPTY_STREAM.code, calls.ARGUMENTS_NOT_JSON.code]
    assert [(f.position.byte, f.position.line) for f in sink.findings()] == [(50, 1), (80, 8), (80, 9)]


def test_reported_says_whether_a_code_was_reported() -> None:
    sink = FindingSink(OPENAI, ignore=["SSE023"])
    sink.emit(framing.DONE_SENT.finding(_at(0)), [])
    sink.emit(framing.EMPTY_STREAM.finding(_at(0), what=""), [])
    assert sink.reported([framing.DONE_SENT.code])
    assert not sink.reported(["SSE020", "SSE021"])
    assert not sink.reported([framing.EMPTY_STREAM.code])  # ignored, so never reported
