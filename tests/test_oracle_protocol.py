"""The oracle protocol (checker/oracles/protocol.py), the registry and the batch runner, with the real clients.

The outcome's JSON shape round-trips; the loopback server replays a capture's saved status and headers, routes
many exchanges by their /c/k/ prefix, and holds a never-answering exchange open; every registry entry is a
column of the matrix with the version that is installed; and a batch runs ONE client process over many captures,
surviving a job that never gets an answer.
"""

from __future__ import annotations

import json
import os
import urllib.request
from pathlib import Path

import pytest

import node_oracle
from checker import dialects
from checker.clients import CLIENTS as MATRIX_NAMES
from checker.oracles import registry
from checker.oracles.loopback import serve_exchanges
from checker.oracles.protocol import DriverCall, Exchange, Job, Outcome, ToolCall
from checker.oracles.runner import ClientUnavailable, job_for, run_batch, tool_names

ROOT = Path(__file__).resolve().parents[1]
CAPTURES = ROOT / "captures"
TEXT = CAPTURES / "conforming" / "text.sse"


def test_outcome_round_trips_through_its_json() -> None:
    outcome = Outcome(client="x", version="1", dialect="chat", text="hi", finish_reason="stop", errors=("e",),
                      tool_calls=(ToolCall(id="c1", name="f", arguments='{"a":1}'),))
    assert Outcome.from_json(json.dumps(outcome.as_dict())) == outcome


def test_a_driver_outcome_with_extra_keys_and_object_arguments_parses() -> None:
    raw = {"client": "vercel-ai", "version": "5", "dialect": "responses", "raised": None, "text": None,
           "tool_calls": [{"id": "c", "name": "f", "arguments": {"b": 2, "a": 1}}], "status": None,
           "finish_reason": "tool-calls", "errors": ["AI_TypeValidationError: ..."], "steps": 1}
    got = Outcome.from_dict(raw)
    assert got.tool_calls[0].arguments == '{"a":1,"b":2}' and got.errors == ("AI_TypeValidationError: ...",)
    assert got.extra == {"steps": 1} and got.as_dict()["steps"] == 1


def test_not_one_json_object_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        Outcome.from_json("[1, 2]")


def test_driver_arguments_round_trip() -> None:
    call = DriverCall(base_url="http://127.0.0.1:1/c/0/v1", model="m", dialect="chat", tools=("a", "b"))
    assert DriverCall.parse(call.argv()) == call and call.root_url == "http://127.0.0.1:1/c/0"


def test_the_loopback_server_replays_status_headers_and_routes_by_prefix() -> None:
    exchanges = [Exchange(body=b"data: one\n\n"),
                 Exchange(body=b'{"error": "no"}', status=429, headers=(("content-type", "application/json"),
                                                                       ("retry-after", "7")))]
    with serve_exchanges(exchanges) as served:
        with urllib.request.urlopen(served.base_urls[0] + "/responses", data=b"{}") as answer:
            assert answer.status == 200 and answer.read() == b"data: one\n\n"
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(served.base_urls[1] + "/chat/completions", data=b"{}")
        assert refused.value.code == 429 and refused.value.headers["retry-after"] == "7"
        assert refused.value.read() == b'{"error": "no"}'
        assert served.requests == [1, 1]


def test_a_saved_exchange_that_never_answered_is_held_open() -> None:
    with serve_exchanges([Exchange(body=b"", status=None)]) as served:
        with pytest.raises(TimeoutError):
            urllib.request.urlopen(served.base_urls[0] + "/responses", data=b"{}", timeout=1)


def test_every_registry_client_is_a_matrix_column_of_the_dialects_it_speaks() -> None:
    for client in registry.CLIENTS:
        assert client.name in MATRIX_NAMES, client.name
        assert set(client.calls) == set(client.dialects), client.name
        for dialect in client.dialects:
            assert client.name in dialects.get(dialect).effects().clients, (client.name, dialect)


def test_the_registry_versions_are_the_pinned_ones() -> None:
    import anthropic
    import openai

    assert registry.get("openai-python").version == openai.__version__
    assert registry.get("anthropic-python").version == anthropic.__version__
    for client in registry.CLIENTS:
        if client.driver is None or not client.driver.env:
            continue
        package = client.package.split(" (")[0]
        for folder in (ROOT / "tools/envs", ROOT / "checker/oracles/pins"):
            npm, pip = folder / client.driver.env / "package.json", folder / f"{client.driver.env}.txt"
            if npm.is_file():
                assert json.loads(npm.read_text())["dependencies"][package] == client.version, client.name
            if pip.is_file():
                assert f"{package}=={client.version}" in pip.read_text().splitlines(), client.name


def test_tool_names_come_from_the_request_else_from_the_calls_streamed() -> None:
    chat = CAPTURES / "chat" / "conforming"
    assert tool_names({"tools": [{"type": "function", "function": {"name": "f"}}]}, b"", "chat") == ("f",)
    body = (b'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","type":"function",'
            b'"function":{"name":"get_weather","arguments":""}}]}}]}\n\n')
    assert tool_names({}, body, "chat") == ("get_weather",)
    assert chat.is_dir()


def test_openai_python_runs_over_loopback_http_as_its_users_call_it() -> None:
    jobs = [job_for(TEXT, "responses"), job_for(CAPTURES / "conforming" / "incomplete.sse", "responses")]
    done, cut = run_batch("openai-python", jobs)
    assert done.raised is None and done.status == "completed" and done.text
    assert cut.raised == "RuntimeError: Didn't receive a `response.completed` event."


def test_an_unanswered_request_is_the_clients_own_timeout_and_the_batch_goes_on() -> None:
    silent = Job(exchange=Exchange(body=b"", status=None), dialect="responses", timeout_s=1)
    after = job_for(TEXT, "responses")
    timed_out, fine = run_batch("openai-python", [silent, after])
    assert timed_out.raised is not None and "Timeout" in timed_out.raised, timed_out
    assert fine.raised is None and fine.text


def _node(name: str) -> None:
    try:
        node_oracle.ensure_env(registry.get(name).driver.env)  # type: ignore[union-attr]
    except node_oracle.NodeOracleUnavailable as exc:
        if os.environ.get(node_oracle.REQUIRE_ENV):
            raise
        pytest.skip(str(exc))


def test_a_batch_driver_runs_once_over_many_captures_and_survives_a_silent_server() -> None:
    _node("openai-node")
    silent = Job(exchange=Exchange(body=b"", status=None), dialect="responses", timeout_s=1)
    jobs = [job_for(TEXT, "responses"), silent, job_for(TEXT, "responses")]
    first, timed_out, last = run_batch("openai-node", jobs)
    assert first.raised is None and first.text and first == last
    assert timed_out.raised is not None and timed_out.failure is None, timed_out


def test_a_client_not_installed_is_unavailable_with_its_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SSE_CHECK_ENV_OPENAI_NODE", "/nonexistent")
    with pytest.raises(ClientUnavailable, match="tools/envs.py install openai-node"):
        run_batch("openai-node", [job_for(TEXT, "responses")])
