"""Record a probe of vLLM's CPU build (serving the scripted tiny Qwen3) as captures/vllm.

    python captures/record_vllm.py                        # starts vLLM itself (tests/real_server/vllm_server.py)
    python captures/record_vllm.py http://127.0.0.1:18900  # a vLLM already running with the suite's flags
    python captures/record_vllm.py --declare-only          # after a change of the checker: sidecars only

Runs ``sse-check probe`` (every built-in scenario on the three endpoints, and the surface flows) with
``--save`` and keeps what it saved, byte for byte, as captures/gpt-oss keeps its probe: per scenario ``X.sse``
(the body), ``X.meta.json`` (request, status, headers, timings, how it ended), ``X.nonstream.json`` and the
flows' ``*.flow.json``. Beside each body it writes the declarations the corpus tests read:

* ``X.expect.json``: the codes ``sse-check lint`` reports on the saved exchange (the HTTP checks included),
  per profile (``openai``, and ``vllm`` where that profile exists); tests/test_vllm_captures.py checks them and
  tests/real_server/test_vllm.py holds the live server to them;
* ``X.clients.json``: the client matrix on each whole stream (a 200 event stream that ended complete), which
  the real clients are held to (tests/test_vllm_captures.py runs every registered one on it).

The ids and timings of a new recording differ; review the codes against captures/vllm/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from checker.captures import request_for  # noqa: E402
from checker.compat import matrix  # noqa: E402
from checker.engine import LintResult  # noqa: E402
from checker.http_checks import ExchangeLinter, header  # noqa: E402
from checker.profiles import PROFILES, get_profile  # noqa: E402

OUT = HERE / "vllm"
MODEL = "tiny-qwen3-scripted"  # tests/real_server/tiny_qwen3.py NAME, the --served-model-name
PROFILES_DECLARED = tuple(p for p in ("openai", "vllm") if p in PROFILES)
# The probe's waits, as tests/real_server/vllm_server.py PROBE_ARGS has them (a busy 2-core machine is slow).
WAITS = ("--idle-timeout", "180", "--first-byte-timeout", "180")
KEPT = (".sse", ".meta.json", ".nonstream.json", ".flow.json")


def probe(url: str, saved: Path) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, "-m", "checker", "probe", url, "--model", MODEL, *WAITS,
                           "--save", str(saved), "--format", "json", "--no-progress", "--isolated"],
                          capture_output=True, text=True, cwd=ROOT, timeout=1800, env={**os.environ, "NO_COLOR": "1"})
    if not proc.stdout.startswith("{"):
        raise SystemExit(f"sse-check probe failed (exit {proc.returncode}): {proc.stderr.strip()[-2000:]}")
    report: dict[str, Any] = json.loads(proc.stdout)
    return report


def meta_of(capture: Path) -> dict[str, Any]:
    meta: dict[str, Any] = json.loads(capture.with_name(capture.name.removesuffix(".sse") + ".meta.json").read_text())
    return meta


def lint(capture: Path, profile: str = "openai") -> LintResult:
    """The saved exchange as ``sse-check lint`` checks it (its status, headers and ending with the body)."""
    linter = ExchangeLinter(meta_of(capture), profile=get_profile(profile), request=request_for(capture))
    linter.feed(capture.read_bytes())
    return linter.close()


def is_whole_stream(capture: Path) -> bool:
    """A 200 event stream that ended complete: what the real clients can be replayed (tests/test_corpus.py's
    is_probe_exchange is the negation)."""
    meta = meta_of(capture)
    return (meta.get("status") == 200 and "text/event-stream" in (header(meta, "content-type") or "")
            and (meta.get("ending") or {}).get("kind") == "complete" and not meta.get("fault"))


def declare(capture: Path) -> None:
    stem = capture.name.removesuffix(".sse")
    codes = {profile: sorted({f.code for f in lint(capture, profile).findings}) for profile in PROFILES_DECLARED}
    capture.with_name(f"{stem}.expect.json").write_text(json.dumps(codes, indent=2) + "\n")
    clients = capture.with_name(f"{stem}.clients.json")
    if is_whole_stream(capture):
        clients.write_text(json.dumps(matrix(lint(capture)).verdicts(), indent=2) + "\n")
    else:
        clients.unlink(missing_ok=True)


def record(saved: Path, out: Path) -> int:
    """Replace what ``out`` holds (its README stays) with what the probe saved."""
    if out.is_dir():
        for old in sorted(out.rglob("*")):
            if old.is_file() and old.name != "README.md":
                old.unlink()
    count = 0
    for path in sorted(saved.rglob("*")):
        if path.is_file() and path.name.endswith(KEPT):
            target = out / path.relative_to(saved)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
            count += path.name.endswith(".sse")
    return count


def declare_all(out: Path) -> int:
    captures = sorted(out.rglob("*.sse"))
    for capture in captures:
        declare(capture)
    return len(captures)


def _start() -> tuple[str, Any]:
    sys.path.insert(0, str(ROOT / "tests" / "real_server"))
    from vllm_server import start_vllm

    server = start_vllm()
    print(f"vLLM up in {server.started_s:.0f} s on {server.url} (pid {server.pid})", file=sys.stderr)
    return server.url, server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("url", nargs="?", help="a running vLLM (default: start one, as the real-server suite does)")
    parser.add_argument("--out", type=Path, default=OUT, help="where to write the captures (captures/vllm)")
    parser.add_argument("--declare-only", action="store_true",
                        help="no probe: rewrite the X.expect.json and X.clients.json of the captures in OUT from "
                             "what sse-check reports on them today (after a change of the checker; review them)")
    args = parser.parse_args(argv)
    if not args.declare_only:
        url, server = (args.url, None) if args.url else _start()
        try:
            with tempfile.TemporaryDirectory() as folder:
                report = probe(url, Path(folder))
                kept = record(Path(folder), args.out)
        finally:
            if server is not None:
                server.close()
        print(f"recorded {kept} capture(s) of {len(report['files'])} probe entries into {args.out}")
    print(f"declared {declare_all(args.out)} capture(s) in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
