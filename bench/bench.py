"""Speed and memory of the lint engine, as ratios against baselines run in the same run on the same input.

    python bench/bench.py                   # every section: parallel, speed, real, startup, memory, proxy
    python bench/bench.py --only startup    # one section (repeatable); --memory-mb 0 etc. skip one

Speed: events per second of CPU time, best of --repeat runs, for
  * sse-check: StreamLinter, profile openai, every rule and schema on, with the compiled hot path
    (checker/_speedups.c) when it was built; SSE_CHECK_PURE=1 measures the pure-Python one (the line
    "sse-check hot path" says which ran);
  * httpx-sse's line and event decoders + json.loads (the least a client does);
  * openai-python's ResponseStreamState (what `responses.stream()` runs per event),
    fed the already-parsed events, so its figure excludes parsing and flatters it.
Start-up: `sse-check lint` of one small capture against `python -c "import rich.console"`, both
best of --startup-repeat runs in turns, wall and CPU time (the CPU time of the child, less disturbed by
other load on a shared machine), and what the lint imported and compiled beyond rich.console (counts,
which explain the ratio better than the clock on a busy machine).
Memory: peak RSS of `sse-check lint` on generated captures of --memory-mb megabytes (many small events;
and one whose four terminal events each carry the same ~18 MB text: output_text.done, content_part.done,
output_item.done, response.completed), next to the peak RSS of the interpreter with the same modules
and schemas linting nothing. The captures are written at bench time into a temporary folder.

Dialects: lint events/s of a conforming Chat Completions stream (checker.synth.ChatStreamBuilder) against a
Responses stream of the same number of events, same run (target: chat >= 1.0x Responses per event).

Parallel lint: wall time of `sse-check lint DIR -j 1` and `-j 2` on the same generated archive of small
captures (--parallel-captures; 0 skips), JSONL report to /dev/null, the two alternated, best of 3 each; the
speed-up is their ratio.

Proxy load (bench/proxy_load.py): 200 concurrent streams through `sse-check proxy` in front of
`sse-check serve` (real processes on loopback) against the same streams direct, each body compared byte
for byte; the proxy's peak RSS; its RSS over 10,000 sequential streams. Targets: <= 1.5x the direct wall
time, byte-identical, peak RSS < 150 MB, RSS flat (< 10 MB growth).

Real traffic (--only real; issue 31): the repository's recordings of real servers (REAL_FOLDERS) as an archive
(the corpus --real-copies times over), `sse-check lint FILES -j 1 --format json -o /dev/null` in one process
against httpx-sse + json.loads over the same files in one process, CPU time with start-up, best of --real-repeat
in turns; per dialect; without the start-ups; the fixed cost of a one-event capture; -j 2 against -j 1.
Targets: >= 1.0x the baseline, < 0.5 ms per capture, -j 2 >= 1.7x -j 1.

Targets (issue "lint engine"): >= 25x openai-python, peak RSS < 100 MB on a 400 MB capture; (issue "scale")
-j 2 >= 1.6x -j 1 on 2 cores, start-up <= 2x import rich.console (issue 26: by lazy imports alone),
sse-check >= 1.5x httpx-sse + json.loads in events/s, peak RSS < 100 MB with ~18 MB terminal events. A benchmark, never a timed test.
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
    """Events per second of this process's CPU time, best of ``repeat``: each side is one thread, and on a
    shared machine the wall clock also counts the time other processes had the core (the same code measured
    0.6x and 1.4x httpx-sse by the wall clock in two runs minutes apart)."""
    best = 0.0
    for _ in range(repeat):
        start = time.process_time()
        n = fn()
        elapsed = time.process_time() - start
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
    from checker.native import implementation

    print(f"stream: {n} events, {size / 1e6:.1f} MB, conforming (lint must find nothing)")
    # The compiled hot path (checker/_speedups.c) when it was built and SSE_CHECK_PURE is not set.
    print(f"sse-check hot path: {implementation()}")
    ours = rate(lambda: run_sse_check(blocks), args.repeat)
    theirs = rate(lambda: run_httpx_sse(blocks), args.repeat)
    sample = parsed_events(blocks, args.openai_events)
    openai_rate = rate(lambda: run_openai_python(sample), max(1, args.repeat - 1))
    print(f"sse-check lint (all rules + schemas): {ours:>12,.0f} events/s")
    print(f"httpx-sse + json.loads:               {theirs:>12,.0f} events/s")
    print(f"openai-python ResponseStreamState:    {openai_rate:>12,.0f} events/s  ({len(sample)} events)")
    print(f"ratio vs httpx-sse + json.loads: {ours / theirs:.2f}x   (target >= 1.5x)")
    print(f"ratio vs openai-python:          {ours / openai_rate:.1f}x   (target >= 25x)")


def write_chat_stream(path: Path, *, events: int, deltas_per_choice: int = 500) -> int:
    """A conforming Chat Completions stream of about ``events`` chunks: choices of many content deltas, one
    after the other (n choices, as with the request's n), then [DONE]. Returns the chunk count."""
    from checker.synth import ChatStreamBuilder, encode_chat

    builder = ChatStreamBuilder()
    for choice in range(max(1, events // (deltas_per_choice + 2))):
        builder.text([f" w{choice % 97:02d}" for _ in range(deltas_per_choice)], choice=choice)
    chunks = list(builder.chunks())
    path.write_bytes(encode_chat(chunks))
    return len(chunks) + 1


def bench_dialects(folder: Path, args: argparse.Namespace) -> None:
    """Lint events/s of each dialect's conforming stream of the same length, against Responses (target: chat
    at least as fast per event as Responses)."""
    responses, chat = folder / "responses.sse", folder / "chat.sse"
    n_responses = write_stream(responses, events=args.events)
    n_chat = write_chat_stream(chat, events=args.events)
    print(f"streams: Responses {n_responses} events ({responses.stat().st_size / 1e6:.1f} MB), "
          f"Chat Completions {n_chat} events ({chat.stat().st_size / 1e6:.1f} MB), both conforming")
    blocks = {"responses": chunks(responses), "chat": chunks(chat)}
    # In turns, best of --repeat each, by the process's CPU time: the machine is shared, and turns plus CPU time
    # keep a busy moment from favouring one dialect.
    rates = dict.fromkeys(blocks, 0.0)
    for _ in range(args.repeat):
        for name, b in blocks.items():
            start = time.process_time()
            n = run_sse_check(b)
            rates[name] = max(rates[name], n / max(time.process_time() - start, 1e-9))
    for name, value in rates.items():
        print(f"sse-check lint, {name:<10}            {value:>12,.0f} events/s (CPU time)")
    print(f"ratio chat / responses: {rates['chat'] / rates['responses']:.2f}x   (target >= 1.0x)")


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
    times = {1: float("inf"), 2: float("inf")}
    for _ in range(repeat):  # alternated, so that a burst of other load on the machine hits both alike
        for jobs in (1, 2):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "checker", "lint", str(folder), "-j", str(jobs), "--format",
                            "jsonl", "-o", os.devnull, "--isolated"], check=False)
            times[jobs] = min(times[jobs], time.perf_counter() - start)
    for jobs, best in times.items():
        print(f"-j {jobs}: {best:6.2f} s  ({captures / best:,.0f} captures/s)")
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"speed-up -j 2 vs -j 1: {times[1] / times[2]:.2f}x   (target >= 1.6x on 2 cores; usable cores: {cores})")


SMALL_CAPTURE = ROOT / "captures" / "conforming" / "text.sse"

# Run in the child after the lint: what it imported beyond rich.console, and which validators it compiled.
_COUNT = """
import runpy, sys
sys.argv = ["sse-check", "lint", sys.argv[1], "--color", "never"]
try:
    runpy.run_module("checker", run_name="__main__")
except SystemExit:
    pass
import json
compiled = sys.modules["checker.schemas"].compiled_count() if "checker.schemas" in sys.modules else 0
sys.stderr.write(json.dumps({"modules": sorted(sys.modules), "compiled": compiled}) + "\\n")
"""


def child_env() -> dict[str, str]:
    """The children's environment: bytecode cached as on a user's machine (a warm-up run writes it)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["NO_COLOR"] = "1"
    return env


def best_times(commands: dict[str, list[str]], repeat: int) -> dict[str, tuple[float, float]]:
    """Best wall and best CPU time (user + system of the child) of each command, run in turns."""
    import resource

    env = child_env()
    best = {name: (float("inf"), float("inf")) for name in commands}
    for name, cmd in commands.items():  # warm-up: bytecode written, files in the page cache
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
    for _ in range(repeat):
        for name, cmd in commands.items():
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
            wall = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            best[name] = (min(best[name][0], wall), min(best[name][1], cpu))
    return best


# rich.console plus the schema checks of the same capture as the lint makes them (each event type's schema
# walked, checker/schema_check.py: no jsonschema-rs import nor compile on a small valid capture), with nothing
# else of sse-check: what the lint would cost if it drew its report with rich (it does not for a passing one).
_FLOOR = """
import sys
import rich.console, orjson
from checker.schemas import load_schema_set
schemas = load_schema_set("openai")
for line in open(sys.argv[1], "rb"):
    if line.startswith(b"data:") and line[5:].strip() != b"[DONE]":
        schemas.validate_event(orjson.loads(line[5:]))
"""


def startup(repeat: int) -> None:
    capture = str(SMALL_CAPTURE)
    times = best_times({
        "python": [sys.executable, "-c", "pass"],
        "rich": [sys.executable, "-c", "import rich.console"],
        "floor": [sys.executable, "-c", _FLOOR, capture],
        "lint": [sys.executable, "-m", "checker", "lint", capture],
    }, repeat)
    env = child_env()
    rich_modules = set(subprocess.run(
        [sys.executable, "-c", "import rich.console, sys; print('\\n'.join(sys.modules))"],
        capture_output=True, text=True, env=env, check=True).stdout.split())
    counted = subprocess.run([sys.executable, "-c", _COUNT, capture], capture_output=True, text=True, env=env,
                             check=False)
    record = json.loads(counted.stderr.strip().splitlines()[-1])
    extra = sorted(set(record["modules"]) - rich_modules)
    ours = [m for m in extra if m.split(".")[0] == "checker"]
    print(f"start-up: sse-check lint {SMALL_CAPTURE.relative_to(ROOT)} vs python -c 'import rich.console', "
          f"best of {repeat}")
    for name, label in (("python", "python -c pass"), ("rich", "import rich.console"),
                        ("floor", "rich + schema checks"), ("lint", "sse-check lint")):
        wall, cpu = times[name]
        print(f"  {label:<20} wall {wall * 1000:6.0f} ms   cpu {cpu * 1000:6.0f} ms")
    (lw, lc), (rw, rc), (fw, fc) = times["lint"], times["rich"], times["floor"]
    print(f"  ratio: wall {lw / rw:.2f}x, cpu {lc / rc:.2f}x   (target <= 2x)")
    print(f"  rich.console + the capture's schema checks alone (walked, as the lint does): "
          f"wall {fw / rw:.2f}x, cpu {fc / rc:.2f}x")
    print(f"  the lint imported {len(extra)} modules beyond rich.console ({len(ours)} of sse-check's, "
          f"{len(extra) - len(ours)} others) and compiled {record['compiled']} schema validators")
    print(f"  others: {' '.join(m for m in extra if m.split('.')[0] != 'checker' and '.' not in m)}")


def write_huge_terminal_stream(path: Path, *, size: int, text_bytes: int) -> int:
    """A conforming stream of about ``size`` bytes ending in one message of ``text_bytes`` of text: its
    output_text.done, content_part.done and output_item.done, and the response.completed, each carry the whole
    text (each event about ``text_bytes`` long). The bytes before it are ordinary short deltas. Written
    incrementally; returns the event count."""
    words = "lorem ipsum dolor sit amet, consectetur adipiscing elit; \"quoted\" \\ slash, café ünïcode\n"
    delta = (words * (4096 // len(words) + 1))[:4096]
    deltas = [delta] * max(1, text_bytes // len(delta))
    huge_wire = 4 * text_bytes + len(deltas) * (len(delta) + 200)
    builder = StreamBuilder()
    filler = max(0, size - huge_wire) // (505 * 237)  # about 237 bytes per event, 505 events per message
    for m in range(filler):
        builder.message([f" w{m % 97:02d}" for _ in range(500)])
    builder.message(deltas)
    count = 0
    with path.open("wb") as handle:
        for event in builder.events():
            handle.write(encode_event(event))
            count += 1
    return count


def memory(args: argparse.Namespace) -> None:
    """Peak RSS of `sse-check lint` (its own process) on two generated captures of --memory-mb: many small
    events, and the same size ending in huge terminal events."""
    base = peak_rss_mb([sys.executable, "-c", "import checker.engine, checker.cli, checker.schemas; "
                        "checker.schemas.load_schema_set('openai')"])
    print(f"memory: interpreter + imports + schemas alone: {base:.0f} MB")
    with tempfile.TemporaryDirectory(prefix="sse-check-bench-") as tmp:
        big = Path(tmp) / "big.sse"
        runs = (
            ("many small events", lambda: write_stream(big, size=args.memory_mb * 1_000_000)),
            (f"terminal events of ~{args.huge_event_mb} MB each",
             lambda: write_huge_terminal_stream(big, size=args.memory_mb * 1_000_000,
                                                text_bytes=args.huge_event_mb * 1_000_000)),
        )
        for label, write in runs:
            start = time.perf_counter()
            count = write()
            largest = max(len(line) for line in big.open("rb")) if "terminal" in label else None
            print(f"  {label}: {big.stat().st_size / 1e6:.0f} MB capture, {count} events"
                  + (f", largest line {largest / 1e6:.1f} MB" if largest else "")
                  + f" (written in {time.perf_counter() - start:.0f} s)")
            start = time.perf_counter()
            # Lines above the default 16 MiB --max-line-bytes would be skipped (SSE020), not linted: raise it.
            peak = peak_rss_mb([sys.executable, "-m", "checker", "lint", str(big), "--format", "json", "--isolated",
                                "--max-line-bytes", str(64 * 2**20)])
            elapsed = time.perf_counter() - start
            print(f"    peak RSS {peak:.0f} MB linting it ({elapsed:.0f} s, {count / elapsed:,.0f} events/s end to "
                  f"end)   (target < 100 MB)")
            big.unlink()


def write_messages_stream(path: Path, *, events: int, deltas_per_block: int = 500) -> int:
    """An Anthropic Messages stream with the same text deltas as write_stream's, written incrementally."""
    from checker.synth.messages import MessagesStreamBuilder, encode

    builder = MessagesStreamBuilder(name="bench")
    for b in range(max(1, events // (deltas_per_block + 2))):
        builder.text([f" w{b % 97:02d}" for _ in range(deltas_per_block)])
    count = 0
    with path.open("wb") as handle:
        for event in builder.events():
            handle.write(encode([event]))
            count += 1
    return count


def bench_messages(folder: Path, args: argparse.Namespace) -> None:
    """Per-event lint speed of an Anthropic Messages stream against a Responses stream of as many deltas."""
    folder.mkdir(parents=True, exist_ok=True)
    responses, messages = folder / "responses.sse", folder / "messages.sse"
    n_r = write_stream(responses, events=args.events)
    n_m = write_messages_stream(messages, events=args.events)
    r_rate = rate(lambda: run_sse_check(chunks(responses)), args.repeat)
    m_rate = rate(lambda: run_sse_check(chunks(messages)), args.repeat)
    print(f"Responses stream:          {n_r} events,"
          f" {responses.stat().st_size / 1e6:.1f} MB: {r_rate:>10,.0f} events/s")
    print(f"Anthropic Messages stream: {n_m} events, {messages.stat().st_size / 1e6:.1f} MB: {m_rate:>10,.0f} events/s")
    print(f"ratio Messages vs Responses per event: {m_rate / r_rate:.2f}x   (target >= 1.0x)")


# -- real traffic ---------------------------------------------------------------------------------------------
#
# The repository's own recordings of real servers (each folder's README says how it was recorded): OpenAI's API
# by two SDKs' test suites (real-openai, verbatim and older-api; not edited/, which the sources trimmed or wrote
# by hand), LiteLLM's proxy, llama-server's three APIs, gpt-oss's reference server, the vendors' APIs in public
# cassettes. Not the generated folders (conforming/, rules/, real-world/, ...).
REAL_FOLDERS = ("real-openai", "litellm", "llama.cpp", "llama.cpp-probe", "gpt-oss", "cassettes",
                "messages/llama.cpp", "chat/llama.cpp")
REAL_LEFT_OUT = ("edited",)

# The baseline over the same files in its own process: httpx-sse's decoders + json.loads of every data line
# (not "[DONE]"), the least a client does with each capture.
_HTTPX_SSE = """
import codecs, json, sys
from httpx_sse._decoders import SSEDecoder, SSELineDecoder
for path in open(sys.argv[1]).read().split("\\n"):
    with open(path, "rb") as handle:
        data = handle.read()
    lines, events = SSELineDecoder(), SSEDecoder()
    for line in lines.decode(codecs.getincrementaldecoder("utf-8")(errors="replace").decode(data, final=True)):
        sse = events.decode(line)
        if sse is not None and sse.data and sse.data != "[DONE]":
            try:
                json.loads(sse.data)
            except ValueError:
                pass
"""


def real_captures() -> list[Path]:
    """Every real recording's stream (``X.sse``) under REAL_FOLDERS, in a stable order."""
    out: set[Path] = set()
    for folder in REAL_FOLDERS:
        out.update(p for p in (ROOT / "captures" / folder).rglob("*.sse")
                   if not set(p.relative_to(ROOT / "captures" / folder).parts) & set(REAL_LEFT_OUT))
    return sorted(out)


def _lint_cmd(listing: Path, jobs: int = 1) -> list[str]:
    # The paths come from a file (@-style would be the shell's job): read by the child, as `lint` reads argv.
    return [sys.executable, "-c", "import sys, checker.cli; paths = open(sys.argv[1]).read().split('\\n'); "
            f"raise SystemExit(checker.cli.main(['lint', *paths, '-j', '{jobs}', '--format', 'json', '-o', "
            f"{os.devnull!r}, '--isolated']))", str(listing)]


def _cpu_times(commands: dict[str, list[str]], repeat: int) -> dict[str, tuple[float, float]]:
    """Best CPU time (user + system of the child) and best wall time of each command, run in turns, after a
    warm-up run of each (bytecode written, files in the page cache)."""
    return {name: (cpu, wall) for name, (wall, cpu) in best_times(commands, repeat).items()}


def _listing(folder: Path, name: str, files: list[Path], copies: int) -> Path:
    """A file naming ``files`` ``copies`` times over (an archive of that many captures: a capture linted twice
    costs what two of its kind would; the lint has no cache keyed by content)."""
    path = folder / f"{name}.txt"
    path.write_text("\n".join(str(f) for _ in range(copies) for f in files))
    return path


def _one_event_captures(folder: Path, files: list[Path], dialect_of: dict[str, str], count: int) -> dict[str, Path]:
    """Per dialect, an archive of ``count`` one-event captures: the first event of one of its real recordings
    (its own framing and bytes), so that the time per capture is the fixed cost of a capture."""
    out: dict[str, Path] = {}
    for f in files:
        dialect = dialect_of.get(str(f))
        if dialect is None or dialect in out:
            continue
        data = f.read_bytes().replace(b"\r\n", b"\n")
        first = data.split(b"\n\n", 1)[0] + b"\n\n"
        if not first.lstrip().startswith((b"event:", b"data:")):
            continue
        d = folder / f"one-{dialect}"
        d.mkdir()
        for i in range(count):
            (d / f"c{i:04d}.sse").write_bytes(first)
        out[dialect] = _listing(folder, f"one-{dialect}", sorted(d.iterdir()), 1)
    return out


def bench_real(folder: Path, args: argparse.Namespace) -> None:
    """sse-check on the repository's real recordings, an archive linted in one process (`sse-check lint FILES
    -j 1 --format json -o /dev/null`), against httpx-sse + json.loads over the same files in a process of its
    own; per dialect; the fixed cost of a capture; the -j 2 speed-up. CPU time of each child process, start-up
    included on both sides, best of --real-repeat, in turns."""
    folder.mkdir(parents=True, exist_ok=True)
    files = real_captures()
    copies, repeat = args.real_copies, args.real_repeat
    report = folder / "report.json"
    once = _listing(folder, "once", files, 1)
    # One lint of the corpus with its JSON report kept: each capture's dialect and event count.
    cmd = _lint_cmd(once)
    cmd[2] = cmd[2].replace(repr(os.devnull), repr(str(report)))
    subprocess.run(cmd, env=child_env(), check=False)
    entries = json.loads(report.read_text())["files"]
    dialect_of = {e["path"]: e.get("dialect", "?") for e in entries}
    events_of = {e["path"]: int(e.get("events", 0)) for e in entries}
    size = sum(f.stat().st_size for f in files)
    total_events = sum(events_of.values())
    by_dialect: dict[str, list[Path]] = {}
    for f in files:
        by_dialect.setdefault(dialect_of.get(str(f), "?"), []).append(f)
    print(f"real traffic: {len(files)} recordings of real servers ({', '.join(REAL_FOLDERS)}; not "
          f"{', '.join(REAL_LEFT_OUT)}/), {total_events} events, {size / 1e6:.1f} MB; "
          + ", ".join(f"{d} {len(fs)}" for d, fs in sorted(by_dialect.items())))
    print(f"  an archive of the corpus x{copies} ({len(files) * copies} captures), each side one process "
          f"(start-up included), CPU time, best of {repeat}")
    commands: dict[str, list[str]] = {}
    for name, subset in (("all", files), *sorted(by_dialect.items())):
        listing = _listing(folder, f"real-{name}", subset, copies)
        commands[f"ours {name}"] = _lint_cmd(listing)
        commands[f"httpx {name}"] = [sys.executable, "-c", _HTTPX_SSE, str(listing)]
    # Each side's start-up: the same command over one capture (an archive of a million pays it once).
    single = _listing(folder, "single", [files[0]], 1)
    commands["ours start"] = _lint_cmd(single)
    commands["httpx start"] = [sys.executable, "-c", _HTTPX_SSE, str(single)]
    times = _cpu_times(commands, repeat)
    for name, subset in (("all", files), *sorted(by_dialect.items())):
        events = copies * sum(events_of.get(str(f), 0) for f in subset)
        ours, theirs = times[f"ours {name}"][0], times[f"httpx {name}"][0]
        label = "all dialects" if name == "all" else name
        print(f"  {label:<13} sse-check {events / ours:>9,.0f} events/s {copies * len(subset) / ours:>7,.0f} "
              f"captures/s | httpx-sse + json.loads {events / theirs:>9,.0f} events/s | "
              f"ratio {theirs / ours:.2f}x   (target >= 1.0x)")
    ours_start, theirs_start = times["ours start"][0], times["httpx start"][0]
    ours_net, theirs_net = times["ours all"][0] - ours_start, times["httpx all"][0] - theirs_start
    print(f"  without each side's start-up (cpu {ours_start * 1000:.0f} ms and {theirs_start * 1000:.0f} ms): "
          f"sse-check {total_events * copies / ours_net:,.0f} events/s, {len(files) * copies / ours_net:,.0f} "
          f"captures/s, ratio {theirs_net / ours_net:.2f}x")
    # The fixed cost of a capture: an archive of one-event captures against an archive of one.
    ones = _one_event_captures(folder, files, dialect_of, args.real_one_event)
    one_cmds = {"one": _lint_cmd(single), **{d: _lint_cmd(p) for d, p in ones.items()}}
    one_times = _cpu_times(one_cmds, repeat)
    for dialect in ones:
        cost = (one_times[dialect][0] - one_times["one"][0]) / max(1, args.real_one_event - 1)
        print(f"  fixed cost per capture, {dialect:<10} (a one-event capture, {args.real_one_event} of them): "
              f"{cost * 1000:.2f} ms   (target < 0.5 ms)")
    # -j 2 against -j 1 on the same archive, by the wall clock (two cores' work).
    par = _listing(folder, "parallel", files, copies)
    walls = _cpu_times({"-j 1": _lint_cmd(par, 1), "-j 2": _lint_cmd(par, 2)}, repeat)
    w1, w2 = walls["-j 1"][1], walls["-j 2"][1]
    print(f"  -j 1 wall {w1:.2f} s, -j 2 wall {w2:.2f} s: speed-up {w1 / w2:.2f}x   (target >= 1.7x on 2 cores)")


SECTIONS = ("parallel", "speed", "dialects", "startup", "memory", "proxy", "messages", "real")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=7, help="best of N runs (the machine is noisy)")
    parser.add_argument("--openai-events", type=int, default=50_000,
                        help="events fed to openai-python (it is slow; its rate is per event)")
    parser.add_argument("--memory-mb", type=int, default=400, help="size of the memory run's capture; 0 skips it")
    # An archive, not a handful: a run's fixed start (about 0.15 s) is a tenth of -j 2's time on 1,500.
    parser.add_argument("--parallel-captures", type=int, default=4000,
                        help="captures in the -j 1 vs -j 2 run; 0 skips it")
    parser.add_argument("--speed", action=argparse.BooleanOptionalAction, default=True,
                        help="run the single-stream speed comparison (--no-speed skips it)")
    parser.add_argument("--huge-event-mb", type=int, default=18,
                        help="size of each terminal event in the memory run's second capture")
    parser.add_argument("--startup-repeat", type=int, default=30, help="best of N start-up runs of each command")
    parser.add_argument("--proxy-streams", type=int, default=200, help="concurrent streams of the proxy run")
    parser.add_argument("--proxy-sequential", type=int, default=10_000,
                        help="sequential streams of the proxy's leak run")
    parser.add_argument("--proxy-repeat", type=int, default=3, help="best of N for the proxy's concurrent run")
    parser.add_argument("--proxy-delay-ms", type=int, default=10,
                        help="pause between a stream's events, as a model paces them (0: unpaced)")
    parser.add_argument("--real-copies", type=int, default=5,
                        help="the real-traffic archive: the real recordings this many times over")
    parser.add_argument("--real-repeat", type=int, default=3, help="best of N in the real-traffic section")
    parser.add_argument("--real-one-event", type=int, default=300,
                        help="one-event captures linted per dialect for the fixed cost of a capture")
    parser.add_argument("--only", action="append", choices=SECTIONS, help="run only this section (repeatable)")
    args = parser.parse_args()
    sections = set(args.only or SECTIONS)

    with tempfile.TemporaryDirectory(prefix="sse-check-bench-") as tmp:
        if "parallel" in sections and args.parallel_captures:
            bench_parallel(Path(tmp) / "archive", args.parallel_captures, max(1, min(3, args.repeat)))
        if "speed" in sections and args.speed:
            bench_speed(Path(tmp) / "bench.sse", args)
        if "messages" in sections and args.speed:
            bench_messages(Path(tmp) / "messages", args)
        if "dialects" in sections:
            bench_dialects(Path(tmp), args)
        if "real" in sections:
            bench_real(Path(tmp) / "real", args)
    if "startup" in sections:
        startup(args.startup_repeat)
    if "memory" in sections and args.memory_mb:
        memory(args)
    if "proxy" in sections and args.proxy_streams:
        from proxy_load import run as proxy_run

        proxy_run(streams=args.proxy_streams, sequential=args.proxy_sequential, repeat=args.proxy_repeat,
                  delay_ms=args.proxy_delay_ms)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("NO_COLOR", "1")
    raise SystemExit(main())
