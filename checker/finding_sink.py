"""Where every finding of one lint goes, and how it comes out.

A check says what it found; the :class:`FindingSink` decides what is reported and how, the same way for the
stream's findings (checker/engine.py) and for the HTTP exchange's (checker/http_checks.py):

* **selection**: the profile's disabled rules and ``--select``/``--ignore`` (code prefixes) drop a finding;
* **the profile**: its severity overrides and known deviations (checker/profiles.py, docs/spec.md §3) are applied;
* **deferral**: a known deviation that holds only for some streams (``when_stream``: a function call cut by
  ``max_output_tokens`` on llama-server) needs facts known only at the end; findings of such codes are held
  until :meth:`settle` gives the :class:`~checker.profiles.StreamFacts`;
* **collapsing**: the same rule with the same message (``output_text.delta has no sequence_number`` on every
  delta) is reported once, at its first position, with ``occurrences`` counting them all.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from checker.findings import Finding
from checker.profiles import Profile, StreamFacts


class FindingSink:
    """The findings of one lint: filtered, judged by the profile, deferred when they must be, collapsed.

    ``emit(finding, out)`` appends to ``out`` what is newly reported (a first occurrence, profile applied);
    ``findings()`` is the whole report once :meth:`settle` was called.
    """

    def __init__(self, profile: Profile, *, select: Iterable[str] | None = None,
                 ignore: Iterable[str] | None = None, collapse: bool = True) -> None:
        self.profile = profile
        self.select = tuple(s.upper() for s in select) if select else ()
        self.ignore = tuple(s.upper() for s in ignore) if ignore else ()
        self.collapse = collapse
        # The facts the profile judges deferred findings by: None until settle(); None after it when the
        # findings are not about one stream's end.
        self.facts: StreamFacts | None = None
        self.settled = False
        self._deferred_codes = profile.deferred_codes
        self._deferred: list[Finding] = []
        self._firsts: list[Finding] = []
        self._counts: dict[tuple[str, str], int] = {}

    def wanted(self, code: str) -> bool:
        """Whether findings of ``code`` are reported at all (profile, select, ignore)."""
        if not self.profile.is_enabled(code):
            return False
        if self.select and not code.startswith(self.select):
            return False
        if self.ignore and code.startswith(self.ignore):
            return False
        return True

    def emit(self, finding: Finding, out: list[Finding]) -> None:
        """Report ``finding``: appended to ``out`` if it is wanted and a first occurrence (or not collapsed)."""
        if not self.wanted(finding.code):
            return
        if not self.settled and finding.code in self._deferred_codes:
            self._deferred.append(finding)
            return
        self._record(self.profile.apply(finding, self.facts), out)

    def emit_all(self, findings: Iterable[Finding]) -> list[Finding]:
        """:meth:`emit` each of ``findings``; the ones reported, in order."""
        out: list[Finding] = []
        for finding in findings:
            self.emit(finding, out)
        return out

    def settle(self, facts: StreamFacts | None, out: list[Finding] | None = None) -> None:
        """What the profile needed to know is known: the deferred findings are judged by ``facts`` (reported
        after all others, appended to ``out`` if given), and later findings are judged at once."""
        self.settled = True
        self.facts = facts
        deferred, self._deferred = self._deferred, []
        for finding in deferred:
            self._record(self.profile.apply(finding, facts), [] if out is None else out)

    def reported(self, codes: Iterable[str]) -> bool:
        """Whether a finding of one of ``codes`` was reported so far."""
        wanted = set(codes)
        return any(f.code in wanted for f in self._firsts)

    def findings(self) -> list[Finding]:
        """Every reported finding in stream order (by byte, then line), with its ``occurrences`` if collapsed."""
        findings = self._firsts
        if self.collapse:
            counts = self._counts
            findings = [
                dataclasses.replace(f, occurrences=counts[(f.code, f.message)])
                if counts[(f.code, f.message)] > 1
                else f
                for f in findings
            ]
        return sorted(findings, key=lambda f: (f.position.byte, f.position.line))

    def _record(self, finding: Finding, out: list[Finding]) -> None:
        key = (finding.code, finding.message)
        seen = self._counts.get(key, 0)
        self._counts[key] = seen + 1
        if seen and self.collapse:
            return
        self._firsts.append(finding)
        out.append(finding)
