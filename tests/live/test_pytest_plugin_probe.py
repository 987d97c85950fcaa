"""The pytest plugin's live half: one item per probe scenario, against `sse-check serve` over the real
llama-server captures (the ``llama_server`` fixture of this folder's conftest).

The inner pytest runs in a subprocess: an in-process run restores ``sys.modules`` afterwards, which would
leave this process with two copies of the httpx/httpcore modules the probe imported (and exception
classes that no longer match, as the other live tests would then see)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.live.conftest import ROOT, start_serve


def test_probe_scenarios_are_items(pytester: pytest.Pytester, llama_server: Any) -> None:
    url = llama_server.url
    # This server answers the Responses endpoint only: the suite of that dialect (the default is all three).
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--sse-check-url", url, "--sse-check-model", "m",
                                "--sse-check-profile", "llama.cpp", "--sse-check-api", "responses",
                                "--sse-check-scenario", "plain_text,reasoning_one_call", "-v")
    out = result.stdout.str()
    result.stdout.fnmatch_lines(["*sse-check-probe::plain_text PASSED*",
                                 "*sse-check-probe::reasoning_one_call PASSED*"])
    result.assert_outcomes(passed=2)
    assert "probing " + url in out

    # Under the openai profile the same server fails, with findings, no traceback.
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--sse-check-url", url, "--sse-check-model", "m",
                                "--sse-check-api", "responses", "--sse-check-scenario", "plain_text")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["FAIL plain_text *", "*LIF015*"])
    assert "Traceback" not in result.stdout.str()


def test_a_scenario_the_replay_server_lacks_is_skipped(pytester: pytest.Pytester, llama_server: Any) -> None:
    pytester.makefile(".json", no_such_capture='{"input": "hi"}')
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--sse-check-url", llama_server.url,
                                "--sse-check-model", "m", "--sse-check-scenario-file", "no_such_capture.json",
                                "--sse-check-scenario", "no_such_capture", "-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*no capture for this scenario*"])


def _three_endpoints(root: Path, *, messages: bool = True) -> Path:
    """A replay folder answering plain_text on the three endpoints with the real llama-server's recordings
    (its chat answer with the usage chunk the probe asks for)."""
    root.mkdir()
    shutil.copy(ROOT / "captures" / "llama.cpp" / "plain_text.sse", root / "plain_text.sse")
    answers = {"chat": ROOT / "captures" / "chat" / "llama.cpp" / "usage",
               "messages": ROOT / "captures" / "messages" / "llama.cpp" / "plain_text"}
    for api, stem in answers.items():
        if api == "messages" and not messages:
            continue
        (root / api).mkdir()
        for suffix in (".sse", ".headers.txt"):
            shutil.copy(stem.with_name(stem.name + suffix), root / api / f"plain_text{suffix}")
    return root


def test_probe_scenarios_of_the_three_dialects_are_items(pytester: pytest.Pytester, tmp_path: Path) -> None:
    server = start_serve(str(_three_endpoints(tmp_path / "replay")))
    try:
        url = server.url
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--sse-check-url", url, "--sse-check-model",
                                               "m", "--sse-check-profile", "llama.cpp", "--sse-check-scenario",
                                               "plain_text", "-v")
        result.stdout.fnmatch_lines(["*probing * 3 scenarios*", "*sse-check-probe::plain_text PASSED*",
                                     "*sse-check-probe::chat/plain_text PASSED*",
                                     "*sse-check-probe::messages/plain_text PASSED*"])
        # Under the openai profile llama-server's Anthropic stream fails (a chatcmpl- message id, an unsigned
        # thinking block, …), shown as the text report, no traceback.
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--sse-check-url", url, "--sse-check-model",
                                               "m", "--sse-check-api", "messages", "--sse-check-scenario",
                                               "plain_text")
        result.assert_outcomes(failed=1)
        result.stdout.fnmatch_lines(["FAIL messages/plain_text *", "*ANT004*"])
        assert "Traceback" not in result.stdout.str()
        # --sse-check-api narrows the suite to the dialects named.
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--sse-check-url", url, "--sse-check-model",
                                               "m", "--sse-check-profile", "llama.cpp", "--sse-check-api", "chat",
                                               "--sse-check-scenario", "plain_text", "-v")
        result.stdout.fnmatch_lines(["*sse-check-probe::chat/plain_text *"])
        assert "sse-check-probe::messages/" not in result.stdout.str()
        assert "sse-check-probe::plain_text " not in result.stdout.str()
    finally:
        server.stop()
        server._stderr.close()


def test_an_endpoint_the_server_does_not_serve_skips_its_scenarios(pytester: pytest.Pytester,
                                                                   tmp_path: Path) -> None:
    server = start_serve(str(_three_endpoints(tmp_path / "replay", messages=False)))
    try:
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--sse-check-url", server.url,
                                               "--sse-check-model", "m", "--sse-check-profile", "llama.cpp",
                                               "--sse-check-api", "messages,chat", "--sse-check-scenario",
                                               "plain_text", "-rs", "-v")
        result.stdout.fnmatch_lines(["*sse-check-probe::messages/plain_text SKIPPED*"])
        result.stdout.fnmatch_lines(["*not served*"])
        assert "FAILED" not in result.stdout.str().replace("messages/plain_text SKIPPED", "")
    finally:
        server.stop()
        server._stderr.close()
