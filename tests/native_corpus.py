"""The lint of the whole corpus as JSON, for tests/test_native.py to compare the compiled hot path with the
pure-Python one (run once with SSE_CHECK_PURE=1, once without; each run prints which one it used).

    python tests/native_corpus.py    # {"implementation": ..., "used": {...}, "records": {capture: {profile: record}}}

Every capture under every profile, fed in chunks of 509 bytes (a prime: events cut everywhere, and a few whole
deltas per chunk, so that both the decoder's and the engine's run paths are taken), texts kept.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from checker import native, run_match  # noqa: E402
from checker.captures import request_for  # noqa: E402
from checker.engine import StreamLinter  # noqa: E402
from checker.profiles import PROFILES, get_profile  # noqa: E402
from checker.sse import SSEDecoder, SSEEvent  # noqa: E402

CHUNK = 509
# How often the run paths were taken (so that a comparison of two runs that never took them cannot pass):
# templates made, events taken whole by the decoder (SSEDecoder.run).
USED = {"templates": 0, "wire_events": 0}


def _count_uses() -> None:
    make, feed = run_match.make, SSEDecoder.feed

    def counted_make(*args: Any) -> run_match.RunMatcher:
        USED["templates"] += 1
        return make(*args)

    def counted_feed(self: SSEDecoder, chunk: bytes) -> list[Any]:
        before = self.events_dispatched
        items = feed(self, chunk)
        USED["wire_events"] += self.events_dispatched - before - sum(type(i) is SSEEvent for i in items)
        return items

    run_match.make = counted_make  # type: ignore[assignment]
    SSEDecoder.feed = counted_feed  # type: ignore[method-assign]


def record(data: bytes, profile: str, request: dict[str, Any] | None) -> dict[str, Any]:
    linter = StreamLinter(profile=get_profile(profile), request=request, keep_texts=True)
    for start in range(0, len(data), CHUNK):
        linter.feed(data[start:start + CHUNK])
    result = linter.close()
    return {"findings": [f.as_dict() for f in result.findings], "events": result.events, "bytes": result.bytes,
            "terminal": result.terminal, "terminals": result.terminals, "response_id": result.response_id,
            "texts": result.texts, "dialect": result.dialect}


def main() -> None:
    _count_uses()
    records: dict[str, dict[str, Any]] = {}
    for path in sorted((ROOT / "captures").rglob("*.sse")):
        data, request = path.read_bytes(), request_for(path)
        records[path.relative_to(ROOT).as_posix()] = {p: record(data, p, request) for p in PROFILES}
    json.dump({"implementation": native.implementation(), "used": USED, "records": records}, sys.stdout, default=repr)


if __name__ == "__main__":
    main()
