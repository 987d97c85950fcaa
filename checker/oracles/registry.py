"""The registry of real clients: who they are, what they speak, which version, and how each is run.

One :class:`RealClient` per client column of the matrix (its ``name`` IS the matrix name, the name in
``checker.clients.CLIENTS`` and in each dialect's ``effects.CLIENTS``). How a client runs:

* ``in_process``: a Python function ``"module:function"`` taking a :class:`~checker.oracles.protocol.DriverCall`
  and returning an :class:`~checker.oracles.protocol.Outcome`, run in the checker's interpreter (the client
  package must import there: ``package``);
* ``driver``: a command (:class:`Driver`) speaking the driver protocol of ``checker.oracles.protocol``, run in
  a pinned environment of its own (``tools/envs/NAME``: an npm folder or a venv, installed by
  ``python3 tools/envs.py install NAME``). Its argv template may name ``{env}`` (the environment's folder),
  ``{python}`` (its interpreter, ``{env}/bin/python``), ``{node}`` (node on PATH) and ``{drivers}`` (this
  package's ``drivers/`` folder, where driver scripts live). Files listed in ``copy`` are copied from
  ``drivers/`` into the environment's folder before a run (Node resolves a script's imports from the script's
  own folder).

To add a client: one ``RealClient(...)`` in :data:`CLIENTS` (and its driver script under
``checker/oracles/drivers/`` and pins under ``tools/envs/``); the runner (``checker.oracles.runner``), ``--oracle``,
the readiness table and docs/clients.md pick it up from here.

Where an environment lives: ``$SSE_CHECK_ENV_<NAME>`` (NAME upper-cased, ``-`` as ``_``) when set, else the
folder ``tools/envs.py`` installs it into, when sse-check runs from a source checkout and the environment is
installed. Nothing is installed from here: a client that is not installed is "not run", with its install hint.
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
    command: tuple[str, ...]  # argv template ({env}, {python}, {node}, {drivers})
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
    """The installed environment ``name`` (tools/envs/NAME), or None when it is not installed here."""
    configured = os.environ.get("SSE_CHECK_ENV_" + name.upper().replace("-", "_"))
    if configured:
        return Path(configured) if Path(configured).is_dir() else None
    envs = _envs_module()
    if envs is None:
        return None
    try:
        folder: Path = envs.location(envs.spec(name))
    except Exception:  # noqa: BLE001 - no such environment, no such interpreter: not installed here
        return None
    return folder if (folder / envs.STAMP).is_file() else None


def _envs_module() -> ModuleType | None:
    """tools/envs.py of the source checkout (loaded by path: tools/ is not a package), or None."""
    path = _ROOT / "tools" / "envs.py"
    if not path.is_file():
        return None
    if "sse_check_tools_envs" in sys.modules:
        return sys.modules["sse_check_tools_envs"]
    spec = importlib.util.spec_from_file_location("sse_check_tools_envs", path)
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    sys.modules["sse_check_tools_envs"] = module
    spec.loader.exec_module(module)
    return module


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
              "node": shutil.which("node") or "node", "drivers": str(DRIVERS)}
    return [part.format(**fields) for part in driver.command]
