"""Structured-output rules: the answer's text against the format the request asked for (docs/spec.md §8).

Applied by checker/structured_output.py at the end of a stream whose request (the ``X.request.json`` sidecar,
or the probe's own request) asks for a JSON answer, in any of the three dialects, and to a ``stream: false``
answer to such a request (checker/nonstream_checks.py; docs/spec.md §8.4; examples in
captures/structured-nonstream/). The stream readers return
such a text as it was streamed; what breaks is a parse of it (docs/spec.md §8.3): openai-node parses every
json_schema answer at the end of its stream helpers and rejects one that is not JSON (verified by the oracles
on the bad captures), the Agents SDK validates a run's output against its output_type, and openai-python's and
anthropic-python's parse helpers (``responses.parse()``, ``text_format=``, ``messages.parse()``) raise.
"""

from typing import Any

from checker.rules.registry import Rule
from checker.rules.registry import rule as _register

SPEC = "docs/spec.md §8"
OPENAI_DOCS = "OpenAI API reference, Structured Outputs (text.format / response_format json_schema, strict)"
ANTHROPIC_DOCS = "Anthropic API reference, structured outputs (output_config.format json_schema)"
PY_PARSE = "openai-python 3.57.0 src/openai/lib/_parsing/_responses.py (parse_text), _completions.py (_parse_content)"
NODE_PARSE = "openai-node 7.59.0 src/lib/ResponsesParser.ts (parseTextFormat), src/lib/parser.ts"
ANT_PARSE = "anthropic-sdk-python 2.15.0 src/anthropic/lib/_parse/_response.py (parse_text)"
AGENTS_PARSE = "openai-agents-python src/agents/util/_json.py (validate_json), src/agents/agent_output.py"


def rule(code: str, name: str, severity: str, message: str, *, clients: tuple[str, ...] = (), **fields: Any) -> Rule:
    """An FMT rule: its bad example is captures/structured/<code>-<name>.sse (the Responses one; the chat and
    Messages ones are in captures/chat/structured/ and captures/messages/structured/). ``clients``: those whose
    call breaks (checker/dialects/*/effects.py), none by default: the stream readers return the text as sent."""
    return _register(code, name, severity, message, bad=f"structured/{code}-{name}.sse", clients=clients, **fields)


NOT_JSON = rule(
    "FMT001", "structured-output-not-json", "error",
    "{unit}: the text is not JSON ({error}), though the request asked for {kind} ({where}): {text!r}",
    summary="Flags an answer text that is not JSON when the request asked for a JSON answer (json_schema or "
            "json_object).",
    why="With text.format (Responses), response_format (Chat Completions) or output_config.format (Anthropic) "
        "the server promises a text that parses as JSON; the callers parse it. A text wrapped in a Markdown "
        "fence, prose before the JSON, or a refusal sent as text instead of a refusal part all fail: "
        "openai-node's finalResponse() and finalChatCompletion() reject with \"invalid structured output JSON\" "
        "(it parses every json_schema answer), an Agents SDK run with an output_type fails with "
        "ModelBehaviorError, openai-python's and anthropic-python's parse helpers raise. NaN and Infinity are not JSON (JSON.parse rejects them). A text cut by the "
        "token limit is judged only by its first character (a text cut short must still begin the JSON asked for: "
        "prose there means the format was ignored); a response that failed and a refusal are not judged.",
    sources=(OPENAI_DOCS, ANTHROPIC_DOCS, SPEC, PY_PARSE, NODE_PARSE, ANT_PARSE, AGENTS_PARSE),
    clients=("openai-node", "openai-agents"),
    good="structured/cases/json-schema.sse",
)
SCHEMA_MISMATCH = rule(
    "FMT002", "structured-output-schema-mismatch", "warning",
    "{unit}: the JSON does not match {schema} the request sent with strict ({where}): {detail}",
    summary="Flags an answer whose JSON violates the schema the request sent with `strict: true` (always so on "
            "Anthropic).",
    why="A strict json_schema format is a promise that the answer validates against the request's schema "
        "(OpenAI: \"Structured Outputs ensures the model will always generate responses that adhere to your "
        "supplied JSON Schema\"; Anthropic's structured outputs are constrained decoding). Callers rely on it "
        "without checking: a pydantic model or zod schema mirroring the request's schema rejects the answer, "
        "and code that reads the fields gets the wrong ones. The schema checked is the one the request sent, "
        "compiled as JSON Schema 2020-12 unless it names its draft.",
    sources=(OPENAI_DOCS, ANTHROPIC_DOCS, SPEC, PY_PARSE, NODE_PARSE, AGENTS_PARSE),
    clients=("openai-agents",),
    good="structured/cases/json-schema.sse",
)
SCHEMA_MISMATCH_LOOSE = rule(
    "FMT003", "structured-output-schema-loose-mismatch", "warning",
    "{unit}: the JSON does not match {schema} the request sent without strict ({where}): {detail}",
    summary="Flags an answer whose JSON violates the schema the request sent without `strict: true`.",
    why="Without strict the server only tries to follow the schema (OpenAI: the model \"will try\"), so a "
        "mismatch is no broken promise; it is still the answer a caller's parse rejects, which is worth "
        "knowing when a server could enforce the schema (llama-server turns it into a grammar).",
    sources=(OPENAI_DOCS, SPEC, PY_PARSE),
    good="structured/cases/json-schema.sse",
)
NOT_AN_OBJECT = rule(
    "FMT004", "json-object-not-an-object", "warning",
    "{unit}: the text is JSON but {value_type}, not the object JSON mode asks for ({where})",
    summary="Flags a JSON-mode answer (`json_object`) whose JSON is not an object.",
    why="JSON mode (type json_object) promises a JSON object: OpenAI's description says the format "
        "\"ensures the message the model generates is valid JSON\" and the json_object mode's callers index "
        "its keys; an array, a string or a number fails them.",
    sources=(OPENAI_DOCS, SPEC),
    good="structured/cases/json-object.sse",
)
SCHEMA_UNUSABLE = rule(
    "FMT005", "structured-output-schema-unusable", "info",
    "{unit}: the schema the request sent ({where}) is not a JSON Schema sse-check can compile ({detail}); the "
    "JSON was not checked against it",
    summary="Says that the request's own schema could not be compiled, so the answer was only checked to be JSON.",
    why="The check uses the schema the request sent; a server that accepted a schema no validator compiles "
        "answered a request that OpenAI would have refused. The answer's JSON is still checked.",
    sources=(SPEC,),
    good="structured/cases/json-schema.sse",
)
CUT = rule(
    "FMT006", "structured-output-cut", "info",
    "{unit}: the {kind} answer was cut ({cut}), so its JSON is not whole and was not judged ({where})",
    summary="Says that an answer the request asked to be JSON was cut (by the token limit), so it is not judged.",
    why="A cut answer is a conforming stream (the finish says so), but its JSON is not whole, and the clients' "
        "structured-output helpers refuse it: openai-node's ChatCompletionStream throws "
        "LengthFinishReasonError on a json_schema response_format, openai-python's parse helpers raise the "
        "same. Raise the token limit (max_output_tokens, max_completion_tokens, max_tokens) for such requests.",
    sources=(SPEC, "openai-node 7.59.0 src/lib/ChatCompletionStream.ts (LengthFinishReasonError)", PY_PARSE),
    good="structured/cases/json-schema.sse",
)
