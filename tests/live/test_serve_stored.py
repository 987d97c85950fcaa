"""The replay server's stored responses (checker/live/serve_stored.py), over loopback, with the real SDK.

One ``sse-check serve captures/probe`` process (the conforming answers, with sequence numbers) answers a
streamed create with ``store`` on; then retrieval, input_items, resumption, deletion, background polling and
cancel, conversations and compaction are asked as openai-python asks them, and each ``stored`` defect
(X-SSE-Check-Fault: stored=...) is shown to make its endpoint wrong.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from checker.live.serve_stored import input_items, parse_stream
from tests.live.conftest import PROBE_CAPTURES, ServerProcess, start_serve

SCENARIO = "reasoning_one_call"
CAPTURE = PROBE_CAPTURES / f"{SCENARIO}.sse"
FINAL, EVENTS = parse_stream(CAPTURE.read_bytes())
assert FINAL is not None
ID = FINAL["id"]


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    """A server of its own: these tests store and delete responses."""
    process = start_serve(str(PROBE_CAPTURES))
    try:
        yield process
    finally:
        process.stop()
        process._stderr.close()


def sdk(server: ServerProcess, fault: str | None = None) -> openai.OpenAI:
    headers = {"X-SSE-Check-Scenario": SCENARIO} | ({"X-SSE-Check-Fault": fault} if fault else {})
    return openai.OpenAI(base_url=server.url + "/v1", api_key="unused", default_headers=headers, max_retries=0)


def create(server: ServerProcess, *, fault: str | None = None, **body: Any) -> httpx.Response:
    headers = {"X-SSE-Check-Scenario": SCENARIO} | ({"X-SSE-Check-Fault": fault} if fault else {})
    payload = {"model": "m", "input": "What is the weather in Paris?", "stream": True} | body
    return httpx.post(server.url + "/v1/responses", json=payload, headers=headers, timeout=10)


def test_a_streamed_response_is_retrieved_equal_to_its_final_event(server: ServerProcess) -> None:
    assert create(server).status_code == 200
    retrieved = sdk(server).responses.retrieve(ID)
    assert retrieved.model_dump(mode="json", exclude_unset=True) == FINAL
    assert [item.id for item in retrieved.output] == [item["id"] for item in FINAL["output"]]


def test_differ_drops_the_last_output_item(server: ServerProcess) -> None:
    create(server)
    retrieved = sdk(server, "stored=differ").responses.retrieve(ID)
    assert len(retrieved.output) == len(FINAL["output"]) - 1


def test_input_items_list_what_was_sent(server: ServerProcess) -> None:
    create(server, input=[{"role": "user", "content": "first"}, {"role": "user", "content": "second"}])
    page = sdk(server).responses.input_items.list(ID, order="asc")
    assert [item.content[0].text for item in page.data] == ["first", "second"]  # type: ignore[union-attr]
    assert page.first_id == page.data[0].id and page.last_id == page.data[-1].id and page.has_more is False
    newest_first = sdk(server).responses.input_items.list(ID)  # OpenAI's default order is desc
    assert [item.id for item in newest_first.data] == [item.id for item in page.data][::-1]
    assert sdk(server, "stored=input-items").responses.input_items.list(ID).data == []


def test_input_items_of_a_string_is_one_user_message() -> None:
    (item,) = input_items("hi")
    assert item["type"] == "message" and item["role"] == "user"
    assert item["content"] == [{"type": "input_text", "text": "hi"}] and item["id"].startswith("msg_")


def test_resumption_gives_the_events_after_n(server: ServerProcess) -> None:
    create(server)
    after = EVENTS[9][0]
    stream = sdk(server).responses.retrieve(ID, stream=True, starting_after=after)
    numbers = [event.sequence_number for event in stream]
    assert numbers == [number for number, _, _ in EVENTS if number > after]


@pytest.mark.parametrize(("defect", "first"), [("restart", 0), ("skip", 11)])
def test_resumption_defects(server: ServerProcess, defect: str, first: int) -> None:
    create(server)
    stream = sdk(server, f"stored={defect}").responses.retrieve(ID, stream=True, starting_after=EVENTS[9][0])
    numbers = [event.sequence_number for event in stream]
    assert numbers[0] == EVENTS[first][0]


def test_delete_then_404(server: ServerProcess) -> None:
    create(server)
    client = sdk(server)
    client.responses.delete(ID)
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(ID)
    create(server)
    sdk(server, "stored=keep-deleted").responses.delete(ID)
    assert client.responses.retrieve(ID).id == ID


def test_unknown_previous_response_id_is_openais_400(server: ServerProcess) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        sdk(server).responses.create(model="m", input="hi", previous_response_id="resp_unknown")
    assert caught.value.code == "previous_response_not_found" and caught.value.param == "previous_response_id"
    with pytest.raises(openai.InternalServerError):
        sdk(server, "stored=error-shape").responses.create(model="m", input="hi", previous_response_id="resp_x")
    answered = sdk(server, "stored=accept-unknown").responses.create(model="m", input="hi",
                                                                     previous_response_id="resp_unknown")
    assert answered.id == ID


def test_a_known_previous_response_id_is_answered(server: ServerProcess) -> None:
    create(server)
    answered = sdk(server).responses.create(model="m", previous_response_id=ID, input=[
        {"type": "function_call_output", "call_id": FINAL["output"][-1]["call_id"], "output": "sunny"}])
    assert answered.status == "completed"


def test_background_is_queued_then_polled_to_the_end(server: ServerProcess) -> None:
    client = sdk(server)
    queued = client.responses.create(model="m", input="hi", background=True)
    assert queued.status == "queued" and queued.output == []
    assert client.responses.retrieve(ID).status == "in_progress"
    assert client.responses.retrieve(ID).status == "completed"
    assert client.responses.cancel(ID).status == "completed"  # a finished response is left as it is
    client.responses.create(model="m", input="hi", background=True)
    assert client.responses.cancel(ID).status == "cancelled"
    assert client.responses.retrieve(ID).status == "cancelled"
    create(server)
    with pytest.raises(openai.BadRequestError):
        client.responses.cancel(ID)  # only a background response can be cancelled


def test_background_defects(server: ServerProcess) -> None:
    client = sdk(server, "stored=regress")
    client.responses.create(model="m", input="hi", background=True)
    assert [client.responses.retrieve(ID).status for _ in range(3)] == ["in_progress", "completed", "in_progress"]
    client = sdk(server, "stored=cancel-ignored")
    client.responses.create(model="m", input="hi", background=True)
    assert client.responses.cancel(ID).status == "queued"


def test_unsupported_answers_as_llama_server(server: ServerProcess) -> None:
    client = sdk(server, "stored=unsupported")
    with pytest.raises(openai.NotFoundError) as caught:
        client.responses.retrieve(ID)
    assert caught.value.body == {"message": "File Not Found", "type": "not_found_error", "code": 404}
    with pytest.raises(openai.BadRequestError):
        client.responses.create(model="m", input="hi", previous_response_id="resp_unknown")


def test_store_false_is_not_stored(server: ServerProcess) -> None:
    sdk(server).responses.delete(ID) if _stored(server) else None
    create(server, store=False)
    assert not _stored(server)


def _stored(server: ServerProcess) -> bool:
    return httpx.get(f"{server.url}/v1/responses/{ID}", timeout=10).status_code == 200


def test_conversations_and_compaction(server: ServerProcess) -> None:
    client = sdk(server)
    conversation = client.conversations.create(items=[{"role": "user", "content": "hi"}], metadata={"k": "v"})
    assert conversation.object == "conversation" and conversation.metadata == {"k": "v"}
    assert client.conversations.retrieve(conversation.id).id == conversation.id
    deleted = client.conversations.delete(conversation.id)
    assert deleted.deleted is True and deleted.object == "conversation.deleted"
    compacted = client.responses.compact(model="m", input=[{"role": "user", "content": "hi"}])
    assert compacted.object == "response.compaction" and compacted.output[-1].type == "compaction"


def test_unknown_ids_are_json_404s(server: ServerProcess) -> None:
    for method, path in (("GET", "/v1/responses/resp_none"), ("DELETE", "/v1/responses/resp_none"),
                         ("GET", "/v1/responses/resp_none/input_items"), ("POST", "/v1/responses/resp_none/cancel"),
                         ("GET", "/v1/conversations/conv_none")):
        answer = httpx.request(method, server.url + path, timeout=10)
        assert answer.status_code == 404 and json.loads(answer.text)["error"]["message"], (method, path)
