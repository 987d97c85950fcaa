"""Write the live replay's recorded turns and its rule examples (``sse-check replay --live``).

Run from the project root: ``python captures/make_live_replay.py``. The output is deterministic.

* ``replay/llama.cpp/``: the turns ``sse-check serve`` answers a live replay with, picked by request body.
  The answer streams are the real llama-server captures of ``llama.cpp/replay-*`` (copied byte for byte,
  except ``replay-continue-altered.sse``, whose usage numbers are edited); the request bodies are the ones
  the live replay builds from ``replay-turn1``'s output (``checker.replay.live``). See the README written
  next to them for what is recorded and what is derived.
* ``replay/live/*.json``: measurements (turn 1 and the six turn-2 usages) that are the good and bad
  examples of the RPL1xx rules; ``llama.cpp.json`` is the measurement of the set above.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent))

from checker.live.outcome import OutcomeCollector  # noqa: E402
from checker.replay import live  # noqa: E402

LLAMA = ROOT / "llama.cpp"
OUT = ROOT / "replay" / "llama.cpp"
FIXTURES = ROOT / "replay" / "live"
MODEL = "tiny-qwen3-random"
SIDECARS = ("headers.txt", "expect.json", "clients.json")

# pair -> (the recorded capture that answers it, usage edits)
ANSWERS: dict[tuple[str, str], tuple[str, dict[str, int] | None]] = {
    ("continue", "exact"): ("replay-continue-exact", None),
    ("continue", "dropped"): ("replay-continue-dropped", None),
    # The exact replay reuses 275 prompt tokens + 9 reasoning tokens; the altered one changes the 5th of the
    # 9 reasoning words ("look" -> "cold", both one token), so reuse stops after 275 + 4.
    ("continue", "altered"): ("replay-continue-exact", {"cached": 279, "prompt_n": 105}),
    # A new user message: the Qwen3 template drops the earlier reasoning, so all three render the same prompt.
    ("new_user", "exact"): ("replay-new_user-exact", None),
    ("new_user", "dropped"): ("replay-new_user-exact", None),
    ("new_user", "altered"): ("replay-new_user-exact", None),
}


def request_text(body: dict[str, Any]) -> str:
    """A request as the live replay sends it (Scenario.request: model first, stream last), indented."""
    return json.dumps({"model": MODEL, **body, "stream": True}, indent=2, ensure_ascii=False) + "\n"


def edit_usage(data: bytes, cached: int, prompt_n: int) -> bytes:
    text = data.decode("utf-8")
    text, n1 = re.subn(r'"cached_tokens":\d+', f'"cached_tokens":{cached}', text)
    text, n2 = re.subn(r'"cache_n":\d+,"prompt_n":\d+', f'"cache_n":{cached},"prompt_n":{prompt_n}', text)
    assert (n1, n2) == (1, 1), (n1, n2)
    return text.encode("utf-8")


def copy_capture(source: str, target: str, body: bytes | None = None) -> bytes:
    data = (LLAMA / f"{source}.sse").read_bytes() if body is None else body
    (OUT / f"{target}.sse").write_bytes(data)
    for kind in SIDECARS:
        shutil.copyfile(LLAMA / f"{source}.{kind}", OUT / f"{target}.{kind}")
    return data


def ids_of(items: list[dict[str, Any]]) -> list[str]:
    return [str(item.get("id")) for item in items if item.get("id")] + [
        str(item.get("call_id")) for item in items if item.get("call_id")]


def check_only_ids_differ(pair: tuple[str, str], mine: dict[str, Any]) -> None:
    """The recorded request of a pair, with turn 1's ids put in, is ours (temperature aside)."""
    source = f"replay-{pair[0]}-{pair[1]}"
    recorded_file = LLAMA / f"{source}.request.json"
    if not recorded_file.is_file():
        return
    recorded = json.loads(recorded_file.read_text())
    recorded.pop("temperature", None)
    recorded_items = [i for i in recorded["input"] if i.get("type") in ("reasoning", "function_call")]
    my_items = [i for i in mine["input"] if i.get("type") in ("reasoning", "function_call")]
    text = json.dumps(recorded)
    for old, new in zip(ids_of(recorded_items), ids_of(my_items), strict=True):
        text = text.replace(old, new)
    assert json.loads(text) == {"model": MODEL, **mine, "stream": True}, f"{source}: more than the ids differ"


def counts_line(counts: live.Counts) -> str:
    return json.dumps(counts.as_dict(), ensure_ascii=False)


def write_fixture(name: str, about: str, expect: list[str], turn1: live.Counts,
                  turn2: dict[tuple[str, str], live.Counts], note: str | None = None) -> None:
    lines = ["{", f'  "about": {json.dumps(about, ensure_ascii=False)},']
    if note:
        lines.append(f'  "derived": {json.dumps(note, ensure_ascii=False)},')
    lines += [f'  "expect": {json.dumps(expect)},', '  "dialect": "responses",',
              f'  "turn1": {counts_line(turn1)},', '  "pairs": [']
    entries = [f'    {{"family": "{f}", "variant": "{v}", "turn2": {counts_line(turn2[(f, v)])}}}'
               for f, v in live.PAIRS if (f, v) in turn2]
    lines.append(",\n".join(entries))
    lines += ["  ]", "}"]
    (FIXTURES / name).write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    FIXTURES.mkdir(parents=True, exist_ok=True)
    for stale in [*OUT.glob("replay-*"), *FIXTURES.glob("*.json")]:
        stale.unlink()

    turn1_sse = copy_capture("replay-turn1", "replay-turn1")
    (OUT / "replay-turn1.request.json").write_text(request_text(live.turn1_body("responses")), encoding="utf-8")
    collector = OutcomeCollector("responses")
    collector.feed(turn1_sse)
    turn1 = live.turn1_output("responses", collector.close().output)
    turn1_counts = live.counts_from_stream("responses", 200, turn1_sse, turn1)

    measured: dict[tuple[str, str], live.Counts] = {}
    for pair in live.PAIRS:
        name = f"replay-{pair[0]}-{pair[1]}"
        body = live.turn2_body("responses", turn1, *pair)
        assert body is not None
        check_only_ids_differ(pair, body)
        (OUT / f"{name}.request.json").write_text(request_text(body), encoding="utf-8")
        source, edits = ANSWERS[pair]
        data = (LLAMA / f"{source}.sse").read_bytes()
        if edits is not None:
            data = edit_usage(data, edits["cached"], edits["prompt_n"])
        copy_capture(source, name, data)
        measured[pair] = live.counts_from_stream("responses", 200, data)

    derived = ("continue/altered and new_user/dropped+altered are derived from the recorded turns "
               "(captures/replay/llama.cpp/README.md)")
    write_fixture("llama.cpp.json",
                  "llama-server (Qwen3 template): the exact continuation reuses the prompt and the reasoning "
                  "(284 = 275 + 9) but not the tool calls, whose arguments the template re-serialises; a new "
                  "user message drops the earlier reasoning (273 whatever is sent)",
                  ["RPL102"], turn1_counts, measured, note=derived)

    def replace(**changes: dict[str, Any]) -> dict[tuple[str, str], live.Counts]:
        out = dict(measured)
        for key, values in changes.items():
            family, variant = key.split("__")
            out[(family, variant)] = live.Counts.from_dict(values)
        return out

    write_fixture("good.json",
                  "a server whose template renders the history sent back exactly as it was generated: the exact "
                  "continuation reuses the prompt, the reasoning and the tool calls (275 + all 77 output tokens), "
                  "and a new user message drops the earlier reasoning (equal reuse)",
                  [], turn1_counts, replace(
                      continue__exact={"status": 200, "input_tokens": 392, "output_tokens": 13, "cached_tokens": 352},
                      continue__dropped={"status": 200, "input_tokens": 370, "output_tokens": 13, "cached_tokens": 273},
                      continue__altered={"status": 200, "input_tokens": 392, "output_tokens": 13, "cached_tokens": 279}),
                  note="hypothetical numbers, shaped after llama.cpp.json")
    write_fixture("RPL101-replayed-reasoning-cache-lost.json",
                  "the template renders the replayed reasoning differently from how it was generated (here: not "
                  "at all), so the exact continuation reuses no more than the one without reasoning",
                  ["RPL101"], turn1_counts, replace(
                      continue__exact={"status": 200, "input_tokens": 370, "output_tokens": 13, "cached_tokens": 273},
                      continue__altered={"status": 200, "input_tokens": 370, "output_tokens": 13,
                                         "cached_tokens": 273}),
                  note="hypothetical numbers, shaped after llama.cpp.json")
    write_fixture("RPL103-new-turn-keeps-reasoning.json",
                  "the template keeps the earlier turn's reasoning after a new user message: sending it back "
                  "exactly reuses more than dropping it",
                  ["RPL102", "RPL103"], turn1_counts, replace(
                      new_user__exact={"status": 200, "input_tokens": 396, "output_tokens": 15, "cached_tokens": 284},
                      new_user__altered={"status": 200, "input_tokens": 396, "output_tokens": 15,
                                         "cached_tokens": 279}),
                  note="hypothetical numbers, shaped after llama.cpp.json")
    rejected = "Reasoning item is missing its summary or content"
    write_fixture("RPL104-replayed-reasoning-rejected.json",
                  "the server answers HTTP 400 to its own reasoning item sent back as emitted (in both families), "
                  "while the requests without it are accepted",
                  ["RPL104", "RPL106"], turn1_counts, replace(
                      continue__exact={"status": 400, "error": rejected},
                      continue__altered={"status": 400, "error": rejected},
                      new_user__exact={"status": 400, "error": rejected},
                      new_user__altered={"status": 400, "error": rejected}),
                  note="hypothetical answers, shaped after llama.cpp.json")
    write_fixture("RPL105-replay-cache-unmeasured.json",
                  "the server reports no cached tokens at all (no cached_tokens in usage, no llama.cpp timings)",
                  ["RPL105"], live.Counts(status=200, input_tokens=275, output_tokens=77, reasoning_tokens=9,
                                          reasoning_source="deltas", after_reasoning=("function_call",) * 2),
                  {pair: live.Counts(status=200, input_tokens=c.input_tokens, output_tokens=c.output_tokens)
                   for pair, c in measured.items()},
                  note="hypothetical numbers, shaped after llama.cpp.json")
    write_fixture("RPL106-replay-control-rejected.json",
                  "the server rejects the continuation without the reasoning (as DeepSeek does inside a tool "
                  "loop); the exact and altered replays are accepted",
                  ["RPL102", "RPL106"], turn1_counts, replace(
                      continue__dropped={"status": 400, "error": "Missing reasoning_content field in the assistant "
                                                                 "message at message index 1"}),
                  note="hypothetical answer, shaped after llama.cpp.json")
    print(f"wrote {len(list(OUT.glob('*.sse')))} captures to {OUT.relative_to(ROOT)} and "
          f"{len(list(FIXTURES.glob('*.json')))} fixtures to {FIXTURES.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
