"""How the engine lints, as one typed record: what ``sse-check lint``, ``probe``, ``proxy``, ``diff``, the
replay, the pytest plugin and the Python API hand down to :class:`checker.engine.StreamLinter`, to the HTTP
checks (:class:`checker.http_checks.ExchangeLinter`) and to the WebSocket checks, instead of a dict of
keyword arguments whose keys each reader had to know.

A plain frozen record, picklable (a lint job carries it to a process pool or a Dask worker); no I/O.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from checker.finding_sink import FindingSink
from checker.lint_result import Limits
from checker.profiles import OPENAI, Profile


@dataclass(frozen=True, slots=True, kw_only=True)
class EngineOptions:
    """The engine's options: which profile judges, which rules run, the resource limits, and what is kept."""

    profile: Profile = OPENAI
    select: tuple[str, ...] | None = None  # rule codes to report (None: all)
    ignore: tuple[str, ...] | None = None  # rule codes never reported
    limits: Limits = Limits()
    collapse: bool = True  # repeated findings of one rule folded into one (False: --all-occurrences)
    # Every event kept for timelines and the HTML report; it costs the hot path, so only those ask for it.
    trace: bool = False
    dialect: str | None = None  # the stream's dialect, forced (lint --dialect); None: the stream decides

    def ignoring(self, code: str) -> EngineOptions:
        """These options with one more rule ignored (an exchange whose stream is no dialect's: SCH010)."""
        return dataclasses.replace(self, ignore=(*(self.ignore or ()), code))

    def sink(self, *, collapse: bool | None = None) -> FindingSink:
        """A finding sink under these options' profile, --select and --ignore (``collapse``: these options'
        unless given; the findings made beside the engine, an exchange's or a flow's, are each reported)."""
        return FindingSink(self.profile, select=self.select, ignore=self.ignore,
                           collapse=self.collapse if collapse is None else collapse)

    def keeps(self, code: str) -> bool:
        """Whether --select and --ignore keep findings of ``code`` (code prefixes, as the sink reads them)."""
        chosen = tuple(s.upper() for s in self.select or ())
        dropped = tuple(s.upper() for s in self.ignore or ())
        return (not chosen or code.startswith(chosen)) and not (dropped and code.startswith(dropped))
