"""Prediction against a real client's run: whether the matrix's verdict on a stream is what the client did.

The matrix (``checker.compat``) says, per client, ``ok``, ``degraded`` or ``breaks``; a real run
(:class:`~checker.oracles.protocol.Outcome`) says whether the user's call failed and what it returned. The two
*agree* only when both halves hold, as docs/clients.md defines the verdicts:

* ``breaks``: the call raised, or the client surfaced an error instead of raising (the Vercel AI SDK's error
  parts, LangChain's invalid tool calls): the user gets no usable answer;
* ``ok``: the call returned, and its final result is what the stream carried: the same text, the same tool
  calls with the same arguments (and, for openai-python on Responses, the same finished items);
* ``degraded``: the call returned, and its final result differs from what the stream carried.

A ``degraded`` run whose final result equals the stream's in everything the outcome records (text, tool calls)
is *unconfirmed*, never "agrees": what the prediction says is lost is not in what the oracle can see. A run the
oracle could not make (the driver crashed or overran) is *not run*. Pure: no I/O, no client is run here.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from checker.dialects.base import Verdict
from checker.oracles.protocol import Outcome, ToolCall

if TYPE_CHECKING:
    from checker.engine import LintResult


class Agreement(enum.Enum):
    AGREES = "agrees"
    DIFFERS = "differs"
    UNCONFIRMED = "unconfirmed"
    NOT_RUN = "not run"


@dataclass(frozen=True, slots=True)
class Carried:
    """What a stream carried to a client that reads it right: its text and its tool calls (name, arguments)."""

    text: str
    tool_calls: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class Comparison:
    """One client's prediction beside its real run."""

    client: str
    predicted: Verdict
    outcome: Outcome
    agreement: Agreement
    why: str  # one line: what differs, or what the agreement rests on

    def as_dict(self) -> dict[str, Any]:
        return {"client": self.client, "predicted": str(self.predicted), "agreement": self.agreement.value,
                "why": self.why}


def real_breaks(outcome: Outcome) -> bool:
    """Whether the user got no usable answer: the call raised, or the client returned an error instead."""
    return outcome.raised is not None or bool(outcome.errors)


def carried(texts: Sequence[dict[str, Any]]) -> Carried:
    """What the stream carried, from a lint's kept texts (``StreamLinter(keep_texts=True)``'s
    ``LintResult.texts``): a Responses message's or a chat choice's text parts and an Anthropic text block's text;
    a Responses function call, a chat tool call or an Anthropic tool_use block with its arguments."""
    text: list[str] = []
    calls: list[tuple[str, str]] = []
    for item in texts:
        kind = item.get("type")
        if kind == "function_call":
            calls.append((str(item.get("name") or ""), str(item.get("arguments") or "")))
        elif kind == "tool_use":  # input: the partial_json fragments joined; none sent: the start's own input
            streamed = item.get("input")
            arguments = streamed if isinstance(streamed, str) else json.dumps(item.get("initial_input") or {})
            calls.append((str(item.get("name") or ""), arguments))
        elif kind in ("message", "choice"):
            for part in item.get("content") or ():
                part_type = str(part.get("type") or "")
                if part_type.startswith("tool call "):  # a chat tool call: "tool call NAME (ID)"
                    calls.append((part_type.removeprefix("tool call ").split(" (")[0], str(part.get("text") or "")))
                elif part_type != "refusal":
                    text.append(str(part.get("text") or ""))
        elif kind == "text":
            text.append(str(item.get("text") or ""))
    return Carried(text="".join(text), tool_calls=tuple(calls))


def _same_arguments(got: str | None, want: str) -> bool:
    """Arguments compared as JSON values when both parse (clients re-serialise them), else as text; a tool
    that takes no arguments may come back as "" or "{}"."""
    got = got or ""
    if got.strip() in ("", "{}") and want.strip() in ("", "{}"):
        return True
    try:
        return bool(json.loads(got) == json.loads(want))
    except ValueError:
        return got == want


def differences(outcome: Outcome, stream: Carried) -> list[str]:
    """How the client's final result differs from what the stream carried, in words (empty: it does not)."""
    out = []
    if outcome.text is not None and outcome.text != stream.text:
        out.append(f"the final text is {_clip(outcome.text)}, the stream carried {_clip(stream.text)}")
    if outcome.tool_calls or stream.tool_calls:
        got = [(c.name or "", c.arguments) for c in outcome.tool_calls]
        want = list(stream.tool_calls)
        if [n for n, _ in got] != [n for n, _ in want]:
            out.append(f"the client returns the calls {_names(outcome.tool_calls) or 'none'}, the stream carried "
                       f"{', '.join(n for n, _ in want) or 'none'}")
        else:
            for (name, arguments), (_, streamed) in zip(got, want):
                if not _same_arguments(arguments, streamed):
                    out.append(f"{name or 'a call'} gets {_clip(arguments)}, the stream carried {_clip(streamed)}")
    return out


def compare(client: str, predicted: Verdict, outcome: Outcome, stream: Carried,
            result: LintResult | None = None) -> Comparison:
    """The prediction ``predicted`` for ``client`` beside its real ``outcome`` on a stream that carried
    ``stream`` (``result``, the stream's lint, adds openai-python's check of the finished Responses items)."""
    if outcome.failure is not None:
        return Comparison(client, predicted, outcome, Agreement.NOT_RUN, outcome.summary)
    broke = real_breaks(outcome)
    if predicted is Verdict.BREAKS:
        if broke:
            return Comparison(client, predicted, outcome, Agreement.AGREES, outcome.summary)
        return Comparison(client, predicted, outcome, Agreement.DIFFERS, f"predicted breaks, but it {outcome.summary}")
    if broke:
        return Comparison(client, predicted, outcome, Agreement.DIFFERS,
                          f"predicted {predicted}, but it {outcome.summary}")
    found = differences(outcome, stream)
    if result is not None and predicted is Verdict.OK:
        found += _item_difference(outcome, result)
    if predicted is Verdict.OK:
        if found:
            return Comparison(client, predicted, outcome, Agreement.DIFFERS, f"predicted ok, but {found[0]}")
        return Comparison(client, predicted, outcome, Agreement.AGREES, "returns what the stream carried")
    if found:
        return Comparison(client, predicted, outcome, Agreement.AGREES, found[0])
    return Comparison(client, predicted, outcome, Agreement.UNCONFIRMED,
                      "its final text and tool calls are the stream's")


def _item_difference(outcome: Outcome, result: LintResult) -> list[str]:
    """openai-python on Responses: a completed response's output must be the stream's finished items."""
    if outcome.dialect != "responses" or outcome.status != "completed" or outcome.terminal != "response.completed":
        return []
    if not outcome.output and outcome.client != "openai-python":  # a driver that does not report the items
        return []
    from checker.oracles import expected_output

    got = [(o.type, o.id) for o in outcome.output]
    want = expected_output(result)
    return [] if got == want else [f"the final output is {got}, the stream finished {want}"]


def _names(calls: Sequence[ToolCall]) -> str:
    return ", ".join(c.name or "?" for c in calls)


def _clip(text: str | None, width: int = 40) -> str:
    if text is None:
        return "none"
    shown = text if len(text) <= width else text[: width - 1] + "…"
    return repr(shown)
