"""The replay server's ``GET /v1/models``: the models its catalogue answers, with the ``models`` fault.

The list holds the models named by the captures' recorded requests (``X.request.json``'s ``model``: the
model the answers came from) and then the capture names, since a request whose ``model`` names a capture is
answered with it. Each entry is an OpenAI ``Model`` (``id``, ``object: "model"``, ``created``, ``owned_by``).

The ``models`` fault (``--models`` or ``X-SSE-Check-Fault: models=…``) makes the answer wrong, for the MOD
rules' tests: ``invalid`` drops ``object`` and ``created`` from every model, ``unlisted`` leaves the recorded
models out (only capture names remain), ``absent`` answers 404 as a server without the endpoint does.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from starlette.responses import JSONResponse

from checker.live.faults import FaultError, Faults, parse_header

OWNER = "sse-check"


class _Capture(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def request(self) -> Any: ...


def model_ids(captures: Iterable[_Capture], *, recorded: bool = True) -> list[str]:
    """The recorded requests' models (when ``recorded``), then the capture names; each once."""
    captures = list(captures)
    ids = [c.request["model"] for c in captures
           if recorded and isinstance(c.request, dict) and isinstance(c.request.get("model"), str)]
    return list(dict.fromkeys([*ids, *(c.name for c in captures)]))


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
    return JSONResponse({"object": "list", "data": data})
