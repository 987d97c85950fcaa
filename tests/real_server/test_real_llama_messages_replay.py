"""The live replay over the real llama-server's ``/v1/messages`` (``sse-check replay --live URL --dialect
anthropic``), end to end; only in the real-server suite (``make test-all``), against the session's
``real_llama`` (conftest.py here).

The thinking block of turn 1 goes back in turn 2 as it came (its text and the signature the server streamed,
here the empty one), and the server's prefix cache is measured from its Anthropic-style usage
(``input_tokens`` + ``cache_read_input_tokens``): an exact replay reuses the thinking, a dropped or altered
one does not. ``--thinking-budget 10`` keeps the tiny model's thinking as short as ``--reasoning-budget 10``
keeps it on the other endpoints (llama-server takes ``budget_tokens`` as its reasoning budget).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from checker.live.outcome import OutcomeCollector
from checker.replay import live

ROOT = Path(__file__).resolve().parents[2]
MODEL = "tiny-qwen3-random"
# captures/replay/llama.cpp-messages/README.md: recorded from this server build with the same flags
RECORDED = {("continue", "exact"): (384, 284), ("continue", "dropped"): (370, 273),
            ("continue", "altered"): (384, 279), ("new_user", "exact"): (382, 273)}


def _replay(url: str, saved: Path) -> tuple[int, dict[str, Any]]:
    proc = subprocess.run([sys.executable, "-m", "checker", "replay", "--live", url, "--model", MODEL, "--dialect",
                           "anthropic", "--thinking-budget", "10", "--profile", "llama.cpp", "--save", str(saved),
                           "--format", "json"], capture_output=True, text=True, cwd=ROOT, timeout=1800,
                          env={**os.environ, "NO_COLOR": "1", "OPENAI_API_KEY": ""})
    assert proc.stdout.startswith("{"), proc.stdout[:2000] + proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def _sent_back(saved: Path, name: str) -> list[dict[str, Any]]:
    request = json.loads((saved / f"{name}.meta.json").read_text())["request"]
    return [b for m in request["messages"] if m["role"] == "assistant" for b in m["content"]]


def test_the_messages_live_replay_sends_the_thinking_back_and_measures_the_cache(real_llama: Any,
                                                                                 tmp_path: Path) -> None:
    saved = tmp_path / "saved"
    code, report = _replay(real_llama.url, saved)
    assert report["target"]["url"] == real_llama.url + "/v1/messages"
    assert report["aborted"] is None and report["unmeasured"] is None and report["notes"] == [], report
    rows = {(f["family"], v["variant"]): v for f in report["families"] for v in f["variants"]}
    assert all(r["status"] == 200 for r in rows.values()), {k: (r["status"], r.get("error")) for k, r in rows.items()}
    # What went back: turn 1's thinking block exactly as streamed (text and signature), then its tool calls.
    collector = OutcomeCollector("messages")
    collector.feed((saved / "replay-continue-exact-turn1.sse").read_bytes())
    emitted = collector.close().output[0]["content"]
    assert emitted[0]["type"] == "thinking" and emitted[0]["thinking"] and "signature" in emitted[0]
    assert [b["type"] for b in emitted][1:] and all(b["type"] == "tool_use" for b in emitted[1:])
    assert _sent_back(saved, "replay-continue-exact")[0] == emitted[0]
    assert all(b["type"] != "thinking" for b in _sent_back(saved, "replay-continue-dropped"))
    altered = _sent_back(saved, "replay-continue-altered")[0]
    assert altered["signature"] == emitted[0]["signature"] and altered["thinking"] == live.alter_text(
        emitted[0]["thinking"])
    # The cache reuse, measured from the Anthropic-style usage: the exact replay keeps the thinking's tokens.
    exact, dropped, altered_row = (rows[("continue", v)] for v in live.VARIANTS)
    assert exact["cached_tokens"] > dropped["cached_tokens"] and exact["cached_tokens"] > altered_row["cached_tokens"]
    assert exact["stopped"]["at"] in ("reasoning", "output")
    # With the fixed seed, the recorded table (and the Responses and chat endpoints' numbers), to the token.
    assert {pair: (rows[pair]["input_tokens"], rows[pair]["cached_tokens"]) for pair in RECORDED} == RECORDED
    assert report["families"][1]["template"] == "drops"
    assert [f["code"] for f in report["findings"]] == ["RPL102"]
    assert code == 0, report["findings"]
