"""The real llama-server's Anthropic Messages endpoint (``POST /v1/messages``), end to end.

Runs only in the real-server suite (``make test-all``), against the session's ``real_llama`` (conftest.py
here). For every scenario of captures/messages/record_llama.py:

* the live stream lints to the findings its recorded capture declares (captures/messages/llama.cpp), under
  both profiles, and under ``--profile llama.cpp`` nothing is above info;
* the real anthropic-python, pointed straight at the server, does what the client matrix predicts for that
  very stream (``messages.stream()`` / ``get_final_message()``), and returns the stream's blocks.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from checker.compat import Verdict, matrix
from checker.engine import StreamLinter
from checker.findings import Severity
from checker.profiles import get_profile

ROOT = Path(__file__).resolve().parents[2]
RECORDED = ROOT / "captures" / "messages" / "llama.cpp"


def _recorder() -> Any:
    spec = importlib.util.spec_from_file_location("sse_check_record_llama",
                                                  ROOT / "captures" / "messages" / "record_llama.py")
    assert spec is not None and spec.loader is not None
    module = sys.modules.get(spec.name) or importlib.util.module_from_spec(spec)
    if spec.name not in sys.modules:
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    return module


SCENARIOS: dict[str, tuple[str, dict[str, Any]]] = _recorder().SCENARIOS


@pytest.fixture(scope="module")
def streams(real_llama: Any) -> dict[str, bytes]:
    out = {}
    for name, (_, body) in SCENARIOS.items():
        # A connection per request: llama-server closes it after a stream.
        with httpx.Client(base_url=real_llama.url, timeout=120) as client, \
                client.stream("POST", "/v1/messages", json={**body, "stream": True}) as response:
            assert response.status_code == 200, (name, response.status_code)
            assert response.headers["content-type"].startswith("text/event-stream"), name
            out[name] = b"".join(response.iter_bytes())
    return out


def _lint(data: bytes, profile: str, body: dict[str, Any]) -> Any:
    linter = StreamLinter(profile=get_profile(profile), request={**body, "stream": True}, keep_texts=True)
    linter.feed(data)
    return linter.close()


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_the_live_stream_lints_as_its_recorded_capture_declares(name: str, streams: dict[str, bytes]) -> None:
    declared = json.loads((RECORDED / f"{name}.expect.json").read_text())
    for profile, codes in declared.items():
        result = _lint(streams[name], profile, SCENARIOS[name][1])
        assert result.dialect == "messages"
        assert result.codes() == codes, (name, profile)
        if profile == "llama.cpp":
            assert all(f.severity <= Severity.INFO for f in result.findings), (name, result.findings)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_anthropic_python_at_the_server_does_what_the_matrix_says(name: str, streams: dict[str, bytes],
                                                                  real_llama: Any) -> None:
    import anthropic

    body = SCENARIOS[name][1]
    result = _lint(streams[name], "openai", body)
    cell = matrix(result)["anthropic-python"]
    client = anthropic.Anthropic(api_key="sk-ant-local", base_url=real_llama.url, max_retries=0, timeout=120)
    try:
        with client.messages.stream(**body) as stream:
            for _ in stream:
                pass
            final = stream.get_final_message()
    except Exception as exc:  # noqa: BLE001 - what the client raises is the outcome
        assert cell.verdict is Verdict.BREAKS, f"{name}: predicted {cell.verdict}, the SDK raised {exc!r}"
        return
    finally:
        client.close()
    assert cell.verdict is not Verdict.BREAKS, f"{name}: predicted breaks ({cell.symptom}), the SDK returned"
    # The server samples anew for every request: the block types and the stop reason are its contract here.
    assert final.stop_reason in ("end_turn", "max_tokens", "tool_use"), name
    assert [b.type for b in final.content] and all(b.type in ("thinking", "text", "tool_use") for b in final.content)
