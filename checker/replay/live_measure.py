"""The live replay's measurement and its analysis (pure): what each pair's two answers reported, and what
that says about the server's prefix cache (the rows of the cache table and the RPL1xx findings).

The measurement (:class:`Measurement`, also the JSON fixtures of ``captures/replay/live``) holds, per
pair, turn 1's and turn 2's :class:`Counts`; :func:`analyse` turns it into rows (reuse against the
boundaries *previous prompt*, *+ reasoning*, *+ whole output*) and findings. The pairs and their requests
are :mod:`checker.replay.live`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from checker.findings import Finding, Position
from checker.live.conversation import CacheRow
from checker.rules import replay as rules

FAMILIES: tuple[str, ...] = ("continue", "new_user")
VARIANTS: tuple[str, ...] = ("exact", "dropped", "altered")
PAIRS: tuple[tuple[str, str], ...] = tuple((f, v) for f in FAMILIES for v in VARIANTS)
# Where a reuse count "reaches" a boundary: a template writes the end of a prompt a little differently
# once the reply is in the history (Qwen3 opens its generation prompt with "<think>\n", 2 tokens, which
# is rendered again only when the reasoning is), and the end of an output (an end-of-turn token).
SLACK_TOKENS = 8
_START = Position(line=1, byte=0)


@dataclass(frozen=True, slots=True, kw_only=True)
class Counts:
    """What one answer reported: HTTP status, token usage, and (turn 1) what its output held."""

    status: int | None = None
    error: str | None = None  # an HTTP error's message, or why the exchange gave no answer
    skipped: str | None = None  # why this request was not sent (or not answered by a replay server)
    # usage input_tokens / prompt_tokens (else cache_n + prompt_n); Anthropic's input_tokens + cache reads + writes
    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_tokens: int | None = None  # usage.input_tokens_details / prompt_tokens_details .cached_tokens,
    # Anthropic's cache_read_input_tokens
    cache_written: int | None = None  # Anthropic's cache_creation_input_tokens (part of input_tokens here)
    cache_n: int | None = None  # llama.cpp's timings.cache_n
    prompt_n: int | None = None  # llama.cpp's timings.prompt_n
    reasoning_tokens: int | None = None  # turn 1: the reasoning's length in tokens
    reasoning_source: str | None = None  # "usage" (reasoning_tokens reported) or "deltas" (one per delta)
    after_reasoning: tuple[str, ...] = ()  # turn 1: the kinds of the output items after the reasoning

    @property
    def ok(self) -> bool:
        return self.skipped is None and self.status is not None and 200 <= self.status < 300

    @property
    def rejected(self) -> bool:
        return self.skipped is None and self.status is not None and self.status >= 400

    @property
    def reused(self) -> int | None:
        """The prompt tokens served from the cache: ``cached_tokens``, else ``cache_n``."""
        return self.cached_tokens if self.cached_tokens is not None else self.cache_n

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None or value == ():
                continue
            out[f.name] = list(value) if isinstance(value, tuple) else value
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Counts:
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown keys {sorted(unknown)} (known: {sorted(known)})")
        values = dict(data)
        if "after_reasoning" in values:
            values["after_reasoning"] = tuple(values["after_reasoning"])
        return cls(**values)


@dataclass(frozen=True, slots=True, kw_only=True)
class Pair:
    family: str
    variant: str
    turn1: Counts
    turn2: Counts


@dataclass(frozen=True, slots=True, kw_only=True)
class Measurement:
    dialect: str
    pairs: tuple[Pair, ...]
    unmeasured: str | None = None  # why no turn 2 was sent at all (turn 1 failed, had no reasoning)

    def pair(self, family: str, variant: str) -> Pair | None:
        return next((p for p in self.pairs if p.family == family and p.variant == variant), None)

    def as_dict(self) -> dict[str, Any]:
        return {"dialect": self.dialect, "unmeasured": self.unmeasured,
                "pairs": [{"family": p.family, "variant": p.variant, "turn1": p.turn1.as_dict(),
                           "turn2": p.turn2.as_dict()} for p in self.pairs]}


def measurement_from_dict(data: Mapping[str, Any]) -> Measurement:
    """A measurement from JSON (a fixture in ``captures/replay/live``, or a report's ``measurement``).

    A top-level ``turn1`` is every pair's turn 1 unless the pair has its own."""
    default = data.get("turn1")
    pairs = []
    for n, entry in enumerate(data.get("pairs") or []):
        try:
            family, variant = entry["family"], entry["variant"]
            if (family, variant) not in PAIRS:
                raise ValueError(f"unknown pair {family}/{variant}")
            turn1 = entry.get("turn1", default)
            if not isinstance(turn1, Mapping):
                raise ValueError("no turn1")
            pairs.append(Pair(family=family, variant=variant, turn1=Counts.from_dict(turn1),
                              turn2=Counts.from_dict(entry.get("turn2") or {})))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"pairs[{n}]: {exc}") from None
    return Measurement(dialect=str(data.get("dialect") or "responses"), pairs=tuple(pairs),
                       unmeasured=data.get("unmeasured"))


# --- the analysis -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Boundaries:
    """Where turn 2's prompt could stop matching the cache: after the previous prompt, after the replayed
    reasoning (previous prompt + reasoning tokens), after the whole previous output."""

    previous_prompt: int
    reasoning_end: int | None
    output_end: int | None

    def as_dict(self) -> dict[str, Any]:
        return {"previous_prompt": self.previous_prompt, "reasoning_end": self.reasoning_end,
                "output_end": self.output_end}


def boundaries(turn1: Counts) -> Boundaries | None:
    prompt = turn1.input_tokens
    if prompt is None:
        return None
    reasoning = prompt + turn1.reasoning_tokens if turn1.reasoning_tokens is not None else None
    output = prompt + turn1.output_tokens if turn1.output_tokens is not None else None
    return Boundaries(prompt, reasoning, output)


def _after(turn1: Counts) -> str:
    kinds = set(turn1.after_reasoning)
    if kinds == {"function_call"}:
        return "the tool calls"
    if kinds == {"message"}:
        return "the message"
    return "the rest of the output"


@dataclass(frozen=True, slots=True)
class Stop:
    at: str  # none, prompt-partial, prompt, reasoning-partial, reasoning, output
    text: str


def where_stopped(reused: int, bounds: Boundaries, turn1: Counts) -> Stop:
    """Where the reuse of ``reused`` cached tokens stopped, against turn 1's boundaries."""
    prompt = bounds.previous_prompt
    if reused <= 0:
        return Stop("none", "nothing reused")
    if reused < prompt - SLACK_TOKENS:
        return Stop("prompt-partial", f"inside the previous prompt ({reused} of {prompt})")
    if reused <= prompt:
        return Stop("prompt", "at the end of the previous prompt")
    if bounds.output_end is not None and reused >= bounds.output_end - SLACK_TOKENS:
        return Stop("output", "after the whole previous output")
    if bounds.reasoning_end is not None and reused < bounds.reasoning_end:
        return Stop("reasoning-partial", f"inside the reasoning (≈{reused - prompt} of "
                                         f"{turn1.reasoning_tokens} reasoning tokens)")
    if bounds.reasoning_end is not None:
        return Stop("reasoning", f"after the reasoning, before {_after(turn1)}")
    return Stop("reasoning-partial", f"{reused - prompt} tokens into the previous output")


@dataclass(frozen=True, slots=True, kw_only=True)
class Row:
    """One pair as the report shows it."""

    family: str
    variant: str
    turn1: Counts
    turn2: Counts
    bounds: Boundaries | None
    stop: Stop | None
    reuse: float | None  # cached / previous prompt (history.CacheRow.reuse)

    def as_dict(self) -> dict[str, Any]:
        t2 = self.turn2
        return {
            "family": self.family, "variant": self.variant, "status": t2.status, "error": t2.error,
            "skipped": t2.skipped, "input_tokens": t2.input_tokens, "cached_tokens": t2.cached_tokens,
            "cache_written": t2.cache_written, "cache_n": t2.cache_n, "prompt_n": t2.prompt_n, "reused": t2.reused,
            "reuse_vs_previous_prompt": round(self.reuse, 4) if self.reuse is not None else None,
            "boundaries": self.bounds.as_dict() if self.bounds else None,
            "stopped": {"at": self.stop.at, "text": self.stop.text} if self.stop else None,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Analysis:
    rows: tuple[Row, ...]
    findings: tuple[Finding, ...]
    template: str | None  # new_user family: "keeps", "drops" or "unclear"; None when not measured
    unmeasured: str | None = None

    def row(self, family: str, variant: str) -> Row | None:
        return next((r for r in self.rows if r.family == family and r.variant == variant), None)


def _row(pair: Pair) -> Row:
    bounds = boundaries(pair.turn1)
    reused = pair.turn2.reused if pair.turn2.ok else None
    stop = where_stopped(reused, bounds, pair.turn1) if reused is not None and bounds is not None else None
    reuse = None
    if reused is not None and bounds is not None:
        reuse = CacheRow(number=0, conversation=pair.family, step=2, prompt=pair.turn2.input_tokens, cached=reused,
                         previous_prompt=bounds.previous_prompt, source="").reuse
    return Row(family=pair.family, variant=pair.variant, turn1=pair.turn1, turn2=pair.turn2, bounds=bounds,
               stop=stop, reuse=reuse)


def _shown(row: Row | None) -> str:
    if row is None or row.turn2.skipped:
        return "not sent"
    if not row.turn2.ok:
        return f"HTTP {row.turn2.status}" if row.turn2.status is not None else "no answer"
    return str(row.turn2.reused) if row.turn2.reused is not None else "not reported"


def _error_text(counts: Counts) -> str:
    return f" ({counts.error})" if counts.error else ""


def analyse(measurement: Measurement) -> Analysis:
    """The rows of the cache table and the RPL1xx findings of a measurement."""
    rows = tuple(_row(p) for p in measurement.pairs)
    by = {(r.family, r.variant): r for r in rows}
    found = _rejections(rows, by)
    unmeasured = _unmeasured(measurement, rows)
    if unmeasured is not None:
        found.append(rules.REPLAY_CACHE_UNMEASURED.finding(_START, reason=unmeasured))
        return Analysis(rows=rows, findings=tuple(found), template=None, unmeasured=unmeasured)
    found.extend(_continue_findings(by))
    template, keeps = _template(by)
    return Analysis(rows=rows, findings=tuple(found + keeps), template=template)


Rows = dict[tuple[str, str], Row]


def _reused(by: Rows, family: str, variant: str) -> int | None:
    row = by.get((family, variant))
    return row.turn2.reused if row is not None and row.turn2.ok else None


def _rejections(rows: Sequence[Row], by: Rows) -> list[Finding]:
    """RPL104 for a rejected exact replay (saying what its control got), RPL106 for a rejected control."""
    found: list[Finding] = []
    for row in rows:
        if not row.turn2.rejected:
            continue
        details = {"family": row.family, "variant": row.variant, "status": row.turn2.status,
                   "error": row.turn2.error}
        if row.variant != "exact":
            found.append(rules.REPLAY_CONTROL_REJECTED.finding(
                _START, details=details, family=row.family, variant=row.variant, status=row.turn2.status,
                error=_error_text(row.turn2)))
            continue
        control = by.get((row.family, "dropped"))
        if control is not None and control.turn2.ok:
            said = "; the same request without the reasoning was accepted"
        elif control is not None and control.turn2.rejected:
            said = "; without the reasoning it was rejected too: the server refuses the replayed history itself"
        else:
            said = ""
        found.append(rules.REPLAYED_REASONING_REJECTED.finding(
            _START, details=details, family=row.family, status=row.turn2.status,
            error=_error_text(row.turn2), control=said))
    return found


def _unmeasured(measurement: Measurement, rows: Sequence[Row]) -> str | None:
    """Why the cache could not be measured (nothing sent, no cached tokens reported), or None."""
    if measurement.unmeasured is not None:
        return measurement.unmeasured
    answered = [r for r in rows if r.turn2.ok]
    counted = [r for r in answered if r.turn2.reused is not None]
    if answered and not counted:
        return ("the server reported no cached tokens (neither usage cached_tokens or cache_read_input_tokens "
                "nor llama.cpp's timings.cache_n)")
    if counted and all(r.turn2.reused == 0 for r in counted):
        return ("the server reported 0 cached tokens on every request (no prefix cache, or prompts below "
                "its caching minimum: 1024 tokens at OpenAI, 1024 to 4096 at Anthropic by model)")
    return None


def _continue_findings(by: Rows) -> list[Finding]:
    """The continue family: RPL101 when the exact replay reuses no more than a control, else RPL102 where
    its reuse stopped short of the whole previous output."""
    exact = _reused(by, "continue", "exact")
    controls = [c for c in (_reused(by, "continue", "dropped"), _reused(by, "continue", "altered")) if c is not None]
    shown = {v: _shown(by.get(("continue", v))) for v in VARIANTS}
    exact_row = by.get(("continue", "exact"))
    if exact is not None and controls and exact <= max(controls):
        return [rules.REPLAYED_REASONING_CACHE_LOST.finding(
            _START, family="continue", exact=shown["exact"], dropped=shown["dropped"], altered=shown["altered"],
            details={"family": "continue", **{v: _reused(by, "continue", v) for v in VARIANTS}})]
    if exact is None or exact_row is None or exact_row.bounds is None or exact_row.stop is None \
            or exact_row.stop.at == "output":
        return []
    b = exact_row.bounds
    return [rules.REPLAY_REUSE_STOPPED.finding(
        _START, family="continue", where=exact_row.stop.text, cached=exact,
        input=exact_row.turn2.input_tokens if exact_row.turn2.input_tokens is not None else "?",
        previous=b.previous_prompt, reasoning_end=_num(b.reasoning_end), output_end=_num(b.output_end),
        details={"family": "continue", "variant": "exact", "stopped": exact_row.stop.at, "cached": exact,
                 "input_tokens": exact_row.turn2.input_tokens, **b.as_dict()})]


def _template(by: Rows) -> tuple[str | None, list[Finding]]:
    """The new_user family: whether the template keeps earlier reasoning (RPL103), drops it, or is unclear."""
    new = {v: _reused(by, "new_user", v) for v in VARIANTS}
    if new["exact"] is None or new["dropped"] is None:
        return None, []
    if new["exact"] > new["dropped"]:
        shown = {v: _shown(by.get(("new_user", v))) for v in VARIANTS}
        return "keeps", [rules.NEW_TURN_KEEPS_REASONING.finding(
            _START, exact=shown["exact"], dropped=shown["dropped"], altered=shown["altered"],
            details={"family": "new_user", **new})]
    if new["exact"] == new["dropped"] and new["altered"] in (None, new["exact"]):
        return "drops", []
    return "unclear", []


def _num(value: int | None) -> str:
    return str(value) if value is not None else "?"


TEMPLATE_TEXT = {
    "drops": "the template drops the earlier turn's reasoning at a new user message "
             "(equal reuse with exact, dropped and altered reasoning)",
    "keeps": "the template keeps the earlier turn's reasoning at a new user message (more reuse when it is sent)",
    "unclear": "the reuse differs between the variants without favouring the exact reasoning: "
               "the template's handling of earlier reasoning is unclear",
}
