"""Record a real llama-server's /v1/chat/completions answers (captures/chat/README.md).

    python captures/chat/llama.cpp/record.py PORT OUT_DIR

Per scenario: X.request.json (the body POSTed, stream: true), X.sse (the body as it arrived), X.headers.txt and
X.nonstream.json (the same body with stream: false). Standard library only; loopback only.
"""

from __future__ import annotations

import http.client
import json
import sys
from pathlib import Path
from typing import Any

CITY = {"type": "string", "enum": ["Paris", "Tokyo", "London"]}
TOOLS = [
    {"type": "function", "function": {
        "name": "get_weather", "description": "Get the current weather for a city",
        "parameters": {"type": "object", "properties": {"city": CITY,
                                                        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
                       "required": ["city", "unit"], "additionalProperties": False}}},
    {"type": "function", "function": {
        "name": "get_time", "description": "Get the local time in a city",
        "parameters": {"type": "object", "properties": {"city": CITY}, "required": ["city"],
                       "additionalProperties": False}}},
]
BASE: dict[str, Any] = {"model": "tiny-qwen3-random", "temperature": 1.0}
USAGE = {"stream_options": {"include_usage": True}}
SCENARIOS: dict[str, dict[str, Any]] = {
    "plain": {**BASE, "max_tokens": 200, "messages": [{"role": "user", "content": "Tell me about Paris"}],
              "chat_template_kwargs": {"enable_thinking": False}},
    "reasoning": {**BASE, "max_tokens": 200, "messages": [{"role": "user", "content": "Tell me about London"}]},
    "usage": {**BASE, "max_tokens": 200, "messages": [{"role": "user", "content": "Tell me about Tokyo"}], **USAGE},
    "tool_call": {**BASE, "max_tokens": 200, "tools": TOOLS, "tool_choice": "required",
                  "messages": [{"role": "user", "content": "What should I wear in Berlin?"}]},
    "two_tool_calls": {**BASE, "max_tokens": 300, "tools": TOOLS, "tool_choice": "required",
                       "parallel_tool_calls": True,
                       "messages": [{"role": "user", "content": "Weather and time in Tokyo?"}]},
    "max_tokens_cut": {**BASE, "max_tokens": 12, "messages": [{"role": "user", "content": "Tell me about Rome"}],
                       **USAGE},
}


def post(port: int, body: dict[str, Any]) -> tuple[int, list[tuple[str, str]], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    connection.request("POST", "/v1/chat/completions", json.dumps(body), {"content-type": "application/json"})
    response = connection.getresponse()
    return response.status, response.getheaders(), response.read()


def main() -> int:
    port, out = int(sys.argv[1]), Path(sys.argv[2])
    for name, body in SCENARIOS.items():
        request = {**body, "stream": True}
        status, headers, data = post(port, request)
        (out / f"{name}.request.json").write_text(json.dumps(request, indent=2) + "\n")
        (out / f"{name}.sse").write_bytes(data)
        (out / f"{name}.headers.txt").write_text(f"HTTP/1.1 {status}\n" + "".join(f"{k}: {v}\n" for k, v in headers))
        (out / f"{name}.nonstream.json").write_bytes(post(port, {**body, "stream": False})[2])
        print(name, status, len(data))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
