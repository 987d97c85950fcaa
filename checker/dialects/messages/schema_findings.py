"""Schema violations of an Anthropic Messages event (or of a non-streamed message) as findings: SCH001, the
missing properties of one object as one finding, except usage's, which the machine reports as ANT006."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from checker.dialects.vendors import VendorShape, vendor_graded
from checker.dialects.messages import vocabulary
from checker.findings import Finding, Position
from checker.rules import schema
from checker.schema_errors import missing_properties, value_facts

# Schema violations the machine reports as ANT006 (message-usage-malformed) instead: what the clients do with
# usage depends on message_start and message_delta together, which the machine sees and the schema does not.
_USAGE_POINTERS = {
    vocabulary.MESSAGE_START: ("/message/usage", "/message/usage/input_tokens", "/message/usage/output_tokens"),
    vocabulary.MESSAGE_DELTA: ("/usage", "/usage/output_tokens"),
}


# What api.anthropic.com sends where the SDK's types (the schema set's source) say otherwise, graded info under
# every profile (docs/severity.md). A usage field added later is missing from older recordings: both SDKs read
# usage without validating it (anthropic-python constructs, @anthropic-ai/sdk assigns).
SHAPES: tuple[VendorShape, ...] = (
    VendorShape(code="SCH001", paths=("/usage/server_tool_use", "/message/usage/server_tool_use"),
                keywords=("required",), missing=("web_fetch_requests",),
                recording="api.anthropic.com (captures/messages/vendors/anthropic-usage-before-web-fetch.sse, "
                          "built to the shape of its streams before web fetch)"),
)


def event_schema_findings(violations: Sequence[Any], etype: str, pos: Position) -> list[Finding]:
    """Each violation as SCH001 (missing properties of one object as one finding), but usage's (ANT006)."""
    skip = _USAGE_POINTERS.get(etype, ())
    out: list[Finding] = []
    missing: dict[str, list[str]] = {}
    for violation in violations:
        pointer: str = violation.pointer
        if pointer in skip:
            continue
        if violation.keyword == "required" and violation.missing is not None:
            missing.setdefault(pointer.rsplit("/", 1)[0], []).append(violation.missing)
            continue
        details = {"keyword": violation.keyword, "missing": [], "pointer": pointer, "type": etype,
                   **value_facts(violation)}
        out.append(schema.EVENT_SCHEMA.finding(pos, pointer=pointer, details=details, type=etype,
                                               where=pointer or "/", detail=violation.message))
    for parent, names in missing.items():
        details = {"keyword": "required", "missing": names, "pointer": parent, "type": etype}
        text = missing_properties(names)
        out.append(schema.EVENT_SCHEMA.finding(pos, pointer=parent, details=details, type=etype,
                                               where=parent or "/", detail=text))
    return vendor_graded(out, SHAPES)
