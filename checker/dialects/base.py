"""The dialect seam: what one wire format brings to the one engine.

The engine (``checker.engine.StreamLinter``) owns everything that is the same for every streamed API: the SSE
decoder, JSON parsing and its hazards, the profile and ``--select``/``--ignore``, collapsing, the limits. A
:class:`Dialect` brings the rest for one API: how its streams are recognised, its event vocabulary, its
:class:`Machine` (the per-stream state and the rules it raises), its schema set and how schema violations become
findings, the clients it predicts (:class:`ClientEffects`) and the report lane of an event.

A dialect lives in one package under ``checker/dialects/`` and is registered in ``checker/dialects/__init__.py``
(one line). Nothing here imports a dialect, the engine, or anything that does I/O.
"""

from __future__ import annotations

import enum
import importlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypedDict, cast

from checker.findings import Finding, Position
from checker.request_checks import RequestShape
from checker.structured_output import Answer, RequestedFormat

DoneSentinel = Literal["required", "forbidden", "ignored"]


# --- what a machine tells the engine at the end of a stream ----------------------------------------------


@dataclass(frozen=True, slots=True)
class ItemSummary:
    """One unit of a stream's answer as its machine tracked it: a Responses output item, a chat choice, an
    Anthropic content block. The client matrix and the report read these, never the machine's own state."""

    id: str | None
    type: str | None
    # Its position in the answer (Responses ``output_index``, a choice's ``index``, a content block's ``index``).
    output_index: int | None
    done: bool
    # The index of the event that announced it (``output_item.added``); None: it was never announced.
    added_at: int | None
    # The types of its content parts as streamed (Responses: ``output_text``, ``refusal``); () where the dialect
    # does not track them.
    parts: tuple[str, ...] = ()
    # Who runs the call the item is (a Responses tool_search_call's ``execution``: "client" or "server"); None
    # where the item does not say.
    execution: str | None = None


@dataclass(frozen=True, slots=True)
class StreamSummary:
    """What a machine knows about its stream once it has seen it: read by the engine into ``LintResult``."""

    # The first terminal event's type, and every terminal event's type in stream order (what the clients'
    # final calls see; a second terminal is a finding of its own).
    terminal: str | None = None
    terminals: tuple[str, ...] = ()
    response_id: str | None = None
    # The answer was cut by the request's token limit (profiles' stream-level known deviations use it).
    truncated: bool = False
    items: tuple[ItemSummary, ...] = ()
    # What each item accumulated, for the reports' text view; None unless the machine kept texts.
    texts: list[dict[str, Any]] | None = None
    # The answer's own word for why it ended, where the dialect has one per answer (Anthropic's stop_reason).
    stop_reason: str | None = None
    # The status the first terminal's answer object says (Responses' response.status), where the dialect has one.
    terminal_status: str | None = None


@dataclass(frozen=True, slots=True)
class Unit:
    """The unit of the answer an event belongs to, as ``sse-check diff`` lays lanes out: its id and position
    when the event names them, its type when the event carries the unit itself, and whether the event opens it."""

    id: str | None
    index: int | None
    type: str | None = None
    carries: bool = False  # the event carries the unit's object (Responses' ``item``)
    opens: bool = False  # the event announces the unit (``output_item.added``)
    # The lane's name when the dialect names it by position ("choice 0"): no type-and-rank naming then.
    name: str | None = None


@dataclass(frozen=True, slots=True)
class Piece:
    """One thing an event says about one unit of the answer, as ``sse-check diff`` and the timelines read it.
    A chat chunk says several (a choice's role, its content, a tool call's arguments, its finish), an Anthropic
    delta one; the symbol names it abstracted from its text ("content", "finish_reason stop", "text_delta")."""

    unit: Unit | None  # None: the stream itself (its lifecycle lane)
    symbol: str
    # Its mark kind ("added", "done", "delta", "lifecycle", "terminal", "error", "keepalive", "other"): a run of
    # "delta" or "keepalive" pieces is one step of a lane's grammar, and the others are its landmarks.
    kind: str


class Machine(Protocol):
    """One stream's state. The engine feeds it parsed event objects (a JSON object per SSE event, after the
    framing, the JSON hazards and the schema check) with their positions, in order; it never does I/O and
    never raises for a protocol problem: a problem is a finding."""

    @property
    def terminated(self) -> bool:
        """A terminal event was seen: the engine skips the schema check of later events (they are findings
        of their own)."""
        ...

    def handle(self, event: dict[str, Any], pos: Position) -> list[Finding]:
        """One event object whose type (``Dialect.event_type``) is a string."""
        ...

    def try_fast(self, etype: str, event: dict[str, Any]) -> bool:
        """The hot path: take a schema-valid event that needs no finding and return True, or change nothing
        and return False (then ``handle`` gets it). Always returning False is correct, only slower."""
        ...

    def finish(self, end: Position) -> list[Finding]:
        """The end of the stream (not called when the reader, not the server, stopped it)."""
        ...

    def summary(self) -> StreamSummary:
        """What the stream was: its terminal(s), id, items (and their texts when kept)."""
        ...


class SchemaViolationLike(Protocol):
    keyword: str
    pointer: str
    message: str
    missing: str | None


class SchemaSet(Protocol):
    """What the engine needs of a dialect's schema set (``checker.schemas.SchemaSet`` is one)."""

    name: str

    def known_event_types(self) -> frozenset[str]: ...

    def validate_event(self, event: dict[str, Any]) -> list[Any]: ...


# --- the details of a finding, as matrices and profiles read them ----------------------------------------


class FindingDetails(TypedDict, total=False):
    """The keys of ``Finding.details`` that the client matrices' conditions and the profiles' known deviations
    read: the typed contract between the rules that write them and those readers (a finding may carry more
    keys; tests/test_dialects.py holds every finding of the corpus to these types)."""

    # Schema findings (every dialect's schema_findings writes these four).
    type: str | None  # the event type
    keyword: str | None  # the failing JSON Schema keyword; None: a check beyond the schema (usage arithmetic)
    pointer: str  # where in the event (a JSON pointer)
    missing: list[str] | str  # the missing properties (a list for schema findings)
    value_type: str  # the JSON type of the offending value ("null", "string"; checker.schema_errors.value_facts)
    # Indexes: the one the event gave and the one expected, the output index, the item (index or id).
    got: int
    expected: int | str
    index: int
    item: int | str
    # Framing.
    first_field: str  # the field a BOM came before (SSE001)
    json_complete: bool  # an unterminated event's data is complete JSON (SSE004)
    where: str  # where a NUL was (SSE019)
    number: str  # a number beyond a double's exact range (SSE025)
    # Items and identities.
    id: str
    field: str  # the identity field that changed
    other: str | None  # the item it moved onto, if any
    routed_call: bool  # openai-node routes the call by call_id
    unlisted: list[str]  # items the terminal event's output left out
    name: str
    kind: str
    item_type: str
    status: str | int | None
    done_type: str  # the done event a text part lacks
    what: str  # what an HTTP finding is about
    nested: bool  # an error event's error is nested in an `error` object (LIF013)
    # Anthropic Messages.
    event: str  # the SSE event name that disagrees with the type (SSE008)
    started: int  # the content blocks started so far: the clients' snapshot holds that many (ANT007, ANT010)
    detail: str  # what is wrong with usage (ANT006)


def details(finding: Finding) -> FindingDetails:
    """A finding's details read through the contract (mypy checks the keys and their types at the reader)."""
    return cast(FindingDetails, finding.details)


# --- what a dialect predicts of its clients ---------------------------------------------------------------


class Verdict(enum.IntEnum):
    """Ordered: the worst verdict of a client's findings is its cell."""

    OK = 0
    DEGRADED = 1
    BREAKS = 2

    def __str__(self) -> str:
        return {0: "ok", 1: "degraded", 2: "breaks"}[self.value]

    @classmethod
    def parse(cls, text: str) -> "Verdict":
        try:
            return {"ok": cls.OK, "degraded": cls.DEGRADED, "breaks": cls.BREAKS}[text]
        except KeyError:
            raise ValueError(f"unknown verdict {text!r} (use ok, degraded or breaks)") from None


class Linted(Protocol):
    """The part of a finished lint (``checker.engine.LintResult``) that effect conditions may read."""

    @property
    def findings(self) -> list[Finding]: ...

    @property
    def items(self) -> list[ItemSummary]: ...

    @property
    def terminal(self) -> str | None: ...

    @property
    def terminals(self) -> tuple[str, ...]: ...

    @property
    def stop_reason(self) -> str | None: ...

    @property
    def response_id(self) -> str | None: ...

    @property
    def events(self) -> int: ...


Condition = Callable[[Finding, Linted], bool]


def nothing_streamed(f: Finding, r: Linted) -> bool:
    """No event of the dialect reached its machine: no item, and no id from a first event (a stream of nothing
    but an undispatched `error:` line and [DONE])."""
    return r.response_id is None and not r.items


@dataclass(frozen=True, slots=True)
class Effect:
    """What one finding does to one client; ``when`` narrows it to the case where it holds."""

    verdict: Verdict
    # What the user sees; ``{field}`` is filled from the finding's details. The
    # client's own error text is written as ``ExceptionType: message``.
    symptom: str
    when: Condition | None = None


_INDEX_STEP = re.compile(r"/\d+(?=/|$)")


def field_path(finding: Finding) -> str:
    """A schema finding's pointer with every array index as ``N`` (``/choices/0/delta`` -> ``/choices/N/delta``):
    the field a client's code reads, whichever element it is."""
    return _INDEX_STEP.sub("/N", str(details(finding).get("pointer", "")))


def on_field(events: tuple[str, ...], paths: tuple[str, ...], *, keywords: tuple[str, ...] = ("type",),
             missing: tuple[str, ...] = ()) -> Condition:
    """A schema finding on a field a client dereferences: an event of one of ``events`` (empty: any), at one of
    ``paths`` (``field_path``), failing one of ``keywords``; for ``required`` also when one of ``missing`` is
    among the missing properties. The client code that reads the field is what an effect built on it cites."""

    def holds(f: Finding, r: Linted) -> bool:
        facts = details(f)
        if events and (facts.get("type") or f.position.event_type) not in events:
            return False
        if field_path(f) not in paths:
            return False
        keyword = facts.get("keyword")
        if keyword == "required" and missing:
            gone = facts.get("missing") or []
            return any(name in gone for name in missing)
        return keyword in keywords

    return holds


@dataclass(frozen=True, slots=True)
class EndEffect:
    """What a client's final call does at the end of a stream for which ``when`` holds."""

    verdict: Verdict
    symptom: str  # ``{terminal}``: the terminal event that is not the dialect's normal end
    when: Callable[[Linted], bool]
    source: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientEffects:
    """A dialect's client matrix: its clients (the matrix's columns, in order) and, per rule code and client,
    the effects tried in order. A rule without a row falls back to ``Rule.clients`` (each named client breaks)."""

    clients: tuple[str, ...]
    by_rule: Mapping[str, Mapping[str, tuple[Effect, ...]]]
    # What a client's user-facing call does once the stream is read through (applied after every finding).
    at_end: Mapping[str, tuple[EndEffect, ...]] = field(default_factory=dict)
    # The terminal event of a normal end (the ``{terminal}`` of an end effect is the first other one).
    normal_end: str = ""
    # Within one event, the order in which the clients check it, by rule family prefix.
    check_order: tuple[str, ...] = ()
    # The clients a real run stands behind on every bundled capture (the oracle tests): a finding that breaks or
    # degrades one of them is an error (``touched``).
    proven: tuple[str, ...] = ()
    # Rules that describe a conforming stream a client refuses by design (a structured answer cut by the token
    # limit): their breaks stay the rule's severity.
    by_design: frozenset[str] = frozenset()
    # Framing rules that flag legal SSE (multi-line data) for the sake of clients of another dialect: where no
    # client of this matrix is touched, the finding is info (a note), not a warning.
    legal: frozenset[str] = frozenset()


# --- a non-streamed answer ---------------------------------------------------------------------------------


Digest = dict[str, Any]


def id_prefix(value: Any) -> str | None:
    """An id's conventional prefix as parity compares it (``rs_``, ``call_``, ``toolu_``); "" for an id without
    one, None for no id."""
    if not isinstance(value, str):
        return None
    head, sep, _ = value.partition("_")
    return head + sep if sep else ""


@dataclass(frozen=True, slots=True, kw_only=True)
class NonStreamed:
    """What a dialect's ``stream: false`` answer is, how it is judged, and how it is compared with the same
    request's stream (``checker.nonstream_checks`` runs these; each is pure: decoded JSON in, findings out).

    Parity compares *digests*: one per unit of the answer (an output item, a choice's reasoning, text and calls,
    a content block) with its ``type``, its ids' prefixes (keys ending in ``_prefix``) and its ``text`` (a
    call's name and arguments), in answer order. The probe records the stream's digests in the meta's
    ``reference`` (:attr:`stream_final`) and compares the non-streamed answer's (:attr:`digest`) with them.
    """

    what: str  # the answer as HTP018 names it: "Response object", "chat completion", "Message object"
    # Why a JSON object is not that answer (HTP018), in a few words; None when it is one.
    problem: Callable[[dict[str, Any]], str | None]
    # The answer's own consistency (finish or stop reason against its content, ids, arguments), given the
    # recorded request (``{}`` when none): reported before parity.
    consistency: Callable[[dict[str, Any], Mapping[str, Any], Position], list[Finding]]
    # The answer against the dialect's schema set (the profile's set for the dialect): reported after parity.
    schema: Callable[[dict[str, Any], Any, Position], list[Finding]]
    digest: Callable[[dict[str, Any]], list[Digest]]
    # (its terminal as the meta records it, the digests) of a stream's final answer, from the stream's event
    # objects in order; None when the stream never finished one.
    stream_final: Callable[[Sequence[dict[str, Any]]], tuple[str, list[Digest]] | None]
    # A recorded terminal -> (the terminal as HTP016's details hold it, the streamed answer as it names it).
    streamed: Callable[[str], tuple[str, str]]
    # Digest types whose ``text`` is a call's name and arguments (HTP017 says "name or arguments").
    call_types: frozenset[str] = frozenset()
    # Structured output: the texts of the answer that the request's format applies to (as the dialect's
    # ``answer_texts`` reads a stream's; None or empty: nothing to judge), judged like a stream's (FMT).
    answer_texts: Callable[[dict[str, Any]], list[Answer] | None] | None = None


def lazy(module: str, name: str) -> Callable[..., Any]:
    """``module.name``, imported at its first call: a dialect's hook whose module a lint that never needs it
    does not import (start-up)."""

    def call(*args: Any) -> Any:
        return getattr(importlib.import_module(module), name)(*args)

    call.__name__ = call.__qualname__ = name
    return call


# --- the dialect --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Dialect:
    """One streamed API, as the engine, the reports and the client matrix see it."""

    name: str  # the ``--dialect`` value: "responses", "chat", "messages"
    title: str  # shown in reports: "OpenAI Responses"
    # URL path suffixes that select it (``/v1/responses`` ends with ``/responses``).
    endpoints: tuple[str, ...]
    # Evidence (one short phrase) when a stream's first event object is this dialect's, else None.
    recognise: Callable[[dict[str, Any]], str | None]
    # A fresh machine for one stream: make_machine(request=..., known_types=..., keep_texts=...).
    make_machine: Callable[..., Machine]
    # The type an event object names (Responses' and Anthropic's ``type``; a chat chunk's ``object``).
    event_type: Callable[[dict[str, Any]], str | None]
    # SSE ``event:`` lines are expected and must equal the event type (Responses, Anthropic Messages).
    event_names: bool
    # What ``data: [DONE]`` is in this dialect unless a profile says otherwise.
    done_sentinel: DoneSentinel
    schema_set: str  # its schema set's name (``checker.schemas``); a profile may name another
    # Schema violations of one event as findings (the dialect's field-to-rule map).
    schema_findings: Callable[[Sequence[Any], str, Position], list[Finding]]
    # Its rule families' modules (``checker.rules.*``), for the rule registry and the docs.
    rule_modules: tuple[str, ...]
    # Its client matrix, loaded on first use (the matrix is built only with --clients).
    effects: Callable[[], ClientEffects]
    # The report lane of an event object: an item's id, or "#<index>" for a unit named by its position (an
    # output item without id, a chat choice, a content block: the timelines label it with the unit's type from
    # the summary's items), or "response" for the stream's own events (labelled ``stream_lane``).
    lane: Callable[[dict[str, Any]], str]
    # The member that names an event's type, read directly by the engine's hot path (must agree with
    # ``event_type`` for an object whose member is a string).
    type_key: str = "type"
    # How a finding names the API (SCH010: "…, not the Responses API"); "" for "the <title> API".
    api_name: str = ""
    # Its terminal event types (the report draws them as the end; the proxy knows the answer is complete).
    terminal_types: frozenset[str] = frozenset()
    # How the timelines draw its events: event type -> mark kind ("added", "done", "lifecycle", "terminal",
    # "part"; other types are told by their suffix: ".delta", ".done"), and the letter a lifecycle or
    # terminal event is drawn as in the terminal timeline.
    marks: Mapping[str, str] = field(default_factory=dict)
    letters: Mapping[str, str] = field(default_factory=dict)
    # For ``sse-check diff``: the prefix its event types share (shown without it), the unit an event belongs
    # to (None: the response itself), the unit types' lane words ("function call") and their nouns in prose
    # ("reasoning item"), and the unit types of the final answer a terminal event carries.
    event_prefix: str = ""
    unit: Callable[[dict[str, Any]], Unit | None] | None = None
    unit_words: Mapping[str, str] = field(default_factory=dict)
    unit_nouns: Mapping[str, str] = field(default_factory=dict)
    final_output: Callable[[dict[str, Any]], tuple[str, ...] | None] | None = None
    # What an event says, piece by piece (diff's symbols, the timelines' mark kinds); None: one piece per event,
    # its type (without ``event_prefix``) in the lane of ``unit``, its kind from ``marks`` or its name.
    pieces: Callable[[dict[str, Any]], list[Piece]] | None = None
    # The timelines' name for the lane of the stream's own events, and whether its units may stream side by
    # side (chat's choices): then a unit finishing after another started is not drawn as late.
    stream_lane: str = "response"
    units_overlap: bool = False
    # Findings on an event object before its type is known (an ``error`` member where the dialect forbids one,
    # no type at all); the second value is False when the event goes no further (it has no usable type).
    screen: Callable[[dict[str, Any], Position], tuple[list[Finding], bool]] | None = None
    # Its requests as the HTTP checks read them (the request schema's name, the fields every request carries,
    # the field of typed items); None: its requests are not judged.
    requests: RequestShape | None = None
    # Its ``stream: false`` answer, loaded on first use (a stream's lint never needs it); None: not judged.
    nonstream: Callable[[], NonStreamed] | None = None
    # Structured output (checker.structured_output): the JSON format a request asks the answer's text to have
    # (None: it asks for none), and the texts of a stream's answer that format applies to, read from a summary
    # made with kept texts (None or empty: nothing to judge, e.g. the answer was cut or did not complete).
    requested_format: Callable[[Mapping[str, Any] | None], RequestedFormat | None] | None = None
    answer_texts: Callable[[StreamSummary], list[Answer] | None] | None = None

    def __repr__(self) -> str:
        return f"<Dialect {self.name!r}>"

    def clients_for(self, code: str) -> tuple[str, ...]:
        """The clients of this dialect's matrix that rule ``code`` may break or degrade: those its row names
        (with whatever condition); none when the matrix has no row for it. For the findings of a family that
        every dialect shares, whose ``Rule.clients`` name the Responses clients."""
        effects = self.effects()
        row = effects.by_rule.get(code, {})
        return tuple(client for client in effects.clients if any(e.verdict > Verdict.OK for e in row.get(client, ())))

    @property
    def api(self) -> str:
        """The API as findings name it: "the Responses API"."""
        return self.api_name or f"the {self.title} API"


def rule_clients(code: str) -> tuple[str, ...]:
    """The clients rule ``code`` names (its Rule.clients), from the families loaded so far; the whole registry
    only for a code of a family no module has loaded (a lint loads the families its dialect raises, no more)."""
    from checker.rules import registry

    found = registry.RULES.get(code)
    if found is None:
        from checker.rules import get

        found = get(code)
    return found.clients


def add_column(by_rule: dict[str, dict[str, tuple[Effect, ...]]], rows: Mapping[str, Mapping[str, tuple[Effect, ...]]],
               named: Callable[[str], tuple[str, ...]]) -> None:
    """Merge one client's rows (a table of its own module) into a dialect's ``by_rule``. A rule that had no row
    keeps, for the other clients it names (``named(code)``: its Rule.clients), what the matrix gave them without
    one: they break, with the finding's message. A new column must not change the others."""
    for code, row in rows.items():
        if code not in by_rule:
            by_rule[code] = {client: (Effect(Verdict.BREAKS, "{message}"),) for client in named(code)
                             if client not in row}
        by_rule[code].update(row)
