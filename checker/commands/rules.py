"""``sse-check rules [CODE]``: list the rules, or explain one."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rich.markdown import Markdown
from rich.table import Table

from checker.console import make_console
from checker.errors import UsageError
from checker.rules import FAMILIES, RULES, Rule
from checker.rules.docs import ordered_rules, render_rule

HELP = "list the rules, or explain one (sse-check rules CODE)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("code", nargs="?", help="a rule code (ITM011) or name (interleaved-items)")
    parser.add_argument("--format", default="text", choices=["text", "json"], help="output format")
    parser.add_argument("--color", default="auto", choices=["auto", "always", "never"])


def run(args: argparse.Namespace) -> int:
    console = make_console(sys.stdout, args.color)
    if args.code:
        wanted = args.code.strip()
        rule = RULES.get(wanted.upper()) or next((r for r in RULES.values() if r.name == wanted), None)
        if rule is None:
            raise UsageError(f"no rule {wanted!r} (see `sse-check rules`)")
        if args.format == "json":
            print(json.dumps(_rule_dict(rule), indent=2))
        else:
            captures = Path(__file__).resolve().parents[2] / "captures"
            console.print(Markdown(render_rule(rule, captures)))
        return 0
    if args.format == "json":
        print(json.dumps([_rule_dict(r) for r in ordered_rules()], indent=2))
        return 0
    table = Table(box=None, pad_edge=False)
    for column in ("code", "name", "severity", "family", "breaks"):
        table.add_column(column)
    for rule in ordered_rules():
        table.add_row(rule.code, rule.name, str(rule.severity), FAMILIES[rule.family][0], ", ".join(rule.clients))
    console.print(table)
    console.print(f"{len(RULES)} rules; `sse-check rules CODE` explains one.")
    return 0


def _rule_dict(rule: Rule) -> dict[str, object]:
    return {
        "code": rule.code,
        "name": rule.name,
        "family": FAMILIES[rule.family][0],
        "severity": str(rule.severity),
        "message": rule.message,
        "summary": rule.summary,
        "why": rule.why,
        "sources": list(rule.sources),
        "clients": list(rule.clients),
        "bad_example": f"captures/{rule.bad}" if rule.bad else None,
        "good_example": f"captures/{rule.good}",
    }
