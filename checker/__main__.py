"""``python -m checker`` is the same program as ``sse-check``."""

from checker.cli import entry

raise SystemExit(entry())
