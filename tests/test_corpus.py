"""The capture corpus: every ``*.sse`` under captures/ produces exactly the findings it declares.

A capture declares its findings in header comment lines (SSE comments, ignored
by every decoder) or, when the body cannot carry comments (a JSON error body,
an HTML page, a real server's capture), in a sidecar ``X.expect.json``::

    : about <what is broken>
    : profile <name>                              (default: openai)
    : limits max-line-bytes=N max-event-bytes=M   (any checker.engine.Limits field, kebab-case;
                                                   default: the engine's limits)
    : request {"max_output_tokens": 20}           (or an X.request.json sidecar)
    : expect <CODE>                               (one line per code: the complete set)
    : known-engine-bug <description>              (the declaration is what the spec says; the engine
                                                   does not agree yet, so that comparison is xfail;
                                                   a description starting "chunking:" xfails the
                                                   chunking-invariance test instead)

    X.expect.json: {"openai": ["SSE022"], "llama.cpp": [...]}    (profile -> complete set of codes;
                                                   optional "known_engine_bug": "<description>")

Conforming captures (captures/conforming, captures/open-responses) declare
nothing and must lint clean. Every capture is fed three ways (whole, one byte
at a time, random chunks with a fixed seed) and must give identical findings.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import subprocess
import sys
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import pytest
from generators import assert_written, load_generator

from checker.captures import request_for, sidecar
from checker.engine import Limits, LintResult, StreamLinter
from checker.http_checks import header, is_probe_meta
from checker.findings import Severity
from checker.profiles import get_profile
from checker.rules import RULES

ROOT = Path(__file__).resolve().parents[1]
CAPTURES = ROOT / "captures"
# The folders this test owns (captures/http, with its X.meta.json sidecars, is tested with the HTTP checks).
FOLDERS = ("conforming", "open-responses", "rules", "llama.cpp", "litellm", "messages", "chat", "structured")
ALL_CAPTURES = sorted(p for folder in FOLDERS for p in (CAPTURES / folder).rglob("*.sse"))
# Rules no stream may trigger: sse-check's own internal error (the corpus must never produce it).
NO_EXAMPLE = {code for code, rule in RULES.items() if not rule.bad}
# Rules whose example captures live here: all but the HTTP family (captures/http) and NO_EXAMPLE.
# (captures/messages/rules and captures/chat/rules hold the Messages and Chat Completions dialects';
# captures/structured the structured-output rules', whose chat and Messages examples are in */structured.)
RULE_FOLDERS = ("rules", "messages/rules", "chat/rules", "structured")
CORPUS_RULES = sorted(code for code in RULES
                      if RULES[code].bad.startswith(tuple(f + "/" for f in RULE_FOLDERS)) and code not in NO_EXAMPLE)
LLAMA = CAPTURES / "llama.cpp"
# Real llama.cpp bodies that are not Responses streams at all.
LLAMA_NOT_RESPONSES = {"error_previous_response_id.sse": "SSE022"}
HEADER_KEYS = {"about", "profile", "limits", "request", "expect", "known-engine-bug"}


@dataclass(frozen=True)
class Declaration:
    expect: dict[str, frozenset[str]]  # profile -> the complete set of codes
    limits: Limits = Limits()
    request: dict[str, Any] | None = None
    bug: str | None = None
    about: str | None = None
    header_request: bool = field(default=False)  # the request came from a `: request` line


def is_probe_exchange(path: Path) -> bool:
    """A probe's record of an HTTP exchange that is not a whole event stream: a status, a stall, a cut, a
    non-streaming answer. A streamed 200 that ended complete (a real server's answer, captures/gpt-oss) is what
    the oracles replay, byte for byte, and is kept."""
    meta_path = sidecar(path, "meta")
    if not meta_path.is_file():
        return False
    meta = json.loads(meta_path.read_text())
    if not is_probe_meta(meta):
        return False
    whole_stream = (meta.get("status") == 200 and "text/event-stream" in (header(meta, "content-type") or "")
                    and (meta.get("ending") or {}).get("kind") == "complete" and not meta.get("fault"))
    return not whole_stream


def rel(path: Path) -> str:
    return path.relative_to(CAPTURES).as_posix()


def first_object(path: Path) -> Any:
    """The JSON of a capture's first data line (None when it has none that parses): what tells its dialect."""
    for line in path.read_bytes()[:1 << 16].splitlines():
        if line.startswith(b"data:") and line[5:].strip() != b"[DONE]":
            try:
                return json.loads(line[5:])
            except ValueError:
                return None
    return None


def is_chat(path: Path) -> bool:
    """Whether a capture is a Chat Completions stream (its first chunk says so): checked by the chat oracles."""
    from checker.dialects.chat.vocabulary import recognise

    obj = first_object(path)
    return isinstance(obj, dict) and recognise(obj) is not None


def is_messages(path: Path) -> bool:
    """Whether a capture is an Anthropic Messages stream (it opens with message_start): checked by the
    anthropic oracles wherever it is (captures/messages, the Messages live replay's captures/replay set)."""
    obj = first_object(path)
    return isinstance(obj, dict) and obj.get("type") == "message_start"


def _expect_sidecar(path: Path) -> Path:
    return path.with_name(path.name[: -len(".sse")] + ".expect.json")


def _header_lines(data: bytes) -> list[str]:
    """The leading comment lines (before the first blank or non-comment line), BOM skipped."""
    text = data.removeprefix(b"\xef\xbb\xbf").decode("utf-8", "replace")
    lines = []
    for line in re.split(r"\r\n|\r|\n", text):
        if not line.startswith(":"):
            break
        lines.append(line[1:].strip())
    return lines


def parse_limits(value: str) -> Limits:
    options: dict[str, int] = {}
    for pair in value.split():
        key, _, number = pair.partition("=")
        options[key.replace("-", "_")] = int(number)
    return Limits(**options)


def declaration(path: Path) -> Declaration:
    sidecar = _expect_sidecar(path)
    request = request_for(path)
    if sidecar.is_file():
        raw = json.loads(sidecar.read_text(encoding="utf-8"))
        bug = raw.pop("known_engine_bug", None)
        return Declaration(expect={p: frozenset(c) for p, c in raw.items()}, request=request, bug=bug)
    header = _header_lines(path.read_bytes())
    if not header:
        parts = path.relative_to(CAPTURES).parts
        top = "/".join(parts[:2]) if parts[0] == "chat" else parts[0]
        profile = "open-responses" if top == "open-responses" else "openai"
        assert top in ("conforming", "open-responses", "chat/conforming"), f"{rel(path)}: declares no findings"
        return Declaration(expect={profile: frozenset()}, request=request)
    profile, codes, limits, bug, about, from_header = "openai", set(), Limits(), None, None, False
    for line in header:
        key, _, value = line.partition(" ")
        assert key in HEADER_KEYS, f"{rel(path)}: unknown header line ': {line}'"
        value = value.strip()
        if key == "expect":
            assert value in RULES, f"{rel(path)}: `: expect {value}` is not a rule code"
            codes.add(value)
        elif key == "profile":
            profile = value
        elif key == "limits":
            limits = parse_limits(value)
        elif key == "request":
            request, from_header = json.loads(value), True
        elif key == "known-engine-bug":
            bug = value
        else:
            about = value
    assert about, f"{rel(path)}: no `: about` line"
    return Declaration(expect={profile: frozenset(codes)}, limits=limits, request=request, bug=bug, about=about,
                       header_request=from_header)


def lint(data: bytes, decl: Declaration, profile: str, chunks: list[bytes] | None = None) -> LintResult:
    linter = StreamLinter(profile=get_profile(profile), request=decl.request, limits=decl.limits)
    for chunk in chunks if chunks is not None else [data]:
        linter.feed(chunk)
    return linter.close()


def random_chunks(data: bytes, seed: str) -> list[bytes]:
    rng = random.Random(seed)
    chunks, at = [], 0
    while at < len(data):
        size = rng.choice((1, 2, 3, rng.randint(4, 40), rng.randint(41, 700)))
        chunks.append(data[at : at + size])
        at += size
    return chunks


def codes(result: LintResult) -> set[str]:
    return {f.code for f in result.findings}


CHUNKING_BUG = "chunking:"


def _bug_mark(decl: Declaration) -> Any:
    return pytest.mark.xfail(strict=True, reason=f"known engine bug: {decl.bug}")


def _declared(path: Path) -> Declaration | None:
    """The declaration, or None when it is broken (the tests then report why, not the collection)."""
    try:
        return declaration(path)
    except (AssertionError, ValueError):
        return None


def _chunking_cases() -> list[Any]:
    cases = []
    for path in ALL_CAPTURES:
        decl = _declared(path)
        bug = decl is not None and decl.bug is not None and decl.bug.startswith(CHUNKING_BUG)
        cases.append(pytest.param(path, id=rel(path), marks=[_bug_mark(decl)] if bug else []))  # type: ignore[arg-type]
    return cases


def _cases() -> list[Any]:
    cases = []
    for path in ALL_CAPTURES:
        decl = _declared(path)
        if decl is None:
            cases.append(pytest.param(path, "openai", id=f"{rel(path)}[?]"))
            continue
        for profile in decl.expect:
            marks = [_bug_mark(decl)] if decl.bug and not decl.bug.startswith(CHUNKING_BUG) else []
            cases.append(pytest.param(path, profile, id=f"{rel(path)}[{profile}]", marks=marks))
    return cases


# --- every capture: declared codes, chunking invariance ------------------------


@pytest.mark.parametrize(("path", "profile"), _cases())
def test_capture_produces_exactly_the_declared_codes(path: Path, profile: str) -> None:
    decl = declaration(path)
    result = lint(path.read_bytes(), decl, profile)
    found = codes(result)
    expected = set(decl.expect[profile])
    detail = "\n".join(f"  {f.code} {f.message}" for f in result.findings)
    assert found == expected, (
        f"{rel(path)} under {profile}: missing {sorted(expected - found)}, unexpected {sorted(found - expected)}\n"
        f"{detail}"
    )


@pytest.mark.parametrize("path", _chunking_cases())
def test_findings_do_not_depend_on_chunking(path: Path) -> None:
    decl = declaration(path)
    data = path.read_bytes()
    for profile in decl.expect:
        whole = [f.as_dict() for f in lint(data, decl, profile).findings]
        one_byte = [data[i : i + 1] for i in range(len(data))]
        by_byte = [f.as_dict() for f in lint(data, decl, profile, one_byte).findings]
        chunked = [f.as_dict() for f in lint(data, decl, profile, random_chunks(data, rel(path))).findings]
        assert not NO_EXAMPLE & {f["code"] for f in whole}, f"{rel(path)}: sse-check failed internally"
        assert by_byte == whole, f"{rel(path)}: byte-by-byte feeding differs"
        assert chunked == whole, f"{rel(path)}: random chunking differs"


# --- conforming captures -------------------------------------------------------

CONFORMING = sorted((CAPTURES / "conforming").glob("*.sse"))
OPEN_RESPONSES = sorted((CAPTURES / "open-responses").glob("*.sse"))


def test_the_conforming_corpus_is_complete() -> None:
    names = {p.stem for p in CONFORMING}
    assert names >= {"text", "reasoning-text", "reasoning-function-call", "parallel-function-calls", "refusal",
                     "reasoning-summary", "incomplete", "failed"}
    assert [p.name for p in OPEN_RESPONSES] == ["function-call.sse", "reasoning.sse", "text.sse"]


@pytest.mark.parametrize("path", CONFORMING, ids=rel)
@pytest.mark.parametrize("profile", ["codex", "llama.cpp"])
def test_conforming_captures_are_clean_under_the_other_profiles(path: Path, profile: str) -> None:
    result = lint(path.read_bytes(), declaration(path), profile)
    assert result.findings == [], [f"{f.code} {f.message}" for f in result.findings]


def _sse_objects(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a plain (LF, one data line per event) capture."""
    objects = []
    for block in path.read_text(encoding="utf-8").split("\n\n"):
        data = [line[len("data: "):] for line in block.split("\n") if line.startswith("data: ")]
        if data and data != ["[DONE]"]:
            objects.append(json.loads("\n".join(data)))
    return objects


def _accumulate_with_openai_python(path: Path) -> Any:
    """Feed every event to the real openai-python 3.57 accumulator (what `responses.stream()` runs)."""
    import openai
    from openai._models import construct_type_unchecked
    from openai.lib.streaming.responses._responses import ResponseStreamState
    from openai.types.responses import ResponseStreamEvent

    state: Any = ResponseStreamState(input_tools=[], text_format=openai.NOT_GIVEN)
    for obj in _sse_objects(path):
        state.handle_event(construct_type_unchecked(type_=ResponseStreamEvent, value=obj))
    return state


@pytest.mark.parametrize("path", CONFORMING + OPEN_RESPONSES, ids=rel)
def test_conforming_captures_are_accepted_by_openai_python(path: Path) -> None:
    objects = _sse_objects(path)
    assert objects[0]["type"] == "response.created"
    state = _accumulate_with_openai_python(path)  # raises RuntimeError/AssertionError/IndexError on a bad stream
    terminal = objects[-1]
    assert terminal["type"] in ("response.completed", "response.incomplete", "response.failed")
    if terminal["type"] == "response.completed":
        final = state._completed_response
        assert final is not None and final.status == "completed"
        assert [item.id for item in final.output] == [item["id"] for item in terminal["response"]["output"]]


# Rule captures on which the real openai-python accumulator raises: the rule must name openai-python.
OPENAI_PYTHON_RAISES = {
    "CNT001-content-index-missing": "TypeError",
    "CNT002-content-index-not-appended": "IndexError",
    "CNT002-not-reset-per-item": "IndexError",
    "CNT003-delta-index-off-by-one": "IndexError",
    "CNT004-litellm-no-content-part": "IndexError",
    "IDS004-duplicate-call-id": "RuntimeError",  # "Response snapshot has conflicting output identities."
    "ITM001-output-index-missing": "RuntimeError",  # "Duplicate response output index None."
    "ITM003-output-index-reused": "RuntimeError",  # "Duplicate response output index 0."
    "ITM007-done-identity-changed": "RuntimeError",  # "Completed output item identity changed."
    "ITM010-event-family-mismatch": "AssertionError",  # assert output.type == "message"
    "LIF001-first-event-not-created": "RuntimeError",  # "Expected to have received `response.created` …"
    "LIF012-response-id-changed": "RuntimeError",  # "Lifecycle response identity changed."
}


@pytest.mark.parametrize("name", sorted(OPENAI_PYTHON_RAISES))
def test_openai_python_breaks_where_the_rules_say_it_does(name: str) -> None:
    path = CAPTURES / "rules" / f"{name}.sse"
    with pytest.raises(Exception) as raised:
        _accumulate_with_openai_python(path)
    assert type(raised.value).__name__ == OPENAI_PYTHON_RAISES[name]
    assert "openai-python" in RULES[name[:6]].clients, f"{name[:6]} does not list openai-python"


def test_conforming_captures_follow_the_openai_conventions() -> None:
    for path in CONFORMING + OPEN_RESPONSES:
        text = path.read_text(encoding="utf-8")
        objects = _sse_objects(path)
        assert [o["sequence_number"] for o in objects] == list(range(1, len(objects) + 1)), rel(path)
        names = re.findall(r"^event: (.*)$", text, flags=re.MULTILINE)
        assert names == [o["type"] for o in objects], f"{rel(path)}: `event:` must equal type on every event"
        assert objects[0]["response"]["output"] == [] and objects[1]["response"]["output"] == []
        final = objects[-1]["response"]
        if "usage" in final:
            assert {"input_tokens_details", "output_tokens_details"} <= final["usage"].keys()
        assert text.endswith("data: [DONE]\n\n") == (path in OPEN_RESPONSES), rel(path)


def test_the_synthetic_captures_are_what_the_generator_writes() -> None:
    """captures/make_captures.py is the source of the conforming and rule captures: no hand edits, no stale files."""
    files = load_generator(CAPTURES / "make_captures.py").render()
    on_disk = [path for folder in ("conforming", "open-responses", "rules") for path in (CAPTURES / folder).iterdir()]
    assert_written(files, CAPTURES, on_disk, "captures/make_captures.py")


# --- the rule registry and its example captures --------------------------------


def test_only_the_internal_error_rule_has_no_example() -> None:
    # and RPT001/RPT002, a verdict that changes between runs of probe --repeat, or with --concurrency: no single
    # capture can show it; their bad and good examples are serve-backed runs (tests/live/test_probe_repeat.py,
    # tests/live/test_probe_load.py)
    assert NO_EXAMPLE == {"SSE099", "RPT001", "RPT002"}


# Families whose examples are not single streams, each tested with its own checks:
# HTTP exchanges (tests/test_http_captures.py), conversations (tests/live/test_history.py), WebSocket
# transcripts (tests/test_ws.py), stored-response flows (tests/test_stored_flows.py) and flow records
# (checker.surface: tests/surface/test_flow_records.py).
ELSEWHERE = {"HTP": "http/", "RPL": "replay/", "WSK": "ws/", "STO": "stored/",
             **{family: "surface/" for family in ("FLW", "MOD", "TUR", "INP", "TCH")}}
SURFACE = "surface/"


def test_only_http_and_replay_rules_keep_their_examples_elsewhere() -> None:
    elsewhere = {code: RULES[code].bad for code in RULES if code not in CORPUS_RULES and code not in NO_EXAMPLE}
    assert all(bad.startswith(ELSEWHERE.get(code[:3], "\0")) for code, bad in elsewhere.items()), elsewhere


@pytest.mark.parametrize("code", CORPUS_RULES)
def test_every_rule_has_a_bad_capture_that_declares_and_produces_it(code: str) -> None:
    rule = RULES[code]
    path = CAPTURES / rule.bad
    assert path.is_file(), f"{code}: bad example {rule.bad} is missing"
    decl = declaration(path)
    (profile,) = [p for p, c in decl.expect.items() if code in c] or [None]
    assert profile is not None, f"{rule.bad} does not declare {code}"
    assert code in codes(lint(path.read_bytes(), decl, profile)), f"{rule.bad} does not produce {code}"


@pytest.mark.parametrize("code", sorted(c for c in RULES if c[:3] not in ("RPL", "WSK", "STO")
                                         and not RULES[c].good.startswith(SURFACE)))
def test_every_rule_has_a_good_capture_without_it(code: str) -> None:
    # RPL rules' good examples are conversations, checked in tests/live/test_history.py; WSK rules' are
    # WebSocket transcripts, checked in tests/test_ws.py; STO rules' are flows (tests/test_stored_flows.py);
    # FLW, MOD and TUR rules' are flow records (tests/surface).
    rule = RULES[code]
    path = CAPTURES / rule.good
    assert path.is_file(), f"{code}: good example {rule.good} is missing"
    decl = declaration(path)
    for profile, expected in decl.expect.items():
        assert code not in expected
        assert code not in codes(lint(path.read_bytes(), decl, profile)), f"{rule.good} produces {code}"


def test_every_rule_capture_is_named_after_a_rule_it_declares() -> None:
    rule_captures = sorted(p for folder in RULE_FOLDERS for p in (CAPTURES / folder).glob("*.sse"))
    for path in rule_captures:
        code = path.name[:6]
        assert code in RULES, f"{rel(path)}: not named after a rule code"
        assert any(code in c for c in declaration(path).expect.values()), f"{rel(path)} does not declare {code}"
    bad = {RULES[c].bad for c in CORPUS_RULES}
    names = {rel(p) for p in rule_captures}
    assert bad <= names


# --- the CLI on the corpus -------------------------------------------------------


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "checker", "lint", *args, "--format", "json"],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)


def _cli_codes(proc: subprocess.CompletedProcess[str]) -> dict[str, set[str]]:
    report = json.loads(proc.stdout)
    return {(ROOT / f["path"]).resolve().relative_to(CAPTURES).as_posix(): {x["code"] for x in f["findings"]}
            for f in report["files"]}


def _expected_from_cli(path: Path, decl: Declaration, profile: str) -> set[str]:
    """The declared codes; for a known engine bug, what the engine gives in-process (the CLI must agree)."""
    if decl.bug and not decl.bug.startswith(CHUNKING_BUG):
        return codes(lint(path.read_bytes(), decl, profile))
    return set(decl.expect[profile])


def test_cli_passes_the_conforming_captures() -> None:
    proc = run_cli("captures/conforming")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr
    found = _cli_codes(proc)
    assert set(found) == {rel(p) for p in CONFORMING}
    assert all(not c for c in found.values()), found
    proc = run_cli("captures/open-responses", "--profile", "open-responses")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr


def vars_of(limits: Limits) -> dict[str, int]:
    return {f.name: getattr(limits, f.name) for f in fields(limits)}


def _default_run(decl: Declaration) -> bool:
    """Whether `sse-check lint captures/rules` (defaults, sidecars) lints this capture as declared."""
    return list(decl.expect) == ["openai"] and decl.limits == Limits() and not decl.header_request


def test_cli_reports_the_declared_codes_for_the_rule_captures() -> None:
    proc = run_cli("captures/rules")
    assert proc.returncode == 1, proc.stderr
    found = _cli_codes(proc)
    paths = sorted((CAPTURES / "rules").glob("*.sse"))
    assert set(found) == {rel(p) for p in paths}
    for path in paths:
        decl = declaration(path)
        if not _default_run(decl):
            continue
        assert found[rel(path)] == _expected_from_cli(path, decl, "openai"), rel(path)


def test_cli_reports_the_declared_codes_with_profile_limits_and_request_options(tmp_path: Path) -> None:
    special = [p for p in sorted((CAPTURES / "rules").glob("*.sse")) if not _default_run(declaration(p))]
    assert special, "expected some captures that need --profile, limits or a request"
    for path in special:
        decl = declaration(path)
        args = [str(path.relative_to(ROOT))]
        for name, value in vars_of(decl.limits).items():
            args += ["--" + name.replace("_", "-"), str(value)]
        if decl.request is not None:
            request = tmp_path / f"{path.stem}.request.json"
            request.write_text(json.dumps(decl.request))
            args += ["--request", str(request)]
        for profile in decl.expect:
            proc = run_cli(*args, "--profile", profile)
            assert proc.returncode in (0, 1), proc.stderr
            assert _cli_codes(proc)[rel(path)] == _expected_from_cli(path, decl, profile), rel(path)


# --- the real llama.cpp captures --------------------------------------------------

# The Responses streams (chat-reasoning_text.sse is /v1/chat/completions: tests/test_chat_corpus.py).
LLAMA_STREAMS = sorted(p for p in LLAMA.glob("*.sse") if p.name not in LLAMA_NOT_RESPONSES and not is_chat(p))


def test_llama_cpp_captures_are_byte_exact_copies() -> None:
    """The recorded files are kept as they arrived: their sha256, taken from the originals when they were
    copied in, is in tests/data/llama.cpp-originals.sha256 (sha256sum's format). README.md is not there: it is
    our notes on the copies and quotes what the pinned clients print, so it follows them."""
    manifest = (ROOT / "tests" / "data" / "llama.cpp-originals.sha256").read_text(encoding="utf-8").splitlines()
    assert len(manifest) >= 30
    for line in manifest:
        digest, name = line.split(maxsplit=1)
        assert hashlib.sha256((LLAMA / name).read_bytes()).hexdigest() == digest, name


@pytest.mark.parametrize("path", sorted(LLAMA.glob("*.sse")), ids=rel)
def test_llama_cpp_captures_show_nothing_above_info_under_their_profile(path: Path) -> None:
    decl = declaration(path)
    assert {"openai", "llama.cpp"} <= decl.expect.keys(), f"{rel(path)}: declare both profiles"
    result = lint(path.read_bytes(), decl, "llama.cpp")
    if path.name in LLAMA_NOT_RESPONSES:
        assert codes(result) == {LLAMA_NOT_RESPONSES[path.name]}
        return
    loud = [f"{f.code} {f.severity} {f.message}" for f in result.findings
            if f.severity > Severity.INFO or f.known_deviation is None]
    assert not loud, loud


# Documented deviations (docs/spec.md §4, captures/llama.cpp/README.md) -> the clients each one breaks.
LLAMA_DEVIATIONS: dict[str, set[str]] = {
    "LIF015": {"open-responses"},  # no sequence_number
    # no output_index: "Duplicate response output index None"; the Vercel AI SDK's chunk schema requires it
    "ITM001": {"openai-python", "openai-node", "vercel-ai"},
    "CNT001": {"openai-python", "openai-node"},  # no content_index: TypeError on content[None]
    # created/in_progress without created_at/model/output: openai-node 7.59 accepts it, no final result differs;
    # the Vercel AI SDK's zod chunk schema rejects the event and streams an error part (measured: vercel-ai 7.0.173)
    "SCH002": {"vercel-ai"},
    "SCH008": set(),  # text events without logprobs: no client reads them into its final result
    "ITM011": {"positional"},  # all output_item.done in one burst: the reasoning done is delayed
    "CNT004": {"openai-python", "openai-node"},  # reasoning text without a content part
    "CNT007": set(),  # no reasoning_text.done: only listeners of that event miss it
    "FNC002": {"open-responses"},  # no function_call_arguments.done
    "ITM013": set(),  # the streamed reasoning done item has no status (as OpenAI's own reasoning items)
    "LIF017": {"openai-agents", "codex"},  # max_output_tokens truncation reported completed
}


def test_llama_cpp_captures_report_the_documented_deviations_under_openai() -> None:
    seen: dict[str, set[str]] = {}
    seen_clients: dict[str, set[str]] = {}
    for path in LLAMA_STREAMS:
        result = lint(path.read_bytes(), declaration(path), "openai")
        for finding in result.findings:
            seen.setdefault(finding.code, set()).add(path.name)
            if finding.code in LLAMA_DEVIATIONS:
                # A finding names the clients its effect touches on this stream, among those the deviation may.
                assert set(finding.clients) <= LLAMA_DEVIATIONS[finding.code], (path.name, finding.code,
                                                                                finding.clients)
                seen_clients.setdefault(finding.code, set()).update(finding.clients)
                assert finding.known_deviation is None  # only the llama.cpp profile labels them
    for code, clients in LLAMA_DEVIATIONS.items():  # a deviation that may touch a client touches one somewhere
        assert seen_clients.get(code) or not clients or code not in seen, code
    everywhere = {"LIF015", "ITM001", "SCH002"}
    for code in everywhere:
        assert seen.get(code) == {p.name for p in LLAMA_STREAMS}, (code, seen.get(code))
    multi_item = {p.name for p in LLAMA_STREAMS if p.name != "plain_text.sse"}
    assert seen["ITM011"] == multi_item
    assert "reasoning_text_truncated.sse" in seen["LIF017"]
    assert "reasoning_one_call.sse" in seen["FNC002"]
    assert "plain_text.sse" in seen["CNT001"]
    # The same deviations, reported through the CLI with the clients named in the JSON report.
    proc = run_cli(*(str(p.relative_to(ROOT)) for p in LLAMA_STREAMS), "--profile", "openai")
    assert proc.returncode == 1
    over_all: set[str] = set()
    for entry in json.loads(proc.stdout)["files"]:
        by_code: dict[str, set[str]] = {}
        for f in entry["findings"]:  # the clients each finding of a code touches, over the stream
            by_code.setdefault(f["code"], set()).update(f["clients"])
        # openai-node fails on any stream without output_index; openai-python only where two items share None.
        assert "openai-node" in by_code["ITM001"]
        over_all |= by_code["ITM001"]
        assert by_code["SCH002"] <= {"vercel-ai"}  # only the SDK that validates each chunk's shape is touched
    assert over_all == {"openai-python", "openai-node", "vercel-ai"}


def test_llama_cpp_truncation_is_found_through_the_request_sidecar() -> None:
    path = LLAMA / "reasoning_text_truncated.sse"
    assert request_for(path) == json.loads((LLAMA / "reasoning_text_truncated.request.json").read_text())
    without = StreamLinter(profile=get_profile("openai"))
    without.feed(path.read_bytes())
    assert "LIF017" not in codes(without.close())
    assert "LIF017" in codes(lint(path.read_bytes(), declaration(path), "openai"))


def test_open_responses_streams_follow_its_description_not_openais() -> None:
    # Issue 14: under open-responses its own reasoning event names are legal and `user` is not required; the same
    # stream under openai has the names OpenAI's clients reject (SCH006), and OpenAI's names under open-responses
    # are events its description does not define (SCH005).
    data = (CAPTURES / "open-responses" / "reasoning.sse").read_bytes()
    assert b'"type":"response.reasoning.delta"' in data and b'"user"' not in data
    assert lint(data, Declaration(expect={}), "open-responses").findings == []
    under_openai = {f.code for f in lint(data, Declaration(expect={}), "openai").findings}
    assert "SCH006" in under_openai
    swapped = data.replace(b"response.reasoning.d", b"response.reasoning_text.d")
    assert {f.code for f in lint(swapped, Declaration(expect={}), "open-responses").findings} == {"SCH005"}
