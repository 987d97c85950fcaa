"""A fuzz harness over the decoder and the machine: no input may crash, hang or lose positions.

    python tests/fuzz_harness.py --seconds 600          # long run (random mutations of the corpus)
    python tests/fuzz_harness.py --atheris -- -max_total_time=600   # coverage-guided, if atheris is installed

The test suite runs the same check, bounded, through Hypothesis (tests/test_fuzz.py).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from checker.engine import Limits, StreamLinter  # noqa: E402

# Small limits so the limit paths are exercised too.
LIMITS = Limits(max_line_bytes=4096, max_event_bytes=8192, max_json_depth=16, max_bytes=1 << 20, max_events=5000)
SPECIAL = [b"\r", b"\n", b"\r\n", b"\x00", b"\xff", b"\xef\xbb\xbf", b":", b"data: ", b"event: ", b"{", b"}",
           b"[DONE]", b'"type":', b"\\u0000", b"9" * 20, b"[" * 40]


def check_one(data: bytes, cuts: list[int]) -> int:
    """Lint ``data`` whole and in the given chunking; both must agree and stay in bounds."""
    whole = StreamLinter(limits=LIMITS)
    whole.feed(data)
    expected = whole.close()
    linter = StreamLinter(limits=LIMITS)
    last = 0
    for cut in sorted(c % (len(data) + 1) for c in cuts):
        linter.feed(data[last:cut])
        last = max(last, cut)
    linter.feed(data[last:])
    got = linter.close()
    assert got.findings == expected.findings, "chunking changed the findings"
    assert got.bytes == len(data), "bytes were lost"
    for finding in got.findings:
        assert finding.code != "SSE099", f"the engine failed on an event: {finding.message}"
        assert 0 <= finding.position.byte <= len(data), finding
        assert finding.position.line >= 1, finding
    return len(got.findings)


def mutate(rng: random.Random, data: bytes) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        op = rng.randrange(5)
        at = rng.randint(0, len(buf))
        if op == 0 and buf:
            buf[min(at, len(buf) - 1)] ^= 1 << rng.randrange(8)
        elif op == 1:
            buf[at:at] = rng.choice(SPECIAL)
        elif op == 2 and buf:
            del buf[at : at + rng.randint(1, 64)]
        elif op == 3 and buf:
            start = rng.randint(0, len(buf) - 1)
            buf[at:at] = buf[start : start + rng.randint(1, 200)]
        else:
            buf[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
    return bytes(buf)


def corpus() -> list[bytes]:
    return [p.read_bytes() for p in sorted((ROOT / "captures").rglob("*.sse")) if p.stat().st_size < 200_000]


def run_random(seconds: float, seed: int) -> int:
    rng = random.Random(seed)
    seeds = corpus() or [b"data: {}\n\n"]
    deadline = time.monotonic() + seconds
    count = 0
    while time.monotonic() < deadline:
        data = mutate(rng, rng.choice(seeds))
        check_one(data, [rng.randrange(len(data) + 1) for _ in range(rng.randint(0, 6))])
        count += 1
    return count


def run_atheris(argv: list[str]) -> None:  # pragma: no cover - optional, long runs only
    import atheris

    def one(data: bytes) -> None:
        check_one(data, [len(data) // 3, len(data) // 2])

    atheris.Setup([sys.argv[0], *argv], one)
    atheris.Fuzz()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--atheris", action="store_true")
    args, rest = parser.parse_known_args()
    if args.atheris:
        run_atheris([a for a in rest if a != "--"])
        return 0
    count = run_random(args.seconds, args.seed)
    print(f"{count} mutated inputs in {args.seconds:.0f} s: no crash, no hang, no lost bytes, chunking-invariant")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
