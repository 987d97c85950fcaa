"""captures/transformers: the probe of Hugging Face ``transformers serve`` (PyPI transformers[serving] 5.23.0), as
saved by captures/record_transformers.py.

Each capture lints as its ``X.expect.json`` declares, through the HTTP checks as ``sse-check lint`` runs them
(tests/real_server/test_transformers_serve.py holds the live server to the same codes), and each whole stream's
matrix is its ``X.clients.json``. The deviations issue 29 names are asserted on the bytes here; the real
clients' outcomes on every whole stream are tests/test_client_oracles.py's, tests/test_chat_oracles.py's and
tests/test_real_clients.py's. See captures/transformers/README.md.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_http_captures import declared, lint, meta_of

from checker.captures import request_for
from checker.compat import Verdict, matrix
from checker.engine import StreamLinter
from checker.http_checks import is_probe_meta
from checker.live.scenarios import BUILTIN
from checker.profiles import get_profile

ROOT = Path(__file__).resolve().parents[1]
TRANSFORMERS = ROOT / "captures" / "transformers"
CAPTURES = sorted(TRANSFORMERS.rglob("*.sse"))
WHOLE = [p for p in CAPTURES if p.with_name(p.name.removesuffix(".sse") + ".clients.json").is_file()]


def rel(path: Path) -> str:
    return path.relative_to(TRANSFORMERS).as_posix()


def _events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in path.read_text().splitlines() if line.startswith("data: ")]


def test_the_probe_covers_every_built_in_scenario_on_both_endpoints() -> None:
    streamed = {s.name for s in BUILTIN}
    assert streamed <= {p.name.removesuffix(".sse") for p in TRANSFORMERS.glob("*.sse")}
    assert streamed <= {p.name.removesuffix(".sse") for p in (TRANSFORMERS / "chat").glob("*.sse")}
    assert len(WHOLE) == 30  # 18 Responses, 12 chat: every 200 stream that ended complete


@pytest.mark.parametrize("path", CAPTURES, ids=rel)
def test_each_capture_lints_as_declared(path: Path) -> None:
    assert is_probe_meta(meta_of(path))
    for profile, codes in declared(path).items():
        assert {f.code for f in lint(path, profile=profile).findings} == codes, profile


@pytest.mark.parametrize("path", WHOLE, ids=rel)
def test_each_whole_stream_has_the_declared_matrix(path: Path) -> None:
    linter = StreamLinter(profile=get_profile("openai"), request=request_for(path))
    linter.feed(path.read_bytes())
    declared_matrix = json.loads(path.with_name(path.name.removesuffix(".sse") + ".clients.json").read_text())
    assert matrix(linter.close()).verdicts() == declared_matrix


RESPONSES = [p for p in WHOLE if not rel(p).startswith("chat/")]
CHAT = [p for p in WHOLE if rel(p).startswith("chat/")]


@pytest.mark.parametrize("path", RESPONSES, ids=rel)
def test_every_responses_stream_has_no_event_lines_and_reasoning_before_any_part(path: Path) -> None:
    text = path.read_text()
    assert "\nevent:" not in f"\n{text}" and "[DONE]" not in text
    kinds = [e["type"] for e in _events(path)]
    assert kinds.index("response.reasoning_text.delta") < kinds.index("response.content_part.added")
    assert "response.reasoning_part.added" not in kinds
    cells = matrix(lint(path))
    assert cells["openai-node"].finding.code == "CNT004"  # type: ignore[union-attr]
    assert cells["openai-node"].symptom == "OpenAIError: missing content at index 0"


CALLS = ("reasoning_one_call", "parallel_calls", "tool_turn.call", "tool_choice.forced", "custom_tool.forced",
         "hosted_web_search.answer")


@pytest.mark.parametrize("name", CALLS)
def test_a_call_and_an_empty_message_are_both_added_at_output_index_2(name: str) -> None:
    """What the real openai-python raises on (tests/test_client_oracles.py runs it on these bytes)."""
    path = TRANSFORMERS / f"{name}.sse"
    added = [(e["output_index"], e["item"]["type"]) for e in _events(path) if e["type"] == "response.output_item.added"]
    assert added == [(0, "reasoning"), (2, "function_call"), (2, "message")]
    python = matrix(lint(path))["openai-python"]
    assert (python.verdict, python.finding.code, python.symptom) == (  # type: ignore[union-attr]
        Verdict.BREAKS, "ITM003", "RuntimeError: Duplicate response output index 2.")


@pytest.mark.parametrize("path", CHAT, ids=rel)
def test_chat_has_no_done_and_usage_on_the_finish_chunk_with_its_choice(path: Path) -> None:
    assert "[DONE]" not in path.read_text()
    chunks = _events(path)
    with_usage = [c for c in chunks if c.get("usage")]
    assert with_usage == [chunks[-1]] and chunks[-1]["choices"][0]["finish_reason"]
    assert {"SSE012", "CHT021"} <= declared(path)["openai"]


def test_a_chat_call_cut_by_max_tokens_leaves_nothing_and_breaks_the_agents_sdk() -> None:
    path = TRANSFORMERS / "chat" / "function_call_truncated.sse"
    deltas = [c["choices"][0]["delta"] for c in _events(path) if c["choices"]]
    assert not any(d.get("content") or d.get("tool_calls") for d in deltas)
    assert _events(path)[-1]["choices"][0]["finish_reason"] == "length"
    agents = matrix(lint(path))["openai-agents"]
    assert agents.verdict is Verdict.BREAKS and agents.finding is None
    assert agents.symptom.startswith("ModelBehaviorError: Chat Completions stream terminated with "
                                     "finish_reason='length' but produced no assistant text, tool call, or refusal.")


def test_models_answers_500_without_a_model_cache_folder() -> None:
    for name in ("models.list", "models.list.try1"):
        meta = meta_of(TRANSFORMERS / f"{name}.sse")
        assert meta["status"] == 500 and (TRANSFORMERS / f"{name}.sse").read_bytes() == b"Internal Server Error"
    assert {"HTP001", "HTP003"} <= declared(TRANSFORMERS / "models.list.sse")["openai"]
