"""The severity policy (docs/severity.md), checked over every rule of the registry.

* **error**: at least one real client of the matrix breaks on the finding or returns a wrong result. The proof is
  a run of the real client on the rule's bad capture: the oracle tests (tests/test_client_oracles.py,
  tests/test_chat_oracles.py, tests/test_messages_oracles.py) run openai-python, openai-node, anthropic-python
  and @anthropic-ai/sdk on every bundled capture and hold the matrix to what they do, so a `breaks` or `degraded`
  cell of one of those clients, decided by a finding of the rule, is a verdict a real run stands behind.
* **warning**: the published specification is broken where no client that a run stands behind minds: the rule's
  findings on its bad capture break none of them.
* **info**: what the vendors' own servers send (a profile's known deviation, which names the recording), and
  sse-check's notes.

A rule that covers many fields (the schema rules) is graded per finding: a schema finding on a field no client
reads is a warning, and a field a client breaks on has a rule of its own or an error-level finding that an
oracle client's effect covers.

Rules checked on a whole exchange rather than one stream (HTTP, flows, WebSocket, stored responses) have no stream
for the oracles to run; an error among them names the clients whose call fails (``Rule.clients``), as the live
tests against real servers show. The RPL family grades what a *client* sends back, not a server's answer.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_corpus import CAPTURES, declaration

from checker.compat import Verdict, effect, effects_of
from checker.engine import LintResult, StreamLinter
from checker.findings import Severity
from checker.profiles import get_profile
from checker.rules import RULES, load_all

load_all()

# The clients a real run stands behind, and the test that runs each on every bundled capture.
ORACLE_CLIENTS: dict[str, str] = {
    "openai-python": "tests/test_client_oracles.py, tests/test_chat_oracles.py",
    "openai-node": "tests/test_client_oracles.py, tests/test_chat_oracles.py",
    "anthropic-python": "tests/test_messages_oracles.py",
    "anthropic-ts": "tests/test_messages_oracles.py",
}
# A warning whose bad capture still breaks an oracle client, and why that break is not the rule's: the stream
# ends the way a conforming stream may, and the client's call refuses that ending by design.
BREAK_NOT_THE_RULES: dict[str, str] = {
    "CHT007": "the capture's last finish_reason is length: get_final_completion() raises LengthFinishReasonError "
              "on any stream that ends so, conforming or not (the chat effects' AT_END)",
}


def _stream_rule(code: str) -> bool:
    bad = RULES[code].bad
    path = CAPTURES / bad
    return bool(bad) and bad.endswith(".sse") and path.is_file() and not path.with_name(
        path.stem + ".meta.json").is_file()


STREAM_RULES = sorted(code for code in RULES if _stream_rule(code))
EXCHANGE_RULES = sorted(code for code in RULES if RULES[code].bad and code not in STREAM_RULES)


def _lint_bad(code: str) -> LintResult:
    path = CAPTURES / RULES[code].bad
    decl = declaration(path)
    profile = next(iter(decl.expect)) if decl.expect else "openai"
    linter = StreamLinter(profile=get_profile(profile), request=decl.request, limits=decl.limits, keep_texts=True)
    linter.feed(path.read_bytes())
    return linter.close()


def _proven(result: LintResult, code: str) -> dict[str, Verdict]:
    """Per oracle client of the stream's dialect, the worst verdict a finding of ``code`` gives it."""
    worst: dict[str, Verdict] = {}
    for finding in result.findings:
        if finding.code != code:
            continue
        for client in effects_of(result).clients:
            found = effect(finding, client, result)
            if client in ORACLE_CLIENTS and found is not None and found.verdict > Verdict.OK:
                worst[client] = max(worst.get(client, Verdict.OK), found.verdict)
    return worst


def test_the_policy_is_written_down() -> None:
    text = (Path(__file__).resolve().parents[1] / "docs" / "severity.md").read_text()
    for word in ("**error**", "**warning**", "**info**", *ORACLE_CLIENTS, "tests/test_severity_policy.py"):
        assert word in text, word
    assert len(STREAM_RULES) > 150 and len(EXCHANGE_RULES) > 40


@pytest.mark.parametrize("code", STREAM_RULES)
def test_a_stream_rules_severity_follows_from_the_real_clients(code: str) -> None:
    rule = RULES[code]
    result = _lint_bad(code)
    mine = [f for f in result.findings if f.code == code]
    assert mine, f"{code}: its bad capture {rule.bad} does not produce it"
    proven = _proven(result, code)
    if rule.severity is Severity.ERROR:
        assert proven, (f"{code} is an error, but on {rule.bad} no client a real run stands behind "
                        f"({', '.join(effects_of(result).clients)}) breaks or degrades on it: a warning")
    else:
        breaks = sorted(c for c, v in proven.items() if v is Verdict.BREAKS)
        assert not breaks or code in BREAK_NOT_THE_RULES, (
            f"{code} is a {rule.severity}, but {', '.join(breaks)} breaks on it in {rule.bad}: an error")
    # Per finding: an error-level finding is one an oracle client's effect covers (schema rules grade per field).
    for finding in mine:
        if finding.severity is Severity.ERROR and finding.known_deviation is None:
            covered = [c for c in effects_of(result).clients if c in ORACLE_CLIENTS
                       and (e := effect(finding, c, result)) is not None and e.verdict > Verdict.OK]
            assert covered, f"{code}: the error finding {finding.message!r} touches no oracle client"


@pytest.mark.parametrize("code", EXCHANGE_RULES)
def test_an_exchange_rules_error_names_the_clients_whose_call_fails(code: str) -> None:
    rule = RULES[code]
    if rule.severity is Severity.ERROR and rule.family != "RPL":
        assert rule.clients, f"{code} is an error, but names no client whose call fails on it"


def test_the_exceptions_are_warnings_of_stream_rules() -> None:
    for code in BREAK_NOT_THE_RULES:
        assert code in STREAM_RULES and RULES[code].severity is not Severity.ERROR


# --- what the vendors' own servers send: info, with the recording named ---------------------------------------

def _vendor_shapes() -> list[tuple[str, object]]:
    from checker.dialects.chat.vendor_shapes import SHAPES as CHAT
    from checker.dialects.messages.schema_findings import SHAPES as MESSAGES
    from checker.dialects.responses.vendor_shapes import SHAPES as RESPONSES

    return [(s.code + ":" + s.paths[0], s) for s in (*CHAT, *RESPONSES, *MESSAGES)]


def _recording(text: str) -> Path:
    import re

    named = re.search(r"captures/(\S+?\.sse)", text)
    assert named, f"no capture named in {text!r}"
    return CAPTURES / named.group(1)


@pytest.mark.parametrize("shape", [s for _, s in _vendor_shapes()], ids=[i for i, _ in _vendor_shapes()])
def test_a_vendor_shape_is_info_on_its_recording_and_no_oracle_client_minds(shape: object) -> None:
    from checker.dialects.vendors import VendorShape

    assert isinstance(shape, VendorShape)
    path = _recording(shape.recording)
    assert path.is_file(), f"{shape.code}: the recording {path} is not in captures/"
    for profile in ("openai", "codex", "llama.cpp", "open-responses", "gpt-oss"):
        decl = declaration(path)
        linter = StreamLinter(profile=get_profile(profile), request=decl.request, limits=decl.limits)
        linter.feed(path.read_bytes())
        result = linter.close()
        hits = [f for f in result.findings if shape.matches(f)]
        # The default profile sees it (another profile may hold the stream to another schema set, Open Responses',
        # or leave the rule off: codex reads no SCH002).
        assert hits or profile != "openai", f"{shape.code}: none on {path.name} under {profile}"
        for finding in hits:
            assert finding.severity is Severity.INFO and finding.known_deviation, (profile, finding.message)
            assert finding.clients == () or finding.code in BREAK_NOT_THE_RULES, (profile, finding.clients)
            for client in effects_of(result).clients:
                found = effect(finding, client, result)
                assert found is None or found.verdict is Verdict.OK, (profile, client, found)


def test_a_schema_findings_typed_value_is_what_the_effects_read() -> None:
    """A null optional field: the finding says so in its details (value_type), not only in its message."""
    path = CAPTURES / "cassettes" / "openllmetry" / "openai-langchain-stream-0.sse"
    result = _lint_path(path)
    nulls = [f for f in result.findings if f.code == "CHT002" and f.details.get("value_type") == "null"]
    assert nulls and all(f.pointer == "/system_fingerprint" for f in nulls)
    missing = [f for f in _lint_path(CAPTURES / "chat" / "vendors" / "xai-finish-reason-omitted.sse").findings
               if f.details.get("keyword") == "required"]
    assert missing and all("value_type" not in f.details for f in missing)


def _lint_path(path: Path) -> LintResult:
    decl = declaration(path)
    linter = StreamLinter(profile=get_profile("openai"), request=decl.request, limits=decl.limits)
    linter.feed(path.read_bytes())
    return linter.close()
