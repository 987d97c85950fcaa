"""The stored-response flow against the real llama-server: the capability table says exactly what it answers.

llama-server (b11434) stores no response: every stored-response path (``GET``/``DELETE /v1/responses/{id}``,
``input_items``, resumption, cancel, ``/v1/conversations``, ``/v1/responses/compact``) answers 404
``{"error": {"message": "File Not Found", …}}``, ``previous_response_id`` is refused with a 400 that says it is
not supported, and ``background: true`` is answered in the foreground. So every row is "unsupported" and none
is a finding; and the real openai-python, asked the same things, raises exactly the errors the rows name.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import openai
import pytest

from checker.engine_options import EngineOptions
from checker.live.scenarios import BUILTIN
from checker.profiles import get_profile
from checker.surface.stored_answers import final_response
from checker.surface.stored_run import StoredRun, run_stored

MODEL = "tiny-qwen3-random"
TOOLS_BODY = dict(next(s.body for s in BUILTIN if s.name == "reasoning_one_call"))


@pytest.fixture(scope="module")
def stored_run(real_llama: Any) -> StoredRun:
    async def go() -> StoredRun:
        async with httpx.AsyncClient() as client:
            return await run_stored(client, real_llama.url, MODEL, TOOLS_BODY, timeout=120,
                                    lint_options=EngineOptions(profile=get_profile("llama.cpp")))

    return asyncio.run(go())


def test_every_stored_feature_is_unsupported_and_none_is_a_finding(stored_run: StoredRun) -> None:
    rows = {v.feature: v for v in stored_run.verdicts}
    states = {name: row.state for name, row in rows.items()}
    called = states.pop("stateful tool use")
    assert called in ("unsupported", "not checked"), rows["stateful tool use"].why  # whether the model called
    assert set(states.values()) == {"unsupported"}, [(n, r.state, r.why) for n, r in rows.items()]
    assert all(not row.findings for row in rows.values())
    print("\n".join(f"{v.feature:22} {v.state:12} {v.why}" for v in stored_run.verdicts))
    for name in ("retrieve", "input_items", "resumption", "delete", "cancel", "conversations", "compact"):
        assert rows[name].why.endswith("HTTP 404 (File Not Found)"), (name, rows[name].why)
    assert "does not support 'previous_response_id'" in rows["previous_response_id"].why
    assert rows["background"].why == "answered in the foreground (status completed at once)"


def test_openai_python_sees_what_the_table_says(real_llama: Any, stored_run: StoredRun) -> None:
    created = final_response(next(a for a in stored_run.answers if a.step == "create"))
    assert created is not None
    client = openai.OpenAI(base_url=real_llama.url + "/v1", api_key="unused", max_retries=0)
    with pytest.raises(openai.NotFoundError) as retrieved:
        client.responses.retrieve(created["id"])
    assert retrieved.value.status_code == 404 and "File Not Found" in str(retrieved.value.message)
    with pytest.raises(openai.NotFoundError):
        client.responses.input_items.list(created["id"])
    with pytest.raises(openai.NotFoundError):
        client.responses.delete(created["id"])
    with pytest.raises(openai.BadRequestError) as continued:
        client.responses.create(model=MODEL, input="hi", previous_response_id=created["id"], max_output_tokens=8)
    assert "does not support 'previous_response_id'" in str(continued.value.message)
