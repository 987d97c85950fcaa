"""A Messages ``stream: false`` answer, probed for real: ``sse-check serve`` replays a stream and its non-streamed
pair (captures/messages/nonstream/, written by captures/messages/make_nonstream_captures.py), ``sse-check probe
--api messages`` asks for both, judges the answer as a ``Message`` and compares it with the stream's final
message; each pair declares what the probe must report (``X.nonstream.expect.json``), and the saved exchanges
lint to the same findings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_probe import assert_lint_agrees, by_name, codes, probe_json

ROOT = Path(__file__).resolve().parents[2]
PAIRS = ROOT / "captures" / "messages" / "nonstream"
NAMES = ("plain_text", "reasoning_one_call")


@pytest.mark.parametrize("folder", ["conforming", "broken"])
def test_a_messages_answer_is_judged_and_compared_with_its_stream(serve: Any, tmp_path: Path, folder: str) -> None:
    server = serve(str(PAIRS / folder))
    saved = tmp_path / "saved"
    wanted = ",".join(f"{name}{suffix}" for name in NAMES for suffix in ("", "_nonstream"))
    proc, report = probe_json(server.url, "--model", "claude-sonnet-4-5", "--api", "messages", "-s", wanted,
                              "--save", str(saved))
    entries = by_name(report)
    assert sorted(entries) == sorted(f"{name}{suffix}" for name in NAMES for suffix in ("", "_nonstream"))
    declared = set()
    for name in NAMES:
        assert entries[name]["findings"] == [], entries[name]["findings"]
        answer = entries[f"{name}_nonstream"]
        assert answer["http"]["parity"] == f"compared with messages/{name}"
        expected = set(json.loads((PAIRS / folder / f"{name}.nonstream.expect.json").read_text())["openai"])
        assert codes(answer) == expected, (name, answer["findings"])
        declared |= expected
    assert proc.returncode == (1 if declared - {"HTP017"} else 0), proc.stdout[-2000:]
    assert_lint_agrees(report, saved)


def test_the_broken_answers_say_what_differs(serve: Any, tmp_path: Path) -> None:
    server = serve(str(PAIRS / "broken"))
    _, report = probe_json(server.url, "--model", "m", "--api", "messages", "-s",
                           "plain_text,plain_text_nonstream,reasoning_one_call,reasoning_one_call_nonstream")
    entries = by_name(report)
    (text,) = entries["plain_text_nonstream"]["findings"]
    assert text["message"] == "item 0 (text) of the non-streaming output has other text than the streamed one"
    found = {f["code"]: f["message"] for f in entries["reasoning_one_call_nonstream"]["findings"]}
    assert found["HTP016"] == ("the non-streaming output differs from the streamed message (stop_reason tool_use): "
                               "item 1 (tool_use) id prefix 'call_' vs streamed 'toolu_'")
    assert found["ANT015"].startswith("tool_use block 1 has id 'call_")
    assert found["ANT013"] == "thinking block 0 ends without a signature (it is empty)"
