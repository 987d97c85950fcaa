"""Real recordings from other public test suites (captures/cassettes): no error that the real clients contradict.

The captures are response bodies that VCR cassettes of public projects recorded from the vendors' servers
(captures/cassettes/README.md, each file's source, commit and licence in its folder's sources.json): Chat
Completions from OpenAI, Azure OpenAI, Groq, Mistral, DeepSeek, Writer, vLLM and a local test server; Responses
from OpenAI; Messages from Anthropic. The real clients run on every one of them in the oracle tests, which pick
up every capture of their dialect under captures/ (tests/test_chat_oracles.py: openai-python and openai-node;
tests/test_client_oracles.py: the same on Responses; tests/test_messages_oracles.py: anthropic-python and
@anthropic-ai/sdk) and hold the client matrix to what each client does with the same bytes.

Held here:

* every capture gives exactly its declared findings (``X.expect.json``), under every profile its declaration
  names;
* under every profile, an error-level finding on a recording stands only where a client a real run stands
  behind breaks on it or returns a wrong result (its matrix effect, which the oracle tests check against the
  real run); anything else is a false alarm (docs/severity.md);
* the sources are named: repository, commit, licence, the cassette and interaction of every file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_corpus import CAPTURES, codes, declaration, lint, rel
from test_severity_policy import ORACLE_CLIENTS

from checker.compat import Verdict, effect, effects_of
from checker.findings import Severity
from checker.profiles import PROFILES

CASSETTES = CAPTURES / "cassettes"
ALL = sorted(CASSETTES.rglob("*.sse"))
SOURCES = sorted(CASSETTES.glob("*/sources.json"))


def test_the_recordings_are_there_with_their_sources() -> None:
    readme = (CASSETTES / "README.md").read_text()
    listed: set[Path] = set()
    hosts: set[str] = set()
    for sources in SOURCES:
        record = json.loads(sources.read_text())
        assert record["repository"] in readme and record["commit"] in readme and record["licence"] in readme
        assert len(record["commit"]) == 40 and (sources.parent / "LICENSE").is_file()
        for entry in record["captures"]:
            path = sources.parent / entry["capture"]
            assert path.is_file() and entry["source"].endswith(".yaml") and type(entry["interaction"]) is int
            listed.add(path)
            hosts.add(entry["host"])
    assert listed == set(ALL), sorted(map(rel, set(ALL) ^ listed))
    dialects = {lint(p.read_bytes(), declaration(p), "openai").dialect for p in ALL}
    assert dialects == {"chat", "responses", "messages"} and len(hosts) >= 8 and len(ALL) >= 40


@pytest.mark.parametrize("path", ALL, ids=rel)
def test_each_recording_gives_exactly_its_declared_findings(path: Path) -> None:
    decl = declaration(path)
    for profile, expected in decl.expect.items():
        assert codes(lint(path.read_bytes(), decl, profile)) == set(expected), (rel(path), profile)


@pytest.mark.parametrize("path", ALL, ids=rel)
@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_a_recording_gets_no_error_the_real_clients_contradict(path: Path, profile: str) -> None:
    result = lint(path.read_bytes(), declaration(path), profile)
    clients = [c for c in effects_of(result).clients if c in ORACLE_CLIENTS]
    unconfirmed = []
    for finding in result.findings:
        if finding.severity is not Severity.ERROR:
            continue
        if not any((e := effect(finding, c, result)) is not None and e.verdict > Verdict.OK for c in clients):
            unconfirmed.append(f"{finding.code} {finding.message}")
    assert not unconfirmed, f"{rel(path)} under {profile}: " + "; ".join(unconfirmed)
