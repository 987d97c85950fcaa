"""OpenAI Chat Completions streamed as Server-Sent Events (``POST /v1/chat/completions``, ``stream: true``).

``DIALECT`` is what the engine, the reports and the client matrix know of it (checker/dialects/base.py). A
chunk names itself by its ``object`` (it has no ``type``), the stream ends with ``data: [DONE]``, and no
``event:`` lines are sent. The machine, the rules (checker/rules/chat.py, family CHT) and the client effects
are imported when first used. An ``{"error": …}`` object mid-stream is the machine's (CHT024): it ends the
completion, so the end-of-stream checks (a choice never finished) are not reported after it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from checker.dialects.base import ClientEffects, Dialect, Machine, NonStreamed, Piece, lazy
from checker.dialects.chat import vocabulary
from checker.findings import Finding, Position
from checker.request_checks import RequestShape


def make_machine(**options: Any) -> Machine:
    from checker.dialects.chat.machine import ChatMachine

    return ChatMachine(**options)


def event_type(obj: dict[str, Any]) -> str | None:
    """A chunk's ``object``; a chunk without one is still a chunk (the machine's schema check says so)."""
    return vocabulary.event_type(obj) or vocabulary.CHUNK_OBJECT


def schema_findings(violations: Sequence[Any], etype: str, pos: Position) -> list[Finding]:
    """A chunk's schema violations (the engine validates it by the schema its ``object`` names) as CHT002."""
    from checker.dialects.chat.schema_findings import chunk_schema_findings

    return chunk_schema_findings(violations, pos)


def pieces(obj: dict[str, Any]) -> list[Piece]:
    """A chunk's pieces, choice by choice (checker/dialects/chat/pieces.py)."""
    from checker.dialects.chat.pieces import pieces as chunk_pieces

    return chunk_pieces(obj)


def effects() -> ClientEffects:
    from checker.dialects.chat.effects import effects as chat_effects

    return chat_effects()


def nonstream() -> NonStreamed:
    from checker.dialects.chat.nonstream import NONSTREAMED

    return NONSTREAMED


DIALECT = Dialect(
    name=vocabulary.NAME,
    title=vocabulary.TITLE,
    endpoints=vocabulary.ENDPOINTS,
    recognise=vocabulary.recognise,
    make_machine=make_machine,
    event_type=event_type,
    event_names=False,
    type_key="object",
    done_sentinel="required",
    schema_set=vocabulary.SCHEMA_SET,
    schema_findings=schema_findings,
    rule_modules=("checker.rules.chat",),
    effects=effects,
    lane=vocabulary.lane,
    requests=RequestShape(vocabulary.NAME, frozenset({"model", "messages", "stream"})),
    nonstream=nonstream,
    pieces=pieces,
    stream_lane="completion",
    units_overlap=True,
    requested_format=lazy("checker.dialects.chat.structured", "requested_format"),
    answer_texts=lazy("checker.dialects.chat.structured", "answer_texts"),
)
