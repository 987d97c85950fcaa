"""sse-check: a conformance checker for streamed OpenAI Responses API captures.

The public API is small on purpose: :func:`lint_bytes` for a whole capture held in memory and
:func:`lint_path` for a file or URL, each returning the JSON report's ``files[]`` record (checker.api), for
any engine to map over an archive; :class:`checker.engine.StreamLinter` for bytes that arrive in chunks
(files, live servers, proxies). Everything else is reached through the ``sse-check`` command.
"""

from typing import Any

from checker.version import __version__

__all__ = ["__version__", "lint_bytes", "lint_path"]


def __getattr__(name: str) -> Any:
    # Imported on first use: `import checker` (and so `sse-check lint one.sse`) stays as fast as it was.
    if name in ("lint_bytes", "lint_path"):
        from checker import api

        return getattr(api, name)
    raise AttributeError(f"module 'checker' has no attribute {name!r}")
