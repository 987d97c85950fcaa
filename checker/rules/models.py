"""Models rules (MOD): ``GET /v1/models``, the list of models a client picks from.

These findings are about the answer to a ``GET``, not about a stream: the probe's ``models`` flow
(:mod:`checker.surface.models`) asks for the list after its scenarios and judges the answer with the rules
declared here. Their examples are flow records (``captures/surface/*.flow.json``: each step's request,
status and answer), judged again by tests/surface/test_flow_records.py.
"""

from checker.rules.registry import rule

OPENAPI = ("OpenAI OpenAPI description 2.3.0 (GET /v1/models: ListModelsResponse, Model; as JSON Schema in "
           "schemas/openai/objects/ListModelsResponse.json, Model.json)")
PY = "openai-python src/openai/resources/models.py (models.list() pages over `data`)"
NODE = "openai-node src/resources/models.ts (models.list() pages over `data`)"
CODEX = "codex codex-rs/lmstudio/src/client.rs (fetch_models reads GET {base}/models `data[].id`)"
ANTHROPIC = ("anthropic-sdk-python src/anthropic/resources/models.py and pagination.py (models.list(): a SyncPage "
             "of ModelInfo over `data`, paged by `has_more` and `last_id`; a Messages-only probe expects this list)")
GOOD = "surface/good-models.flow.json"

MODELS_LIST_INVALID = rule(
    "MOD001", "models-list-invalid", "error",
    "GET /v1/models answer at {where}: {detail}",
    summary="Flags a `GET /v1/models` answer that is not OpenAI's `ListModelsResponse`, judged by its JSON Schema "
            "(generated from OpenAI's OpenAPI description, as the stream events' schemas are): not JSON, no "
            "`object: \"list\"`, no `data` array, or a `Model` without its string `id`, `object: \"model\"`, "
            "integer `created` or string `owned_by`, each at its JSON pointer.",
    why="Clients list models to let a user pick one and to check the one configured exists: openai-python's and "
        "openai-node's `models.list()` page over `data` and build a Model from each entry, and codex's OSS "
        "providers read `data[].id` to find the model; a list of another shape fails in them or reads as empty.",
    sources=(OPENAPI, PY, NODE, CODEX, ANTHROPIC),
    clients=("openai-python", "openai-node", "codex"),
    bad="surface/MOD001-models-list-invalid.flow.json",
    good=GOOD,
)
MODEL_NOT_LISTED = rule(
    "MOD002", "model-not-listed", "error",
    "model {model} is not in GET /v1/models, and the server did not answer it ({listed})",
    summary="Flags a model under test that `GET /v1/models` does not list, when the server did not answer a "
            "request for it either.",
    why="A client that checks its configured model against the list (codex's OSS providers) stops before the "
        "first request, and a user picking from the list cannot choose the model the server is probed with.",
    sources=(OPENAPI, CODEX),
    clients=("codex",),
    bad="surface/MOD002-model-not-listed.flow.json",
    good=GOOD,
)
ANY_MODEL_ROUTED = rule(
    "MOD003", "unlisted-model-served", "warning",
    "model {model} is not in GET /v1/models ({listed}), yet the server answered it: it routes any model name",
    summary="Flags a server that answers requests for a model its `GET /v1/models` does not list: it serves "
            "whatever model name it is sent (as HTP005 flags an unknown model accepted).",
    why="A server that routes any name hides a typo in the model name (the request silently runs another "
        "model), and a client that checks the configured model against the list (codex's OSS providers) "
        "refuses a model that would have worked.",
    sources=(OPENAPI, CODEX, "OpenAI API reference, 'Error codes' (404 model_not_found for an unknown model)"),
    clients=("codex",),
    bad="surface/MOD003-unlisted-model-served.flow.json",
    good=GOOD,
)
