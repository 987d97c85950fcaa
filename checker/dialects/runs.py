"""What a machine offers the engine for a run of near-identical events (checker/run_template.py uses it).

After its hot path took an event, a machine may say which of its values the next events of the same run may
change: ``run_spec(event)`` returns a :data:`RunSpec` or None. The engine matches the next events' bytes
against the taken event's, with those values as holes, and hands matching events' values to ``take``.
"""

from __future__ import annotations

from collections.abc import Callable

# A value's place in an event object: keys and list indexes from the top.
JsonPath = tuple[str | int, ...]
# take(text, count, number): apply ``count`` events of the run whose texts joined are ``text`` and the last of
# whose numbers is ``number`` (None without a number), exactly as try_fast would have taken them one by one.
Take = Callable[[str, int, "int | None"], None]
# (the path of the text that may change, the path of an integer that may change or None, the paths of strings
# the machine never reads, the number the first event's must be above (None: any), take). The numbers of the
# events of a run rise: an event whose number does not takes the usual path.
RunSpec = tuple[JsonPath, JsonPath | None, tuple[JsonPath, ...], "int | None", Take]
