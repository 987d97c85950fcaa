"""Stored-response rules (STO): what a server keeps of a response created with ``store`` on, and the
endpoints around it (issue 17 item 3).

These findings are about a *flow* of requests, not one stream: a streamed create, then ``GET
/v1/responses/{id}``, its ``input_items``, ``DELETE``, an unknown ``previous_response_id``, resumption with
``starting_after``, background polling and cancel, conversations and compaction, and the stateful
continuation of a tool call. ``sse-check probe`` runs them (``checker.surface.stored``); the checks are pure
functions of the recorded answers (``checker.surface.stored_checks``), so a saved flow gives the same
findings. Their examples are recorded flows, ``captures/stored/*.flow.json``. A feature the server does not
offer is a line of the capability table, never one of these findings.
"""

from checker.rules.registry import rule

OPENAPI = "OpenAI API reference, reference/openai-openapi.json"
GET = f"{OPENAPI}: GET /responses/{{response_id}} (getResponse: the Response; stream, starting_after)"
LIST = f"{OPENAPI}: GET /responses/{{response_id}}/input_items (listInputItems: ResponseItemList)"
DELETE = f"{OPENAPI}: DELETE /responses/{{response_id}} (deleteResponse: 200, then 404 with an Error)"
CANCEL = f"{OPENAPI}: POST /responses/{{response_id}}/cancel (cancelResponse: only background responses)"
CREATE = f"{OPENAPI}: POST /responses (CreateResponse: store, background, previous_response_id)"
ERROR = f"{OPENAPI}: Error (message, type, param, code)"
PY_RESPONSES = ("openai-python src/openai/resources/responses/responses.py (Responses.retrieve with stream and "
                "starting_after, delete, cancel, compact)")
PY_ITEMS = "openai-python src/openai/resources/responses/input_items.py (InputItems.list, order and after)"
PY_ERRORS = "openai-python src/openai/_client.py (_make_status_error: 400 BadRequestError, 404 NotFoundError)"
PY_CONVERSATIONS = "openai-python src/openai/resources/conversations/conversations.py (create, retrieve, delete)"
NODE_RESPONSES = "openai-node src/resources/responses/responses.ts (retrieve with stream and starting_after, delete)"
AGENTS = ("openai-agents-python src/agents/models/openai_responses.py (previous_response_id and conversation "
          "carry the history instead of the input)")
GOOD = "stored/good.flow.json"

STORED_DIFFERS = rule(
    "STO001", "stored-response-differs", "error",
    "GET /v1/responses/{id} differs from the streamed response: {detail}",
    summary="Flags a stored response, retrieved by id, that is not the response its stream ended with: its id, "
            "status, output items (their ids, types and content) or usage differ.",
    why="A client retrieves a stored response to recover from a cut stream, to poll a background response or "
        "to show history; openai-python and openai-node return the retrieved object as it is, so a server that "
        "stores something else than it streamed gives the application another answer than the user saw.",
    sources=(GET, PY_RESPONSES, NODE_RESPONSES),
    clients=("openai-python", "openai-node"),
    bad="stored/STO001-stored-response-differs.flow.json",
    good=GOOD,
)
STORED_LOST = rule(
    "STO002", "stored-response-lost", "error",
    "{what} answered HTTP {status} for response {id}, which the server stored ({claim})",
    summary="Flags a response created with `store: true` that the server says it stored (its Response echoes "
            "`store: true`, or another stored-response endpoint answers for it) but that cannot be retrieved.",
    why="Retrieval is then broken, not absent: openai-python raises NotFoundError for a response it was told "
        "exists, and a client that continues with `previous_response_id` loses the conversation.",
    sources=(GET, CREATE, PY_ERRORS, NODE_RESPONSES),
    clients=("openai-python", "openai-node"),
    bad="stored/STO002-stored-response-lost.flow.json",
    good=GOOD,
)
INPUT_ITEMS_DIFFER = rule(
    "STO003", "input-items-differ", "error",
    "GET /v1/responses/{id}/input_items {detail}",
    summary="Flags an input item list that is not a `list` object (`data`, `first_id`, `last_id`, `has_more`) "
            "or that does not list the input the create request sent, in order (`order=asc`).",
    why="openai-python pages the list by `after` = the last id and reads `data` as the items the response was "
        "made from; a list that lost or changed items shows the user a different conversation than the model saw.",
    sources=(LIST, PY_ITEMS),
    clients=("openai-python",),
    bad="stored/STO003-input-items-differ.flow.json",
    good=GOOD,
)
DELETE_NOT_HONOURED = rule(
    "STO004", "delete-not-honoured", "error",
    "DELETE /v1/responses/{id} {detail}",
    summary="Flags a stored response that DELETE refuses, or that GET still answers after DELETE said it was "
            "deleted.",
    why="Deletion is how applications honour a user's request to forget (and keep data under retention "
        "rules); a response that outlives its DELETE is kept against the application's word.",
    sources=(DELETE, PY_RESPONSES),
    clients=("openai-python",),
    bad="stored/STO004-delete-not-honoured.flow.json",
    good=GOOD,
)
UNKNOWN_PREVIOUS_ACCEPTED = rule(
    "STO005", "unknown-previous-response-accepted", "error",
    "previous_response_id {id}, which no response has, was answered HTTP {status} as if it were known",
    summary="Flags a request whose `previous_response_id` names no stored response but that is answered as a "
            "success: the server ignored the field.",
    why="The model then answers without the conversation the client meant to continue, and nothing tells the "
        "client: the Agents SDK and every client that sends only the new input after `previous_response_id` "
        "get answers to a question out of context.",
    sources=(CREATE, AGENTS),
    clients=("openai-agents",),
    bad="stored/STO005-unknown-previous-response-accepted.flow.json",
    good=GOOD,
)
UNKNOWN_PREVIOUS_WRONG_ERROR = rule(
    "STO006", "unknown-previous-response-wrong-error", "warning",
    "previous_response_id {id}, which no response has, is refused with {detail}; expected HTTP 400 (or 404) "
    "with an OpenAI error object",
    summary="Flags the refusal of an unknown `previous_response_id` with another status than 400 or 404, or with "
            "a body that is not `{\"error\": {\"message\", \"type\", \"param\", \"code\"}}`.",
    why="openai-python retries a 5xx (twice by default) before raising InternalServerError, and builds its error "
        "from `error.message` and `error.code`; clients that recover from a lost chain (resend the whole "
        "history) look for the 400 with code `previous_response_not_found`.",
    sources=(ERROR, PY_ERRORS, "openai-python src/openai/_base_client.py (_should_retry: 408, 409, 429, 5xx)"),
    clients=("openai-python",),
    bad="stored/STO006-unknown-previous-response-wrong-error.flow.json",
    good=GOOD,
)
RESUMPTION_WRONG = rule(
    "STO007", "resumption-wrong-events", "error",
    "resuming response {id} after sequence_number {after}: {detail}",
    summary="Flags `GET /v1/responses/{id}?stream=true&starting_after=N` that does not answer exactly the events "
            "the stream had after sequence number N, in order: it restarts from the beginning, skips events, "
            "changes them or ends early.",
    why="Resumption is how a client recovers a cut stream without paying for the answer twice: openai-python's "
        "`responses.retrieve(id, stream=True, starting_after=N)` appends what it gets to what it has, so a "
        "repeated event duplicates text and a skipped one loses it, silently.",
    sources=(GET, PY_RESPONSES, NODE_RESPONSES),
    clients=("openai-python", "openai-node"),
    bad="stored/STO007-resumption-wrong-events.flow.json",
    good=GOOD,
)
BACKGROUND_STATUS_WRONG = rule(
    "STO008", "background-status-wrong", "error",
    "background response {id}: {detail}",
    summary="Flags a background response (`background: true`) whose polled status is not a path "
            "queued → in_progress → a terminal status (completed, incomplete, failed, cancelled): it goes back, "
            "leaves a terminal status, or says a status no response has.",
    why="A background client polls `responses.retrieve(id)` while the status is queued or in_progress and reads "
        "the output once it is terminal; a status that goes back or never ends hangs it, and a terminal status "
        "read too early gives it an empty answer.",
    sources=(CREATE, GET, PY_RESPONSES),
    clients=("openai-python",),
    bad="stored/STO008-background-status-wrong.flow.json",
    good=GOOD,
)
CANCEL_NOT_HONOURED = rule(
    "STO009", "cancel-not-honoured", "error",
    "POST /v1/responses/{id}/cancel {detail}",
    summary="Flags the cancel of a running background response that does not end it `cancelled` (in the answer "
            "or in the next retrieval), or that answers something else than the Response.",
    why="An application cancels to stop paying for and waiting on an answer it no longer wants; a cancel that "
        "is acknowledged but not done leaves it polling a response that still runs.",
    sources=(CANCEL, PY_RESPONSES),
    clients=("openai-python",),
    bad="stored/STO009-cancel-not-honoured.flow.json",
    good=GOOD,
)
CONVERSATION_MALFORMED = rule(
    "STO010", "conversation-malformed", "error",
    "{endpoint} answered {detail}",
    summary="Flags a Conversations endpoint that answers something else than its object: `conversation` (id, "
            "created_at, metadata) for create and retrieve, `conversation.deleted` (id, deleted) for delete, "
            "404 for a deleted conversation.",
    why="openai-python and the Agents SDK read the conversation's id to send it with every later request; a "
        "malformed object, or a conversation that outlives its delete, breaks that chain.",
    sources=(f"{OPENAPI}: ConversationResource, DeletedConversationResource", PY_CONVERSATIONS, AGENTS),
    clients=("openai-python", "openai-agents"),
    bad="stored/STO010-conversation-malformed.flow.json",
    good=GOOD,
)
COMPACTION_MALFORMED = rule(
    "STO011", "compaction-malformed", "error",
    "POST /v1/responses/compact answered {detail}",
    summary="Flags a compaction answer that is not a `response.compaction` object (id, created_at, an output "
            "list of items, usage).",
    why="A client replaces its history with the compacted `output` and sends it as the next input; an answer "
        "without that list loses the conversation.",
    sources=(f"{OPENAPI}: POST /responses/compact (CompactResource)", PY_RESPONSES),
    clients=("openai-python",),
    bad="stored/STO011-compaction-malformed.flow.json",
    good=GOOD,
)
CONTINUATION_REFUSED = rule(
    "STO012", "stateful-continuation-refused", "error",
    "the continuation of response {id} with only its function_call_output is refused: HTTP {status} {message}",
    summary="Flags the stateful form of multi-step tool use failing: after a stored response that called a "
            "function, a request with `previous_response_id` and only the `function_call_output` is refused, "
            "although the server keeps stored responses.",
    why="This is how the Agents SDK and openai-python users continue a tool call without resending the history; "
        "a server that stores responses but does not use them for `previous_response_id` breaks every tool loop "
        "in that mode.",
    sources=(CREATE, AGENTS, PY_RESPONSES),
    clients=("openai-agents", "openai-python"),
    bad="stored/STO012-stateful-continuation-refused.flow.json",
    good=GOOD,
)
PREVIOUS_NOT_ECHOED = rule(
    "STO013", "previous-response-not-echoed", "warning",
    "the response continuing {id} says previous_response_id {echoed}",
    summary="Flags a Response created with `previous_response_id` whose own `previous_response_id` field does not "
            "name the response it continues.",
    why="Clients and logs follow the chain of responses by this field (the Agents SDK keeps the last response's "
        "id to continue from); a null or another id hides which conversation the answer belongs to.",
    sources=(f"{OPENAPI}: Response (previous_response_id)", AGENTS),
    bad="stored/STO013-previous-response-not-echoed.flow.json",
    good=GOOD,
)
