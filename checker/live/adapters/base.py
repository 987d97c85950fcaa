"""What a request adapter is: everything sse-check knows about one dialect's requests and answers.

A dialect (checker.dialects: "responses", "chat") is checked on its event stream by the engine; the live
side (``probe``, ``proxy``, ``serve``, the live replay) also needs to read and write its *requests* and read
its *answers*: where the history is (Responses ``input`` items, chat ``messages``), where the reasoning and
the usage counts are, how an answer is accumulated, which RPL checks hold for what a client sends back, and
how the live replay builds its two turns. A :class:`RequestAdapter` bundles that for one dialect; the modules
that need it look the adapter up by name (:func:`checker.live.adapters.get`) and never branch on a dialect.
The adapters are keyed by the names of checker.dialects' registry (a dialect's stream side); an adapter
whose dialect is not registered there yet (chat, until its package lands) still serves the live side.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from checker import dialects
from checker.findings import Finding, Position
from checker.live.answer import Outcome, Usage, UsageFields, usage_from
from checker.live.conversation import Conversation, EmittedReasoning, Exchange, Key

START = Position(line=1, byte=0)


def response_number(number: int) -> str:
    """How the findings name an exchange of the proxy: ``007``."""
    return f"{number:03d}"


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplayScript:
    """The live replay's conversation (checker.replay.live), handed to an adapter to build its requests."""

    prompt: str  # turn 1's user message
    follow_up: str  # the new_user family's second user message
    max_tokens: int
    tools: list[dict[str, Any]]  # Responses function tools ({"type": "function", "name", ...})
    tool_output: Callable[[str, Any], str]  # the made-up result of a call: (name, arguments) -> text
    alter: Callable[[str], str | None]  # one word of a text changed (None: no word to change)
    # Anthropic's thinking budget_tokens (its smallest, 1024, by default; llama-server reads it as its
    # reasoning budget, so a test with a tiny model asks for less).
    thinking_budget: int = 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class Ask:
    """One probe scenario's request in no dialect's words; each adapter writes it as its dialect's body
    (:meth:`RequestAdapter.scenario_body`), so that every dialect is probed with the same suite."""

    prompt: str
    max_tokens: int
    reasoning: str | None = None  # "none" (asked not to reason), "low" (asked to reason), None (not said)
    tools: tuple[Mapping[str, Any], ...] = ()  # Responses function tools ({"type": "function", "name", ...})
    require_tool: bool = False  # the model must call a tool
    parallel: bool | None = None  # parallel tool calls allowed (None: not said)
    model: str | None = None  # a fixed model (the invalid_model scenario)
    malformed: bool = False  # the history is not a valid one (an object where a list or string belongs)
    # A strict structured-output answer of this JSON Schema (named ``answer``; docs/spec.md §8), or none.
    answer_schema: Mapping[str, Any] | None = None


class Accumulator(ABC):
    """One streamed answer's event objects, in order; :meth:`close` gives its :class:`Outcome`."""

    @abstractmethod
    def event(self, obj: dict[str, Any]) -> None: ...

    @abstractmethod
    def close(self) -> Outcome: ...


class RequestAdapter(ABC):
    """One dialect's requests and answers, as the live side reads and writes them."""

    name: ClassVar[str]  # the dialect's name in checker.dialects: "responses", "chat"
    aliases: ClassVar[tuple[str, ...]] = ()  # other names it goes by (the replay's "openai-chat")
    endpoint: ClassVar[str]  # the URL path suffix of its endpoint: "/responses", "/chat/completions"
    usage_fields: ClassVar[UsageFields]
    reasoning_where: ClassVar[str]  # where its answers carry reasoning, in words ("reasoning item")

    # How the probe's scenario summaries name this dialect's things (checker.live.scenarios.PLANS): the
    # token limit, the end of a cut answer, a failed one, the history field, no reasoning, one forced call.
    words: ClassVar[Mapping[str, str]]
    # Request headers every request of this dialect carries (Anthropic's API version header).
    request_headers: ClassVar[tuple[tuple[str, str], ...]] = ()
    # What the live replay's usage columns mean for this dialect, when not what their names say.
    usage_legend: ClassVar[str | None] = None
    # Body fields a streamed request adds (chat's stream_options: without it no usage chunk is sent).
    stream_fields: ClassVar[Mapping[str, Any]] = {}
    # The SDK whose retries the probe follows after a refusal (checker.live.retry).
    sdk: ClassVar[str] = "openai-python"

    @abstractmethod
    def scenario_body(self, ask: Ask) -> dict[str, Any]:
        """A probe scenario's request body in this dialect, without ``model`` (unless fixed) and ``stream``."""

    @property
    def linted(self) -> bool:
        """Whether the engine lints this dialect's event streams: it is a registered dialect (checker.dialects;
        else only the HTTP exchange around a stream is judged, as SCH010 would call it another API's)."""
        return self.name in dialects.names()

    # --- recognising it ---------------------------------------------------------------------------

    @abstractmethod
    def is_request(self, request: Mapping[str, Any]) -> bool:
        """Whether a request body is this dialect's (when no endpoint says so)."""

    @abstractmethod
    def is_stream(self, head: bytes) -> bool:
        """Whether a streamed answer's first bytes are this dialect's (when no request says so)."""

    # --- its answers ------------------------------------------------------------------------------

    @abstractmethod
    def accumulator(self) -> Accumulator:
        """A fresh accumulator of one streamed answer."""

    @abstractmethod
    def answer(self, obj: Mapping[str, Any]) -> Outcome | None:
        """The outcome of a non-streamed answer (a JSON object); None when it is not one of this dialect."""

    # --- tool turns (checker.surface.turns) -------------------------------------------------------

    @abstractmethod
    def calls_in(self, output: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
        """(call id, tool name) of each function call in an answer's output (as its accumulator gives it)."""

    @abstractmethod
    def with_tool_results(self, body: Mapping[str, Any], output: Sequence[Mapping[str, Any]],
                          results: Sequence[tuple[str, str]]) -> dict[str, Any]:
        """``body`` continued statelessly: its history, the answer's ``output`` as emitted, and one tool result
        per (call id, text); the tool choice left to the model."""

    # --- the history checks (checker.live.history) ------------------------------------------------

    def previous_response(self, request: Mapping[str, Any]) -> str | None:
        """The earlier response a request continues on the server's side, if the dialect has such a field."""
        return None

    @abstractmethod
    def input_keys(self, request: Mapping[str, Any]) -> tuple[Key, ...]:
        """The request's history as keys (what a later request that continues it starts with)."""

    @abstractmethod
    def output_keys(self, outcome: Outcome) -> tuple[Key, ...]:
        """The answer's output as keys (how the next request sends it back)."""

    @abstractmethod
    def history_findings(self, request: Mapping[str, Any], conversation: Conversation,
                         elsewhere: Callable[[str], EmittedReasoning | None]) -> list[Finding]:
        """The RPL findings about what a request sends back, in its conversation (before its answer)."""

    @abstractmethod
    def remember(self, conversation: Conversation, exchange: Exchange, outcome: Outcome) -> None:
        """Keep the reasoning an answer emitted, to compare later requests of the conversation with it."""

    # --- the live replay (checker.replay.live) ----------------------------------------------------

    @abstractmethod
    def turn1_body(self, script: ReplayScript) -> dict[str, Any]:
        """Turn 1 without ``model`` and ``stream``: a request that makes the model reason, then call tools."""

    def turn1_fallback(self, script: ReplayScript) -> dict[str, Any] | None:
        """Turn 1 again when the server refused :meth:`turn1_body` (HTTP 4xx): what its API allows instead
        (Anthropic refuses a forced tool with thinking on); None: nothing else to try."""
        return None

    @abstractmethod
    def turn1_output(self, outcome: Outcome) -> dict[str, Any]:
        """What turn 2 is built from, taken from turn 1's answer."""

    @abstractmethod
    def turn2_body(self, script: ReplayScript, turn1: Mapping[str, Any], family: str,
                   variant: str) -> dict[str, Any] | None:
        """Turn 2 (``family``: continue | new_user; ``variant``: exact | dropped | altered reasoning);
        None when the variant cannot be built (no reasoning text to alter)."""

    @abstractmethod
    def reasoning_of(self, turn1: Mapping[str, Any]) -> str:
        """The reasoning text turn 1 emitted ('' for none)."""

    @abstractmethod
    def has_reasoning(self, turn1: Mapping[str, Any]) -> bool: ...

    @abstractmethod
    def after_reasoning(self, turn1: Mapping[str, Any]) -> tuple[str, ...]:
        """The kinds of output that follow the reasoning: ``function_call`` per call, ``message``."""

    @abstractmethod
    def is_reasoning_delta(self, obj: Mapping[str, Any]) -> bool:
        """Whether a streamed event object carries a piece of reasoning text."""

    @abstractmethod
    def stream_usage(self, obj: Mapping[str, Any]) -> Any:
        """The ``usage`` object a streamed event object carries (None when it carries none)."""

    def usage_counts(self, usage: Any) -> Usage | None:
        """The counts of a (merged) ``usage`` object of a streamed answer, llama.cpp's timings left aside."""
        return usage_from(self.usage_fields, usage, None)
