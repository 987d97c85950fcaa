"""The rule registry: one module per family, each registering its rules when it is imported.

A module that raises a family's findings imports that family's module (``from checker.rules import framing``),
so a lint loads the families its dialect raises and no others (start-up: the registry's ~240 rules were a
tenth of a small lint's instructions). ``RULES``, ``get`` and ``select`` are the whole registry: every family
below is imported on their first use (`sse-check rules`, the docs, ``--select``, SARIF, the tests).
"""

from __future__ import annotations

import importlib
from typing import Any

from checker.rules.registry import FAMILIES, Rule

# Every family module, in registration order. A new family adds its module here.
FAMILY_MODULES: tuple[str, ...] = (
    "calls", "content", "framing", "http", "ids", "items", "lifecycle", "reasoning", "reconcile", "schema",
    "chat", "messages", "replay", "tools",
    "websocket",
    "structured",
    "repeat",
    "flows", "models", "tool_turns",
    "stored",
    "inputs",
    "tool_choice",
)

__all__ = ["FAMILIES", "FAMILY_MODULES", "RULES", "Rule", "get", "load_all", "select"]


def load_all() -> dict[str, Rule]:
    """Every family registered (each module imported once): the whole registry, by code."""
    from checker.rules import registry

    for name in FAMILY_MODULES:
        importlib.import_module(f"checker.rules.{name}")
    return registry.RULES


def get(code: str) -> Rule:
    return load_all()[code]


def select(codes: list[str], selectors: list[str]) -> list[str]:
    """Codes matching any selector: a full code, a family prefix or a rule name."""
    from checker.rules import registry

    load_all()
    return registry.select(codes, selectors)


def __getattr__(name: str) -> Any:
    # `from checker.rules import RULES` (and checker.rules.RULES): the complete registry, loaded on first use.
    if name == "RULES":
        return load_all()
    raise AttributeError(f"module 'checker.rules' has no attribute {name!r}")
