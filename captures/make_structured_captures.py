"""Write the structured-output captures of the three dialects (docs/spec.md §8, rules FMT001-FMT005).

    python captures/make_structured_captures.py

Each capture carries its request (``: request``, the format it asked for) and the complete set of findings it
gives (``: expect``). Responses captures go to captures/structured/, chat ones to captures/chat/structured/,
Messages ones to captures/messages/structured/ (where each dialect's oracle tests find them): each rule's
example named after it, the other cases (conforming ones, edges) in the folder's cases/.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from checker.synth import ChatStreamBuilder, encode, encode_chat, usage  # noqa: E402
from checker.synth.messages import MessagesStreamBuilder  # noqa: E402
from checker.synth.messages import encode as encode_messages  # noqa: E402
from checker.synth.responses import ResponsesStream  # noqa: E402

CAPTURES = ROOT / "captures"

CITY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "population": {"type": "integer"}},
    "required": ["city", "population"],
    "additionalProperties": False,
}
GOOD = ['{"city": "Par', 'is", "population": 2', '102650}']
FENCED = ['```json\n{"city": "Paris", ', '"population": 2102650}\n```']
MISMATCH = ['{"city": "Paris", ', '"population": "about two million"}']
ARRAY = ['["Paris", ', '"Tokyo"]']
NAN = ['{"city": "Paris", "population": NaN}']
REFUSAL = ["I'm sorry, I can't ", "help with that."]
# The token limit of a cut Responses answer: the smallest OpenAI accepts (its request schema's minimum).
CUT_AT = 16
# A schema jsonschema-rs refuses ("type" must name a JSON type).
BROKEN_SCHEMA: dict[str, Any] = {"type": "citystate"}


def responses_format(kind: str, *, strict: bool = True, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    if kind == "json_object":
        return {"text": {"format": {"type": "json_object"}}}
    return {"text": {"format": {"type": "json_schema", "name": "city", "strict": strict,
                                "schema": schema or CITY_SCHEMA}}}


def chat_format(kind: str, *, strict: bool = True, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    if kind == "json_object":
        return {"response_format": {"type": "json_object"}}
    return {"response_format": {"type": "json_schema", "json_schema": {
        "name": "city", "strict": strict, "schema": schema or CITY_SCHEMA}}}


def messages_format(kind: str, *, strict: bool = True, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"output_config": {"format": {"type": "json_schema", "schema": schema or CITY_SCHEMA}}}


def header(about: str, expect: Iterable[str]) -> bytes:
    lines = [f": about {about}", *(f": expect {c}" for c in sorted(expect))]
    return ("\n".join(lines) + "\n\n").encode()


# (file stem, about, format kind, strict, schema, text deltas, how it ends, expected codes)
CASES: tuple[tuple[str, str, str, bool, dict[str, Any] | None, list[str], str, tuple[str, ...]], ...] = (
    ("json-schema", "a strict json_schema answer that validates", "json_schema", True, None, GOOD, "normal", ()),
    ("json-object", "a JSON-mode answer that is an object", "json_object", False, None, GOOD, "normal", ()),
    ("refusal", "a refusal under a json_schema format: a refusal part, not judged", "json_schema", True, None,
     REFUSAL, "refusal", ()),
    ("FMT006-structured-output-cut", "a JSON answer cut by the token limit: said, not judged", "json_schema", True, None,
     GOOD[:2], "cut", ("FMT006",)),
    ("FMT001-structured-output-not-json", "the JSON wrapped in a Markdown fence", "json_schema", True, None,
     FENCED, "normal", ("FMT001",)),
    ("cut-prose", "an answer in prose, cut by the token limit: the format was ignored", "json_schema", True, None,
     ["Sure! The weather ", "in Paris is"], "cut", ("FMT001",)),
    ("not-json-nan", "NaN is not JSON (JSON.parse rejects it)", "json_schema", True, None, NAN, "normal",
     ("FMT001",)),
    ("FMT002-structured-output-schema-mismatch", "population is a string, the strict schema says integer",
     "json_schema", True, None, MISMATCH, "normal", ("FMT002",)),
    ("FMT003-structured-output-schema-loose-mismatch", "the same mismatch without strict", "json_schema", False,
     None, MISMATCH, "normal", ("FMT003",)),
    ("FMT004-json-object-not-an-object", "JSON mode answered with an array", "json_object", False, None, ARRAY,
     "normal", ("FMT004",)),
    ("FMT005-structured-output-schema-unusable", "the request's schema does not compile", "json_schema", True,
     BROKEN_SCHEMA, GOOD, "normal", ("FMT005",)),
)


def responses_capture(name: str, deltas: list[str], ending: str) -> bytes:
    stream = ResponsesStream(f"structured/{name}", max_output_tokens=CUT_AT if ending == "cut" else None).start()
    if ending == "refusal":
        stream.refusal(deltas)
    else:
        stream.message(deltas, status="incomplete" if ending == "cut" else "completed")
    use = usage(40, len(deltas))
    stream.incomplete(use) if ending == "cut" else stream.completed(use)
    return encode(stream.events)


def chat_capture(deltas: list[str], ending: str) -> bytes:
    builder = ChatStreamBuilder()
    builder.refusal(deltas) if ending == "refusal" else builder.text(deltas)
    return encode_chat(builder.chunks(finish_reason="length" if ending == "cut" else None))


def messages_capture(name: str, deltas: list[str], ending: str) -> bytes:
    builder = MessagesStreamBuilder(name=f"structured/{name}").text(deltas)
    stop = {"cut": "max_tokens", "refusal": "refusal"}.get(ending)
    return encode_messages(builder.events(stop_reason=stop))


def place(folder: str, name: str) -> Path:
    """A rule's example is named after it in the folder; the other cases are in its cases/."""
    return CAPTURES / folder / ("" if name.startswith("FMT") else "cases") / f"{name}.sse"


def captures() -> Iterator[tuple[Path, dict[str, Any], bytes]]:
    """(capture path, its request, its bytes) of every case in every dialect that has its format."""
    for name, about, kind, strict, schema, deltas, ending, expect in CASES:
        head = header(about, expect)
        yield (place("structured", name),
               {"model": "gpt-test", "input": "Which city?", "stream": True,
                **responses_format(kind, strict=strict, schema=schema),
                **({"max_output_tokens": CUT_AT} if ending == "cut" else {})},
               head + responses_capture(name, deltas, ending))
        yield (place("chat/structured", name),
               {"model": "gpt-test", "messages": [{"role": "user", "content": "Which city?"}], "stream": True,
                **chat_format(kind, strict=strict, schema=schema),
                **({"max_completion_tokens": 2} if ending == "cut" else {})},
               head + chat_capture(deltas, ending))
        if kind == "json_object" or not strict:
            continue  # Anthropic has neither JSON mode nor a non-strict schema
        yield (place("messages/structured", name),
               {"model": "claude-sonnet-4-5", "max_tokens": 1024, "stream": True,
                "messages": [{"role": "user", "content": "Which city?"}], **messages_format(kind, schema=schema)},
               head + messages_capture(name, deltas, ending))


def main() -> None:
    for path, request, data in captures():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        path.with_name(f"{path.stem}.request.json").write_text(json.dumps(request, indent=2) + "\n")
        print(path.relative_to(ROOT))


if __name__ == "__main__":
    main()
