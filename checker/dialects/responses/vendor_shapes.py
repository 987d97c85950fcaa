"""What OpenAI's own Responses API sends where its published description says otherwise, and the SDKs type
the field as optional: the schema findings graded info under every profile (the severity policy,
docs/severity.md), each with the recording that shows it (``captures/real-openai/``, else a capture of
``captures/vendors/`` built to the shape). openai-python,
openai-node and codex finish normally on each (tests/test_client_oracles.py, tests/test_real_clients.py)."""

from __future__ import annotations

from checker.dialects.vendors import VendorShape

_AT = "api.openai.com (captures/real-openai/"

SHAPES: tuple[VendorShape, ...] = (
    # A field the description added later: codex-rs/codex-api defaults it, the SDKs do not validate it.
    VendorShape(code="LIF018", paths=("/response/usage/input_tokens_details",), keywords=("required",),
                missing=("cache_write_tokens",), recording=_AT + "pydantic-openai-responses-streaming-usage.sse, "
                "recorded before the description added cache_write_tokens)"),
    # openai-python ResponseFormatTextJSONSchemaConfig.description: Optional[str]; openai-node `description?:`.
    VendorShape(code="SCH002", paths=("/response/text/format/description",), keywords=("type",), value_type="null",
                recording="api.openai.com (captures/vendors/openai-text-format-description-null.sse, built to the shape "
                "of its json_schema formats)"),
)
