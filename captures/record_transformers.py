"""Record a probe of a live Hugging Face ``transformers serve`` as captures/transformers.

    python captures/record_transformers.py                      # starts the server itself, probes, records
    python captures/record_transformers.py --url http://127.0.0.1:18900     # a server started by hand
    python captures/record_transformers.py --declare-only       # after a change of the checker: re-declare

The server is the real-server suite's (tests/real_server/transformers_serve.py: transformers[serving] 5.23.0 from
its pinned environment, the scripted tiny Qwen3 of tools/tiny-qwen3, offline, its model cache folder absent).
``sse-check probe`` runs every built-in scenario and surface flow on both endpoints it streams
(``--api responses,chat``: it has no Messages endpoint) and saves each answer as it arrived, with its
exchange: ``X.sse`` (the body), ``X.meta.json`` (request, status, headers, timings, how it ended),
``X.nonstream.json`` (a non-streamed pair's answer) and ``X.flow.json`` (a surface flow's record). This script
then writes, for each ``X.sse``:

* ``X.expect.json``: the codes ``sse-check lint`` reports on it (through the HTTP checks, as it lints a saved
  probe), per profile; tests/test_transformers_captures.py checks them and tests/real_server/
  test_transformers_serve.py holds the live server to them;
* ``X.clients.json`` for a whole event stream (a 200 that ended complete): the client matrix on it, which the
  oracle tests (tests/test_client_oracles.py, tests/test_chat_oracles.py, tests/test_real_clients.py) hold
  against the real clients.

The ids, dates and timings of a new recording differ; the codes must not (review the diff). Do not edit the
captures by hand: record again.
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
OUT = HERE / "transformers"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "real_server"))

PROFILES = ("openai",)
KEPT = ("README.md",)  # what a new recording leaves in place


def sse_check(*args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "checker", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=timeout, env={**os.environ, "NO_COLOR": "1"})


def probe(url: str, saved: Path) -> dict[str, Any]:
    from transformers_serve import PROBE_ARGS

    proc = sse_check("probe", url, *PROBE_ARGS, "--save", str(saved), "--format", "json", "--no-progress")
    if not proc.stdout.startswith("{"):
        raise SystemExit(f"sse-check probe failed (exit {proc.returncode}): {proc.stderr.strip()[-2000:]}")
    report: dict[str, Any] = json.loads(proc.stdout)
    return report


def lint_codes(folder: Path, profile: str) -> dict[Path, list[str]]:
    """Each capture's codes as ``sse-check lint FOLDER --profile PROFILE`` reports them."""
    proc = sse_check("lint", str(folder), "--profile", profile, "--format", "json")
    if not proc.stdout.startswith("{"):
        raise SystemExit(f"sse-check lint failed (exit {proc.returncode}): {proc.stderr.strip()[-2000:]}")
    return {Path(entry["path"]).resolve(): sorted({f["code"] for f in entry["findings"]})
            for entry in json.loads(proc.stdout)["files"]}


def is_whole_stream(meta: dict[str, Any]) -> bool:
    content_type = next((v for k, v in meta.get("headers", []) if k.lower() == "content-type"), "")
    return (meta.get("status") == 200 and "text/event-stream" in content_type
            and (meta.get("ending") or {}).get("kind") == "complete" and not meta.get("fault"))


def declare(folder: Path) -> int:
    """Write every capture's X.expect.json (and X.clients.json for a whole stream) from today's lint."""
    from checker.captures import request_for
    from checker.compat import matrix
    from checker.engine import StreamLinter
    from checker.profiles import get_profile

    by_profile = {profile: lint_codes(folder, profile) for profile in PROFILES}
    captures = sorted(folder.rglob("*.sse"))
    for capture in captures:
        stem = capture.name.removesuffix(".sse")
        expect = {profile: by_profile[profile][capture.resolve()] for profile in PROFILES}
        capture.with_name(f"{stem}.expect.json").write_text(json.dumps(expect, indent=2) + "\n")
        meta = json.loads(capture.with_name(f"{stem}.meta.json").read_text())
        clients = capture.with_name(f"{stem}.clients.json")
        if not is_whole_stream(meta):
            clients.unlink(missing_ok=True)
            continue
        # The matrix as the oracle tests compute it: the stream alone, under the openai profile, with its request.
        linter = StreamLinter(profile=get_profile("openai"), request=request_for(capture))
        linter.feed(capture.read_bytes())
        clients.write_text(json.dumps(matrix(linter.close()).verdicts(), indent=2) + "\n")
    return len(captures)


def record(url: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        saved = Path(folder) / "saved"
        report = probe(url, saved)
        for old in OUT.iterdir() if OUT.is_dir() else ():
            if old.name not in KEPT:
                shutil.rmtree(old) if old.is_dir() else old.unlink()
        shutil.copytree(saved, OUT, dirs_exist_ok=True)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="a transformers serve already running (default: start one, then stop it)")
    parser.add_argument("--declare-only", action="store_true",
                        help="no probe: rewrite the X.expect.json and X.clients.json of captures/transformers from "
                             "what sse-check reports on them today (after a change of the checker; review them)")
    args = parser.parse_args(argv)
    if not args.declare_only:
        if args.url:
            report = record(args.url)
        else:
            from transformers_serve import start_transformers

            server = start_transformers()
            try:
                report = record(server.url)
            finally:
                server.close()
        print(f"probed {len(report['files'])} scenario(s) into {OUT}")
    print(f"declared {declare(OUT)} capture(s) in {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
