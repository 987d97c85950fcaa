#!/usr/bin/env python3
"""Write the stored-response examples: ``captures/stored/*.flow.json`` and the capture ``serve`` continues with.

Dev-time only. Each flow is the stored-response flow (``checker.surface.stored.steps``) asked of the replay
server (``checker.live.serve.Replayer`` over ``captures/probe`` and ``tests/data/stored-serve``, in process), with
the ``stored`` fault that breaks one feature on the step that shows it, or, where ``serve`` has no fault for it,
one recorded answer edited (``EDITS``). ``good.flow.json`` has no fault. Re-run after changing the flow:

    .venv/bin/python captures/make_stored_flows.py

``tests/data/stored-serve/tool_result_stateful.sse`` is the answer to the stateful continuation: the probe's
``plain_text`` answer as the continuation of ``reasoning_one_call`` (its own id, and ``previous_response_id``
naming that response), with the request that asks it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from starlette.testclient import TestClient

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from checker.live.serve import Catalogue, Replayer  # noqa: E402
from checker.surface import stored  # noqa: E402
from checker.surface.stored_answers import Answer  # noqa: E402

PROBE = ROOT / "captures" / "probe"
OUT = ROOT / "captures" / "stored"
SERVE = ROOT / "tests" / "data" / "stored-serve"
FIRST_ID = "resp_68ee5648b462992e966817609994ca34402ac9e9b48ea3df"
CONTINUED_ID = "resp_5707ed0c1b7e4e4c9a2f0a31d2c6b1e8f3a4d5c6b7e8f901"
MODEL = "gpt-oss-120b"

Edit = Callable[[dict[str, Any]], None]


def _tools_body() -> dict[str, Any]:
    from checker.live.scenarios import BUILTIN

    body = next(s.body for s in BUILTIN if s.name == "reasoning_one_call")
    return {k: v for k, v in body.items() if k != "model"}


def write_continuation_capture() -> None:
    """tool_result_stateful: plain_text's answer, re-identified as the continuation of FIRST_ID."""
    SERVE.mkdir(parents=True, exist_ok=True)
    plain = (PROBE / "plain_text.sse").read_bytes().decode("utf-8")
    original_id = json.loads(plain.split("data: ", 1)[1].split("\n", 1)[0])["response"]["id"]
    text = plain.replace(original_id, CONTINUED_ID).replace('"previous_response_id":null',
                                                             f'"previous_response_id":"{FIRST_ID}"')
    (SERVE / "tool_result_stateful.sse").write_bytes(text.encode("utf-8"))


def run(faults: dict[str, str]) -> list[Answer]:
    """The flow asked of a fresh replay server; ``faults``: step name -> X-SSE-Check-Fault value."""
    replayer = Replayer(Catalogue.from_paths([str(PROBE), str(SERVE)]))
    answers: list[Answer] = []
    with TestClient(replayer.app, base_url="http://serve.test") as client:
        for template in stored.steps(MODEL, _tools_body()):
            step = stored.resolve(template, answers)
            if step is None or stored.skip_poll(step, answers):
                continue
            headers = {"X-SSE-Check-Scenario": step.scenario} if step.scenario else {}
            fault = faults.get(step.name) or faults.get(step.name.split("_")[0] if step.name.startswith("poll_") else "")
            if fault:
                headers["X-SSE-Check-Fault"] = fault
            reply = client.request(step.method, "/v1" + step.path, json=step.body, headers=headers)
            streamed = reply.headers.get("content-type", "").startswith("text/event-stream")
            try:
                body = None if streamed else reply.json()
            except ValueError:
                body = None
            answers.append(Answer(step=step.name, method=step.method, path="/v1" + step.path, request=step.body,
                                  status=reply.status_code, body=body, stream=reply.content if streamed else None))
    return answers


def _edit_body(step: str, change: Callable[[Any], Any]) -> Edit:
    def edit(record: dict[str, Any]) -> None:
        for answer in record["steps"]:
            if answer["step"] == step:
                answer["body"] = change(answer["body"])

    return edit


def _edit_status(step: str, status: int, body: Any) -> Edit:
    def edit(record: dict[str, Any]) -> None:
        for answer in record["steps"]:
            if answer["step"] == step:
                answer["status"], answer["body"] = status, body
                answer.pop("stream", None)

    return edit


def _without(key: str) -> Callable[[Any], Any]:
    return lambda body: {k: v for k, v in body.items() if k != key}


def _continuation_not_echoed(record: dict[str, Any]) -> None:
    for answer in record["steps"]:
        if answer["step"] == "continue":
            answer["stream"] = answer["stream"].replace(f'"previous_response_id":"{FIRST_ID}"',
                                                        '"previous_response_id":null')


# code -> (about, faults per step, an edit of the record or None)
EXAMPLES: dict[str, tuple[str, dict[str, str], Edit | None]] = {
    "STO001": ("GET /v1/responses/{id} answers the stored response without its last output item (the function "
               "call the stream ended with).", {"retrieve": "stored=differ"}, None),
    "STO002": ("The streamed response says store: true, but GET /v1/responses/{id} answers 404.",
               {"retrieve": "stored=unsupported"}, None),
    "STO003": ("input_items answers an empty list for a response created with one input message.",
               {"input_items": "stored=input-items"}, None),
    "STO004": ("DELETE answers deleted: true, but GET still answers the response afterwards.",
               {"delete": "stored=keep-deleted"}, None),
    "STO005": ("A request with a previous_response_id no response has is answered as if it were known.",
               {"unknown_previous": "stored=accept-unknown"}, None),
    "STO006": ("An unknown previous_response_id is refused with HTTP 500 and a {\"detail\"} body.",
               {"unknown_previous": "stored=error-shape"}, None),
    "STO007": ("Resumption after sequence number N leaves out the first event after N.",
               {"resume": "stored=skip"}, None),
    "STO008": ("A background response polled to completed reads in_progress again on the next poll.",
               {"poll": "stored=regress"}, None),
    "STO009": ("The cancel of a queued background response answers it still queued.",
               {"cancel": "stored=cancel-ignored"}, None),
    "STO010": ("POST /v1/conversations answers a conversation without created_at and metadata.", {},
               _edit_body("conversation_create", lambda b: {k: v for k, v in b.items()
                                                             if k not in ("created_at", "metadata")})),
    "STO011": ("POST /v1/responses/compact answers a compaction without its output list.", {},
               _edit_body("compact", _without("output"))),
    "STO012": ("The server keeps stored responses, yet refuses the continuation that sends only the "
               "function_call_output after previous_response_id: it looked for the call in the input.", {},
               _edit_status("continue", 400, {"error": {
                   "message": "No tool call found for function call output with call_id "
                              "call_5VHe9dtRhyvWi6mXi3Tf1VzcdwyPUCrO.",
                   "type": "invalid_request_error", "param": "input", "code": None}})),
    "STO013": ("The continuation's Response says previous_response_id null.", {}, _continuation_not_echoed),
}


# The steps each rule's example keeps (the good flow keeps them all): what its feature is judged on.
KEEP: dict[str, tuple[str, ...]] = {
    "STO001": ("create", "retrieve"), "STO002": ("create", "retrieve"), "STO003": ("create", "input_items"),
    "STO004": ("create", "retrieve", "delete", "deleted"), "STO005": ("unknown_previous",),
    "STO006": ("unknown_previous",), "STO007": ("create", "resume"), "STO008": ("background", "poll_"),
    "STO009": ("cancel_background", "cancel", "cancelled"), "STO010": ("conversation_",), "STO011": ("compact",),
    "STO012": ("create", "retrieve", "continue"), "STO013": ("create", "continue"),
}


def _kept(step: str, keep: tuple[str, ...]) -> bool:
    return any(step == k or (k.endswith("_") and step.startswith(k)) for k in keep)


def render(record: dict[str, Any]) -> str:
    """A flow as JSON with one step per line (readable in a diff, small on disk)."""
    steps = ",\n".join("  " + json.dumps(step, ensure_ascii=False) for step in record["steps"])
    return (f'{{"about": {json.dumps(record["about"], ensure_ascii=False)},\n "expect": {json.dumps(record["expect"])},\n'
            f' "steps": [\n{steps}\n ]}}\n')


def main() -> int:
    from checker.rules import RULES
    from checker.surface.stored_flow import flow_findings

    write_continuation_capture()
    records = {"good": ("Every stored-response feature answered as OpenAI documents it.", {}, None, ())}
    for code, (about, faults, edit) in EXAMPLES.items():
        records[f"{code}-{RULES[code].name}"] = (about, faults, edit, KEEP[code])
    for name, (about, faults, edit, keep) in records.items():
        steps = [a.to_json() for a in run(faults) if not keep or _kept(a.step, keep)]
        record: dict[str, Any] = {"about": about, "expect": [], "steps": steps}
        if edit is not None:
            edit(record)
        record["expect"] = sorted({f.code for f in flow_findings(record)})
        (OUT / f"{name}.flow.json").write_text(render(record), encoding="utf-8")
        print(f"{name}: {record['expect']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
