"""The probe's captures: ``captures/http`` (one example per HTTP rule, with the ``X.meta.json`` that records
its exchange) and ``captures/probe`` (the conforming replay set, one capture per built-in scenario).

``tests/test_corpus.py`` lints every capture with the engine alone; the HTTP findings need the meta
sidecar, so the declarations of ``captures/http`` are checked here, through ``checker.http_checks`` as
``sse-check lint`` runs it.
"""

from __future__ import annotations

import contextlib
import io
import json
import random
from pathlib import Path
from typing import Any

import pytest

from checker.captures import request_for
from checker.cli import main
from checker.engine import LintResult
from checker.engine_options import EngineOptions
from checker.findings import Severity
from checker.http_checks import ExchangeLinter, is_probe_meta
from checker.live.probe import ProbeLimits, build_meta
from checker.live.scenarios import BUILTIN
from checker.profiles import get_profile
from checker.rules import RULES

ROOT = Path(__file__).resolve().parents[1]
CAPTURES = ROOT / "captures"
HTTP = CAPTURES / "http"
PROBE = CAPTURES / "probe"
HTTP_CAPTURES = sorted(HTTP.glob("*.sse"))
HTTP_RULES = sorted(code for code in RULES if code.startswith("HTP"))


def meta_of(path: Path) -> dict[str, Any]:
    return json.loads(path.with_name(path.name.removesuffix(".sse") + ".meta.json").read_text())


def declared(path: Path) -> dict[str, set[str]]:
    raw = json.loads(path.with_name(path.name.removesuffix(".sse") + ".expect.json").read_text())
    return {profile: set(codes) for profile, codes in raw.items()}


def lint(path: Path, chunks: list[bytes] | None = None, profile: str = "openai") -> LintResult:
    from checker.profiles import get_profile

    data = path.read_bytes()
    linter = ExchangeLinter(meta_of(path), EngineOptions(profile=get_profile(profile)), request=request_for(path))
    for chunk in chunks if chunks is not None else [data]:
        linter.feed(chunk)
    return linter.close()


@pytest.mark.parametrize("path", HTTP_CAPTURES, ids=lambda p: p.name)
def test_http_capture_produces_exactly_the_declared_codes(path: Path) -> None:
    assert is_probe_meta(meta_of(path))
    for profile, expected in declared(path).items():
        result = lint(path, profile=profile)
        found = {f.code for f in result.findings}
        assert found == expected, [f"{f.code} {f.message}" for f in result.findings]


@pytest.mark.parametrize("path", HTTP_CAPTURES, ids=lambda p: p.name)
def test_http_findings_do_not_depend_on_chunking(path: Path) -> None:
    data = path.read_bytes()
    whole = [f.as_dict() for f in lint(path).findings]
    by_byte = [f.as_dict() for f in lint(path, [data[i : i + 1] for i in range(len(data))]).findings]
    rng = random.Random(path.name)
    chunks, at = [], 0
    while at < len(data):
        size = rng.randint(1, 300)
        chunks.append(data[at : at + size])
        at += size
    assert by_byte == whole
    assert [f.as_dict() for f in lint(path, chunks).findings] == whole


@pytest.mark.parametrize("code", HTTP_RULES)
def test_every_http_rule_has_a_bad_example_with_meta_and_a_good_one(code: str) -> None:
    rule = RULES[code]
    bad = CAPTURES / rule.bad
    assert bad.is_file() and rule.bad == f"http/{code}-{rule.name}.sse"
    assert code in declared(bad)["openai"]
    assert code in {f.code for f in lint(bad).findings}
    good = CAPTURES / rule.good
    assert good.is_file()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["lint", str(good), "--format", "json"])
    assert code not in {f["code"] for f in json.loads(out.getvalue())["files"][0]["findings"]}


def test_every_http_capture_is_named_after_its_rule_and_has_a_complete_meta() -> None:
    keys = set(build_meta(scenario=BUILTIN[0], url="u", request={}, status=200, size=0, events=0, timings={},
                          limits=ProbeLimits()))
    assert {p.name for p in HTTP_CAPTURES} == {RULES[c].bad.removeprefix("http/") for c in HTTP_RULES}
    for path in HTTP_CAPTURES:
        meta = meta_of(path)
        assert keys <= set(meta), (path.name, keys - set(meta))
        assert meta["about"], path.name


def test_sse_check_lint_reports_the_http_captures_as_declared() -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["lint", str(HTTP), "--format", "json"]) == 1
    for entry in json.loads(out.getvalue())["files"]:
        path = Path(entry["path"])
        assert {f["code"] for f in entry["findings"]} == declared(path)["openai"], path.name


# --- captures/probe --------------------------------------------------------------------------------------

PROBE_SOURCES = {
    "plain_text": "text.sse",
    "reasoning_text": "reasoning-text.sse",
    "reasoning_one_call": "reasoning-function-call.sse",
    "parallel_calls": "parallel-function-calls.sse",
    "reasoning_text_truncated": "incomplete.sse",
    "function_call_truncated": "function-call-incomplete.sse",
}


def test_the_probe_set_answers_every_built_in_scenario() -> None:
    names = {p.name.removesuffix(".sse") for p in PROBE.glob("*.sse")}
    for scenario in BUILTIN:
        first = scenario.replay_names[0]
        assert first in names, scenario.name
        if scenario.expect == "nonstream":
            assert (PROBE / f"{first}.nonstream.json").is_file(), scenario.name


def test_the_probe_set_streams_are_copies_of_the_conforming_corpus() -> None:
    for name, source in PROBE_SOURCES.items():
        assert (PROBE / f"{name}.sse").read_bytes() == (CAPTURES / "conforming" / source).read_bytes(), (
            f"captures/probe/{name}.sse differs from conforming/{source}: run python captures/make_probe_captures.py")
    for path in PROBE.glob("*.nonstream.json"):
        stream = (PROBE / path.name.replace(".nonstream.json", ".sse")).read_text()
        last = [line for line in stream.splitlines() if line.startswith("data: ")][-1]
        assert json.loads(path.read_text()) == json.loads(last[len("data: "):])["response"], path.name


# --- captures/llama.cpp-probe: a probe of the real llama-server, as saved -------------------------------------

REAL_PROBE = CAPTURES / "llama.cpp-probe"
REAL_PROBE_CAPTURES = sorted(REAL_PROBE.glob("*.sse"))


def test_the_real_llama_server_probe_covers_every_built_in_scenario() -> None:
    assert [p.name.removesuffix(".sse") for p in REAL_PROBE_CAPTURES] == sorted(s.name for s in BUILTIN)


@pytest.mark.parametrize("path", REAL_PROBE_CAPTURES, ids=lambda p: p.name)
def test_the_real_llama_server_probe_lints_as_declared(path: Path) -> None:
    meta = meta_of(path)
    assert is_probe_meta(meta) and meta["scenario"] == path.name.removesuffix(".sse")
    expected = declared(path)
    assert set(expected) == {"openai", "llama.cpp"}
    for profile, codes in expected.items():
        result = lint(path, profile=profile)
        assert {f.code for f in result.findings} == codes, (profile, sorted({f.code for f in result.findings}))
    # The llama.cpp profile documents every one of them: a server behaving as recorded is clean at info.
    loud = [f for f in lint(path, profile="llama.cpp").findings if f.severity > Severity.INFO]
    assert loud == [], [f"{f.code} {f.message}" for f in loud]


def test_only_the_unknown_model_is_the_documented_accepted_request() -> None:
    """HTP005 is a known llama.cpp deviation for the unknown model alone: the same stream answering the
    malformed-input scenario is still a warning under --profile llama.cpp."""
    path = REAL_PROBE / "invalid_model.sse"
    (found,) = [f for f in lint(path, profile="llama.cpp").findings if f.code == "HTP005"]
    assert found.severity == Severity.INFO and "ignores the request's model" in (found.known_deviation or "")
    (strict,) = [f for f in lint(path).findings if f.code == "HTP005"]
    assert strict.severity == Severity.WARNING and strict.known_deviation is None
    meta = {**meta_of(path), "scenario": "malformed_input"}
    linter = ExchangeLinter(meta, EngineOptions(profile=get_profile("llama.cpp")), request=request_for(path))
    linter.feed(path.read_bytes())
    (other,) = [f for f in linter.close().findings if f.code == "HTP005"]
    assert other.severity == Severity.WARNING and other.known_deviation is None


# --- captures/llama.cpp-probe/chat and /messages: the same probe of its other two endpoints -------------------

REAL_PROBE_DIALECTS = ("chat", "messages")
REAL_PROBE_OTHERS = sorted(p for d in REAL_PROBE_DIALECTS for p in (REAL_PROBE / d).glob("*.sse"))


def test_the_real_llama_server_probe_covers_every_scenario_of_its_other_endpoints() -> None:
    from checker.live.scenarios import builtin

    for name in REAL_PROBE_DIALECTS:
        assert sorted(p.name for p in (REAL_PROBE / name).glob("*.sse")) == \
            sorted(s.name.removeprefix(f"{name}/") + ".sse" for s in builtin(name))


@pytest.mark.parametrize("path", REAL_PROBE_OTHERS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_real_llama_server_probe_of_chat_and_messages_lints_as_declared(path: Path) -> None:
    meta = meta_of(path)
    assert is_probe_meta(meta) and meta["scenario"] == f"{path.parent.name}/{path.name.removesuffix('.sse')}"
    for profile, codes in declared(path).items():
        assert {f.code for f in lint(path, profile=profile).findings} == codes, profile
    # Documented but one: /v1/messages accepts `messages` given as an object (HTP005 on malformed_input).
    loud = [f"{f.code} {f.message}" for f in lint(path, profile="llama.cpp").findings if f.severity > Severity.INFO]
    assert loud == ([] if path != REAL_PROBE / "messages" / "malformed_input.sse" else
                    ["HTP005 the invalid request (messages/malformed_input) was accepted: HTTP 200, ended by "
                     "message_stop"]), loud


def test_the_real_llama_servers_non_streamed_answers_match_their_streams() -> None:
    """The probe recorded each non-streamed answer's streamed pair (its meta's reference): the real server's
    two paths agree on every unit, text included, on all three endpoints."""
    for path in sorted(REAL_PROBE.rglob("*_nonstream.sse")):
        meta = meta_of(path)
        assert meta["reference"] and meta["reference"]["output"], path
        assert not {"HTP016", "HTP017", "HTP018"} & {f.code for f in lint(path).findings}, path


def test_the_real_llama_server_accepts_messages_given_as_an_object() -> None:
    """Found by the probe's invalid-request scenario: /v1/messages streams an answer to a request whose
    `messages` is an object. Read as ordinary traffic (the proxy's record: no scenario expects an error), the
    request schema (MessageCreateParams) finds it all the same."""
    path = REAL_PROBE / "messages" / "malformed_input.sse"
    meta = {**meta_of(path), "expect": "stream", "scenario": None}
    linter = ExchangeLinter(meta, EngineOptions(profile=get_profile("llama.cpp")), request=request_for(path))
    linter.feed(path.read_bytes())
    (accepted,) = [f for f in linter.close().findings if f.code == "HTP005"]
    assert accepted.severity == Severity.WARNING
    assert accepted.message == ("the invalid request (/messages: {…} is not of type array) was accepted: HTTP 200, "
                                "ended by message_stop")
