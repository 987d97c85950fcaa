"""The replay server's ``GET /v1/models``: the models its catalogue answers, with the ``models`` fault.

The list holds the models the captures' answers came from (``X.request.json``'s ``model``, else the first
``model`` the recorded body names) and then the capture names, since a request whose ``model`` names a capture is
answered with it. Each entry is an OpenAI ``Model`` (``id``, ``object: "model"``, ``created``, ``owned_by``).

The ``models`` fault (``--models`` or ``X-SSE-Check-Fault: models=…``) makes the answer wrong, for the MOD
rules' tests: ``invalid`` drops ``object`` and ``created`` from every model, ``mistyped`` gives each a
``created`` date string and a null ``owned_by`` (both wrong types for OpenAI's ``Model``), ``unlisted`` leaves those
models out (only capture names remain), ``absent`` answers 404 as a server without the endpoint does.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Protocol

from starlette.responses import JSONResponse

from checker.live.faults import FaultError, Faults, parse_header

OWNER = "sse-check"
HEAD_BYTES = 8192  # where a capture's body names its model, if anywhere
_SNAPSHOT = re.compile(r"(.+)-\d{4}-\d{2}-\d{2}")
_BODY_MODEL = re.compile(rb'"model"\s*:\s*"([^"\\]{1,200})"')


class _Capture(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def request(self) -> Any: ...

    @property
    def body(self) -> bytes: ...


def recorded_model(capture: _Capture) -> str | None:
    """The model a capture's answer came from: its recorded request's ``model``, else the first ``model`` its
    body names (``response.created``'s response, a chat chunk, ``message_start``'s message)."""
    if isinstance(capture.request, dict) and isinstance(capture.request.get("model"), str):
        return str(capture.request["model"])
    found = _BODY_MODEL.search(capture.body[:HEAD_BYTES])
    return found.group(1).decode("utf-8", "replace") if found else None


def model_ids(captures: Iterable[_Capture], *, recorded: bool = True) -> list[str]:
    """The models the captures' answers came from (when ``recorded``), then the capture names; each once."""
    captures = list(captures)
    ids = [m for c in captures if recorded and (m := recorded_model(c)) is not None]
    # OpenAI lists a dated snapshot's alias too (gpt-4.1 beside gpt-4.1-2025-04-14), and answers the alias
    # with the snapshot's name: a client asks for the alias.
    aliases = [found.group(1) for ident in ids if (found := _SNAPSHOT.fullmatch(ident)) is not None]
    return list(dict.fromkeys([*ids, *aliases, *(c.name for c in captures)]))


def models_answer(captures: Iterable[_Capture], faults: Faults, header: str) -> JSONResponse:
    """The answer to ``GET /v1/models`` under the server's faults and the request's fault header."""
    try:
        fault = faults.with_overrides(parse_header(header)).models
    except FaultError as exc:
        return JSONResponse({"error": {"message": f"bad X-SSE-Check-Fault header: {exc}",
                                       "type": "invalid_request_error", "code": None}}, status_code=400)
    if fault == "absent":
        return JSONResponse({"error": {"message": "GET /v1/models: not found", "type": "invalid_request_error",
                                       "code": "not_found"}}, status_code=404)
    data: list[dict[str, Any]] = [{"id": ident, "object": "model", "created": 0, "owned_by": OWNER}
                                  for ident in model_ids(captures, recorded=fault != "unlisted")]
    if fault == "invalid":
        data = [{"id": entry["id"], "owned_by": OWNER} for entry in data]
    elif fault == "mistyped":
        data = [{**entry, "created": "2026-01-01T00:00:00Z", "owned_by": None} for entry in data]
    elif fault == "modelinfo":  # as api.anthropic.com answers: a page of ModelInfo
        models = [{"type": "model", "id": entry["id"], "display_name": entry["id"],
                   "created_at": "2026-01-01T00:00:00Z"} for entry in data]
        return JSONResponse({"data": models, "has_more": False, "first_id": models[0]["id"] if models else None,
                             "last_id": models[-1]["id"] if models else None})
    return JSONResponse({"object": "list", "data": data})
