"""The registry of real clients: who they are, what they speak, which version, and how each is run.

One :class:`RealClient` per client column of the matrix (its ``name`` IS the matrix name, the name in
``checker.clients.CLIENTS`` and in each dialect's ``effects.CLIENTS``). How a client runs:

* ``in_process``: a Python function ``"module:function"`` taking a :class:`~checker.oracles.protocol.DriverCall`
  and returning an :class:`~checker.oracles.protocol.Outcome`, run in the checker's interpreter (the client
  package must import there: ``package``);
* ``driver``: a command (:class:`Driver`) speaking the driver protocol of ``checker.oracles.protocol``, run in
  a pinned environment of its own (an npm folder or a venv: ``checker/oracles/pins/NAME``, which ships with
  sse-check and is installed by ``python -m checker.oracles.envs install NAME``, or, for the test suites'
  own, ``tools/envs/NAME``, installed by ``python3 tools/envs.py install NAME``). Its argv template may name
  ``{env}`` (the environment's folder), ``{python}`` (its interpreter, ``{env}/bin/python``),
  ``{interpreter}`` (the Python running sse-check: the standard-library driver of a client that is a program,
  codex), ``{node}`` (node on PATH) and ``{drivers}`` (this package's ``drivers/`` folder, where driver scripts
  live). Files listed in ``copy`` are copied from
  ``drivers/`` into the environment's folder before a run (Node resolves a script's imports from the script's
  own folder).

To add a client: one ``RealClient(...)`` in :data:`CLIENTS` (and its driver script under
``checker/oracles/drivers/`` and pins under ``checker/oracles/pins/``); the runner (``checker.oracles.runner``), ``--oracle``,
the readiness table and docs/clients.md pick it up from here.

Where an environment lives: ``$SSE_CHECK_ENV_<NAME>`` (NAME upper-cased, ``-`` as ``_``) when set, else the
cache folder ``checker.oracles.envs`` installs it into (``~/.cache/sse-check/envs/NAME-HASH``, keyed by its
pins), when it is installed. Nothing is installed from here: a client that is not installed is "not run", with its install hint.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

DRIVERS = Path(__file__).resolve().parent / "drivers"
_ROOT = Path(__file__).resolve().parents[2]  # the source checkout, when sse-check runs from one


@dataclass(frozen=True, slots=True, kw_only=True)
class Driver:
    """An out-of-process client: its environment and its command."""

    env: str | None  # tools/envs/NAME; None: the command needs no environment of its own
    command: tuple[str, ...]  # argv template ({env}, {python}, {interpreter}, {node}, {drivers})
    batch: bool = False  # accepts --batch (many jobs, one process)
    copy: tuple[str, ...] = ()  # files of drivers/ copied into {env} before a run
    needs: tuple[str, ...] = ()  # programs that must be on PATH ("node")


@dataclass(frozen=True, slots=True, kw_only=True)
class RealClient:
    """One real client: its matrix name, the dialects it speaks, its pinned version and how it runs."""

    name: str
    dialects: tuple[str, ...]
    version: str  # the pinned release (the pin files say the same; tests/test_oracle_registry.py checks it)
    package: str  # the package as its registry names it ("openai" on PyPI, "@openai/codex" on npm)
    calls: dict[str, str]  # dialect -> the user-facing call the oracle makes
    install: str  # how to install it here (one line)
    in_process: str | None = None  # "module:function"
    imports: str | None = None  # in process: the module that must import
    driver: Driver | None = None
    env: dict[str, str] = field(default_factory=dict)  # the client's own switches (telemetry, updates off)
    notes: str = ""

    @property
    def runs(self) -> str:
        """How the oracle runs, in words (for the docs and the readiness table)."""
        if self.in_process is not None:
            return "in process, over loopback HTTP"
        if self.driver is not None and self.driver.env:
            return f"driver in tools/envs/{self.driver.env}, over loopback HTTP"
        return "driver, over loopback HTTP"


CLIENTS: tuple[RealClient, ...] = (
    RealClient(
        name="openai-python", dialects=("responses", "chat"), version="3.57.0", package="openai (PyPI)",
        calls={"responses": "client.responses.stream(...) + get_final_response()",
               "chat": "client.chat.completions.stream(...) + get_final_completion()"},
        install="pip install -e '.[test]' (openai==3.57.0)", in_process="checker.oracles.openai_python:drive",
        imports="openai"),
    RealClient(
        name="anthropic-python", dialects=("messages",), version="2.15.0", package="anthropic (PyPI)",
        calls={"messages": "client.messages.stream(...) + get_final_message()"},
        install="pip install -e '.[test]' (anthropic==2.15.0)", in_process="checker.oracles.anthropic_python:drive",
        imports="anthropic"),
    RealClient(
        name="openai-node", dialects=("responses", "chat"), version="7.59.0", package="openai (npm)",
        calls={"responses": "client.responses.stream(...) + finalResponse()",
               "chat": "client.chat.completions.stream(...) + finalChatCompletion()"},
        install="python3 tools/envs.py install openai-node",
        driver=Driver(env="openai-node", command=("{node}", "{env}/openai_node.mjs"), batch=True,
                      copy=("openai_node.mjs", "common.mjs"), needs=("node",))),
    RealClient(
        name="anthropic-ts", dialects=("messages",), version="1.15.0", package="@anthropic-ai/sdk (npm)",
        calls={"messages": "client.messages.stream(...) + finalMessage()"},
        install="python3 tools/envs.py install anthropic-ts",
        driver=Driver(env="anthropic-ts", command=("{node}", "{env}/anthropic_ts.mjs"), batch=True,
                      copy=("anthropic_ts.mjs", "common.mjs"), needs=("node",))),
    # The clients below are pinned in checker/oracles/pins (they ship with sse-check: `python -m
    # checker.oracles.envs install NAME` installs one wherever sse-check is installed).
    RealClient(
        name="codex", dialects=("responses",), version="0.169.0", package="@openai/codex (npm)",
        calls={"responses": "codex exec --json (a custom model provider, wire_api = \"responses\")"},
        install="python -m checker.oracles.envs install codex",
        driver=Driver(env="codex", command=("{interpreter}", "{drivers}/codex_driver.py", "--client-dir", "{env}"),
                      batch=True),
        notes="codex 0.169.0 refuses wire_api = \"chat\" (\"no longer supported\"): it speaks Responses only. "
              "Every codex feature that reaches the network is off (plugins and their git marketplace sync, apps, "
              "model discovery, update checks, analytics, feedback); a tool call gets a plain text second answer "
              "from the driver's follow-up proxy, so the agent ends its turn."),
    RealClient(
        name="claude-code", dialects=("messages",), version="2.1.197", package="@anthropic-ai/claude-code (npm)",
        calls={"messages": "claude -p --output-format stream-json --verbose (ANTHROPIC_BASE_URL), its result"},
        install="python -m checker.oracles.envs install claude-code",
        driver=Driver(env="claude-code", command=("{interpreter}", "{drivers}/claude_code_driver.py", "--client-dir",
                                                  "{env}"), batch=True),
        notes="a temporary HOME per run; nonessential traffic, telemetry, error reporting and the auto-updater off, "
              "retries 0, no non-streaming fallback; a tool_use (or a max_tokens stop, which Claude Code continues) "
              "gets a plain text second answer from the driver's follow-up proxy; --max-turns 2."),
    RealClient(
        name="openai-agents", dialects=("responses", "chat"), version="0.24.0", package="openai-agents (PyPI)",
        calls={"responses": "Runner.run_streamed(Agent(model=OpenAIResponsesModel(...))) + stream_events()",
               "chat": "Runner.run_streamed(Agent(model=OpenAIChatCompletionsModel(...))) + stream_events()"},
        install="python -m checker.oracles.envs install openai-agents",
        driver=Driver(env="openai-agents", command=("{python}", "{drivers}/openai_agents_driver.py"), batch=True),
        notes="tracing off; a function tool per function the stream calls (arguments parsed by the SDK's own "
              "function-tool parser), stop_on_first_tool (one model call)."),
    RealClient(
        name="langchain", dialects=("responses", "chat", "messages"), version="1.7.4",
        package="langchain-openai (PyPI)",
        calls={"responses": "ChatOpenAI(use_responses_api=True).stream(...), chunks summed",
               "chat": "ChatOpenAI(use_responses_api=False).stream(...), chunks summed",
               "messages": "ChatAnthropic(...).stream(...) (langchain-anthropic 1.7.10), chunks summed"},
        install="python -m checker.oracles.envs install langchain",
        driver=Driver(env="langchain", command=("{python}", "{drivers}/langchain_driver.py"), batch=True),
        notes="LangSmith tracing off; the functions the stream calls bound as tools; invalid tool calls are "
              "reported as errors (LangChain returns them instead of raising)."),
    RealClient(
        name="vercel-ai", dialects=("responses", "chat", "messages"), version="7.0.173", package="ai (npm)",
        calls={"responses": "streamText({model: createOpenAI(...).responses(MODEL)}) + text, toolCalls, finishReason "
                            "(@ai-sdk/openai 4.0.118)",
               "chat": "streamText({model: createOpenAI(...).chat(MODEL)}) + text, toolCalls, finishReason "
                       "(@ai-sdk/openai 4.0.118)",
               "messages": "streamText({model: createAnthropic(...)(MODEL)}) + text, toolCalls, finishReason "
                           "(@ai-sdk/anthropic 4.0.105)"},
        install="python -m checker.oracles.envs install vercel-ai",
        driver=Driver(env="vercel-ai", command=("{node}", "{env}/vercel_ai.mjs"), batch=True,
                      copy=("vercel_ai.mjs", "common.mjs"), needs=("node",)),
        notes="telemetry is opt-in (experimental_telemetry) and left off, no switch needed (the loopback env of "
              "checker.oracles.protocol.QUIET_ENV applies); its console warnings off (globalThis.AI_SDK_LOG_WARNINGS "
              "= false in the driver); maxRetries 0; the SDK does not throw for a "
              "stream that goes wrong but yields error parts (and tool-error parts for a call it cannot parse), "
              "which are the outcome's errors; the functions the stream calls are tools without execute (no "
              "second request)."),
)


def names() -> list[str]:
    return [c.name for c in CLIENTS]


def get(name: str) -> RealClient:
    for client in CLIENTS:
        if client.name == name:
            return client
    raise KeyError(name)


def for_dialect(dialect: str) -> list[RealClient]:
    """The real clients that speak ``dialect``, in registry order."""
    return [c for c in CLIENTS if dialect in c.dialects]


def env_folder(name: str) -> Path | None:
    """The installed environment ``name`` (checker/oracles/pins/NAME, or tools/envs/NAME in a source checkout),
    or None when it is not installed here."""
    configured = os.environ.get("SSE_CHECK_ENV_" + name.upper().replace("-", "_"))
    if configured:
        return Path(configured) if Path(configured).is_dir() else None
    return _envs_module().installed(name)


def _envs_module() -> ModuleType:
    """The package's installer (checker.oracles.envs), with the test suites' pins (tools/envs) when sse-check
    runs from a source checkout."""
    from checker.oracles import envs

    tools = _ROOT / "tools" / "envs"
    if tools.is_dir() and tools not in envs.PIN_DIRS:
        envs.PIN_DIRS.append(tools)
    return envs


def unavailable(client: RealClient) -> str | None:
    """Why ``client`` cannot be run here (with its install hint), or None when it can."""
    if client.in_process is not None:
        if client.imports and importlib.util.find_spec(client.imports) is None:
            return f"the {client.imports} package is not installed ({client.install})"
        return None
    driver = client.driver
    if driver is None:
        return "no oracle: neither an in-process runner nor a driver"
    for program in driver.needs:
        if shutil.which(program) is None:
            return f"{program} is not on PATH ({client.install})"
    if driver.env is not None and env_folder(driver.env) is None:
        return f"its environment {driver.env} is not installed ({client.install})"
    return None


def command(client: RealClient) -> list[str]:
    """The driver's argv prefix, its files copied into its environment first (call when ``unavailable`` is None)."""
    driver = client.driver
    if driver is None:
        raise ValueError(f"{client.name} runs in process, not as a driver")
    env = env_folder(driver.env) if driver.env else None
    for name in driver.copy:  # copied when changed: a driver edit applies without a reinstall
        if env is None:
            break
        source, target = DRIVERS / name, env / name
        if not target.is_file() or target.read_bytes() != source.read_bytes():
            shutil.copyfile(source, target)
    fields = {"env": str(env or ""), "python": str((env or Path(sys.prefix)) / "bin" / "python"),
              "interpreter": sys.executable,
              "node": shutil.which("node") or "node", "drivers": str(DRIVERS)}
    return [part.format(**fields) for part in driver.command]
