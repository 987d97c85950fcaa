"""The Claude Code driver: ``claude -p`` against a loopback server, as its users script it.

    python claude_code_driver.py --client-dir DIR BASE_URL MODEL DIALECT [TOOL,NAMES]   -> one JSON outcome
    python claude_code_driver.py --client-dir DIR --batch < jobs                        -> one outcome line per job

DIR is the Claude Code environment (``checker/oracles/clients/claude-code``: ``node_modules/.bin/claude``, the
native binary of ``@anthropic-ai/claude-code-linux-x64``). Each run gets a temporary HOME (Claude Code writes
its sessions there) and ``ANTHROPIC_BASE_URL`` = the loopback server, with nonessential traffic, telemetry,
error reporting and the auto-updater off (``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1``: no other connection,
no DNS lookup at all), no retries (``CLAUDE_CODE_MAX_RETRIES=0``) and no non-streaming second try of a stream
that failed (``CLAUDE_CODE_DISABLE_NONSTREAMING_FALLBACK=1``: without it, the error seen would be about that
second answer, not the stream).

``--output-format stream-json --verbose`` prints the assistant message of each answer (one line per content
block) and, last, the same ``result`` object ``--output-format json`` prints (``is_error``, ``result``:
"API Error: …" when the stream failed). A tool_use for a tool Claude Code lacks gets an error tool_result and a
second request (so does a ``max_tokens`` stop: Claude Code asks the model to go on), which the follow-up proxy
(``driver_common.followup_proxy``) answers with plain text; ``--max-turns 2`` bounds it. The outcome is the
first answer: its text and tool calls, and its stop reason when it was the only answer.
Standard library only; any Python 3.11 runs it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from driver_common import Call, followup_proxy, main, outcome, timeout_s

CLIENT = "claude-code"
QUIET = {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1",
         "DISABLE_ERROR_REPORTING": "1", "CLAUDE_CODE_MAX_RETRIES": "0",
         "CLAUDE_CODE_DISABLE_NONSTREAMING_FALLBACK": "1", "DISABLE_BUG_COMMAND": "1"}
SYNTHETIC = "<synthetic>"


def version(client_dir: Path) -> str:
    package = client_dir / "node_modules" / "@anthropic-ai" / "claude-code" / "package.json"
    return str(json.loads(package.read_text()).get("version", "?")) if package.is_file() else "?"


def outcome_of(stdout: str, out: dict[str, Any]) -> dict[str, Any]:
    """Read the stream-json lines into ``out``: the first answer's blocks, then the run's result."""
    texts: list[str] = []
    answers: list[str] = []  # the ids of the assistant messages, in order
    result: dict[str, Any] | None = None
    for line in stdout.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if record.get("type") == "result":
            result = record
        message = record.get("message") or {}
        if record.get("type") != "assistant" or record.get("parent_tool_use_id"):
            continue
        if message.get("model") == SYNTHETIC:
            continue  # the message Claude Code makes of an error ("API Error: …"), not an answer
        answer = str(message.get("id"))
        if answer not in answers:
            answers.append(answer)
        if answer != answers[0]:
            continue  # a later answer (after the tool result)
        for block in message.get("content") or ():
            if block.get("type") == "text":
                texts.append(str(block.get("text") or ""))
            elif block.get("type") == "tool_use":
                out["tool_calls"].append({"id": block.get("id"), "name": block.get("name"),
                                          "arguments": json.dumps(block.get("input"), separators=(",", ":"))})
    out["text"] = "".join(texts) if texts else None
    if result is None:
        out["raised"] = "NoResult: claude printed no result"
        return out
    if result.get("is_error"):
        out["raised"] = str(result.get("result") or result.get("subtype") or "is_error")
    if len(answers) <= 1:
        out["finish_reason"] = result.get("stop_reason")
    return out


def run(client_dir: Path, call: Call) -> dict[str, Any]:
    out = outcome(CLIENT, version(client_dir), call.dialect)
    if call.dialect != "messages":
        out["raised"] = "UnsupportedDialect: Claude Code speaks only the Messages API"
        return out
    home = Path(tempfile.mkdtemp(prefix="sse-check-claude-"))
    try:
        with followup_proxy(call.root_url, call.dialect) as proxy:
            env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "TMPDIR": str(home),
                   "ANTHROPIC_BASE_URL": proxy, "ANTHROPIC_API_KEY": "sk-ant-oracle",
                   "API_TIMEOUT_MS": str(int(timeout_s() * 1000)), **QUIET}
            argv = [str(client_dir / "node_modules" / ".bin" / "claude"), "-p", "hi", "--output-format",
                    "stream-json", "--verbose", "--max-turns", "2", "--model", call.model]
            try:
                proc = subprocess.run(argv, cwd=home, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                                      text=True, timeout=timeout_s() + 10)
            except subprocess.TimeoutExpired:
                out["raised"] = f"Timeout: claude did not finish within {timeout_s() + 10:g} s"
                return out
        return outcome_of(proc.stdout, out)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def entry() -> int:
    args = sys.argv[1:]
    if args[:1] != ["--client-dir"] or len(args) < 2:
        raise SystemExit("usage: claude_code_driver.py --client-dir DIR (BASE_URL MODEL DIALECT [TOOLS] | --batch)")
    client_dir = Path(args[1])
    return main(lambda call: run(client_dir, call), args[2:])


if __name__ == "__main__":
    sys.exit(entry())
