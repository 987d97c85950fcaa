"""OpenAI's gpt-oss reference Responses server, unmodified, answering from a scripted token source.

Runs in the gpt-oss environment (tools/envs/gpt-oss.txt: PyPI ``gpt-oss==0.0.9``, Python 3.12), not in the
checker's venv. The server is ``gpt_oss.responses_api.api_server.create_api_server`` as the package's own
``python -m gpt_oss.responses_api.serve`` builds it: its FastAPI app, its harmony parser, its event builder.
Only the model is replaced. ``create_api_server`` asks its model for one token at a time
(``infer_next_token(tokens, temperature, new_request)``, ``tokens`` being the rendered harmony prompt and what
was generated so far); this source answers with a script chosen from the prompt, in the real o200k harmony
vocabulary, as a model trained on harmony would write it:

* the last message is a tool's result (``<|start|>functions.NAME to=assistant``): reasoning, then a final
  answer that quotes the result;
* the developer message declares functions (``namespace functions {``): reasoning, then a call to the first
  declared function on the commentary channel, its JSON arguments built from the declared parameters (each
  required one: the first literal of an enum, else a placeholder of its type);
* otherwise: reasoning, then a final answer.

The script is a pure function of the prompt, and the position in it is the number of tokens generated after
that prompt, so every request gets the same answer whatever ran before it or beside it (the package's own
``stub`` backend replays one fixed list from a queue shared by all requests: a request cut short leaves the
next one mid-script). The reasoning is longer than 16 tokens, so the probe's ``max_output_tokens`` scenarios
cut it.

usage: scripted_serve.py PORT   (loopback only; needs TIKTOKEN_ENCODINGS_BASE naming a folder holding
o200k_base.tiktoken, see tests/real_server/gpt_oss.py)

gpt-oss is Apache-2.0 (tools/gpt-oss/README.md); this file imports it and copies none of it.
"""

from __future__ import annotations

import json
import re
import sys
import threading
from typing import Any

import uvicorn
from gpt_oss.responses_api.api_server import create_api_server
from openai_harmony import HarmonyEncodingName, load_harmony_encoding

ENCODING = load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS)

REASONING = ("The user wrote a short message. I answer it in one friendly sentence, without tools, and keep "
             "the answer brief.")
ANSWER = "Hello! This is the gpt-oss reference server answering from a scripted token source."
CALL_REASONING = "The request needs the tool {name}, so I call it with the arguments it declares."
RESULT_REASONING = "The tool has answered. I report its result to the user in one sentence."
RESULT_ANSWER = "The tool returned: {result}"

# The rendered prompt's pieces this source reads (openai-harmony's rendering of a conversation).
_FUNCTIONS = re.compile(r"namespace functions \{\n(.*?)\n\} // namespace functions", re.S)
_FUNCTION = re.compile(r"^type (\w+) = \((?:_: \{\n(.*?)\n?\})?\) => any;", re.S | re.M)
_PARAMETER = re.compile(r"^(\w+)(\??): (.+),$")


def encode(text: str) -> list[int]:
    return list(ENCODING.encode(text, allowed_special="all"))


def placeholder(declared: str) -> Any:
    """A value of the TypeScript type harmony wrote for a parameter."""
    literal = re.match(r'"((?:[^"\\]|\\.)*)"', declared)
    if literal:
        return json.loads(f'"{literal.group(1)}"')
    if declared.endswith("[]"):
        return []
    if declared.startswith("number"):
        return 1
    if declared.startswith("boolean"):
        return True
    if declared.startswith("{"):
        return {}
    return "example"


def first_function(prompt: str) -> tuple[str, dict[str, Any]] | None:
    """The first function the developer message declares, with arguments for its required parameters."""
    block = _FUNCTIONS.search(prompt)
    if block is None:
        return None
    declared = _FUNCTION.search(block.group(1))
    if declared is None:
        return None
    arguments: dict[str, Any] = {}
    depth = 0
    for line in (declared.group(2) or "").splitlines():
        line = line.strip()
        if depth == 0 and not line.startswith("//"):
            parameter = _PARAMETER.match(line)
            if parameter and not parameter.group(2):
                arguments[parameter.group(1)] = placeholder(parameter.group(3))
        depth += line.count("{") - line.count("}")
    return declared.group(1), arguments


def last_message(prompt: str) -> str:
    """The last complete message of the prompt (it ends with the header ``<|start|>assistant``)."""
    messages = prompt.split("<|start|>")
    return messages[-2] if len(messages) >= 3 else ""


def script_for(prompt: str) -> list[int]:
    """What the model writes after ``prompt``: harmony messages ending with <|return|> or <|call|>."""
    last = last_message(prompt)
    if last.startswith("functions."):
        result = last.split("<|message|>", 1)[-1].rsplit("<|end|>", 1)[0]
        return encode(f"<|channel|>analysis<|message|>{RESULT_REASONING}<|end|>"
                      f"<|start|>assistant<|channel|>final<|message|>{RESULT_ANSWER.format(result=result)}"
                      "<|return|>")
    function = first_function(prompt)
    if function is not None:
        name, arguments = function
        return encode(f"<|channel|>analysis<|message|>{CALL_REASONING.format(name=name)}<|end|>"
                      f"<|start|>assistant<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>"
                      f"{json.dumps(arguments, separators=(',', ':'))}<|call|>")
    return encode(f"<|channel|>analysis<|message|>{REASONING}<|end|>"
                  f"<|start|>assistant<|channel|>final<|message|>{ANSWER}<|return|>")


class ScriptedModel:
    """``infer_next_token`` for ``create_api_server``: the next token of the script of the request's prompt.

    The server passes the prompt once with ``new_request=True``; the prompt is remembered (by its tokens) with
    its script, and every later call finds its prompt as a remembered prefix of ``tokens``: the position in the
    script is what follows it. Requests running at once never share a position."""

    def __init__(self) -> None:
        self.scripts: dict[tuple[int, ...], list[int]] = {}
        self.lock = threading.Lock()
        self.end = encode("<|return|>")[0]

    def __call__(self, tokens: list[int], temperature: float = 0.0, new_request: bool = False) -> int:
        with self.lock:
            if new_request:
                prompt = tuple(tokens)
                if prompt not in self.scripts:
                    self.scripts[prompt] = script_for(ENCODING.decode_utf8(list(prompt)))
                script, written = self.scripts[prompt], 0
            else:
                script, written = self._find(tokens)
        return script[written] if written < len(script) else self.end

    def _find(self, tokens: list[int]) -> tuple[list[int], int]:
        best: tuple[tuple[int, ...], list[int]] | None = None
        for prompt, script in self.scripts.items():
            if len(prompt) <= len(tokens) and tuple(tokens[:len(prompt)]) == prompt:
                if best is None or len(prompt) > len(best[0]):
                    best = (prompt, script)
        if best is None:  # a prompt never announced: answer as for a new request
            prompt = tuple(tokens)
            best = (prompt, self.scripts.setdefault(prompt, script_for(ENCODING.decode_utf8(list(prompt)))))
        return best[1], len(tokens) - len(best[0])


def main(argv: list[str]) -> int:
    if len(argv) != 2 or not argv[1].isdigit():
        print("usage: scripted_serve.py PORT", file=sys.stderr)
        return 2
    app = create_api_server(ScriptedModel(), ENCODING)
    uvicorn.run(app, host="127.0.0.1", port=int(argv[1]), log_level="warning")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
