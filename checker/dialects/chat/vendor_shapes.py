"""What the vendors' own Chat Completions servers send where OpenAI's description says otherwise: the CHT002
findings graded info under every profile (the severity policy, docs/severity.md), each with the recording that shows it
(a public cassette's body under ``captures/cassettes/``, else a capture of ``captures/chat/vendors/`` built to
the shape the vendor's public streams have). The real SDKs finish normally on each (tests/test_chat_oracles.py runs
them on those captures): openai-python and openai-node type these fields as optional or as plain strings and
validate nothing.

Per field and value: a null ``system_fingerprint`` is the vendors'; a number there is still a warning."""

from __future__ import annotations

from checker.dialects.vendors import VendorShape

_AT = "captures/chat/vendors/"
_CASSETTES = "captures/cassettes/openllmetry/"

SHAPES: tuple[VendorShape, ...] = (
    # openai-python ChatCompletionChunk.system_fingerprint: Optional[str]; openai-node `system_fingerprint?: string`.
    VendorShape(code="CHT002", paths=("/system_fingerprint",), keywords=("type",), value_type="null",
                recording=f"api.openai.com and Azure OpenAI ({_CASSETTES}openai-langchain-stream-0.sse)"),
    # Both SDKs take a missing finish_reason as null (pydantic construct; `finish_reason` read as undefined):
    # a choice that is never finished is CHT008's finding, not this one.
    VendorShape(code="CHT002", paths=("/choices/N",), keywords=("required",), missing=("finish_reason", "logprobs"),
                recording=f"xAI and Z.ai ({_AT}xai-finish-reason-omitted.sse)"),
    # openai-python types service_tier as a Literal it does not validate; openai-node passes the string through.
    VendorShape(code="CHT002", paths=("/service_tier",), keywords=("enum",), value_type="string",
                recording=f"Groq and Hugging Face ({_AT}groq-service-tier-on-demand.sse)"),
)
# Azure OpenAI's content-filter preamble: a first chunk with id "", object "", created 0, model "", choices []
# and prompt_filter_results. openai-python's stream() skips it (_is_valid_chat_completion_chunk_weak), openai-node
# takes the later chunks' identity: graded info by the machine, which sees the whole chunk (the object alone does
# not say that nothing is lost: a chunk with choices and object "" loses its deltas in openai-python).
PREAMBLE = f"Azure OpenAI's content-filter preamble ({_CASSETTES}azure-openai-chat_streaming-0.sse)"
