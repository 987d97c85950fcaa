"""Record a live replay against a real llama-server as a set that ``sse-check serve`` can answer it with.

    python captures/record_real_replay.py http://127.0.0.1:8080 --dialect openai-chat captures/replay/llama.cpp-chat
    python captures/record_real_replay.py http://127.0.0.1:8080 --dialect anthropic --thinking-budget 10 \
        captures/replay/llama.cpp-messages

The live replay sends turn 1 again before every turn 2, and the real server gives every turn 1 new random
ids (the seed fixes the text, not the ids), so each recorded turn 2 carries the ids of its own turn 1. A replay
server answers every turn 1 with one capture, so here every turn 2's request is rebuilt, with
``checker.replay.live.turn2_body``, from that one turn 1 (``replay-continue-exact-turn1``, saved as
``replay-turn1``); the script checks that the rebuilt request differs from the recorded one in those ids alone.
The ids never reach the prompt (the Qwen3 template renders none), so the recorded answers and their token
counts stand. Every answer is the real server's, byte for byte.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent))

from checker.live import adapters  # noqa: E402
from checker.live.outcome import OutcomeCollector  # noqa: E402
from checker.replay import live  # noqa: E402
from make_live_replay import MODEL, request_text  # noqa: E402 - the Responses set's generator, beside this one


def turn1_of(dialect: str, body: bytes) -> dict[str, Any]:
    collector = OutcomeCollector(adapters.get(dialect).name)
    collector.feed(body)
    answer = collector.close()
    return live.turn1_output(dialect, answer.output, answer.reasoning_field)


def ids_in(value: Any) -> list[str]:
    """The item, call and tool-call ids of a turn 1 output, in order."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, sub in value.items():
            if key in ("id", "call_id") and isinstance(sub, str):
                found.append(sub)
            else:
                found.extend(ids_in(sub))
    elif isinstance(value, list):
        for sub in value:
            found.extend(ids_in(sub))
    return found


def renamed(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, str):
        return names.get(value, value)
    if isinstance(value, dict):
        return {k: renamed(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [renamed(v, names) for v in value]
    return value


def headers_text(meta: dict[str, Any]) -> str:
    lines = [f"{meta['http_version'] or 'HTTP/1.1'} {meta['status']} {meta['reason']}".rstrip()]
    lines += [f"{name}: {value}" for name, value in meta["headers"]]
    return "\n".join(lines) + "\n"


def declare(out: Path) -> None:
    """``X.expect.json`` for every capture: the codes ``sse-check lint`` reports under each profile (the
    corpus tests hold every capture to its declaration)."""
    from checker.captures import request_for
    from checker.engine import StreamLinter
    from checker.profiles import get_profile

    for path in sorted(out.glob("*.sse")):
        codes = {}
        for profile in ("openai", "llama.cpp"):
            linter = StreamLinter(profile=get_profile(profile), request=request_for(path))
            linter.feed(path.read_bytes())
            codes[profile] = sorted({f.code for f in linter.close().findings})
        path.with_name(path.name.removesuffix(".sse") + ".expect.json").write_text(json.dumps(codes, indent=2) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("url")
    parser.add_argument("out", type=Path)
    parser.add_argument("--dialect", choices=live.LIVE_DIALECTS, default="openai-chat")
    parser.add_argument("--thinking-budget", type=int, default=None,
                        help="--dialect anthropic: the live replay's --thinking-budget")
    parser.add_argument("--declare-only", action="store_true",
                        help="only (re)write the X.expect.json of the captures already in OUT (no server needed)")
    args = parser.parse_args()
    if args.declare_only:
        declare(args.out)
        return 0
    with tempfile.TemporaryDirectory(prefix="sse-check-record-") as tmp:
        saved = Path(tmp)
        budget = [] if args.thinking_budget is None else ["--thinking-budget", str(args.thinking_budget)]
        proc = subprocess.run([sys.executable, "-m", "checker", "replay", "--live", args.url, "--model", MODEL,
                               "--dialect", args.dialect, "--profile", "llama.cpp", "--save", str(saved),
                               "--format", "json", *budget], capture_output=True, text=True, cwd=ROOT.parent)
        report = json.loads(proc.stdout)
        if report["aborted"] or report["unmeasured"]:
            raise SystemExit(f"the live replay did not complete: {report['aborted'] or report['unmeasured']}")
        chosen = "replay-continue-exact-turn1"
        turn1_body = (saved / f"{chosen}.sse").read_bytes()
        turn1 = turn1_of(args.dialect, turn1_body)
        if args.out.exists():
            shutil.rmtree(args.out)
        args.out.mkdir(parents=True)

        def write(name: str, source: str, body: dict[str, Any]) -> None:
            meta = json.loads((saved / f"{source}.meta.json").read_text())
            shutil.copyfile(saved / f"{source}.sse", args.out / f"{name}.sse")
            (args.out / f"{name}.request.json").write_text(request_text(body))
            (args.out / f"{name}.headers.txt").write_text(headers_text(meta))

        conversation = live.script(args.thinking_budget)
        write("replay-turn1", chosen, live.turn1_body(args.dialect, conversation))
        for family in live.FAMILIES:
            for variant in live.VARIANTS:
                name = f"replay-{family}-{variant}"
                body = live.turn2_body(args.dialect, turn1, family, variant, conversation)
                assert body is not None, name
                own = turn1_of(args.dialect, (saved / f"{name}-turn1.sse").read_bytes())
                names = dict(zip(ids_in(own), ids_in(turn1), strict=True))
                recorded = json.loads((saved / f"{name}.meta.json").read_text())["request"]
                recorded = {k: v for k, v in renamed(recorded, names).items() if k not in ("model", "stream")}
                assert recorded == body, f"{name}: the rebuilt request differs in more than the ids"
                write(name, name, body)
        rows = {(f["family"], v["variant"]): (v["input_tokens"], v["cached_tokens"])
                for f in report["families"] for v in f["variants"]}
    declare(args.out)
    print(f"wrote {len(list(args.out.glob('*.sse')))} captures to {args.out}; input/cached tokens: {rows}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
