"""Hosted-tool calls: the order of their progress events and the input they stream.

OpenAI's hosted tools report a call's progress with events of their own and
stream its input the way function calls stream arguments. The machine hands
every such event, and the call's output_item.done, to the call's
``ToolState``; this module knows each family's grammar and reports through the
registry's rules. It keeps, per open call, only the streamed input (as
``TextAccumulator``s) and a few counters.

The grammar is the order OpenAI sends (streams recorded from api.openai.com in
vercel/ai packages/openai/src/responses/__fixtures__):

* web and file search: ``in_progress → searching → completed``;
* code interpreter: ``in_progress → code.delta* → code.done → interpreting → completed``;
* image generation: ``in_progress → generating → partial_image* → completed``;
* MCP call: ``in_progress → arguments.delta* → arguments.done → completed | failed``,
  ``in_progress`` repeated while the arguments stream (OpenAI does);
* MCP tool listing: ``in_progress → completed | failed``;
* custom tool: ``input.delta* → input.done``; apply_patch: ``operation_diff.delta* → operation_diff.done``;
* shell call, per command: ``command.added → command.delta* → command.done``; shell output,
  per command: ``output_content.delta* → output_content.done``.

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

from checker.findings import Finding, Position
from checker.rules import reconcile, tools
from checker.text import TextAccumulator, describe_difference

R = "response."
FINAL_STATUSES = frozenset({"completed", "failed", "incomplete"})


@dataclass(frozen=True, slots=True)
class Family:
    """One hosted tool's events: stage ranks in the order they come, and its streamed input."""

    item_type: str
    stages: dict[str, int]  # event type -> rank; equal ranks are alternatives (completed | failed)
    required: tuple[frozenset[str], ...] = ()  # one event of each group before a call completes
    repeatable: frozenset[str] = frozenset()  # may come several times in a row (deltas, partial images)
    anytime: frozenset[str] = frozenset()  # may come again at any point before the last stage
    input_delta: str | None = None
    input_done: str | None = None
    done_field: str | None = None  # the `.done` event's field with the final input
    item_path: tuple[str, ...] = ()  # where the item keeps it ("code"; "operation", "diff")

    @property
    def last_rank(self) -> int:
        return max(self.stages.values(), default=0)


def _progress(item_type: str, *names: str, prefix: str | None = None) -> dict[str, int]:
    base = R + (prefix or item_type) + "."
    return {base + name: rank for rank, name in enumerate(names, start=1)}


def _one(*types: str) -> frozenset[str]:
    return frozenset(types)


def _search(item_type: str) -> Family:
    stages = _progress(item_type, "in_progress", "searching", "completed")
    return Family(item_type, stages, required=tuple(_one(t) for t in stages))


_CODE = R + "code_interpreter_call."
_CODE_IN = R + "code_interpreter_call_code."
_IMAGE = R + "image_generation_call."
_MCP = R + "mcp_call."
_MCP_ARGS = R + "mcp_call_arguments."
_LIST = R + "mcp_list_tools."
_CUSTOM = R + "custom_tool_call_input."
_PATCH = R + "apply_patch_call_operation_diff."

FAMILIES: dict[str, Family] = {
    family.item_type: family
    for family in (
        _search("web_search_call"),
        _search("file_search_call"),
        Family(
            "code_interpreter_call",
            {_CODE + "in_progress": 1, _CODE_IN + "delta": 2, _CODE_IN + "done": 3, _CODE + "interpreting": 4,
             _CODE + "completed": 5},
            required=(_one(_CODE + "in_progress"), _one(_CODE + "interpreting"), _one(_CODE + "completed")),
            repeatable=_one(_CODE_IN + "delta"),
            input_delta=_CODE_IN + "delta", input_done=_CODE_IN + "done", done_field="code", item_path=("code",),
        ),
        Family(
            "image_generation_call",
            {_IMAGE + "in_progress": 1, _IMAGE + "generating": 2, _IMAGE + "partial_image": 3,
             _IMAGE + "completed": 4},
            required=(_one(_IMAGE + "in_progress"), _one(_IMAGE + "generating"), _one(_IMAGE + "completed")),
            repeatable=_one(_IMAGE + "partial_image"),
        ),
        Family(
            "mcp_call",
            {_MCP + "in_progress": 1, _MCP_ARGS + "delta": 2, _MCP_ARGS + "done": 3, _MCP + "completed": 4,
             _MCP + "failed": 4},
            required=(_one(_MCP + "in_progress"), _one(_MCP + "completed", _MCP + "failed")),
            repeatable=_one(_MCP_ARGS + "delta"),
            anytime=_one(_MCP + "in_progress"),
            input_delta=_MCP_ARGS + "delta", input_done=_MCP_ARGS + "done", done_field="arguments",
            item_path=("arguments",),
        ),
        Family(
            "mcp_list_tools",
            {_LIST + "in_progress": 1, _LIST + "completed": 2, _LIST + "failed": 2},
            required=(_one(_LIST + "in_progress"), _one(_LIST + "completed", _LIST + "failed")),
        ),
        Family(
            "custom_tool_call",
            {_CUSTOM + "delta": 1, _CUSTOM + "done": 2},
            repeatable=_one(_CUSTOM + "delta"),
            input_delta=_CUSTOM + "delta", input_done=_CUSTOM + "done", done_field="input", item_path=("input",),
        ),
        Family(
            "apply_patch_call",
            {_PATCH + "delta": 1, _PATCH + "done": 2},
            repeatable=_one(_PATCH + "delta"),
            input_delta=_PATCH + "delta", input_done=_PATCH + "done", done_field="diff",
            item_path=("operation", "diff"),
        ),
        Family("shell_call", {}),
        Family("shell_call_output", {}),
    )
}

COMMAND_ADDED = R + "shell_call_command.added"
COMMAND_DELTA = R + "shell_call_command.delta"
COMMAND_DONE = R + "shell_call_command.done"
OUTPUT_DELTA = R + "shell_call_output_content.delta"
OUTPUT_DONE = R + "shell_call_output_content.done"
PARTIAL_IMAGE = _IMAGE + "partial_image"

# Every hosted-tool event type -> the item type it belongs to.
EVENT_ITEM_TYPES: dict[str, str] = {etype: f.item_type for f in FAMILIES.values() for etype in f.stages}
EVENT_ITEM_TYPES.update({COMMAND_ADDED: "shell_call", COMMAND_DELTA: "shell_call", COMMAND_DONE: "shell_call",
                         OUTPUT_DELTA: "shell_call_output", OUTPUT_DONE: "shell_call_output"})
# The input deltas a run of the machine's fast path may append (shell commands by command_index).
INPUT_DELTAS = frozenset({f.input_delta for f in FAMILIES.values() if f.input_delta} | {COMMAND_DELTA})


def _short(etype: str) -> str:
    return etype.removeprefix(R)


@dataclass(slots=True)
class Stream:
    """One streamed text of a call (a command, an output's stdout and stderr) and whether its `.done` came."""

    text: TextAccumulator = field(default_factory=TextAccumulator)
    stderr: TextAccumulator = field(default_factory=TextAccumulator)
    streamed: bool = False  # a delta or a done came for it
    done: bool = False
    present: bool = True  # False: a gap left by an index past the end


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
            return self._command(etype, event, pos, out)
        if etype == OUTPUT_DELTA or etype == OUTPUT_DONE:
            self._output(etype, event, pos, out, shell_call())
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
                self.input.text = self._reconcile(etype, family.done_field or "", self.input.text, final, pos, out)
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
            missing.append(" or ".join(sorted(_short(t) for t in group)))
        if missing:
            out.append(tools.PROGRESS_MISSING.finding(pos, item_type=self.family.item_type, item=self.label,
                                                      reached=_short(reached), missing=", ".join(missing)))

    def _partial_image(self, event: dict[str, Any], pos: Position, out: list[Finding]) -> None:
        got = event.get("partial_image_index")
        if type(got) is not int:
            return  # the schema's finding
        if got != self.partial_images:
            out.append(tools.PARTIAL_IMAGE_INDEX.finding(pos, item=self.label, got=got, expected=self.partial_images))
        self.partial_images = max(self.partial_images, got + 1)

    def _command(self, etype: str, event: dict[str, Any], pos: Position, out: list[Finding]) -> TextAccumulator | None:
        index = event.get("command_index")
        if type(index) is not int or index < 0:
            return None  # the schema's finding
        if etype == COMMAND_ADDED:
            if index != self.command_count:
                out.append(tools.COMMAND_INDEX_NOT_APPENDED.finding(pos, item=self.label, got=index,
                                                                    expected=self.command_count))
            command = event.get("command")
            while len(self.commands) <= index:
                self.commands.append(Stream(present=False))
            self.commands[index] = Stream(TextAccumulator(command if isinstance(command, str) else ""))
            self.command_count = max(self.command_count, index + 1)
            return None
        if index >= self.command_count:
            out.append(tools.COMMAND_INDEX_UNKNOWN.finding(pos, type=etype, item=self.label, got=index,
                                                           count=self.command_count))
            return None
        stream = self.commands[index]
        if stream.done:
            out.append(tools.INPUT_AFTER_DONE.finding(pos, type=etype, item_type="shell_call", item=self.label,
                                                      done_type=f"shell_call_command.done (command {index})"))
            return None
        stream.streamed = True
        if etype == COMMAND_DELTA:
            delta = event.get("delta")
            if isinstance(delta, str):
                stream.text.append(delta)
            return stream.text
        stream.done = True
        final = event.get("command")
        if isinstance(final, str):
            stream.text = self._reconcile(etype, f"command {index}", stream.text, final, pos, out)
        return None

    def _output(self, etype: str, event: dict[str, Any], pos: Position, out: list[Finding],
                call: "ToolState | None") -> None:
        index = event.get("command_index")
        if type(index) is not int or index < 0:
            return
        # openai-node: the command must exist in the shell call with this call_id; without that call, the
        # output may only be appended.
        if call is not None and index >= call.command_count:
            out.append(tools.OUTPUT_INDEX_UNKNOWN.finding(
                pos, type=etype, item=self.label, got=index, kind="command",
                target=f"its shell call {call.label!r} has {call.command_count} command(s)"))
            return
        if call is None and index > len(self.outputs):
            out.append(tools.OUTPUT_INDEX_UNKNOWN.finding(
                pos, type=etype, item=self.label, got=index, kind="content",
                target=f"no shell call in the stream has its call_id and {len(self.outputs)} output(s) came before"))
            return
        while len(self.outputs) <= index:
            self.outputs.append(Stream())
        stream = self.outputs[index]
        if stream.done:
            out.append(tools.INPUT_AFTER_DONE.finding(pos, type=etype, item_type="shell_call_output",
                                                      item=self.label,
                                                      done_type=f"shell_call_output_content.done (command {index})"))
            return
        stream.streamed = True
        if etype == OUTPUT_DELTA:
            delta = event.get("delta")
            if isinstance(delta, dict):
                stdout, stderr = delta.get("stdout"), delta.get("stderr")
                if isinstance(stdout, str):
                    stream.text.append(stdout)
                if isinstance(stderr, str):
                    stream.stderr.append(stderr)
            return
        stream.done = True
        final = event.get("output")
        content = final[0] if isinstance(final, list) and final and isinstance(final[0], dict) else None
        if content is not None:
            for name in ("stdout", "stderr"):
                value = content.get(name)
                if isinstance(value, str):
                    streamed = stream.text if name == "stdout" else stream.stderr
                    kept = self._reconcile(etype, f"output[0].{name}", streamed, value, pos, out)
                    if name == "stdout":
                        stream.text = kept
                    else:
                        stream.stderr = kept

    @staticmethod
    def _reconcile(etype: str, what: str, streamed: TextAccumulator, final: str, pos: Position,
                   out: list[Finding]) -> TextAccumulator:
        """The `.done` value against the deltas; the `.done` value is what the call has from now on."""
        if streamed.equals(final):
            return streamed
        out.append(reconcile.TOOL_DONE_MISMATCH.finding(pos, type=etype, field=what,
                                                        diff=describe_difference(streamed.text(), final)))
        return TextAccumulator(final)

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
                                                        done_type=_short(family.input_done)))
        if family.item_path:
            value = _at(raw, family.item_path)
            if isinstance(value, str) and self.input.streamed:
                self._item_mismatch(".".join(family.item_path), self.input.text, value, pos, out)
        if item_type == "shell_call":
            self._done_commands(raw, completed, pos, out)
        elif item_type == "shell_call_output":
            self._done_outputs(raw, completed, pos, out)
        self.release()

    def _done_commands(self, raw: dict[str, Any], completed: bool, pos: Position, out: list[Finding]) -> None:
        for n, stream in enumerate(self.commands):
            if stream.streamed and not stream.done and completed:
                out.append(tools.INPUT_DONE_MISSING.finding(pos, item_type="shell_call", item=self.label,
                                                            done_type=f"shell_call_command.done (command {n})"))
        final = _at(raw, ("action", "commands"))
        if not isinstance(final, list):
            return
        streamed = sum(1 for stream in self.commands if stream.present)
        if streamed and len(final) != streamed:
            out.append(reconcile.TOOL_ITEM_DONE_MISMATCH.finding(
                pos, item_type="shell_call", field="action.commands",
                diff=f"{len(final)} command(s) at done, {streamed} streamed"))
        for n, (stream, command) in enumerate(zip(self.commands, final)):
            if isinstance(command, str) and stream.streamed and stream.present:
                self._item_mismatch(f"action.commands[{n}]", stream.text, command, pos, out)
        self.command_count = len(final)  # openai-node's snapshot now holds the done item's commands

    def _done_outputs(self, raw: dict[str, Any], completed: bool, pos: Position, out: list[Finding]) -> None:
        for n, stream in enumerate(self.outputs):
            if stream.streamed and not stream.done and completed:
                out.append(tools.INPUT_DONE_MISSING.finding(
                    pos, item_type="shell_call_output", item=self.label,
                    done_type=f"shell_call_output_content.done (command {n})"))
        final = raw.get("output")
        if not isinstance(final, list):
            return
        for n, stream in enumerate(self.outputs):
            content = final[n] if n < len(final) else None
            if not stream.streamed:
                continue
            if not isinstance(content, dict):
                out.append(reconcile.TOOL_ITEM_DONE_MISMATCH.finding(
                    pos, item_type="shell_call_output", field=f"output[{n}]",
                    diff=f"no output {n} at done, one was streamed"))
                continue
            for name, streamed in (("stdout", stream.text), ("stderr", stream.stderr)):
                value = content.get(name)
                if isinstance(value, str):
                    self._item_mismatch(f"output[{n}].{name}", streamed, value, pos, out)

    def _item_mismatch(self, what: str, streamed: TextAccumulator, final: str, pos: Position,
                       out: list[Finding]) -> None:
        if not streamed.equals(final):
            out.append(reconcile.TOOL_ITEM_DONE_MISMATCH.finding(
                pos, item_type=self.family.item_type, field=what, diff=describe_difference(streamed.text(), final)))

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
    initial = _at(raw, family.item_path) if family.item_path else None
    if isinstance(initial, str) and initial:
        state.input.text.append(initial)
    if item_type == "shell_call":
        commands = _at(raw, ("action", "commands"))
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
        canonical(_at(item, ("action", "commands"))),
        canonical(item.get("operation")),
        canonical(item.get("output")) if item.get("type") == "shell_call_output" else None,
    )


def _at(obj: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj
