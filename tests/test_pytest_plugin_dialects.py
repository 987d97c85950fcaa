"""The pytest plugin on Chat Completions and Anthropic Messages captures, run with pytester as a server's CI
runs it: each capture an item checked as its own dialect, a failure printed as the text report (dialect,
findings, clients), ``--sse-check-dialect`` to force one, baselines hiding known findings and catching a new one.
(The live half on the three endpoints is in tests/live/test_pytest_plugin_probe.py.)

Each inner pytest runs in a subprocess (see tests/test_pytest_plugin.py for why)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAT = ROOT / "captures" / "chat"
MESSAGES = ROOT / "captures" / "messages"
MESSAGE_STOP = b'event: message_stop\ndata: {"type":"message_stop"}\n\n'


def _copy(source: Path, target: Path) -> None:
    """A capture and its request sidecar (the chat rules read the request: tools, n, include_usage)."""
    shutil.copy(source, target)
    request = source.with_name(source.name.removesuffix(".sse") + ".request.json")
    if request.is_file():
        shutil.copy(request, target.with_name(target.name.removesuffix(".sse") + ".request.json"))


@pytest.fixture
def captures(pytester: pytest.Pytester) -> Path:
    """Two chat and two Messages captures (a conforming and a broken one each), and the real llama-server's
    chat stream with a profile sidecar."""
    directory = pytester.path / "captures"
    directory.mkdir()
    _copy(CHAT / "conforming" / "two-choices-interleaved.sse", directory / "chat-ok.sse")
    _copy(CHAT / "rules" / "CHT004-role-repeated.sse", directory / "chat-broken.sse")
    _copy(MESSAGES / "conforming" / "thinking-tool-use.sse", directory / "messages-ok.sse")
    _copy(MESSAGES / "rules" / "ANT013-thinking-signature-missing.sse", directory / "messages-broken.sse")
    _copy(CHAT / "llama.cpp" / "reasoning.sse", directory / "llama-chat.sse")
    (directory / "llama-chat.profile").write_text("llama.cpp\n")
    return directory


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "--sse-check-captures", "captures", *args)


def test_chat_and_messages_captures_are_items_checked_as_their_dialect(pytester: pytest.Pytester,
                                                                       captures: Path) -> None:
    result = run(pytester, "-v")
    result.assert_outcomes(passed=3, failed=2)
    result.stdout.fnmatch_lines([
        "*captures/chat-broken.sse::sse-check[[]openai[]] FAILED*",
        "*captures/chat-ok.sse::sse-check[[]openai[]] PASSED*",
        "*captures/llama-chat.sse::sse-check[[]llama.cpp[]] PASSED*",
        "*captures/messages-broken.sse::sse-check[[]openai[]] FAILED*",
        "*captures/messages-ok.sse::sse-check[[]openai[]] PASSED*",
    ])
    result.stdout.fnmatch_lines([
        "FAIL captures/chat-broken.sse  OpenAI Chat Completions · *",
        "  CHT004 error*role 'assistant' again after its first delta*",
    ])
    result.stdout.fnmatch_lines([
        "FAIL captures/messages-broken.sse  Anthropic Messages · *",
        "  ANT013 warning*thinking block 0 ends without a signature*",
    ])
    assert "Traceback" not in result.stdout.str()


def test_a_forced_dialect_reads_every_capture_as_that_api(pytester: pytest.Pytester, captures: Path) -> None:
    result = run(pytester, "--sse-check-dialect", "messages", "-v")
    # The chat streams are not Anthropic streams: SCH010 says what they are instead.
    result.stdout.fnmatch_lines(["*captures/chat-ok.sse::sse-check[[]openai[]] FAILED*"])
    result.stdout.fnmatch_lines(["*SCH010*OpenAI Chat Completions stream, not the Anthropic Messages API*"])
    result.stdout.fnmatch_lines(["*captures/messages-ok.sse::sse-check[[]openai[]] PASSED*"])
    result.stdout.fnmatch_lines(["sse-check: every capture checked as Anthropic Messages"])
    pytester.makeini("[pytest]\nsse_check_dialect = no-such-api\n")
    bad = run(pytester)
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(["*unknown dialect 'no-such-api'*"])


def test_baseline_hides_known_chat_and_messages_findings_and_a_new_one_fails(pytester: pytest.Pytester,
                                                                              captures: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "checker", "lint", "captures", "--write-baseline", "base.json"],
                          cwd=pytester.path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    run(pytester, "--sse-check-baseline", "base.json").assert_outcomes(passed=5)
    # The next build: the conforming Messages stream loses its message_stop (ANT022), the broken chat stream
    # gets another id; only the new finding fails.
    ok = captures / "messages-ok.sse"
    data = ok.read_bytes()
    assert MESSAGE_STOP in data
    ok.write_bytes(data.replace(MESSAGE_STOP, b""))
    broken = captures / "chat-broken.sse"
    broken.write_bytes(broken.read_bytes().replace(b"chatcmpl-", b"chatcmpl-Z"))
    result = run(pytester, "--sse-check-baseline", "base.json", "-v")
    result.assert_outcomes(passed=4, failed=1)
    result.stdout.fnmatch_lines(["*captures/messages-ok.sse::sse-check[[]openai[]] FAILED*", "*ANT022*"])
    assert "CHT004" not in result.stdout.str() and "ANT013" not in result.stdout.str()
