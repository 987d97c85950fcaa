"""Flow rules (FLW): what stops a flow of several requests (checker.surface.flow) before its end.

A flow's later step is built from an earlier step's answer (``{create.id}``); when that answer lacks what the
step needs, the step cannot be sent and the feature it checks does not work for a client either. Examples are
flow records (``captures/surface/*.flow.json``).
"""

from checker.rules.registry import rule

FLOW_DOC = "docs/flows.md (references to earlier answers: {step.field[N]})"

STEP_NOT_BUILT = rule(
    "FLW001", "flow-step-not-built", "error",
    "{step} not sent: {detail}",
    summary="Flags a flow step that could not be built because an earlier answer lacks what it refers to "
            "(the id of a created response, the call id of a function call).",
    why="A client builds its next request from the same fields: a Response without an `id` cannot be fetched or "
        "continued, a function call without a `call_id` cannot be answered, so the client's next step fails "
        "as this one did.",
    sources=(FLOW_DOC, "openai-python src/openai/types/responses/response_function_tool_call.py (call_id)",
             "openai-agents-python src/agents/items.py (ToolCallOutputItem: an output sent back by its call_id)"),
    clients=("openai-python", "openai-agents"),
    bad="surface/FLW001-flow-step-not-built.flow.json",
    good="surface/good-models.flow.json",
)
