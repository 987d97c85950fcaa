"""Baselines: adopt the CI gate with known debt and fail only on regressions.

A baseline records the findings of today's streams by *fingerprint*: a hash of
the rule code, the scenario (capture path or probe scenario name), the event
type and the message with everything that changes from one run to the next
taken out (ids such as ``resp_…``/``msg_…``/``fc_…``, long random tokens,
quoted text snippets, and numbers, which are positions, indices and counts).
So a finding that moves to another line, or is about another item id of the
same kind, keeps its fingerprint; a new rule, a new event type or a new kind
of message gets a new one.

The file counts findings per fingerprint, so N old findings of one kind stay
hidden and an (N+1)th shows. A finding as counted is one reported record:
the engine already folds the repeats of one message into one record with an
``occurrences`` count, so a stream with a few more deltas than yesterday does
not look like a regression.

This module is pure apart from :func:`load` and :func:`save`; the commands
and the pytest plugin call :class:`BaselineRun`.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checker.engine import LintResult
from checker.errors import UsageError
from checker.findings import Finding

BASELINE_VERSION = 1

# Id prefixes of the Responses API (docs/spec.md §2), of Chat Completions and Anthropic Messages (§7.3), and
# common vendor ones: the suffix is random per response, the prefix says what kind of id it was.
_PREFIXED_ID = re.compile(r"\b(resp|msg|rs|fc|call|item|ws|ctc|chatcmpl|cmpl|req|toolu|srvtoolu)([_-])[A-Za-z0-9_-]+")
# A repr()'d string (single or double quoted) as Python writes it.
_QUOTED = re.compile(r"""'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*\"""")
# What a quoted word may look like and still be kept: an event type, a field,
# a status, an item type. Anything else quoted is streamed text or JSON.
_WORDLIKE = re.compile(r"[\w.:/\[\]*-]{1,64}")
# A long token mixing letters and digits: a random id without a known prefix (uuid, hex).
_RANDOM_TOKEN = re.compile(r"\b(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{16,}\b")
# Numbers are positions, indices, counts and sizes; an HTTP status is kept,
# because a 500 turning into a 502 is a different failure.
_NUMBER = re.compile(r"(?<!HTTP )(?<![\w.])\d+(?:\.\d+)*")


def normalise_message(message: str) -> str:
    """The message with run-to-run noise taken out (ids, text snippets, numbers)."""
    text = _PREFIXED_ID.sub(lambda m: f"{m.group(1)}{m.group(2)}*", message)
    text = _QUOTED.sub(_quoted, text)
    text = _RANDOM_TOKEN.sub("*", text)
    return _NUMBER.sub("N", text)


def _quoted(match: re.Match[str]) -> str:
    inner = match.group(0)[1:-1]
    return match.group(0) if _WORDLIKE.fullmatch(inner) else "'…'"


def fingerprint(finding: Finding, scenario: str) -> str:
    """A position-independent identity of a finding in one scenario (16 hex digits)."""
    parts = (finding.code, scenario, finding.position.event_type or "", normalise_message(finding.message))
    import hashlib  # not at import: every lint builds a BaselineRun, few fingerprint

    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True, slots=True, kw_only=True)
class Entry:
    """One fingerprint in a baseline file, with what a reader needs to recognise it."""

    fingerprint: str
    code: str
    scenario: str
    event_type: str | None
    message: str  # normalised
    count: int

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(slots=True)
class Baseline:
    """Known findings: fingerprint -> entry (with its count)."""

    entries: dict[str, Entry] = field(default_factory=dict)
    profile: str | None = None

    def add(self, finding: Finding, scenario: str) -> None:
        key = fingerprint(finding, scenario)
        old = self.entries.get(key)
        count = old.count + 1 if old else 1
        self.entries[key] = Entry(
            fingerprint=key,
            code=finding.code,
            scenario=scenario,
            event_type=finding.position.event_type,
            message=normalise_message(finding.message),
            count=count,
        )

    def total(self) -> int:
        return sum(e.count for e in self.entries.values())

    def to_document(self) -> dict[str, Any]:
        """The versioned JSON document, sorted so that baseline diffs in review are readable."""
        entries = sorted(self.entries.values(), key=lambda e: (e.scenario, e.code, e.event_type or "", e.message))
        return {
            "version": BASELINE_VERSION,
            "tool": "sse-check",
            "profile": self.profile,
            "findings": [e.as_dict() for e in entries],
        }

    @classmethod
    def from_document(cls, document: Any) -> "Baseline":
        """Read a document written by :meth:`to_document`; ValueError when it is not one."""
        if not isinstance(document, dict) or document.get("tool") != "sse-check" or "findings" not in document:
            raise ValueError("not an sse-check baseline (no \"tool\": \"sse-check\" and \"findings\")")
        version = document.get("version")
        if version != BASELINE_VERSION:
            raise ValueError(f"baseline version {version!r} is not supported (this sse-check reads {BASELINE_VERSION})")
        baseline = cls(profile=document.get("profile") if isinstance(document.get("profile"), str) else None)
        findings = document["findings"]
        if not isinstance(findings, list):
            raise ValueError("\"findings\" is not a list")
        for number, raw in enumerate(findings):
            try:
                entry = Entry(
                    fingerprint=str(raw["fingerprint"]),
                    code=str(raw["code"]),
                    scenario=str(raw["scenario"]),
                    event_type=raw.get("event_type"),
                    message=str(raw.get("message", "")),
                    count=int(raw.get("count", 1)),
                )
            except (KeyError, TypeError, ValueError, AttributeError):
                raise ValueError(f"findings[{number}] is not a baseline entry") from None
            if entry.count < 1:
                raise ValueError(f"findings[{number}]: count must be at least 1")
            baseline.entries[entry.fingerprint] = entry
        return baseline


class BaselineRun:
    """One run's use of baselines.

    ``apply(scenario, result)`` records the result's findings (for
    ``--write-baseline``) and returns it without the findings the known
    baseline covers (for ``--baseline``); ``hidden`` counts those. The budget
    is spent across the whole run, in stream order. While recording, every
    finding is hidden: the report shows what the next run with the new
    baseline will show, not a failure that the exit code (0) contradicts.

    ``base`` is the baseline file's directory: capture paths are named
    relative to it (:meth:`key`), so that a baseline matches whatever the
    working directory of the run.
    """

    def __init__(self, known: Baseline | None = None, *, record: bool = False, profile: str | None = None,
                 base: Path | None = None) -> None:
        self.known = known
        self._budget: Counter[str] = Counter(
            {key: entry.count for key, entry in known.entries.items()} if known else {}
        )
        self.recorded: Baseline | None = Baseline(profile=profile) if record else None
        self.hidden = 0
        self.base = base
        self._matched: set[str] = set()

    @property
    def active(self) -> bool:
        return self.known is not None or self.recorded is not None

    def key(self, name: str) -> str:
        """How the capture or scenario ``name`` is named in this run's baseline (see :func:`scenario_key`)."""
        return scenario_key(name, self.base)

    def apply(self, scenario: str, result: LintResult) -> LintResult:
        if self.recorded is not None:
            for finding in result.findings:
                self.recorded.add(finding, scenario)
            self.hidden += len(result.findings)
            return dataclasses.replace(result, findings=[]) if result.findings else result
        if self.known is None:
            return result
        kept: list[Finding] = []
        for finding in result.findings:
            key = fingerprint(finding, scenario)
            if self._budget[key] > 0:
                self._budget[key] -= 1
                self._matched.add(key)
                self.hidden += 1
            else:
                kept.append(finding)
        if len(kept) == len(result.findings):
            return result
        return dataclasses.replace(result, findings=kept)

    def note(self) -> str:
        """``N of M baseline entries matched`` (empty without --baseline): a baseline written for other captures,
        or naming them differently, shows as 0 matched instead of passing in silence."""
        if self.known is None or self.recorded is not None:
            return ""
        total = len(self.known.entries)
        return f"{len(self._matched)} of {total} baseline entries matched"

    @property
    def matched_none(self) -> bool:
        return self.known is not None and bool(self.known.entries) and not self._matched and self.recorded is None


# --- the file ---------------------------------------------------------------------------------------------


def load(path: Path) -> Baseline:
    """Read a baseline file; a UsageError (one line for the user) when it cannot be used."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"{path}: no such baseline file (write one with --write-baseline)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"{path}: unreadable baseline: {exc}") from None
    try:
        return Baseline.from_document(document)
    except ValueError as exc:
        raise UsageError(f"{path}: {exc}") from None


def save(path: Path, baseline: Baseline) -> None:
    """Write a baseline atomically (temp file + rename): a failed run never leaves half a file."""
    text = json.dumps(baseline.to_document(), indent=2, ensure_ascii=False) + "\n"
    directory = path.parent if str(path.parent) else Path(".")
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def scenario_key(name: str, base: Path | None = None) -> str:
    """How a capture or probe scenario is named in a baseline.

    A probe scenario by its name. A capture saved by ``sse-check probe --save``
    (an ``X.meta.json`` naming its scenario) by that scenario's name too, so a
    baseline written by ``probe`` also covers ``lint`` of the saved streams.
    Any other capture by its path relative to ``base`` (the baseline file's
    directory; the working directory when None), with ``/``: so the same
    capture has the same name whether the run starts in the repository's root,
    a sub-directory, or on another machine.
    """
    if name in ("-", "<stdin>"):
        return "<stdin>"
    path = Path(name)
    probed = _probed_scenario(path)
    if probed is not None:
        return probed
    if base is None and not path.is_absolute():
        return path.as_posix()
    root = (base or Path.cwd()).resolve()
    try:
        return Path(os.path.relpath(path.resolve(), root)).as_posix()
    except ValueError:  # another drive (Windows): no relative path exists
        return path.resolve().as_posix()


def _probed_scenario(capture: Path) -> str | None:
    """The scenario named by a probe's ``X.meta.json`` next to ``X.sse``, if there is one."""
    if capture.suffix != ".sse":
        return None
    meta = capture.with_name(capture.name[: -len(".sse")] + ".meta.json")
    try:
        document = json.loads(meta.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if isinstance(document, dict) and "meta_version" in document and isinstance(document.get("scenario"), str):
        return document["scenario"]
    return None
