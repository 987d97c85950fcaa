"""Profiles: where the references disagree, as data (docs/spec.md §3 and §4).

A profile picks, per dialect, the schema set and what the stream's end looks
like (where it departs from the dialect's own: ``DialectSettings``), lowers
or silences rules that a target does not care about, and lists *known
deviations*: findings that a server is documented to produce. Rule codes carry
their dialect's family prefix, so one profile (llama.cpp's) covers every
endpoint of a server. A known
deviation is still reported, at info severity and labelled, so that the
server's own CI sees nothing above info while it behaves as documented and
everything else (a new deviation, a regression) at full severity. A fix (say,
``sequence_number`` appearing) simply makes the finding go away.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from checker.dialects.base import details
from checker.findings import Finding, Severity

if TYPE_CHECKING:
    from checker.dialects.base import Dialect


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamFacts:
    """What the engine knows about the whole stream when it settles deferred findings."""

    truncated: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class KnownDeviation:
    """A finding a server is documented to produce (``when``/``when_stream`` narrow it to that case)."""

    code: str
    description: str
    # Narrows the deviation to the documented case; None matches every finding of the code.
    when: Callable[[Finding], bool] | None = None
    # Decided only once the stream has ended (needs StreamFacts).
    when_stream: Callable[[Finding, StreamFacts], bool] | None = None

    def matches(self, finding: Finding, facts: StreamFacts | None) -> bool:
        if finding.code != self.code:
            return False
        if self.when is not None and not self.when(finding):
            return False
        if self.when_stream is not None:
            return facts is not None and self.when_stream(finding, facts)
        return True


@dataclass(frozen=True, slots=True, kw_only=True)
class DialectSettings:
    """Where a profile departs from a dialect's own settings (None: the dialect's)."""

    schema_set: str | None = None
    # "forbidden": [DONE] is reported (info); "required": its absence is an error; "ignored".
    done_sentinel: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Profile:
    """A reference to hold streams to: per-dialect settings, severities, rules off, known deviations."""

    name: str
    description: str
    # By dialect name; a dialect not named here is checked with its own schema set and [DONE] rule.
    per_dialect: Mapping[str, DialectSettings] = field(default_factory=dict)
    severity: Mapping[str, Severity] = field(default_factory=dict)
    disabled: frozenset[str] = frozenset()
    known_deviations: tuple[KnownDeviation, ...] = ()

    def schema_set_for(self, dialect: Dialect) -> str:
        """The schema set a stream of ``dialect`` is validated against under this profile."""
        settings = self.per_dialect.get(dialect.name)
        return settings.schema_set if settings is not None and settings.schema_set else dialect.schema_set

    def done_sentinel_for(self, dialect: Dialect) -> str:
        """What ``data: [DONE]`` is in a stream of ``dialect`` under this profile."""
        settings = self.per_dialect.get(dialect.name)
        return settings.done_sentinel if settings is not None and settings.done_sentinel else dialect.done_sentinel

    @property
    def schema_set(self) -> str:
        """The default dialect's schema set under this profile (for callers that check no other dialect)."""
        from checker import dialects

        return self.schema_set_for(dialects.default())

    @property
    def done_sentinel(self) -> str:
        """The default dialect's [DONE] rule under this profile (for callers that check no other dialect)."""
        from checker import dialects

        return self.done_sentinel_for(dialects.default())

    @property
    def deferred_codes(self) -> frozenset[str]:
        return frozenset(d.code for d in self.known_deviations if d.when_stream is not None)

    def is_enabled(self, code: str) -> bool:
        return code not in self.disabled

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        # Pickled by name (its deviations hold lambdas): a pool or Dask worker gets its own registry's profile.
        if PROFILES.get(self.name) is not self:
            raise TypeError(f"profile {self.name!r} is not the registered one and cannot be pickled by name")
        return (get_profile, (self.name,))

    def apply(self, finding: Finding, facts: StreamFacts | None = None) -> Finding:
        """Return the finding as this profile reports it (severity, known deviation)."""
        for deviation in self.known_deviations:
            if deviation.matches(finding, facts):
                return _replace(finding, severity=Severity.INFO, known_deviation=deviation.description)
        override = self.severity.get(finding.code)
        if finding.known_deviation is not None:  # what a vendor's own server sends: graded by its dialect
            return finding
        if override is not None and override != finding.severity:
            return _replace(finding, severity=override)
        return finding


def _replace(finding: Finding, **changes: Any) -> Finding:
    from dataclasses import replace

    return replace(finding, **changes)


def _detail(key: str, *values: Any) -> Callable[[Finding], bool]:
    return lambda f: details(f).get(key) in values


def _missing(*names: str) -> Callable[[Finding], bool]:
    """Matches a schema finding whose only problem is that some of ``names`` are missing."""
    allowed = set(names)
    return lambda f: details(f).get("keyword") == "required" and set(details(f).get("missing") or ()) <= allowed


def _pointer_matches(pattern: str, *keywords: str) -> Callable[[Finding], bool]:
    """Matches a schema finding at a pointer matching ``pattern`` whose failing keyword is one of ``keywords``
    (the pattern compiled on the first such finding, by re's own cache: not at every start-up)."""
    return lambda f: (details(f).get("keyword") in keywords
                      and re.search(pattern, str(details(f).get("pointer") or "")) is not None)


# What OpenAI's own API streams (recorded by public SDK test suites, captures/real-openai) where it departs
# from its published description *and* from a type the clients declare strictly, while the clients (which do
# not validate) work: reported at info, labelled, so that a server imitating OpenAI is not failed for it. Where
# the clients' own types accept what OpenAI sends, the schema itself is loosened instead (tools/gen_schemas.py,
# OVERLAYS).
_OPENAI_REAL = "OpenAI's own stream (captures/real-openai/{capture}): "

OPENAI = Profile(
    name="openai",
    description="OpenAI's Responses API as the OpenAPI description 2.3.0 and the strict clients define it, with "
    "what api.openai.com really sends reported as known deviations (default).",
    known_deviations=(
        KnownDeviation(
            code="SCH002",
            description=_OPENAI_REAL.format(capture="vercel-openai-error-1.sse")
            + "error codes outside the published enum (insufficient_quota); openai-python types ResponseError.code "
            "as a Literal but does not validate it, openai-node passes it through",
            when=_pointer_matches(r"/error/code$", "enum"),
        ),
        KnownDeviation(
            code="SCH003",
            description=_OPENAI_REAL.format(capture="pydantic-openai-responses-model-web-search-tool-stream.sse")
            + "web_search_call action.sources carry {type: \"api\", name} entries, the description and the SDKs' "
            "types only {type: \"url\", url}; neither SDK validates them",
            when=_pointer_matches(r"/action/sources/\d+(/type)?$", "enum", "required"),
        ),
    ),
)

OPEN_RESPONSES = Profile(
    name="open-responses",
    description="The Open Responses specification (release 2026-04-24): its own description's 24 events (its "
    "names: response.reasoning.delta/done), ResponseResource and five item types; [DONE] last, event field "
    "required.",
    per_dialect={"responses": DialectSettings(schema_set="open-responses", done_sentinel="required")},
    severity={"SSE009": Severity.ERROR},
    disabled=frozenset({"SCH008"}),
)

CODEX = Profile(
    name="codex",
    description="What codex needs: it reads output_item.done as the truth, ignores output_index, content parts, "
    "sequence_number and the event field, and drops events without a type.",
    per_dialect={"responses": DialectSettings(done_sentinel="ignored")},
    severity={"REC005": Severity.INFO, "SCH005": Severity.INFO, "SCH009": Severity.INFO},
    disabled=frozenset(
        {
            "SSE008", "SSE009", "LIF003", "LIF004", "LIF005", "LIF015", "LIF016",
            "ITM001", "ITM002", "ITM003", "ITM005", "ITM011", "ITM012",
            "CNT001", "CNT002", "CNT003", "CNT004", "CNT005", "CNT007", "CNT008",
            "RSN001", "RSN002", "RSN003", "RSN004", "RSN005", "FNC002",
            "SCH002", "SCH004", "SCH008", "REC002",
            # codex reads none of the hosted-tool or annotation events (its match in responses.rs has no arm
            # for them) and keeps the done item.
            "HST001", "HST002", "HST003", "HST004", "HST005", "HST006", "HST007", "HST008", "HST009",
            "CNT009", "REC008", "REC009", "REC010",
        }
    ),
)

_LLAMA = "llama.cpp (captures README): "
_LLAMA_LIVE = "llama.cpp (the real server, captures/llama.cpp-probe): "
_LLAMA_MESSAGES = "llama.cpp (/v1/messages, captures/messages/llama.cpp): "
_LLAMA_CHAT = "llama.cpp (the real server's /v1/chat/completions, captures/chat/llama.cpp): "

LLAMA_CPP = Profile(
    name="llama.cpp",
    description="llama.cpp's llama-server as documented in docs/spec.md §4 and §7.5, captures/llama.cpp/README.md, "
    "captures/messages/llama.cpp/README.md and, found against the real server, captures/llama.cpp-probe/README.md: "
    "each documented deviation is reported as info, "
    "anything else at full severity.",
    known_deviations=(
        KnownDeviation(code="LIF015", description=_LLAMA + "no event carries sequence_number"),
        KnownDeviation(code="ITM001", description=_LLAMA + "no event carries output_index"),
        KnownDeviation(code="CNT001", description=_LLAMA + "no event carries content_index"),
        KnownDeviation(
            code="ITM011",
            description=_LLAMA + "every output_item.done comes in one burst at the end (delayed done)",
        ),
        KnownDeviation(
            code="CNT004",
            description=_LLAMA + "reasoning text is streamed without a reasoning_text content part",
            when=_detail("type", "response.reasoning_text.delta"),
        ),
        KnownDeviation(
            code="CNT007",
            description=_LLAMA + "no response.reasoning_text.done",
            when=_detail("done_type", "response.reasoning_text.done"),
        ),
        KnownDeviation(code="FNC002", description=_LLAMA + "no response.function_call_arguments.done"),
        KnownDeviation(
            code="ITM013",
            description=_LLAMA + "the streamed reasoning done item drops the status its added item had",
            when=lambda f: details(f).get("status") is None and details(f).get("item_type") == "reasoning",
        ),
        KnownDeviation(
            code="SCH002",
            description=_LLAMA + "created/in_progress carry only {id, object, status}; completed is reduced",
            when=lambda f: details(f).get("keyword") == "required",
        ),
        KnownDeviation(
            code="SCH004",
            description=_LLAMA + "text parts lack annotations/logprobs at content_part.added",
            when=_missing("annotations", "logprobs"),
        ),
        KnownDeviation(code="SCH008", description=_LLAMA + "text events lack logprobs"),
        KnownDeviation(
            code="LIF018",
            description=_LLAMA + "usage lacks output_tokens_details (and input_tokens_details.cache_write_tokens)",
            when=_missing("output_tokens_details", "cache_write_tokens"),
        ),
        KnownDeviation(
            code="LIF017", description=_LLAMA + "max_output_tokens truncation is reported as completed"
        ),
        KnownDeviation(
            code="FNC001",
            description=_LLAMA + "a function call cut by max_output_tokens keeps its cut-off arguments",
            when_stream=lambda f, facts: facts.truncated,
        ),
        # Seen against the real server (tests/real_server): without a model router llama-server serves its one
        # model whatever `model` says, so only the unknown-model probe is a known deviation; any other invalid
        # request answered as a success is still a warning.
        KnownDeviation(
            code="HTP005",
            description=_LLAMA_LIVE + "a single-model llama-server ignores the request's model, answers any name",
            # the scenario in any dialect probed: invalid_model, chat/invalid_model, messages/invalid_model
            when=lambda f: str(details(f).get("what", "")).rpartition("/")[2] == "invalid_model",
        ),
        KnownDeviation(
            code="MOD003",
            description=_LLAMA_LIVE + "a single-model llama-server lists its one model but answers any name",
        ),
        KnownDeviation(
            code="HTP019",
            description=_LLAMA_LIVE + "llama-server closes the connection after every streamed response, although "
            "it announces Keep-Alive and no Connection: close",
            when=lambda f: str(details(f).get("what", "")).startswith("closed the connection"),
        ),
        # Its Anthropic Messages endpoint (/v1/messages), docs/spec.md §7.5.
        KnownDeviation(code="ANT004", description=_LLAMA_MESSAGES + "message ids are chat ids (chatcmpl-…)"),
        KnownDeviation(code="ANT013", description=_LLAMA_MESSAGES + "thinking ends with an empty signature_delta"),
        KnownDeviation(code="ANT015", description=_LLAMA_MESSAGES + "tool_use ids have no toolu_ prefix"),
        KnownDeviation(code="ANT026", description=_LLAMA_MESSAGES + "every content_block_stop comes at the end"),
        KnownDeviation(
            code="SCH001",
            description=_LLAMA_MESSAGES + "a block starts without its signature (thinking) or input (tool_use)",
            when=lambda f: f.details.get("type") == "content_block_start"
            and f.details.get("pointer") == "/content_block"
            and set(f.details.get("missing") or ()) <= {"signature", "input"},
        ),
        # Chat Completions (docs/spec.md §6).
        KnownDeviation(code="CHT025", description=_LLAMA_CHAT + "reasoning is streamed as reasoning_content"),
        KnownDeviation(code="CHT027", description=_LLAMA_CHAT + "every chunk's created is the time it was sent"),
        KnownDeviation(
            code="CHT002",
            description=_LLAMA_CHAT + "the stream: false completion has no choices[].logprobs and no "
            "message.refusal (both required, nullable; the SDKs default them to null)",
            when=lambda f: f.details.get("type") == "chat.completion" and f.details.get("keyword") == "required"
            and set(f.details.get("missing") or ()) <= {"logprobs", "refusal"},
        ),
    ),
)

_GPT_OSS = "gpt-oss 0.0.9 (the reference server, captures/gpt-oss/README.md): "

# OpenAI's reference Responses server (PyPI gpt-oss 0.0.9, gpt_oss/responses_api/api_server.py): what it does
# on every answer, found by probing it (tests/real_server/test_gpt_oss.py). Known deviations still decide the
# client matrix: its first item at -1 breaks openai-node, its *.done events one index late break openai-python.
# Not listed, so reported at full severity: a stream cut mid-answer (HTP012, LIF006: its harmony parser raising
# on a cut call), a final output that differs from the stream (REC004), anything new.
GPT_OSS = Profile(
    name="gpt-oss",
    description="OpenAI's gpt-oss reference Responses server (PyPI gpt-oss 0.0.9, gpt_oss.responses_api) as found "
    "against the real server, captures/gpt-oss/README.md: each documented deviation is reported as info, anything "
    "else at full severity.",
    known_deviations=(
        KnownDeviation(code="ITM014", description=_GPT_OSS + "its first item is added and streamed at output_index "
                       "-1 (the event builder's index starts at -1)"),
        KnownDeviation(code="ITM002", description=_GPT_OSS + "each item is added one index below its place (the "
                       "first at -1)"),
        KnownDeviation(code="ITM005", description=_GPT_OSS + "an item's *.done events come one index past its "
                       "added, where no item is", when=lambda f: details(f).get("expected") is None),
        KnownDeviation(code="ITM007", description=_GPT_OSS + "output_item.done one index past its added",
                       when=lambda f: details(f).get("field") == "output_index" and details(f).get("other") is None),
        KnownDeviation(code="ITM008", description=_GPT_OSS + "a function call has no output_item.added and no "
                       "argument events: only its output_item.done"),
        KnownDeviation(code="ITM012", description=_GPT_OSS + "added items carry status null",
                       when=_detail("status", None)),
        KnownDeviation(code="ITM013", description=_GPT_OSS + "a message's done item carries status null",
                       when=_detail("status", None)),
        KnownDeviation(code="SCH003", description=_GPT_OSS + "items carry status null",
                       when=_pointer_matches(r"^/item/status$", "type", "enum")),
        KnownDeviation(code="SCH004", description=_GPT_OSS + "a text part is added with annotations null",
                       when=_pointer_matches(r"^/part/annotations$", "type")),
        KnownDeviation(code="SCH002", description=_GPT_OSS + "the response objects have no tools and no temperature",
                       when=_missing("tools", "temperature")),
        KnownDeviation(code="IDS001", description=_GPT_OSS + "message ids are item_…",
                       when=lambda f: str(details(f).get("id", "")).startswith("item_")),
        KnownDeviation(code="LIF018", description=_GPT_OSS + "usage has no input/output_tokens_details",
                       when=_missing("input_tokens_details", "output_tokens_details")),
        KnownDeviation(code="LIF019", description=_GPT_OSS + "each snapshot's created_at is the second it was made",
                       when=_detail("field", "created_at")),
        KnownDeviation(code="LIF017", description=_GPT_OSS + "a max_output_tokens cut is reported as completed"),
        KnownDeviation(code="LIF008", description=_GPT_OSS + "an item cut by max_output_tokens is never done",
                       when_stream=lambda f, facts: facts.truncated),
        KnownDeviation(code="HTP026", description=_GPT_OSS + "errors are FastAPI's {\"detail\": [...]}, not an "
                       "OpenAI error object"),
        KnownDeviation(code="HTP001", description=_GPT_OSS + "what its request model does not take (reasoning "
                       "effort none, tool_choice required or a named tool, developer messages, non-text input "
                       "parts) is refused with 422", when=_detail("status", 422)),
        KnownDeviation(code="HTP005", description=_GPT_OSS + "it serves one model and answers any model name",
                       when=lambda f: str(details(f).get("what", "")).rpartition("/")[2] == "invalid_model"),
    ),
)

PROFILES: dict[str, Profile] = {p.name: p for p in (OPENAI, OPEN_RESPONSES, CODEX, LLAMA_CPP, GPT_OSS)}


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown profile {name!r} (choose from {', '.join(PROFILES)})") from None
