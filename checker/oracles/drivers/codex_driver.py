"""The codex driver: ``codex exec --json`` against a loopback server, as its users run it with a custom provider.

    python codex_driver.py --client-dir DIR BASE_URL MODEL DIALECT [TOOL,NAMES]   -> one JSON outcome
    python codex_driver.py --client-dir DIR --batch < jobs                        -> one outcome line per job

DIR is the codex environment (``checker/oracles/clients/codex``: ``node_modules/.bin/codex``). Each run gets a
temporary HOME and CODEX_HOME holding a config.toml whose provider is the loopback server (``wire_api =
"responses"``: codex 0.169.0 refuses ``"chat"``, "`wire_api = "chat"` is no longer supported"), with retries 0,
approvals never, a read-only sandbox, and every feature that reaches the network off (plugins and their
marketplace sync, which runs ``git ls-remote https://github.com/openai/plugins``; apps; model discovery; update
checks; analytics and feedback). Nothing but the loopback server is contacted.

codex has no turn limit: after a tool call it sends the result (``unsupported call: NAME`` for a function it
does not know) and asks again. codex talks to the follow-up proxy (``driver_common.followup_proxy``), which
relays its first request to the oracle's server and answers the second itself with plain text. What the
outcome reports is the first answer only, read from the session's rollout file (what codex recorded into its
history: messages and calls), and whether the turn failed (``turn.failed`` in the ``--json`` events).
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

CLIENT = "codex"
# Features of codex 0.169.0 (``codex features list``) that contact hosts other than the provider, or act on
# the machine, all off.
FEATURES_OFF = ("plugins", "remote_plugin", "plugin_sharing", "apps", "api_key_model_discovery", "daemon_auto_start",
                "in_app_updates", "shell_snapshot", "skill_mcp_dependency_install", "tool_suggest",
                "unbounded_connection_retries", "browser_use", "browser_use_external", "computer_use",
                "image_generation", "system_proxy_fallback", "goals", "hooks",
                "workspace_dependencies", "skill_search")
# codex's warning about a model name it has no metadata for: an `error` item that does not fail the turn.
_NOT_AN_ERROR = "Model metadata for"


def config(base_url: str, model: str) -> str:
    features = "\n".join(f"{name} = false" for name in FEATURES_OFF)
    return f"""check_for_update_on_startup = false
model = {json.dumps(model)}
model_provider = "oracle"
approval_policy = "never"
sandbox_mode = "read-only"

[model_providers.oracle]
name = "sse-check oracle"
base_url = {json.dumps(base_url.rstrip("/") + "/v1")}
wire_api = "responses"
env_key = "SSE_CHECK_ORACLE_KEY"
request_max_retries = 0
stream_max_retries = 0
stream_idle_timeout_ms = {int(timeout_s() * 1000)}

[analytics]
enabled = false

[feedback]
enabled = false

[features]
{features}
"""


def version(client_dir: Path) -> str:
    package = client_dir / "node_modules" / "@openai" / "codex" / "package.json"
    return str(json.loads(package.read_text()).get("version", "?")) if package.is_file() else "?"


def _first_answer(rollout: Path) -> tuple[str | None, list[dict[str, Any]]]:
    """The text and calls of the first model answer: the response items codex recorded after the prompt, up to
    its first tool output or token record (what followed answered the second request)."""
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    seen_prompt = False
    for line in rollout.read_text(errors="replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        kind, payload = record.get("type"), record.get("payload") or {}
        if kind == "token_usage_record" and seen_prompt:
            break
        if kind != "response_item":
            continue
        item = payload.get("type")
        if item == "message" and payload.get("role") == "user":
            seen_prompt = True
            continue
        if not seen_prompt:
            continue
        if item in ("function_call_output", "custom_tool_call_output"):
            break
        if item == "message" and payload.get("role") == "assistant":
            texts += [part.get("text") or "" for part in payload.get("content") or ()
                      if part.get("type") == "output_text"]
        elif item in ("function_call", "custom_tool_call"):
            arguments = payload.get("arguments") if item == "function_call" else payload.get("input")
            calls.append({"id": payload.get("call_id"), "name": payload.get("name"), "arguments": arguments})
    return ("".join(texts) if texts else None), calls


def run(client_dir: Path, call: Call) -> dict[str, Any]:
    out = outcome(CLIENT, version(client_dir), call.dialect)
    if call.dialect != "responses":
        out["raised"] = f"UnsupportedDialect: codex {out['version']} speaks only the Responses API"
        return out
    home = Path(tempfile.mkdtemp(prefix="sse-check-codex-"))
    try:
        (home / ".codex").mkdir()
        (home / "work").mkdir()
        with followup_proxy(call.root_url, call.dialect) as proxy:
            (home / ".codex" / "config.toml").write_text(config(proxy, call.model))
            return _exec(client_dir, home, out)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _exec(client_dir: Path, home: Path, out: dict[str, Any]) -> dict[str, Any]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "CODEX_HOME": str(home / ".codex"),
           "SSE_CHECK_ORACLE_KEY": "sk-oracle", "NO_COLOR": "1", "TMPDIR": str(home)}
    argv = [str(client_dir / "node_modules" / ".bin" / "codex"), "exec", "--skip-git-repo-check", "--color",
            "never", "--json", "hi"]
    try:
        proc = subprocess.run(argv, cwd=home / "work", env=env, stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=timeout_s() + 10)
    except subprocess.TimeoutExpired:
        out["raised"] = f"Timeout: codex did not finish within {timeout_s() + 10:g} s"
        return out
    failure: str | None = None
    for line in proc.stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("type") == "turn.failed":
            failure = str((event.get("error") or {}).get("message") or "the turn failed")
        item = event.get("item") or {}
        if event.get("type") == "item.completed" and item.get("type") == "error":
            message = str(item.get("message") or "")
            if not message.startswith(_NOT_AN_ERROR):
                out["errors"].append(message)
    rollouts = sorted((home / ".codex" / "sessions").rglob("rollout-*.jsonl"))
    if rollouts:
        out["text"], out["tool_calls"] = _first_answer(rollouts[0])
    if failure is not None:
        out["raised"] = f"turn.failed: {failure}"
    elif proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
        out["raised"] = f"Exit{proc.returncode}: {last}"
    return out


def entry() -> int:
    args = sys.argv[1:]
    if args[:1] != ["--client-dir"] or len(args) < 2:
        raise SystemExit("usage: codex_driver.py --client-dir DIR (BASE_URL MODEL DIALECT [TOOLS] | --batch)")
    client_dir = Path(args[1])
    return main(lambda call: run(client_dir, call), args[2:])


if __name__ == "__main__":
    sys.exit(entry())
