"""Speed and memory of the lint engine, as ratios against baselines run in the same run on the same input.

    python bench/bench.py                 # 200,000-event stream, plus the 400 MB memory run
    python bench/bench.py --memory-mb 0   # speed only

Speed: events per second, best of --repeat runs, for
  * sse-check: StreamLinter, profile openai, every rule and schema on;
  * httpx-sse's line and event decoders + json.loads (the least a client does);
  * openai-python's ResponseStreamState (what `responses.stream()` runs per event),
    fed the already-parsed events, so its figure excludes parsing and flatters it.
Memory: peak RSS of `sse-check lint` on a generated capture of --memory-mb megabytes,
next to the peak RSS of the same interpreter importing the same modules and linting nothing.

Parallel lint: wall time of `sse-check lint DIR -j 1` and `-j 2` on the same generated archive of small
captures (--parallel-captures; 0 skips), JSONL report to /dev/null; the speed-up is their ratio.

Targets (issue "lint engine"): sse-check >= 1.0x httpx-sse + json.loads, >= 25x openai-python,
peak RSS < 100 MB on a 400 MB capture; (issue "scale") -j 2 >= 1.6x -j 1 on 2 cores. A benchmark, never a
timed test.
"""

from __future__ import annotations

import argparse
import codecs
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from checker.synth import StreamBuilder, encode_event  # noqa: E402

CHUNK = 64 * 1024


def write_stream(path: Path, *, events: int | None = None, size: int | None = None,
                 deltas_per_message: int = 500) -> int:
    """A conforming stream of messages with many deltas, written incrementally. Returns the event count."""
    per_message = deltas_per_message + 5
    if events is not None:
        messages = max(1, (events - 3) // per_message + 1)
    else:
        assert size is not None
        messages = max(1, size // (per_message * 237))  # about 237 bytes per event on the wire
    builder = StreamBuilder()
    for m in range(messages):
        builder.message([f" w{m % 97:02d}" for _ in range(deltas_per_message)])
    count = 0
    with path.open("wb") as handle:
        for event in builder.events():
            handle.write(encode_event(event))
            count += 1
    return count


def chunks(path: Path) -> list[bytes]:
    data = path.read_bytes()
    return [data[i : i + CHUNK] for i in range(0, len(data), CHUNK)]


def run_sse_check(blocks: list[bytes]) -> int:
    from checker.engine import StreamLinter

    linter = StreamLinter()
    for block in blocks:
        linter.feed(block)
    result = linter.close()
    if result.findings:
        raise SystemExit(f"benchmark stream is not clean: {[f.message for f in result.findings][:3]}")
    return result.events


def run_httpx_sse(blocks: list[bytes]) -> int:
    from httpx_sse._decoders import SSEDecoder, SSELineDecoder

    decoder = codecs.getincrementaldecoder("utf-8")()
    lines, events = SSELineDecoder(), SSEDecoder()
    count = 0
    for block in blocks:
        for line in lines.decode(decoder.decode(block)):
            sse = events.decode(line)
            if sse is not None:
                json.loads(sse.data)
                count += 1
    return count


def parsed_events(blocks: list[bytes], limit: int) -> list[dict]:
    from checker.sse import SSEDecoder as Ours

    decoder = Ours()
    out: list[dict] = []
    for block in blocks:
        for item in decoder.feed(block):
            data = getattr(item, "data", None)
            if data is not None:
                out.append(json.loads(data))
        if len(out) >= limit:
            break
    return out[:limit]


def run_openai_python(events: list[dict]) -> int:
    import openai
    from openai._models import construct_type_unchecked
    from openai.lib.streaming.responses._responses import ResponseStreamState
    from openai.types.responses import ResponseStreamEvent

    state = ResponseStreamState(input_tools=openai.omit, text_format=openai.omit)
    for obj in events:
        state.handle_event(construct_type_unchecked(type_=ResponseStreamEvent, value=obj))  # type: ignore[arg-type]
    return len(events)


def rate(fn: Callable[[], int], repeat: int) -> float:
    best = 0.0
    for _ in range(repeat):
        start = time.perf_counter()
        n = fn()
        elapsed = time.perf_counter() - start
        best = max(best, n / elapsed)
    return best


def peak_rss_mb(args: list[str]) -> float:
    """Peak RSS of one child process (a fresh fork each time, so children do not mix)."""
    code = (
        "import resource, subprocess, sys; "
        "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=False); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=True)
    return int(out.stdout.strip()) / 1024


def bench_speed(stream: Path, args: argparse.Namespace) -> None:
    """Single-stream events/s: sse-check against httpx-sse + json.loads and openai-python, same file."""
    n = write_stream(stream, events=args.events)
    blocks = chunks(stream)
    size = stream.stat().st_size
    print(f"stream: {n} events, {size / 1e6:.1f} MB, conforming (lint must find nothing)")
    ours = rate(lambda: run_sse_check(blocks), args.repeat)
    theirs = rate(lambda: run_httpx_sse(blocks), args.repeat)
    sample = parsed_events(blocks, args.openai_events)
    openai_rate = rate(lambda: run_openai_python(sample), max(1, args.repeat - 1))
    print(f"sse-check lint (all rules + schemas): {ours:>12,.0f} events/s")
    print(f"httpx-sse + json.loads:               {theirs:>12,.0f} events/s")
    print(f"openai-python ResponseStreamState:    {openai_rate:>12,.0f} events/s  ({len(sample)} events)")
    print(f"ratio vs httpx-sse + json.loads: {ours / theirs:.2f}x   (target >= 1.0x)")
    print(f"ratio vs openai-python:          {ours / openai_rate:.1f}x   (target >= 25x)")


def bench_parallel(folder: Path, captures: int, repeat: int) -> None:
    """The -j speed-up: the same archive linted with 1 and 2 worker processes, best of ``repeat`` each."""
    folder.mkdir()
    for i in range(captures):
        builder = StreamBuilder()
        builder.reasoning([f" r{i % 13}" for _ in range(40)]).message([f" w{i % 97}" for _ in range(300)])
        events = list(builder.events())
        if i % 9 == 0:
            del events[-1]  # a failing capture now and then: findings travel back from the workers too
        with (folder / f"c{i:05d}.sse").open("wb") as handle:
            for event in events:
                handle.write(encode_event(event))
    size = sum(p.stat().st_size for p in folder.iterdir())
    print(f"parallel run: {captures} captures, {size / 1e6:.1f} MB, `sse-check lint DIR -j N --format jsonl`")
    times = {}
    for jobs in (1, 2):
        best = float("inf")
        for _ in range(repeat):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "checker", "lint", str(folder), "-j", str(jobs), "--format",
                            "jsonl", "-o", os.devnull, "--isolated"], check=False)
            best = min(best, time.perf_counter() - start)
        times[jobs] = best
        print(f"-j {jobs}: {best:6.2f} s  ({captures / best:,.0f} captures/s)")
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"speed-up -j 2 vs -j 1: {times[1] / times[2]:.2f}x   (target >= 1.6x on 2 cores; usable cores: {cores})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=7, help="best of N runs (the machine is noisy)")
    parser.add_argument("--openai-events", type=int, default=50_000,
                        help="events fed to openai-python (it is slow; its rate is per event)")
    parser.add_argument("--memory-mb", type=int, default=400, help="size of the memory run's capture; 0 skips it")
    parser.add_argument("--parallel-captures", type=int, default=1500,
                        help="captures in the -j 1 vs -j 2 run; 0 skips it")
    parser.add_argument("--speed", action=argparse.BooleanOptionalAction, default=True,
                        help="run the single-stream speed comparison (--no-speed skips it)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="sse-check-bench-") as tmp:
        if args.parallel_captures:
            bench_parallel(Path(tmp) / "archive", args.parallel_captures, max(1, min(3, args.repeat)))
        if args.speed:
            bench_speed(Path(tmp) / "bench.sse", args)
        if args.memory_mb:
            big = Path(tmp) / "big.sse"
            start = time.perf_counter()
            count = write_stream(big, size=args.memory_mb * 1_000_000)
            print(f"memory run: {big.stat().st_size / 1e6:.0f} MB capture, {count} events "
                  f"(written in {time.perf_counter() - start:.0f} s)")
            base = peak_rss_mb([sys.executable, "-c", "import checker.engine, checker.cli, checker.schemas; "
                                "checker.schemas.load_schema_set('openai')"])
            start = time.perf_counter()
            peak = peak_rss_mb([sys.executable, "-m", "checker", "lint", str(big), "--format", "json"])
            elapsed = time.perf_counter() - start
            print(f"peak RSS: {peak:.0f} MB linting it ({elapsed:.0f} s, {count / elapsed:,.0f} events/s end to end); "
                  f"interpreter + imports alone: {base:.0f} MB   (target < 100 MB)")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("NO_COLOR", "1")
    raise SystemExit(main())
