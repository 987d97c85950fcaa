"""The OpenAI Responses API streamed as Server-Sent Events (``POST /v1/responses``, ``stream: true``)."""
