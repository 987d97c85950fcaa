"""Hugging Face ``transformers serve`` for the real-server suite (``make test-all``; never collected by ``make test``).

PyPI ``transformers[serving]==5.23.0`` with ``torch==2.13.0`` (Apache-2.0, BSD-3-Clause; Python 3.11) runs in its
own pinned environment, ``tools/envs/transformers.txt``, installed by ``envs.ensure("transformers")`` into
``~/.cache/sse-check/envs/`` (``.ci/run`` and ``make test-real-server`` install it before the suite). Its model is
the project's scripted tiny Qwen3 (tools/tiny-qwen3/make_tiny.py, generated and checked by tiny_qwen3.py here
into ``$SSE_CHECK_CACHE/tiny-qwen3/``). Nothing is downloaded and nothing leaves loopback:

* ``HF_HUB_OFFLINE=1`` (the model is a local folder, named relative to the working directory as a user names
  it: ``transformers serve tiny-qwen3-scripted`` from the folder holding it), telemetry and the CLI's daily
  PyPI update check off (``HF_HUB_DISABLE_TELEMETRY``, ``HF_HUB_DISABLE_UPDATE_CHECK``, ``DO_NOT_TRACK``), no
  proxy;
* ``HF_HOME`` is a folder of its own, made for each start and removed after, so no user's Hugging Face cache is
  read. Its model cache folder (``$HF_HOME/hub``) does not exist unless ``hub=True``: a new user's machine, on
  which ``GET /v1/models`` answers 500 (the server lists the models of that folder with huggingface_hub's
  ``scan_cache_dir``, which raises when it is missing; captures/transformers/README.md).

The server is started on a free loopback port, its pid is the server (the ``transformers`` console script runs
uvicorn in its own process), it is up when ``GET /health`` answers 200 (about 20 s on 2 cores: the import of
torch and the model load), and it is stopped by that pid (SIGTERM, then SIGKILL), also when a test fails.

The session fixture ``transformers_serve`` (imported by conftest.py) starts one for the whole session. Where the
environment or the model cannot be had it skips with the reason, or fails with ``$CI`` or
``$SSE_CHECK_REQUIRE_REAL_SERVER`` set.

Run by hand (for recording captures/transformers: captures/record_transformers.py)::

    python tests/real_server/transformers_serve.py --port 18900
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from processes import free_port, http_status, read_log, run_by_hand, stop_by_pid
from tiny_qwen3 import NAME, TinyQwen3Unavailable, ensure_tiny_qwen3

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))  # tools/envs.py: the pinned environments

from envs import EnvUnavailable, ensure  # noqa: E402

ENV = "transformers"
VERSION = "5.23.0"
# The name requests must give (the server is pinned to it; any other: 400) and the one it answers with.
MODEL = NAME
SERVED_AS = f"{NAME}@main"
# What its probe is run with (captures/transformers/README.md): both endpoints it streams; it has no Messages.
PROBE_ARGS = ("--model", MODEL, "--api", "responses,chat")
RECORDED = ROOT / "captures" / "transformers"
START_TIMEOUT_S = 180.0  # about 20 s on 2 idle cores; the machine is shared
DROPPED_ENV = ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy", "HF_TOKEN",
               "HUGGING_FACE_HUB_TOKEN", "HF_ENDPOINT", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "TRANSFORMERS_CACHE",
               "OPENAI_API_KEY", "OPENAI_BASE_URL")
QUIET_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1",
             "HF_HUB_DISABLE_UPDATE_CHECK": "1", "DO_NOT_TRACK": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1",
             "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1", "NO_PROXY": "127.0.0.1,localhost", "PYTHONUNBUFFERED": "1"}


class TransformersUnavailable(Exception):
    """The server cannot be had here (no Python 3.11, the install failed, the model generator failed)."""


def environment() -> Path:
    """The installed environment (installed on first use)."""
    try:
        return ensure(ENV)
    except EnvUnavailable as exc:
        raise TransformersUnavailable(str(exc)) from None


def model() -> Path:
    """The scripted tiny Qwen3's folder (generated on first use)."""
    try:
        return ensure_tiny_qwen3()
    except TinyQwen3Unavailable as exc:
        raise TransformersUnavailable(str(exc)) from None


@dataclass
class TransformersServer:
    proc: subprocess.Popen[bytes]
    url: str  # http://127.0.0.1:PORT
    env: Path
    hf_home: Path  # removed by close()
    started_in: float  # seconds from the start to the first 200 of /health
    _log: IO[bytes]

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def hub(self) -> Path:
        """Its model cache folder, which GET /v1/models scans."""
        return self.hf_home / "hub"

    def log(self) -> str:
        return read_log(self._log)

    def stop(self) -> int:
        return stop_by_pid(self.proc)

    def close(self) -> None:
        self.stop()
        self._log.close()
        shutil.rmtree(self.hf_home, ignore_errors=True)


def command(env: Path, port: int) -> list[str]:
    return [str(env / "bin" / "transformers"), "serve", MODEL, "--host", "127.0.0.1", "--port", str(port),
            "--device", "cpu"]


def start_transformers(port: int | None = None, hub: bool = False) -> TransformersServer:
    """Install (once), generate the model (once), then start the server on a free loopback port and wait for
    /health; stopped by its pid if it does not come up. ``hub``: create its model cache folder first."""
    env, folder = environment(), model()
    last = ""
    for _attempt in range(1 if port else 3):  # a free port can be taken between the check and the bind
        chosen = port or free_port()
        hf_home = Path(tempfile.mkdtemp(prefix="sse-check-hf-home-"))
        if hub:
            (hf_home / "hub").mkdir()
        run_env = {k: v for k, v in os.environ.items() if k not in DROPPED_ENV} | QUIET_ENV | {"HF_HOME": str(hf_home)}
        log = tempfile.TemporaryFile()  # a file, not a pipe: a full pipe would block the server
        began = time.monotonic()
        proc = subprocess.Popen(command(env, chosen), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=run_env, cwd=folder.parent)
        server = TransformersServer(proc=proc, url=f"http://127.0.0.1:{chosen}", env=env, hf_home=hf_home,
                                    started_in=0.0, _log=log)
        deadline = began + START_TIMEOUT_S
        try:
            while time.monotonic() < deadline and proc.poll() is None:
                if http_status(f"{server.url}/health") == 200:
                    server.started_in = time.monotonic() - began
                    return server
                time.sleep(0.25)
        except BaseException:
            server.close()
            raise
        server.stop()
        last = server.log()[-3000:]
        server.close()
    raise RuntimeError(f"transformers serve did not come up: {last}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="run the real-server suite's transformers serve until interrupted")
    parser.add_argument("--port", type=int, default=18900)
    parser.add_argument("--hub", action="store_true", help="create its model cache folder ($HF_HOME/hub) first")
    args = parser.parse_args(argv)
    return run_by_hand(lambda: start_transformers(port=args.port, hub=args.hub),
                       lambda server: f"transformers serve {VERSION} (pid {server.pid}, up in "
                                      f"{server.started_in:.0f} s) on {server.url}, model {MODEL!r}; Ctrl-C stops it")


if __name__ == "__main__":
    sys.exit(main())
