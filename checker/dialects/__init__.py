"""Wire dialects: one package per streamed API (its vocabulary, machine, rules, schemas and client effects).

The registry: which dialects exist, which one a capture is checked as, and how a stream of an API with no
dialect is recognised. A capture's dialect is decided, first to last, by ``--dialect``, by the endpoint its
meta sidecar recorded (:func:`for_endpoint`), and by its first event object (:func:`recognise`); a stream
none of them recognises is checked as the default dialect (Responses), whose machine reports what is wrong.

To add a dialect: a package under ``checker/dialects/`` whose ``__init__`` defines ``DIALECT`` (a
:class:`~checker.dialects.base.Dialect`), and one line in ``BUILTIN`` below.
"""

from __future__ import annotations

import importlib
from typing import Any

from checker.dialects.base import Dialect

# The built-in dialects' packages, in registration order (the first is the default). One line per dialect.
BUILTIN: tuple[str, ...] = (
    "checker.dialects.responses",
    "checker.dialects.messages",
    "checker.dialects.chat",
)

_REGISTRY: dict[str, Dialect] = {}
_loaded = False


def register(dialect: Dialect) -> Dialect:
    """Add a dialect (a plugin's, or a test's); a name is registered once."""
    existing = _REGISTRY.get(dialect.name)
    if existing is not None and existing is not dialect:
        raise ValueError(f"dialect {dialect.name!r} is already registered")
    _REGISTRY[dialect.name] = dialect
    return dialect


def _registry() -> dict[str, Dialect]:
    global _loaded
    if not _loaded:
        _loaded = True
        for module in BUILTIN:
            register(importlib.import_module(module).DIALECT)
    return _REGISTRY


def names() -> tuple[str, ...]:
    """The registered dialects' names (the ``--dialect`` choices), the default first."""
    return tuple(_registry())


def get(name: str) -> Dialect:
    """The dialect called ``name``; a ValueError naming the choices for an unknown one."""
    try:
        return _registry()[name]
    except KeyError:
        raise ValueError(f"unknown dialect {name!r} (choose from {', '.join(names())})") from None


def default() -> Dialect:
    """The dialect a stream is checked as when nothing says otherwise: the first built-in (Responses)."""
    return next(iter(_registry().values()))


def for_endpoint(path: str) -> Dialect | None:
    """The dialect whose endpoint a request path is (``/v1/responses``, ``/v1/chat/completions``), if any."""
    path = path.rstrip("/")
    for dialect in _registry().values():
        if any(path.endswith(suffix) for suffix in dialect.endpoints):
            return dialect
    return None


# APIs that stream as SSE and may be answered where another is expected, with no dialect of their own: these
# only name the API (for SCH010). Their endpoints let an exchange with such an endpoint be told from a wrong
# answer to a dialect's endpoint. (Chat Completions and Messages are dialects: their own recognisers tell them.)
def _legacy(obj: dict[str, Any]) -> str | None:
    return "object 'text_completion'" if obj.get("object") == "text_completion" else None


# (dialect name it would have, the API as SCH010 names it, its endpoint suffix, its recogniser), in the order
# they are tried; a registered dialect of that name takes precedence.
OTHER_APIS: tuple[tuple[str, str, str, Any], ...] = (
    ("completions", "a legacy Completions stream", "/completions", _legacy),
)


def other_api(obj: dict[str, Any], *, besides: Dialect | None = None) -> tuple[str, str] | None:
    """(the API as a finding names it, evidence) when a first event object belongs to an API other than
    ``besides``: another registered dialect (by its title) or a known API with no dialect yet."""
    for dialect in _registry().values():
        if dialect is besides:
            continue
        evidence = dialect.recognise(obj)
        if evidence is not None:
            return f"{_article(dialect.title)} {dialect.title} stream", evidence
    for name, api, _suffix, recognise_other in OTHER_APIS:
        if name in _registry():
            continue
        evidence = recognise_other(obj)
        if evidence is not None:
            return api, evidence
    return None


def recognise(obj: dict[str, Any]) -> tuple[Dialect | None, str]:
    """(the registered dialect a stream's first event object belongs to, the evidence); (None, evidence) for a
    known API with no dialect, (None, "") for an object nobody recognises."""
    for dialect in _registry().values():
        evidence = dialect.recognise(obj)
        if evidence is not None:
            return dialect, evidence
    found = other_api(obj)
    return (None, found[1]) if found is not None else (None, "")


def other_endpoint(path: str) -> str | None:
    """The name of a known API without a dialect whose endpoint ``path`` is (``completions`` for
    ``/v1/completions``), else None."""
    path = path.rstrip("/")
    if for_endpoint(path) is not None:
        return None
    for name, _api, suffix, _recognise in OTHER_APIS:
        if path.endswith(suffix):
            return name
    return None


def _article(title: str) -> str:
    return "an" if title[:1].lower() in "aeiou" else "a"
