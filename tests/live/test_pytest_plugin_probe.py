"""The pytest plugin's live half: one item per probe scenario, against `sse-check serve` over the real
llama-server captures (the ``llama_server`` fixture of this folder's conftest).

The inner pytest runs in a subprocess: an in-process run restores ``sys.modules`` afterwards, which would
leave this process with two copies of the httpx/httpcore modules the probe imported (and exception
classes that no longer match, as the other live tests would then see)."""

from __future__ import annotations

from typing import Any

import pytest


def test_probe_scenarios_are_items(pytester: pytest.Pytester, llama_server: Any) -> None:
    url = llama_server.url
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--sse-check-url", url, "--sse-check-model", "m",
                                "--sse-check-profile", "llama.cpp", "--sse-check-scenario",
                                "plain_text,reasoning_one_call", "-v")
    out = result.stdout.str()
    result.stdout.fnmatch_lines(["*sse-check-probe::plain_text PASSED*",
                                 "*sse-check-probe::reasoning_one_call PASSED*"])
    result.assert_outcomes(passed=2)
    assert "probing " + url in out

    # Under the openai profile the same server fails, with findings, no traceback.
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--sse-check-url", url, "--sse-check-model", "m",
                                "--sse-check-scenario", "plain_text")
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
