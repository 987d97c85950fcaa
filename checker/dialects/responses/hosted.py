"""Hosted-tool calls: the order of their progress events and the input they stream.

OpenAI's hosted tools report a call's progress with events of their own and
stream its input the way function calls stream arguments. The machine hands
every such event, and the call's output_item.done, to the call's
``ToolState``; this module follows each family's grammar and reports through the
registry's rules. It keeps, per open call, only the streamed input (as
``TextAccumulator``s) and a few counters.

Each family's grammar (the order OpenAI sends) is in
checker/dialects/responses/hosted_families.py; shell commands and output in hosted_shell.py.

A call added already finished (status completed, failed, incomplete) owes no
progress events, and one that ends failed or incomplete may stop at any stage:
only a call that completes must have passed every stage.

What the clients do with these events (openai-node 7.59
src/internal/responses/response-accumulator.ts): every progress event sets the
item's ``status``; input deltas append to ``code``, ``arguments``, ``input`` or
the command at ``command_index`` and the ``.done`` value replaces them; shell
and annotation indexes are validated and throw past the end; partial images and
MCP listing events are ignored; output_item.done replaces the whole item.
openai-python accumulates none of them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from checker.dialects.responses import hosted_shell
from checker.dialects.responses.hosted_families import (  # some re-exported: the machine's names
    COMMAND_ADDED,
    COMMAND_DELTA,
    COMMAND_DONE,
    EVENT_ITEM_TYPES,
    FAMILIES,
    FINAL_STATUSES,
    INPUT_DELTAS,
    OUTPUT_DELTA,
    OUTPUT_DONE,
    PARTIAL_IMAGE,
    Family,
    at,
    short,
)
from checker.dialects.responses.hosted_shell import Stream, item_mismatch, reconcile_text
from checker.findings import Finding, Position
from checker.rules import tools
from checker.text import TextAccumulator


@dataclass(slots=True)
class ToolState:
    """What one hosted-tool call has streamed so far."""

    family: Family
    label: str
    added_final: bool  # added already finished: it owes no progress events
    keep_texts: bool = False  # keep the streamed texts after output_item.done (reports show them)
    rank: int = 0
    last: str | None = None
    seen: set[str] = field(default_factory=set)
    reported: set[str] = field(default_factory=set)  # required groups already reported missing, by first member
    input: Stream = field(default_factory=Stream)
    commands: list[Stream] = field(default_factory=list)  # shell_call: per command_index
    outputs: list[Stream] = field(default_factory=list)  # shell_call_output: per command_index
    command_count: int = 0  # the commands openai-node's snapshot holds (added, then the done item's)
    partial_images: int = 0

    # -- events ------------------------------------------------------------------

    def event(self, etype: str, event: dict[str, Any], pos: Position, out: list[Finding],
              shell_call: Callable[[], "ToolState | None"]) -> TextAccumulator | None:
        """One event of this call. Returns the accumulator a following delta of the same kind may append to
        directly (the machine's fast path), or None."""
        family = self.family
        if etype == COMMAND_ADDED or etype == COMMAND_DELTA or etype == COMMAND_DONE:
            return hosted_shell.command_event(self, etype, event, pos, out)
        if etype == OUTPUT_DELTA or etype == OUTPUT_DONE:
            hosted_shell.output_event(self, etype, event, pos, out, shell_call())
            return None
        if etype == family.input_delta or etype == family.input_done:
            if self.input.done:
                out.append(tools.INPUT_AFTER_DONE.finding(pos, type=etype, item_type=family.item_type,
                                                          item=self.label, done_type=family.input_done))
                return None
        self._stage(etype, pos, out)
        if etype == PARTIAL_IMAGE:
            self._partial_image(event, pos, out)
        elif etype == family.input_delta:
            delta = event.get("delta")
            if isinstance(delta, str):
                self.input.text.append(delta)
            self.input.streamed = True
            return self.input.text
        elif etype == family.input_done:
            self.input.streamed = self.input.done = True
            final = event.get(family.done_field or "")
            if isinstance(final, str):
                self.input.text = reconcile_text(etype, family.done_field or "", self.input.text, final, pos, out)
        return None

    def _stage(self, etype: str, pos: Position, out: list[Finding]) -> None:
        family = self.family
        rank = family.stages.get(etype)
        if rank is None:
            return
        last = self.last
        if etype in family.anytime and etype in self.seen and self.rank < family.last_rank:
            return  # OpenAI repeats mcp_call.in_progress while the arguments stream
        if rank < self.rank or (rank == self.rank and etype != last):
            out.append(tools.PROGRESS_ORDER.finding(pos, type=etype, after=last, item_type=family.item_type,
                                                    item=self.label))
            self.seen.add(etype)
            return
        if rank == self.rank:
            if etype not in family.repeatable:
                out.append(tools.PROGRESS_REPEATED.finding(pos, type=etype, item_type=family.item_type,
                                                           item=self.label))
            return
        self._missing(rank, etype, pos, out)
        self.rank, self.last = rank, etype
        self.seen.add(etype)

    def _missing(self, before: int, reached: str, pos: Position, out: list[Finding]) -> None:
        """Report the required stages ranked before ``before`` that never came (each once)."""
        stages = self.family.stages
        missing = []
        for group in self.family.required:
            key = min(group)
            if key in self.reported or group & self.seen or min(stages[t] for t in group) >= before:
                continue
            self.reported.add(key)
            missing.append(" or ".join(sorted(short(t) for t in group)))
        if missing:
            out.append(tools.PROGRESS_MISSING.finding(pos, item_type=self.family.item_type, item=self.label,
                                                      reached=short(reached), missing=", ".join(missing)))

    def _partial_image(self, event: dict[str, Any], pos: Position, out: list[Finding]) -> None:
        got = event.get("partial_image_index")
        if type(got) is not int:
            return  # the schema's finding
        if got != self.partial_images:
            out.append(tools.PARTIAL_IMAGE_INDEX.finding(pos, item=self.label, got=got, expected=self.partial_images))
        self.partial_images = max(self.partial_images, got + 1)

    # -- the call's output_item.done ---------------------------------------------------

    def done(self, raw: dict[str, Any], pos: Position, out: list[Finding]) -> None:
        family = self.family
        status = raw.get("status")
        # A call cut short (incomplete, failed) may stop at any stage and owes no `.done` for an unfinished input.
        completed = status is None or status == "completed"
        if not self.added_final and completed:
            self._missing(family.last_rank + 1, "output_item.done", pos, out)
        item_type = family.item_type
        if family.input_done is not None and self.input.streamed and not self.input.done and completed:
            out.append(tools.INPUT_DONE_MISSING.finding(pos, item_type=item_type, item=self.label,
                                                        done_type=short(family.input_done)))
        if family.item_path:
            value = at(raw, family.item_path)
            if isinstance(value, str) and self.input.streamed:
                item_mismatch(item_type, ".".join(family.item_path), self.input.text, value, pos, out)
        if item_type == "shell_call":
            hosted_shell.done_commands(self, raw, completed, pos, out)
        elif item_type == "shell_call_output":
            hosted_shell.done_outputs(self, raw, completed, pos, out)
        self.release()

    def release(self) -> None:
        """A done call's texts are no longer needed (its command count is: later shell output checks it)."""
        if self.keep_texts:
            for stream in (self.input, *self.commands, *self.outputs):
                stream.text, stream.stderr = stream.text.compacted(), stream.stderr.compacted()
            return
        self.input = Stream()
        self.commands = []
        self.outputs = []

    def texts(self) -> list[dict[str, Any]]:
        """What the call streamed, labelled, for reports: its input, each shell command, each output."""
        out: list[dict[str, Any]] = []

        def add(label: str, text: TextAccumulator) -> None:
            out.append({"label": label, "text": text.text(), "exact": text.exact})

        if self.input.streamed or len(self.input.text):
            add(".".join(self.family.item_path) or "input", self.input.text)
        for n, stream in enumerate(self.commands):
            if stream.present:
                add(f"command {n}", stream.text)
        for n, stream in enumerate(self.outputs):
            if stream.streamed:
                add(f"output {n} stdout", stream.text)
                if len(stream.stderr):
                    add(f"output {n} stderr", stream.stderr)
        return out


def start(item_type: str | None, raw: dict[str, Any], label: str, *, keep_texts: bool = False) -> ToolState | None:
    """The state of a hosted-tool call added as ``raw``; None for items that are not hosted-tool calls."""
    family = FAMILIES.get(item_type or "")
    if family is None:
        return None
    state = ToolState(family, label, added_final=raw.get("status") in FINAL_STATUSES, keep_texts=keep_texts)
    initial = at(raw, family.item_path) if family.item_path else None
    if isinstance(initial, str) and initial:
        state.input.text.append(initial)
    if item_type == "shell_call":
        commands = at(raw, ("action", "commands"))
        if isinstance(commands, list):
            state.commands = [Stream(TextAccumulator(c if isinstance(c, str) else "")) for c in commands]
            state.command_count = len(commands)
    return state


def canonical(value: Any) -> bytes | str:
    """One comparable form of a JSON value (sorted keys: key order does not matter)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # numbers orjson cannot write: compare the Python form
        return repr(value)


def final_fields(item: dict[str, Any]) -> tuple[Any, ...]:
    """What a hosted-tool item's done form and its copy in the terminal response must share: its input and,
    for shell output, the output."""
    return (
        item.get("code"),
        item.get("input"),
        canonical(at(item, ("action", "commands"))),
        canonical(item.get("operation")),
        canonical(item.get("output")) if item.get("type") == "shell_call_output" else None,
    )

