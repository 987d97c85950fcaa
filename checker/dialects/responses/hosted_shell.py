"""Shell calls and their output: the commands and output contents they stream, by ``command_index``.

What the clients do (openai-node 7.59 src/internal/responses/response-accumulator.ts): a command delta
appends to the command at ``command_index`` and its ``.done`` replaces it; a shell output's command must
exist in the shell call with its call_id (without that call, the output may only be appended); indexes past
the end throw. Functions of one call's ``ToolState`` (checker/dialects/responses/hosted.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from checker.dialects.responses.hosted_families import COMMAND_ADDED, COMMAND_DELTA, OUTPUT_DELTA, at
from checker.findings import Finding, Position
from checker.rules import reconcile, tools
from checker.text import TextAccumulator, describe_difference

if TYPE_CHECKING:
    from checker.dialects.responses.hosted import ToolState


@dataclass(slots=True)
class Stream:
    """One streamed text of a call (a command, an output's stdout and stderr) and whether its `.done` came."""

    text: TextAccumulator = field(default_factory=TextAccumulator)
    stderr: TextAccumulator = field(default_factory=TextAccumulator)
    streamed: bool = False  # a delta or a done came for it
    done: bool = False
    present: bool = True  # False: a gap left by an index past the end


def reconcile_text(etype: str, what: str, streamed: TextAccumulator, final: str, pos: Position,
                   out: list[Finding]) -> TextAccumulator:
    """The `.done` value against the deltas; the `.done` value is what the call has from now on."""
    if streamed.equals(final):
        return streamed
    out.append(reconcile.TOOL_DONE_MISMATCH.finding(pos, type=etype, field=what,
                                                    diff=describe_difference(streamed.text(), final)))
    return TextAccumulator(final)


def item_mismatch(item_type: str, what: str, streamed: TextAccumulator, final: str, pos: Position,
                  out: list[Finding]) -> None:
    """What the call's output_item.done says at ``what`` against what was streamed."""
    if not streamed.equals(final):
        out.append(reconcile.TOOL_ITEM_DONE_MISMATCH.finding(
            pos, item_type=item_type, field=what, diff=describe_difference(streamed.text(), final)))


def command_event(call: ToolState, etype: str, event: dict[str, Any], pos: Position,
                  out: list[Finding]) -> TextAccumulator | None:
    """shell_call_command.added, .delta, .done. Returns the command a following delta may append to."""
    index = event.get("command_index")
    if type(index) is not int or index < 0:
        return None  # the schema's finding
    if etype == COMMAND_ADDED:
        if index != call.command_count:
            out.append(tools.COMMAND_INDEX_NOT_APPENDED.finding(pos, item=call.label, got=index,
                                                                expected=call.command_count))
        command = event.get("command")
        while len(call.commands) <= index:
            call.commands.append(Stream(present=False))
        call.commands[index] = Stream(TextAccumulator(command if isinstance(command, str) else ""))
        call.command_count = max(call.command_count, index + 1)
        return None
    if index >= call.command_count:
        out.append(tools.COMMAND_INDEX_UNKNOWN.finding(pos, type=etype, item=call.label, got=index,
                                                       count=call.command_count))
        return None
    stream = call.commands[index]
    if stream.done:
        out.append(tools.INPUT_AFTER_DONE.finding(pos, type=etype, item_type="shell_call", item=call.label,
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
        stream.text = reconcile_text(etype, f"command {index}", stream.text, final, pos, out)
    return None


def output_event(call: ToolState, etype: str, event: dict[str, Any], pos: Position, out: list[Finding],
                 shell: ToolState | None) -> None:
    """shell_call_output_content.delta and .done of a shell output item; ``shell`` is its shell call."""
    index = event.get("command_index")
    if type(index) is not int or index < 0:
        return
    # openai-node: the command must exist in the shell call with this call_id; without that call, the
    # output may only be appended.
    if shell is not None and index >= shell.command_count:
        out.append(tools.OUTPUT_INDEX_UNKNOWN.finding(
            pos, type=etype, item=call.label, got=index, kind="command",
            target=f"its shell call {shell.label!r} has {shell.command_count} command(s)"))
        return
    if shell is None and index > len(call.outputs):
        out.append(tools.OUTPUT_INDEX_UNKNOWN.finding(
            pos, type=etype, item=call.label, got=index, kind="content",
            target=f"no shell call in the stream has its call_id and {len(call.outputs)} output(s) came before"))
        return
    while len(call.outputs) <= index:
        call.outputs.append(Stream())
    stream = call.outputs[index]
    if stream.done:
        out.append(tools.INPUT_AFTER_DONE.finding(pos, type=etype, item_type="shell_call_output",
                                                  item=call.label,
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
    _output_done(stream, etype, event, pos, out)


def _output_done(stream: Stream, etype: str, event: dict[str, Any], pos: Position, out: list[Finding]) -> None:
    final = event.get("output")
    content = final[0] if isinstance(final, list) and final and isinstance(final[0], dict) else None
    if content is None:
        return
    for name in ("stdout", "stderr"):
        value = content.get(name)
        if isinstance(value, str):
            streamed = stream.text if name == "stdout" else stream.stderr
            kept = reconcile_text(etype, f"output[0].{name}", streamed, value, pos, out)
            if name == "stdout":
                stream.text = kept
            else:
                stream.stderr = kept


def done_commands(call: ToolState, raw: dict[str, Any], completed: bool, pos: Position,
                  out: list[Finding]) -> None:
    """A shell call's output_item.done against its streamed commands."""
    for n, stream in enumerate(call.commands):
        if stream.streamed and not stream.done and completed:
            out.append(tools.INPUT_DONE_MISSING.finding(pos, item_type="shell_call", item=call.label,
                                                        done_type=f"shell_call_command.done (command {n})"))
    final = at(raw, ("action", "commands"))
    if not isinstance(final, list):
        return
    streamed = sum(1 for stream in call.commands if stream.present)
    if streamed and len(final) != streamed:
        out.append(reconcile.TOOL_ITEM_DONE_MISMATCH.finding(
            pos, item_type="shell_call", field="action.commands",
            diff=f"{len(final)} command(s) at done, {streamed} streamed"))
    for n, (stream, command) in enumerate(zip(call.commands, final)):
        if isinstance(command, str) and stream.streamed and stream.present:
            item_mismatch("shell_call", f"action.commands[{n}]", stream.text, command, pos, out)
    call.command_count = len(final)  # openai-node's snapshot now holds the done item's commands


def done_outputs(call: ToolState, raw: dict[str, Any], completed: bool, pos: Position,
                 out: list[Finding]) -> None:
    """A shell output's output_item.done against its streamed output contents."""
    for n, stream in enumerate(call.outputs):
        if stream.streamed and not stream.done and completed:
            out.append(tools.INPUT_DONE_MISSING.finding(
                pos, item_type="shell_call_output", item=call.label,
                done_type=f"shell_call_output_content.done (command {n})"))
    final = raw.get("output")
    if not isinstance(final, list):
        return
    for n, stream in enumerate(call.outputs):
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
                item_mismatch("shell_call_output", f"output[{n}].{name}", streamed, value, pos, out)
