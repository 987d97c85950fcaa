"""sse-check: a conformance checker for streamed OpenAI Responses API captures.

The public API is small on purpose: :func:`lint_bytes` for a whole capture held
in memory, :class:`StreamLinter` for bytes that arrive in chunks (files, live
servers, proxies). Everything else is reached through the ``sse-check`` command.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
