"""What the vendors' own servers send where their published description says otherwise, as data: a schema
finding each dialect's ``vendor_shapes`` names is graded info under every profile, with the recording named (the
severity policy, docs/severity.md). The dialects' tables: ``checker/dialects/chat/vendor_shapes.py``,
``checker/dialects/responses/vendor_shapes.py`` and ``SHAPES`` in ``checker/dialects/messages/schema_findings.py``;
tests/test_severity_policy.py lints each recording and holds every shape to it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from checker.dialects.base import details, field_path
from checker.findings import Finding, Severity


@dataclass(frozen=True, slots=True, kw_only=True)
class VendorShape:
    """A schema finding the vendors' own servers are recorded producing (the severity policy, docs/severity.md:
    what api.openai.com, api.anthropic.com and the big hosted gateways send is at most info, with the recording
    named). It matches a finding of ``code`` at a field (``field_path``, array indexes as ``N``) in ``paths``
    failing one of ``keywords``: for ``type``/``enum``/``const`` only a value of JSON type ``value_type`` (when
    given), for ``required`` only when every missing property is among ``missing``. Per field, not per rule: the
    same rule on another field, or another value there, keeps its severity."""

    code: str
    paths: tuple[str, ...]
    keywords: tuple[str, ...]
    recording: str  # who sends it and where it is recorded: "Azure OpenAI (captures/chat/vendors/….sse)"
    value_type: str | None = None
    missing: tuple[str, ...] = ()

    def matches(self, finding: Finding) -> bool:
        facts = details(finding)
        keyword = facts.get("keyword")
        if finding.code != self.code or keyword not in self.keywords or field_path(finding) not in self.paths:
            return False
        if keyword == "required":
            gone = facts.get("missing") or []
            return bool(gone) and set(gone) <= set(self.missing)
        return self.value_type is None or facts.get("value_type") == self.value_type


def vendor_graded(findings: list[Finding], shapes: Sequence[VendorShape]) -> list[Finding]:
    """``findings`` with each one a vendor shape matches at info, its recording named as a known deviation (under
    every profile: what the vendor sends does not depend on the reference a stream is held to)."""
    out = []
    for finding in findings:
        shape = next((s for s in shapes if s.matches(finding)), None)
        if shape is not None:
            finding = replace(finding, severity=Severity.INFO,
                              known_deviation=f"what {shape.recording} sends")
        out.append(finding)
    return out
