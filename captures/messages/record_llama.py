"""Record a real llama-server's Anthropic Messages endpoint (``POST /v1/messages``) into captures/messages/llama.cpp.

    python captures/messages/record_llama.py http://127.0.0.1:8080 [--out captures/messages/llama.cpp]

The server is started by hand (or by tests/real_server) with the flags in docs/llama-server.md and the tiny
model; this script only talks HTTP to it, over loopback. Per scenario ``X`` it writes ``X.request.json`` (the
exact body POSTed, ``stream: true``), ``X.sse`` (the raw body, byte for byte after HTTP de-chunking),
``X.headers.txt`` and ``X.nonstream.json`` (the same request with ``stream: false``), then ``X.expect.json``:
the codes ``sse-check lint`` reports, which the corpus tests hold the capture to (re-run with ``--declare-only``
after a rule change, and say why in the commit).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parents[1]))

MODEL = "tiny-qwen3-random"
PROMPT = "What is the weather in Paris?"
WEATHER = {"name": "get_weather", "description": "Get the current weather for a city.",
           "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
TIME = {"name": "get_time", "description": "Get the local time in a city.",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}


def _body(**extra: Any) -> dict[str, Any]:
    return {"model": MODEL, "max_tokens": 200, "messages": [{"role": "user", "content": PROMPT}], **extra}


SCENARIOS: dict[str, tuple[str, dict[str, Any]]] = {
    "reasoning_text": ("thinking (the template's default), then text; natural stop", _body()),
    "plain_text": ("text only (thinking disabled)", _body(thinking={"type": "disabled"})),
    "reasoning_one_call": ("thinking, then one tool call (tool_choice any)",
                           _body(tools=[WEATHER], tool_choice={"type": "any"})),
    "two_calls": ("two tools offered, tool_choice any",
                  _body(tools=[WEATHER, TIME], tool_choice={"type": "any"},
                        messages=[{"role": "user", "content": "Weather and time in Paris and Tokyo?"}])),
    "reasoning_text_truncated": ("cut by max_tokens: 20", _body(max_tokens=20)),
    "tool_call_truncated": ("a tool call cut by max_tokens: 25", _body(max_tokens=25, tools=[WEATHER],
                                                                       tool_choice={"type": "any"})),
}


def record(url: str, out: Path) -> None:
    import httpx

    out.mkdir(parents=True, exist_ok=True)
    for name, (_, body) in SCENARIOS.items():
        streamed = {**body, "stream": True}
        (out / f"{name}.request.json").write_text(json.dumps(streamed, indent=2) + "\n")
        # A connection per request: llama-server closes the connection after a stream.
        with httpx.Client(base_url=url, timeout=120) as client, \
                client.stream("POST", "/v1/messages", json=streamed) as response:
            raw = b"".join(response.iter_bytes())
            head = [f"HTTP/1.1 {response.status_code} {response.reason_phrase}"]
            head += [f"{k}: {v}" for k, v in response.headers.items()]
        (out / f"{name}.sse").write_bytes(raw)
        (out / f"{name}.headers.txt").write_text("\n".join(head) + "\n")
        with httpx.Client(base_url=url, timeout=120) as client:
            answer = client.post("/v1/messages", json={**body, "stream": False})
        (out / f"{name}.nonstream.json").write_text(json.dumps(answer.json(), indent=2) + "\n")
        print(f"{name}: {len(raw)} bytes")


def declare(out: Path) -> None:
    from checker.captures import request_for
    from checker.engine import StreamLinter
    from checker.profiles import get_profile

    for path in sorted(out.glob("*.sse")):
        codes = {}
        for profile in ("openai", "llama.cpp"):
            linter = StreamLinter(profile=get_profile(profile), request=request_for(path))
            linter.feed(path.read_bytes())
            codes[profile] = sorted({f.code for f in linter.close().findings})
        path.with_name(path.name[: -len(".sse")] + ".expect.json").write_text(json.dumps(codes, indent=2) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("url", nargs="?")
    parser.add_argument("--out", type=Path, default=ROOT / "llama.cpp")
    parser.add_argument("--declare-only", action="store_true")
    args = parser.parse_args()
    if not args.declare_only:
        if not args.url:
            parser.error("the server's URL is needed (or --declare-only)")
        record(args.url, args.out)
    declare(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
