"""A chunk's schema violations as findings (CHT002): one finding per object's missing properties, and none
for what a rule of its own says better."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from checker.dialects.vendors import vendor_graded
from checker.dialects.chat.vendor_shapes import PREAMBLE, SHAPES
from checker.findings import Finding, Position, Severity
from checker.schema_errors import missing_properties, value_facts
from checker.rules import chat as rules

# Schema pointers that a rule of its own reports (the schema would say the same thing less usefully).
_OWN_RULE_SUFFIXES = ("/index", "/function/arguments")


def chunk_schema_findings(violations: Iterable[Any], pos: Position) -> list[Finding]:
    """Schema violations of one chunk as CHT002 findings: the missing properties of one object are one finding;
    a violation a rule of its own reports (a choice's or a fragment's index, arguments) is left to that rule; what
    the vendors' own servers send (``vendor_shapes.SHAPES``) is graded info."""
    out: list[Finding] = []
    missing: dict[str, list[str]] = {}
    for violation in violations:
        pointer = violation.pointer
        if pointer.endswith(_OWN_RULE_SUFFIXES) and "/choices/" in pointer:
            continue  # CHT005, CHT011, CHT018 say it
        if pointer.endswith("/type") and "/tool_calls/" in pointer and violation.value_type == "null":
            continue  # a null type: CHT028 (a later fragment), CHT012 (the first)
        if violation.keyword == "required" and violation.missing is not None:
            missing.setdefault(pointer.rsplit("/", 1)[0], []).append(violation.missing)
            continue
        details = {"keyword": violation.keyword, "missing": [], "pointer": pointer, **value_facts(violation)}
        out.append(rules.CHUNK_SCHEMA.finding(pos, pointer=pointer, details=details, what="chunk",
                                              where=pointer or "/", detail=violation.message))
    for parent, names in missing.items():
        details = {"keyword": "required", "missing": names, "pointer": parent}
        text = missing_properties(names)
        out.append(rules.CHUNK_SCHEMA.finding(pos, pointer=parent, details=details, what="chunk",
                                              where=parent or "/", detail=text))
    return vendor_graded(out, SHAPES)


def preamble(finding: Finding) -> list[Finding]:
    """A finding on Azure's content-filter preamble chunk, graded info with the recording named."""
    return [replace(finding, severity=Severity.INFO, known_deviation=f"what {PREAMBLE} sends")]
