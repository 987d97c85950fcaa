"""The machine's hot path: a well-placed delta into an open part, taken without the general path.

Most events of a stream are deltas (output_text, reasoning, arguments) into the part that is open. For those,
``try_fast`` applies exactly the state changes of the general path (checker/dialects/responses/machine.py
``ResponsesMachine.handle``), and only when that path would report nothing; anything unusual returns False and
takes the general path. tests/test_engine_paths.py holds the two paths to the same findings on the corpus.

``try_fast`` is ``ResponsesMachine.try_fast`` itself (the class binds this function as its method), so the
per-event call costs no extra indirection.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from checker.dialects.responses import hosted
from checker.dialects.runs import RunSpec
from checker.dialects.responses.scopes import DELTA_SCOPES, Scope
from checker.text import TextAccumulator

if TYPE_CHECKING:
    from checker.dialects.responses.machine import ResponsesMachine

# A delta run: (type, item_id, output_index, index field, its value, text) of the last delta the fast path
# took. The general path clears it; until then the same ids mean the same open part.
Run = tuple[str, str | None, int | None, str | None, int | None, TextAccumulator]


def fast_scopes(known_types: frozenset[str] | None) -> dict[str, Scope]:
    """The deltas the fast path may take: those the profile's description defines (an undefined one, such as
    OpenAI's reasoning_text.delta under Open Responses, is reported on the general path, every time)."""
    if known_types is None:
        return DELTA_SCOPES
    return {name: scope for name, scope in DELTA_SCOPES.items() if name in known_types}


def try_fast(self: ResponsesMachine, etype: str, event: dict[str, Any]) -> bool:
    """The hot path: a well-placed delta into an open part. True when fully handled.

    Applies exactly the state changes of the general path, and only when
    the general path would report nothing; anything unusual returns False
    and takes the general path.
    """
    run = self.run
    if run is not None and run[0] == etype:
        # The next delta of the same part: since the last one only fast-path events came, which change no
        # item, part or lifecycle, the same ids (of the same JSON types) still name the same open part.
        get = event.get
        st = self.state
        index, part_index = get("output_index"), get(run[3]) if run[3] is not None else None
        delta, seq = get("delta"), get("sequence_number")
        last = st.last_sequence
        if (
            get("item_id") == run[1]
            and (index is None or type(index) is int) and index == run[2]
            and (part_index is None or type(part_index) is int) and part_index == run[4]
            and type(delta) is str
            and (seq is None or (type(seq) is int and (last is None or seq > last)))
        ):
            run[5].append(delta)
            if seq is not None:
                st.last_sequence = seq
            st.events += 1
            return True
    scope = self.fast_scopes.get(etype)
    if scope is None:
        return False
    return _first_delta(self, etype, scope, event)


def _first_delta(self: ResponsesMachine, etype: str, scope: Scope, event: dict[str, Any]) -> bool:
    """A delta that does not continue the run: checked in full against the items, and starts a new run."""
    get = event.get
    st = self.state
    if st.lifecycle != "output":
        return False
    item_id = get("item_id")
    if type(item_id) is not str:
        return False
    item = self.by_id.get(item_id)
    if item is None or item.done or item.type != scope.item_type:
        return False
    index = get("output_index")
    if index is not None and (type(index) is not int or index < 0 or self.by_index.get(index) is not item):
        return False  # a negative index is a finding of its own (ITM014): the general path reports it
    delta = get("delta")
    if type(delta) is not str:
        return False
    seq = get("sequence_number")
    last = st.last_sequence
    if seq is not None and (type(seq) is not int or (last is not None and seq <= last)):
        return False
    target = scope.target
    if target == "args":
        if item.arguments_done:
            return False
        item.arguments.append(delta)
        self.run = (etype, item_id, index, None, None, item.arguments)
    else:
        parts = item.content if target == "content" else item.summary
        if not parts:
            return False
        part = parts[-1]
        field_name = "content_index" if target == "content" else "summary_index"
        part_index = get(field_name)
        if part.closed or part.text_done or (part_index is not None and part_index != part.index):
            return False
        if part.type is not None and part.type != scope.part_type:
            return False
        part.text.append(delta)
        if part_index is None or type(part_index) is int:
            self.run = (etype, item_id, index, field_name, part_index, part.text)
    if seq is not None:
        st.last_sequence = seq
    st.events += 1
    return True


def tool_input_run(etype: str, event: dict[str, Any], appended: TextAccumulator | None) -> Run | None:
    """The run a hosted-tool input delta the general path took may start: the next delta of the same input,
    with the same ids, changes nothing but this text, so the fast path may append it exactly as the general
    path would."""
    if appended is None or etype not in hosted.INPUT_DELTAS:
        return None
    item_id, index = event.get("item_id"), event.get("output_index")
    command = event.get("command_index") if etype == hosted.COMMAND_DELTA else None
    if (item_id is None or type(item_id) is str) and (index is None or type(index) is int) \
            and (command is None or type(command) is int):
        return (etype, item_id, index, "command_index" if command is not None else None, command, appended)
    return None


def run_spec(self: ResponsesMachine, event: dict[str, Any]) -> RunSpec | None:
    """The run ``event`` (just taken by ``try_fast``) continues or starts (checker/run_template.py): the next
    deltas that differ from it only in the text, the sequence number and the ``obfuscation`` nobody reads.
    While only ``take`` runs, ``self.run`` keeps the ids of ``event``, so ``try_fast`` would take each such
    delta as the next of its run when its sequence number (if any) is above the last, and ``take`` does what it
    would have done (the text appended in one piece: an accumulator's text, size and digest are the same)."""
    run = self.run
    if run is None or run[0] != event.get("type") or run[1] != event.get("item_id"):
        return None
    st, text = self.state, run[5]
    number = ("sequence_number",) if type(event.get("sequence_number")) is int else None

    def take(delta: str, count: int, seq: int | None) -> None:
        if seq is not None:
            st.last_sequence = seq
        text.append(delta)
        st.events += count

    return ("delta",), number, (("obfuscation",),), st.last_sequence if number is not None else None, take
