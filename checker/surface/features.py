"""The built-in features, and the flows a probe runs after its scenarios.

Each feature module registers its :class:`~checker.surface.capability.Feature` when imported and has a
``flows(apis)`` function giving its flows for the dialects probed; :data:`MODULES` lists them in the order
their flows run (and their rows show).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Sequence

from checker.surface.flow import Flow

# Feature modules under checker.surface, in run order.
MODULES: tuple[str, ...] = ("models", "turns", "inputs", "structured", "stored_probe", "tool_choice", "custom_tool",
                            "json_mode", "websocket")


def builtin_flows(apis: Sequence[str]) -> list[Flow]:
    """The built-in flows for a probe of the dialects ``apis``."""
    flows: list[Flow] = []
    for name in MODULES:
        module = importlib.import_module(f"checker.surface.{name}")
        flows.extend(module.flows(apis))
    return flows


def load_features() -> None:
    """Import every feature module (so that their features and judges are registered)."""
    for name in MODULES:
        importlib.import_module(f"checker.surface.{name}")


def suite(apis: Sequence[str], user: Iterable[Flow] = ()) -> list[Flow]:
    """The built-in flows with user flows replacing those of the same name and the rest appended."""
    by_name = {flow.name: flow for flow in builtin_flows(apis)}
    extra = []
    for flow in user:
        if flow.name in by_name:
            by_name[flow.name] = flow
        else:
            extra.append(flow)
    return [*by_name.values(), *extra]
