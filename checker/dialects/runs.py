"""What a machine offers the engine for a run of near-identical events (checker/run_template.py uses it).

After its hot path took an event, a machine may say which of its values the next events of the same run may
change: ``run_spec(event)`` returns a :data:`RunSpec` or None. The engine matches the next events' bytes
against the taken event's, with those values as holes, and hands a matching event's values to ``take``.
"""

from __future__ import annotations

from collections.abc import Callable

# A value's place in an event object: keys and list indexes from the top.
JsonPath = tuple[str | int, ...]
# take(text, number): apply an event of the run with this text (and integer) exactly as try_fast would and
# return True, or change nothing and return False (the event then takes the usual path).
Take = Callable[[str, "int | None"], bool]
# (the path of the text that may change, the path of an integer that may change or None, the paths of strings
# the machine never reads, take)
RunSpec = tuple[JsonPath, JsonPath | None, tuple[JsonPath, ...], Take]
