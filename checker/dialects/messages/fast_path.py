"""The run of Anthropic deltas a fast-path delta starts (checker/dialects/runs.py, checker/run_template.py).

``MessagesMachine.try_fast`` takes a ``content_block_delta`` whose delta type and index are those of the last
delta (``MessagesMachine._run``); ``run_spec`` (bound as ``MessagesMachine.run_spec``) offers the engine the
next such deltas, which differ from it only in their text. tests/test_run_template.py compares lints with and
without the templates; tests/test_engine_paths.py the hot path with the full path on the corpus.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from checker.dialects.messages import vocabulary as v
from checker.dialects.runs import RunSpec

if TYPE_CHECKING:
    from checker.dialects.messages.machine import MessagesMachine

# The delta types try_fast takes, and the member that carries each one's text.
_RUN_FIELDS = {"text_delta": "text", "thinking_delta": "thinking", "input_json_delta": "partial_json"}


def run_spec(self: MessagesMachine, event: dict[str, Any]) -> RunSpec | None:
    """The run ``event`` (just taken by ``try_fast``) continues: the next deltas that differ from it only in the
    text. ``try_fast`` compared the event type, the delta type and the index with ``self._run`` and that the
    message is not stopped; ``take`` changes none of them, so ``try_fast`` would take each such delta, and
    ``take`` does what it would have done: the text appended in one piece (an accumulator's text, size and
    digest are the same; a tool's pieces are only ever read joined, and one piece or several are both
    non-empty lists), the events counted."""
    run = self._run
    delta = event.get("delta")
    if run is None or event.get("type") != v.BLOCK_DELTA or type(delta) is not dict:
        return None
    kind = delta.get("type")
    name = _RUN_FIELDS.get(kind) if type(kind) is str else None
    if name is None or kind != run[0] or event.get("index") != run[1] or type(delta.get(name)) is not str:
        return None
    block, tool = run[2], kind == "input_json_delta"

    def take(value: str, count: int, _: int | None) -> None:
        if tool:
            block.json.append(value)
        else:
            block.text.append(value)
        self.events += count

    return ("delta", name), None, (), None, take
