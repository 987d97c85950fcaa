"""Record the streams of a live LiteLLM proxy (in front of a real llama-server) as captures/litellm.

    python captures/record_litellm.py http://127.0.0.1:4000 captures/litellm
    python captures/record_litellm.py --declare-only - captures/litellm     # after a change of the checker

Runs ``sse-check probe`` (every built-in scenario) against the proxy with its master key, then keeps each
answer that is an event stream, byte for byte as it arrived, as ``X.sse`` with the sidecars the corpus reads
(tests/test_corpus.py, tests/test_client_oracles.py):

* ``X.request.json``: the request body the probe sent (its ``max_output_tokens`` matters to the checks);
* ``X.headers.txt``: the status line and response headers as received;
* ``X.expect.json``: the codes ``sse-check lint --profile openai`` reports on the stream;
* ``X.clients.json``: the client matrix on it (the oracle tests hold it against the real clients).

Other answers (JSON errors, non-streamed results, a stream answering an invalid request) are not kept: they are HTTP exchanges, and the
live test (tests/real_server/test_litellm_gateway.py) checks them against the proxy itself. The ids and the
timings of a new recording differ; review the codes against tests/test_litellm_captures.py, which says why
each one is a real defect of the gateway.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent))

from checker.compat import matrix  # noqa: E402
from checker.engine import StreamLinter  # noqa: E402
from checker.profiles import get_profile  # noqa: E402

MODEL = "tiny-qwen3-random"
MASTER_KEY = "sk-sse-check-gateway"  # tests/real_server/litellm_gateway.py


def probe(url: str, saved: Path, key: str) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, "-m", "checker", "probe", url, "--model", MODEL, "--profile", "openai",
                           "--save", str(saved), "--format", "json", "--no-progress"],
                          capture_output=True, text=True, cwd=ROOT.parent, timeout=900,
                          env={**os.environ, "OPENAI_API_KEY": key, "NO_COLOR": "1"})
    if not proc.stdout.startswith("{"):
        raise SystemExit(f"sse-check probe failed (exit {proc.returncode}): {proc.stderr.strip()[-2000:]}")
    report: dict[str, Any] = json.loads(proc.stdout)
    return report


def is_stream(meta: dict[str, Any]) -> bool:
    """An event stream answering a scenario that asks for one (not the answer to an invalid request: that is an
    HTTP fault, HTP005, which the live test checks; the corpus keeps answers to valid requests)."""
    content_type = next((v for k, v in meta["headers"] if k.lower() == "content-type"), "")
    return (meta.get("expect") == "stream" and meta["status"] == 200
            and content_type.split(";")[0].strip() == "text/event-stream")


def declare(capture: Path) -> None:
    """Write the capture's X.expect.json and X.clients.json from what sse-check reports on it today."""
    name = capture.name.removesuffix(".sse")
    request = json.loads(capture.with_name(f"{name}.request.json").read_text())
    linter = StreamLinter(profile=get_profile("openai"), request=request)
    linter.feed(capture.read_bytes())
    result = linter.close()
    capture.with_name(f"{name}.expect.json").write_text(
        json.dumps({"openai": sorted({f.code for f in result.findings})}, indent=2) + "\n")
    capture.with_name(f"{name}.clients.json").write_text(json.dumps(matrix(result).verdicts(), indent=2) + "\n")


def record(saved: Path, out: Path) -> list[str]:
    out.mkdir(parents=True, exist_ok=True)
    kept = []
    for meta_file in sorted(saved.glob("*.meta.json")):
        meta = json.loads(meta_file.read_text())
        name = meta_file.name.removesuffix(".meta.json")
        if not is_stream(meta):
            continue
        (out / f"{name}.sse").write_bytes((saved / f"{name}.sse").read_bytes())
        (out / f"{name}.request.json").write_text(json.dumps(meta["request"], indent=2) + "\n")
        head = [f"{meta['http_version']} {meta['status']} {meta['reason']}", *(f"{k}: {v}" for k, v in meta["headers"])]
        (out / f"{name}.headers.txt").write_text("\n".join(head) + "\n")
        declare(out / f"{name}.sse")
        kept.append(name)
    return kept


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", help="the LiteLLM proxy, e.g. http://127.0.0.1:4000")
    parser.add_argument("out", type=Path, help="where to write the captures (captures/litellm)")
    parser.add_argument("--key", default=MASTER_KEY, help="the proxy's master key")
    parser.add_argument("--declare-only", action="store_true",
                        help="no probe: rewrite the X.expect.json and X.clients.json of the captures in OUT from "
                             "what sse-check reports on them today (after a change of the checker; review them)")
    args = parser.parse_args(argv)
    if args.declare_only:
        captures = sorted(args.out.glob("*.sse"))
        for capture in captures:
            declare(capture)
        print(f"declared {len(captures)} capture(s) in {args.out}")
        return 0
    with tempfile.TemporaryDirectory() as folder:
        report = probe(args.url, Path(folder), args.key)
        kept = record(Path(folder), args.out)
    print(f"recorded {len(kept)} stream(s) of {len(report['files'])} scenario(s) into {args.out}: {', '.join(kept)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
