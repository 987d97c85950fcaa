"""The hosted-tool items of a Responses stream (web search, code interpreter, image generation, MCP, custom
tools, shell), with their progress events in the order OpenAI sends them: see
checker/dialects/responses/hosted.py. A mixin of :class:`checker.synth.responses.ResponsesStream`.
"""

from __future__ import annotations

import copy
from typing import Any, Self

from checker.synth.ids import make_call_id, make_id
from checker.synth.sse import Event


class HostedTools:
    """Hosted-tool items for a stream that numbers its events (``_seq``) and items (``_index``)."""

    name: str
    done_items: list[Event]
    _items: int

    def _seq(self) -> int:
        raise NotImplementedError

    def _index(self) -> int:
        raise NotImplementedError

    def emit(self, event: Event) -> Event:
        raise NotImplementedError

    def _progress(self, prefix: str, base: dict[str, Any], *stages: str) -> None:
        for stage in stages:
            self.emit({"type": f"response.{prefix}.{stage}", "sequence_number": self._seq(), **base})

    def _hosted_done(self, index: int, item: dict[str, Any]) -> None:
        self.emit({"type": "response.output_item.done", "sequence_number": self._seq(), "output_index": index,
                   "item": item})
        self.done_items.append(copy.deepcopy(item))

    def web_search_call(self, query: str) -> Self:
        index, item_id = self._index(), make_id("ws_", f"{self.name}/{self._items}", 50)
        base = {"output_index": index, "item_id": item_id}
        action = {"type": "search", "query": query}
        self.emit({"type": "response.output_item.added", "sequence_number": self._seq(), "output_index": index,
                   "item": {"id": item_id, "type": "web_search_call", "status": "in_progress", "action": action}})
        self._progress("web_search_call", base, "in_progress", "searching", "completed")
        self._hosted_done(index, {"id": item_id, "type": "web_search_call", "status": "completed", "action": action})
        return self

    def code_interpreter_call(self, deltas: list[str], logs: str) -> Self:
        index, item_id = self._index(), make_id("ci_", f"{self.name}/{self._items}", 50)
        base = {"output_index": index, "item_id": item_id}
        container = make_id("cntr_", f"{self.name}/container")
        item: dict[str, Any] = {"id": item_id, "type": "code_interpreter_call", "status": "in_progress", "code": "",
                                "container_id": container, "outputs": []}
        self.emit({"type": "response.output_item.added", "sequence_number": self._seq(), "output_index": index,
                   "item": copy.deepcopy(item)})
        self._progress("code_interpreter_call", base, "in_progress")
        for delta in deltas:
            self.emit({"type": "response.code_interpreter_call_code.delta", "sequence_number": self._seq(), **base,
                       "delta": delta})
        code = "".join(deltas)
        self.emit({"type": "response.code_interpreter_call_code.done", "sequence_number": self._seq(), **base,
                   "code": code})
        self._progress("code_interpreter_call", base, "interpreting", "completed")
        item.update(status="completed", code=code, outputs=[{"type": "logs", "logs": logs}])
        self._hosted_done(index, item)
        return self

    def image_generation_call(self, partials: int, result: str) -> Self:
        index, item_id = self._index(), make_id("ig_", f"{self.name}/{self._items}", 50)
        base = {"output_index": index, "item_id": item_id}
        self.emit({"type": "response.output_item.added", "sequence_number": self._seq(), "output_index": index,
                   "item": {"id": item_id, "type": "image_generation_call", "status": "in_progress", "result": None}})
        self._progress("image_generation_call", base, "in_progress", "generating")
        for n in range(partials):
            self.emit({"type": "response.image_generation_call.partial_image", "sequence_number": self._seq(),
                       **base, "partial_image_index": n, "partial_image_b64": result[: 8 * (n + 1)],
                       "size": "1024x1024", "quality": "low", "background": "opaque", "output_format": "webp"})
        self._progress("image_generation_call", base, "completed")
        self._hosted_done(index, {"id": item_id, "type": "image_generation_call", "status": "completed",
                                  "result": result, "size": "1024x1024", "quality": "low",
                                  "background": "opaque", "output_format": "webp"})
        return self

    def mcp_list_tools(self, server: str, tools: list[dict[str, Any]]) -> Self:
        index, item_id = self._index(), make_id("mcpl_", f"{self.name}/{self._items}", 50)
        base = {"output_index": index, "item_id": item_id}
        self.emit({"type": "response.output_item.added", "sequence_number": self._seq(), "output_index": index,
                   "item": {"id": item_id, "type": "mcp_list_tools", "server_label": server, "tools": []}})
        self._progress("mcp_list_tools", base, "in_progress", "completed")
        self._hosted_done(index, {"id": item_id, "type": "mcp_list_tools", "server_label": server, "tools": tools})
        return self

    def mcp_call(self, server: str, name: str, deltas: list[str], output: str) -> Self:
        index, item_id = self._index(), make_id("mcp_", f"{self.name}/{self._items}", 50)
        base = {"output_index": index, "item_id": item_id}
        item: dict[str, Any] = {"id": item_id, "type": "mcp_call", "status": "in_progress", "arguments": "",
                                "error": None, "name": name, "output": None, "server_label": server}
        self.emit({"type": "response.output_item.added", "sequence_number": self._seq(), "output_index": index,
                   "item": copy.deepcopy(item)})
        self._progress("mcp_call", base, "in_progress")
        for delta in deltas:
            self.emit({"type": "response.mcp_call_arguments.delta", "sequence_number": self._seq(), **base,
                       "delta": delta})
        self._progress("mcp_call", base, "in_progress")  # OpenAI repeats it once the arguments are in
        arguments = "".join(deltas)
        self.emit({"type": "response.mcp_call_arguments.done", "sequence_number": self._seq(), **base,
                   "arguments": arguments})
        self._progress("mcp_call", base, "completed")
        item.update(status="completed", arguments=arguments, output=output)
        self._hosted_done(index, item)
        return self

    def custom_tool_call(self, name: str, deltas: list[str]) -> Self:
        index, item_id = self._index(), make_id("ctc_", f"{self.name}/{self._items}", 50)
        call_id = make_call_id(f"{self.name}/{self._items}")
        base = {"output_index": index, "item_id": item_id}
        self.emit({"type": "response.output_item.added", "sequence_number": self._seq(), "output_index": index,
                   "item": {"id": item_id, "type": "custom_tool_call", "call_id": call_id, "name": name,
                            "input": ""}})
        for delta in deltas:
            self.emit({"type": "response.custom_tool_call_input.delta", "sequence_number": self._seq(), **base,
                       "delta": delta})
        text = "".join(deltas)
        self.emit({"type": "response.custom_tool_call_input.done", "sequence_number": self._seq(), **base,
                   "input": text})
        self._hosted_done(index, {"id": item_id, "type": "custom_tool_call", "call_id": call_id, "name": name,
                                  "input": text})
        return self

    def shell_call(self, commands: list[list[str]]) -> str:
        """A shell call streaming each command (a list of deltas); returns its call_id."""
        index, item_id = self._index(), make_id("sh_", f"{self.name}/{self._items}", 50)
        call_id = make_call_id(f"{self.name}/{self._items}")
        environment = {"type": "container_reference", "container_id": make_id("cntr_", f"{self.name}/container")}
        action: dict[str, Any] = {"commands": [], "max_output_length": None, "timeout_ms": None}
        self.emit({"type": "response.output_item.added", "sequence_number": self._seq(), "output_index": index,
                   "item": {"id": item_id, "type": "shell_call", "status": "in_progress",
                            "action": copy.deepcopy(action), "call_id": call_id, "environment": environment}})
        for n, deltas in enumerate(commands):
            base = {"command_index": n, "output_index": index}
            self.emit({"type": "response.shell_call_command.added", "sequence_number": self._seq(), **base,
                       "command": ""})
            for delta in deltas:
                self.emit({"type": "response.shell_call_command.delta", "sequence_number": self._seq(), **base,
                           "delta": delta})
            self.emit({"type": "response.shell_call_command.done", "sequence_number": self._seq(), **base,
                       "command": "".join(deltas)})
            action["commands"].append("".join(deltas))
        self._hosted_done(index, {"id": item_id, "type": "shell_call", "status": "completed", "action": action,
                                  "call_id": call_id, "environment": environment})
        return call_id

    def shell_call_output(self, call_id: str, stdout: list[str]) -> Self:
        index, item_id = self._index(), make_id("sho_", f"{self.name}/{self._items}", 50)
        base = {"output_index": index, "item_id": item_id}
        self.emit({"type": "response.output_item.added", "sequence_number": self._seq(), "output_index": index,
                   "item": {"id": item_id, "type": "shell_call_output", "status": "in_progress", "call_id": call_id,
                            "max_output_length": None, "output": []}})
        outputs = []
        for n, text in enumerate(stdout):
            content = {"outcome": {"type": "exit", "exit_code": 0}, "stderr": "", "stdout": text}
            self.emit({"type": "response.shell_call_output_content.delta", "sequence_number": self._seq(),
                       "command_index": n, **base, "delta": {"stdout": text}})
            self.emit({"type": "response.shell_call_output_content.done", "sequence_number": self._seq(),
                       "command_index": n, **base, "output": [content]})
            outputs.append(content)
        self._hosted_done(index, {"id": item_id, "type": "shell_call_output", "status": "completed",
                                  "call_id": call_id, "max_output_length": None, "output": outputs})
        return self
