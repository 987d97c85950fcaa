"""The rule registry, filled by importing one module per family."""

from checker.rules import calls, content, framing, http, ids, items, lifecycle, reasoning, reconcile, schema  # noqa: F401
from checker.rules import chat, messages, replay, tools  # noqa: F401
from checker.rules import websocket  # noqa: F401
from checker.rules import structured  # noqa: F401
from checker.rules import repeat  # noqa: F401
from checker.rules import flows, models, tool_turns  # noqa: F401
from checker.rules.registry import FAMILIES, RULES, Rule, get, select
from checker.rules import stored  # noqa: F401
from checker.rules import inputs  # noqa: F401
from checker.rules import tool_choice  # noqa: F401

__all__ = ["FAMILIES", "RULES", "Rule", "get", "select"]
