"""Exceptions that reach the user as one line (exit code 2).

Findings are never raised; these are only for input that cannot be processed
at all: a bad flag value, a missing file, an unreadable case file.
"""


class UsageError(Exception):
    """Bad command-line use or unusable input; printed as one line, exit 2."""
