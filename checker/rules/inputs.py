"""Input-form rules (INP): what a request may carry that a server must take, and a hosted tool it must not ignore.

The Open Responses specification (release 2026-04-24) and OpenAI's description let a request's ``input`` hold
messages of every role (``system``, ``developer``, ``user``, ``assistant``: an earlier assistant turn as plain
text or as the ``output_text`` parts a client got back), and let ``tool_choice`` force a hosted tool. Clients send
all of these: a chat history replayed turn by turn, an agent's earlier items sent back, a hosted search. (A
function forced by name is the tool-choice family's: TCH001.) The probe's input-form flows (:mod:`checker.surface.inputs`) send each once, stream the answer
(every stream check applies) and judge the round trip with the rules here. Their examples are flow records
(``captures/surface/*.flow.json``), judged again by tests/surface/test_flow_records.py.
"""

from checker.rules.registry import rule

OR_SPEC = "Open Responses specification, https://www.openresponses.org/specification"
OPENAPI = "reference/open-responses-openapi.json (MessageRole: user, assistant, system, developer; ItemParam)"
OPENAI_API = "reference/openai-openapi.json (EasyInputMessage, InputMessage)"
AGENTS_HISTORY = ("openai-agents-python src/agents/result.py (RunResultBase.to_input_list: the earlier turn's "
                  "items, its assistant messages with their output_text parts, are the next run's input)")
SUITE = "openresponses src/lib/compliance-tests.ts (system-prompt, multi-turn)"

INPUT_FORM_REFUSED = rule(
    "INP001", "input-form-refused", "error",
    "a request with {form} was refused: HTTP {status} {message}",
    summary="Flags a server that answers an error to a valid request whose input holds system and developer "
            "messages, or an earlier assistant turn (as text and as output_text parts).",
    why="These are the requests of every multi-turn client: a chat UI sends the whole conversation with a "
        "system prompt, the Agents SDK sends the previous run's items (assistant messages included) as the next "
        "run's input, and Open Responses lists system and developer among the message roles. A server that "
        "refuses them answers a first question and fails every later turn.",
    sources=(f"{OR_SPEC} ('Chat Inference': input is a string or a list of input items; 'Items')", OPENAPI,
             OPENAI_API, AGENTS_HISTORY, SUITE),
    clients=("openai-agents", "open-responses"),
    bad="surface/INP001-input-form-refused.flow.json",
    good="surface/good-input-forms.flow.json",
)
HOSTED_TOOL_IGNORED = rule(
    "INP002", "hosted-tool-ignored", "error",
    "tool_choice forced the hosted tool {tool}, but the answer has no {item} item: the tool was ignored",
    summary="Flags a 2xx answer to a request that forces a hosted tool (`tools: [{type: \"web_search\"}]`, "
            "`tool_choice: {type: \"web_search\"}`) and has no call of that tool in its output.",
    why="A server that does not run a hosted tool must refuse it (a 4xx naming the tool: unsupported, one line); "
        "one that takes the request and answers from the model alone returns text the client believes is backed "
        "by a search, with no `web_search_call` to show it was not. Open Responses: 'Hosted tools must have "
        "corresponding item types', and in the structured form of tool_choice the tool is required.",
    sources=(f"{OR_SPEC} ('Offline Web Search', 'Internally-hosted tools', 'tool_choice')",
             "reference/open-responses-openapi.json (WebSearchToolChoice, WebSearchCall)",
             "openresponses src/lib/compliance-tests.ts (offline-web-search: an output item of type "
             "web_search_call)"),
    clients=("open-responses",),
    bad="surface/INP002-hosted-tool-ignored.flow.json",
    good="surface/good-hosted-web-search.flow.json",
)
