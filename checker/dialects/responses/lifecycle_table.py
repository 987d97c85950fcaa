"""The response's lifecycle: the table that is its grammar, and the state it moves.

``LIFECYCLE`` maps (state, kind of event) to (next state, rule broken on the way or None). An event that
arrives where the table has no row breaks a rule; tests/test_engine_paths.py checks the table is total.
States: start → created → [queued] → in_progress → output → terminal (docs/spec.md §2).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from checker.findings import Finding, Position
from checker.rules import lifecycle


# Kinds of event as the lifecycle sees them.
CREATED, QUEUED, IN_PROGRESS, ITEM, TERMINAL, OTHER = "created", "queued", "in_progress", "item", "terminal", "other"

# (state, kind) -> (next state, rule code broken on the way or None).
LIFECYCLE: dict[tuple[str, str], tuple[str, str | None]] = {
    ("start", CREATED): ("created", None),
    ("created", QUEUED): ("queued", None),
    ("created", IN_PROGRESS): ("in_progress", None),
    ("queued", IN_PROGRESS): ("in_progress", None),
    ("in_progress", ITEM): ("output", None),
    ("output", ITEM): ("output", None),
    ("created", ITEM): ("output", "LIF003"),
    ("queued", ITEM): ("output", "LIF003"),
    ("in_progress", IN_PROGRESS): ("in_progress", "LIF005"),
    ("in_progress", QUEUED): ("in_progress", "LIF004"),
    ("output", IN_PROGRESS): ("output", "LIF004"),
    ("output", QUEUED): ("output", "LIF004"),
    ("queued", QUEUED): ("queued", "LIF004"),
    ("created", TERMINAL): ("terminal", None),
    ("queued", TERMINAL): ("terminal", None),
    ("in_progress", TERMINAL): ("terminal", None),
    ("output", TERMINAL): ("terminal", None),
}
# Anything but response.created first breaks LIF001 (reported once; the
# stream is then read on as if it had started); CREATED again breaks LIF002.
for _state in ("created", "queued", "in_progress", "output"):
    LIFECYCLE[(_state, CREATED)] = (_state, "LIF002")
    LIFECYCLE[(_state, OTHER)] = (_state, None)
LIFECYCLE.update(
    {
        ("start", QUEUED): ("queued", "LIF001"),
        ("start", IN_PROGRESS): ("in_progress", "LIF001"),
        ("start", ITEM): ("output", "LIF001"),
        ("start", TERMINAL): ("terminal", "LIF001"),
        ("start", OTHER): ("start", "LIF001"),
    }
)

LIFECYCLE_KIND = {
    "response.created": CREATED,
    "response.queued": QUEUED,
    "response.in_progress": IN_PROGRESS,
    "response.completed": TERMINAL,
    "response.incomplete": TERMINAL,
    "response.failed": TERMINAL,
}


@dataclass(slots=True)
class MachineState:
    """The response's lifecycle as the machine has seen it: its state, id and where it moved."""

    lifecycle: str = "start"
    response_id: str | None = None
    first_created: int | None = None
    first_in_progress: int | None = None
    terminal_type: str | None = None
    terminal_index: int | None = None
    # Every terminal event's type in stream order (a second one is LIF007): which the clients saw.
    terminals: list[str] = field(default_factory=list)
    last_sequence: int | None = None
    events: int = 0
    truncated: bool = False
    reported_first: bool = False
    # The first terminal's response.status: what openai-node's parseResponse reads to decide whether the text
    # is a whole answer (a response.completed may carry status incomplete: vLLM's max_output_tokens cut).
    terminal_status: str | None = None


def check_sequence(st: MachineState, event: dict[str, Any], pos: Position, out: list[Finding]) -> None:
    """LIF016: sequence numbers increase (their presence and type are the schema's findings)."""
    seq = event.get("sequence_number")
    if type(seq) is not int:
        return
    last = st.last_sequence
    if last is not None and seq <= last:
        out.append(lifecycle.SEQUENCE_ORDER.finding(pos, got=seq, previous=last))
    st.last_sequence = seq if last is None else max(seq, last)


def advance(st: MachineState, etype: str, kind: str, pos: Position, out: list[Finding]) -> None:
    """Moves the lifecycle by one event of ``kind``, reporting the rule the table says it breaks."""
    next_state, broken = LIFECYCLE.get((st.lifecycle, kind), (st.lifecycle, None))
    if broken == "LIF001":
        if not st.reported_first:
            st.reported_first = True
            out.append(lifecycle.FIRST_NOT_CREATED.finding(pos, type=etype))
    elif broken == "LIF002":
        out.append(lifecycle.DUPLICATE_CREATED.finding(pos, first=st.first_created))
    elif broken == "LIF003":
        out.append(lifecycle.IN_PROGRESS_MISSING.finding(pos, type=etype))
    elif broken == "LIF004":
        after = "output items started" if st.lifecycle == "output" else f"response.{st.lifecycle}"
        out.append(lifecycle.LIFECYCLE_ORDER.finding(pos, type=etype, after=after))
    elif broken == "LIF005":
        out.append(lifecycle.REPEATED_IN_PROGRESS.finding(pos, first=st.first_in_progress))
    if kind == CREATED and st.first_created is None:
        st.first_created = pos.event_index
    if kind == IN_PROGRESS and st.first_in_progress is None:
        st.first_in_progress = pos.event_index
    st.lifecycle = next_state
