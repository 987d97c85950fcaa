"""Content part rules: content_index, part before delta, part closing (docs/spec.md §2)."""

from checker.rules.registry import rule

OPENAPI = "OpenAI OpenAPI 2.3.0 ResponseStreamEvent"
PY = "openai-python src/openai/lib/streaming/responses/_responses.py"

CONTENT_INDEX_MISSING = rule(
    "CNT001", "content-index-missing", "error",
    "{type} has no content_index",
    summary="Flags part-scoped events without `content_index`.",
    why="openai-python indexes the message's content list with it: `output.content[None]` raises TypeError "
        "on the first text delta.",
    sources=(OPENAPI, PY, "openai-node src/internal/responses/response-accumulator.ts"),
    clients=("openai-python", "openai-node"),
    good="conforming/text.sse",
)
CONTENT_INDEX_NOT_APPENDED = rule(
    "CNT002", "content-index-not-appended", "error",
    "content_part.added at content_index {got}, expected {expected}",
    summary="Flags a content part whose index is not the number of parts of its item so far (from 0, reset "
            "for each item).",
    why="vLLM #45742: a message starting at content_index 1 crashes the OpenAI SDK with IndexError; the same "
        "when the index is not reset per item (vLLM #23382, #35184).",
    sources=(OPENAPI,
             "vLLM #45742",
             "vLLM #23382",
             "vLLM #35184",
             "openai-python src/openai/lib/streaming/responses/_responses.py (ResponseStreamState, get_final_response)",
             "openai-node src/internal/responses/response-accumulator.ts"),
    clients=("openai-python", "openai-node"),
    good="conforming/reasoning-text.sse",
)
CONTENT_INDEX_CHANGED = rule(
    "CNT003", "content-index-mismatch", "warning",
    "{type} at content_index {got}, but the item's open part is {expected}",
    summary="Flags a delta or done whose content_index is not the item's open part.",
    why="Clients append the delta to the part at that index: text lands in the wrong part, or IndexError.",
    sources=(OPENAPI, PY, "openai-node src/internal/responses/response-accumulator.ts"),
    clients=("openai-python", "openai-node"),
    good="conforming/text.sse",
)
DELTA_BEFORE_PART = rule(
    "CNT004", "delta-before-part", "error",
    "{type} before any content_part.added for item {item!r}",
    summary="Flags text, refusal or reasoning-text deltas with no open content part.",
    why="The part must exist before text is appended to it: openai-python indexes a missing part, openai-node "
        "fails; LiteLLM omitted content_part.added (LiteLLM #20975, sub2api #2875).",
    sources=(OPENAPI,
             "LiteLLM #20975",
             "sub2api #2875",
             "openai-python src/openai/lib/streaming/responses/_responses.py (ResponseStreamState, get_final_response)",
             "openai-node src/internal/responses/response-accumulator.ts"),
    clients=("openai-python", "openai-node"),
    good="conforming/text.sse",
)
PART_NOT_DONE = rule(
    "CNT005", "part-not-done", "warning",
    "item {item!r} done while content part {index} is open (no content_part.done)",
    summary="Flags an item completed with a content part that was never closed.",
    why="Clients that finalize text at content_part.done (openai-node, UIs) never see the final text.",
    sources=(OPENAPI,),
    good="conforming/text.sse",
)
PART_TYPE_MISMATCH = rule(
    "CNT006", "part-type-mismatch", "error",
    "{type} targets a {part_type!r} part",
    summary="Flags text events into a refusal part, refusal events into a text part, and the like.",
    why="openai-python asserts `content.type == \"output_text\"` before appending a text delta; openai-node "
        "fails \"expected content to be 'refusal'\" (or 'output_text').",
    sources=(OPENAPI, PY, "openai-node src/internal/responses/response-accumulator.ts"),
    clients=("openai-python", "openai-node"),
    good="conforming/refusal.sse",
)
TEXT_DONE_MISSING = rule(
    "CNT007", "text-done-missing", "warning",
    "{part} of item {item!r} closed without {done_type}",
    summary="Flags a part (or item) that streamed deltas but never sent the matching text `.done` event.",
    why="Clients that read the final text from output_text.done / reasoning_text.done (UIs, the Agents SDK's "
        "stream events) never receive it.",
    sources=(OPENAPI,),
    good="conforming/reasoning-text.sse",
)
AFTER_PART_DONE = rule(
    "CNT008", "event-after-part-done", "warning",
    "{type} for content part {index} of item {item!r} after it was done",
    summary="Flags deltas or a second done for a closed content part.",
    why="The part's text is final at content_part.done; later text is dropped by some clients and appended by "
        "others.",
    sources=(OPENAPI,),
    good="conforming/text.sse",
)
ANNOTATION_INDEX = rule(
    "CNT009", "annotation-index-not-appended", "error",
    "output_text.annotation.added at annotation_index {got}, expected {expected} (content part {index} of item "
    "{item!r})",
    summary="Flags annotations (url or file citations) whose annotation_index does not go 0, 1, 2, … per content "
            "part, or that target a part without an `annotations` list.",
    why="openai-node writes the annotation at annotation_index of the part's annotations and throws \"missing "
        "annotation at index N\" past the end, or when the part has no annotations list; a repeated index "
        "overwrites the earlier citation in the streamed snapshot.",
    sources=(OPENAPI, "openai-node 7.59 src/internal/responses/response-accumulator.ts"),
    clients=("openai-node",),
    good="conforming/web-search.sse",
)
