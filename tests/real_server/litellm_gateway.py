"""A real LiteLLM proxy in front of a real llama-server, for the real-server suite (``make test-all``).

LiteLLM (PyPI ``litellm[proxy]``, pinned by the ``gateway`` extra of pyproject.toml) turns a Chat
Completions backend into a Responses stream: with ``use_chat_completions_api: true`` in a model's
``litellm_params`` its ``POST /v1/responses`` calls the backend's ``/v1/chat/completions`` and bridges the
answer (litellm/responses/main.py, ``_bridges_to_chat_completions``). That bridge is what the suite checks.

The proxy runs from its own virtual environment (``make`` installs the extra into ``.venv/gateway``): its
~85 dependencies pin other releases of packages sse-check and its oracles use (rich, websockets), and the
checker's tests must run against the releases the project pins, not the gateway's.

``start_litellm`` writes the config into a temporary folder, starts the ``litellm`` command itself (one
process: uvicorn with one worker, no child) on a free loopback port with an environment that keeps it
offline (no model-cost map download, no database, no proxy for loopback), waits for
``/health/liveliness`` and stops it by its pid (SIGTERM, then SIGKILL), also when the start fails.

Run by hand (for recording captures/litellm, see its README)::

    python tests/real_server/litellm_gateway.py http://127.0.0.1:8080 --port 4000
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from processes import answers, free_port, read_log, stop_by_pid

ROOT = Path(__file__).resolve().parents[2]
# The model name the clients ask for; the proxy maps it to the llama-server's model.
MODEL = "tiny-qwen3-random"
# Clients authenticate with the proxy's master key (LiteLLM refuses requests without it once it is set).
MASTER_KEY = "sk-sse-check-gateway"
COMMAND_ENV = "SSE_CHECK_LITELLM"  # the `litellm` command to run (the Makefile points it at .venv/gateway)
START_TIMEOUT_S = 180.0  # about 20 s on 2 idle cores; the import of litellm's proxy is heavy

# What the proxy is given, in the words of its docs (docs.litellm.ai/docs/proxy/configs): one model, the
# OpenAI-compatible provider pointed at the llama-server, and the Chat Completions bridge for Responses.
CONFIG_TEMPLATE = """\
model_list:
  - model_name: {model}
    litellm_params:
      model: openai/{model}
      api_base: {upstream}/v1
      api_key: sk-llama-server-needs-none
      use_chat_completions_api: true
general_settings:
  master_key: os.environ/LITELLM_MASTER_KEY
"""

# Offline and quiet: the bundled model-cost map instead of a download at import, no database (a
# DATABASE_URL from the caller's environment would make it run migrations), no HTTP proxy for loopback.
OFFLINE_ENV = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LITELLM_MASTER_KEY": MASTER_KEY,
    "LITELLM_LOG": "ERROR",
    "HF_HUB_OFFLINE": "1",
    "NO_PROXY": "127.0.0.1,localhost",
    "no_proxy": "127.0.0.1,localhost",
}
DROPPED_ENV = ("DATABASE_URL", "DIRECT_URL", "REDIS_HOST", "REDIS_URL", "HTTP_PROXY", "HTTPS_PROXY", "http_proxy",
               "https_proxy", "OPENAI_API_KEY", "OPENAI_BASE_URL")


class GatewayUnavailable(Exception):
    """The ``litellm`` command is not installed here (no ``gateway`` extra)."""


def find_litellm() -> str:
    """The ``litellm`` command: ``$SSE_CHECK_LITELLM``, then the project's ``.venv/gateway``, then next to
    this interpreter, then on PATH."""
    configured = os.environ.get(COMMAND_ENV)
    candidates = [Path(configured)] if configured else []
    candidates += [ROOT / ".venv" / "gateway" / "bin" / "litellm", Path(sys.executable).parent / "litellm"]
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    if configured:
        raise GatewayUnavailable(f"${COMMAND_ENV} names no executable: {configured}")
    found = shutil.which("litellm")
    if found:
        return found
    raise GatewayUnavailable("no litellm command (`make test-real-server` installs the `gateway` extra into "
                             ".venv/gateway)")


def litellm_version(command: str) -> str:
    """The installed LiteLLM release, read from the metadata of the command's own environment."""
    python = Path(command).with_name("python")
    interpreter = str(python) if python.is_file() else sys.executable
    proc = subprocess.run([interpreter, "-c", "import importlib.metadata as m; print(m.version('litellm'))"],
                          capture_output=True, text=True, timeout=60)
    return proc.stdout.strip() or "unknown"


@dataclass
class Gateway:
    proc: subprocess.Popen[bytes]
    url: str  # http://127.0.0.1:PORT
    command: str
    config: str  # the config.yaml it runs with
    _log: IO[bytes]
    _folder: tempfile.TemporaryDirectory[str]

    @property
    def pid(self) -> int:
        return self.proc.pid

    def log(self) -> str:
        return read_log(self._log)

    def stop(self) -> int:
        """Stop the proxy by its pid (SIGTERM, then SIGKILL) and remove its folder; its exit status."""
        status = stop_by_pid(self.proc)
        self._folder.cleanup()
        return status

    def close(self) -> None:
        self.stop()
        self._log.close()


def config_text(upstream: str) -> str:
    return CONFIG_TEMPLATE.format(model=MODEL, upstream=upstream.rstrip("/"))


def start_litellm(upstream: str, command: str | None = None, port: int | None = None) -> Gateway:
    """Start the LiteLLM proxy in front of ``upstream`` (a llama-server's base URL) on a free loopback port
    and wait until it answers; stopped by its pid if it does not."""
    command = command or find_litellm()
    last = ""
    for _attempt in range(1 if port else 3):  # a free port can be taken between the check and the bind
        folder = tempfile.TemporaryDirectory(prefix="sse-check-litellm-")
        config = Path(folder.name) / "config.yaml"
        config.write_text(config_text(upstream))
        env = {k: v for k, v in os.environ.items() if k not in DROPPED_ENV} | OFFLINE_ENV
        chosen = port or free_port()
        log = tempfile.TemporaryFile()  # a file, not a pipe: a chatty proxy must never block on it
        proc = subprocess.Popen([command, "--config", str(config), "--host", "127.0.0.1", "--port", str(chosen),
                                 "--num_workers", "1"], stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, cwd=folder.name, env=env)
        gateway = Gateway(proc=proc, url=f"http://127.0.0.1:{chosen}", command=command, config=config.read_text(),
                          _log=log, _folder=folder)
        deadline = time.monotonic() + START_TIMEOUT_S
        try:
            while time.monotonic() < deadline and proc.poll() is None:
                if answers(f"{gateway.url}/health/liveliness"):
                    return gateway
                time.sleep(0.25)
        except BaseException:
            gateway.close()
            raise
        gateway.stop()
        last = gateway.log()[-3000:]
        log.close()
    raise RuntimeError(f"the LiteLLM proxy did not come up: {last}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="run the LiteLLM proxy of the real-server suite in front of a "
                                                 "llama-server until interrupted")
    parser.add_argument("upstream", help="the llama-server, e.g. http://127.0.0.1:8080")
    parser.add_argument("--port", type=int, default=4000)
    args = parser.parse_args(argv)
    # Ctrl-C or a plain `kill` of this process stops the proxy too (a background job inherits SIGINT ignored).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    gateway = start_litellm(args.upstream, port=args.port)
    print(f"LiteLLM {litellm_version(gateway.command)} (pid {gateway.pid}) on {gateway.url}, "
          f"API key {MASTER_KEY}; Ctrl-C stops it", flush=True)
    try:
        gateway.proc.wait()
    except KeyboardInterrupt:
        pass
    finally:
        gateway.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
