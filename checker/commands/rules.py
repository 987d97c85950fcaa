"""``sse-check rules [CODE]``: list the rules, or explain one."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from rich.markdown import Markdown
from rich.table import Table

from checker.console import UNWRAPPED, make_console, output_width
from checker.errors import UsageError
from checker.rules import FAMILIES, RULES, Rule
from checker.rules.docs import examples_root, ordered_rules, render_rule

HELP = "list the rules, or explain one (sse-check rules CODE)"

EPILOG = """\
examples:
  sse-check rules                  every rule: code, name, severity, family,
                                   the clients it breaks
  sse-check rules ITM              the rules of one family (or code prefix)
  sse-check rules ITM011           what the rule checks, why, the clients,
                                   the profiles, a bad example
  sse-check rules interleaved-items
  sse-check rules --format json    the registry as JSON
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EPILOG
    parser.add_argument("code", nargs="?",
                        help="a rule code (ITM011), a family or code prefix (ITM) or a rule name (interleaved-items)")
    parser.add_argument("--format", default="text", choices=["text", "json"], help="output format")
    parser.add_argument("--color", default="auto", choices=["auto", "always", "never"])


@dataclass(frozen=True, slots=True, kw_only=True)
class RulesOptions:
    code: str | None = None
    format: str = "text"
    color: str = "auto"


def options(args: argparse.Namespace) -> RulesOptions:
    """The parser's result as rules' typed options."""
    return RulesOptions(code=args.code, format=args.format, color=args.color)


def run(opts: RulesOptions) -> int:
    console = make_console(sys.stdout, opts.color)
    rules = ordered_rules()
    if opts.code:
        wanted = opts.code.strip()
        rule = RULES.get(wanted.upper()) or next((r for r in RULES.values() if r.name == wanted), None)
        if rule is None:
            rules = [r for r in rules if r.code.startswith(wanted.upper())]
            if not rules:
                raise UsageError(f"no rule {wanted!r} (a code like ITM011, a family like ITM, or a name; "
                                 "see `sse-check rules`)")
        elif opts.format == "json":
            print(json.dumps(_rule_dict(rule), indent=2))
            return 0
        else:
            root = examples_root()
            page = render_rule(rule, root, seen=_message_on_example(rule, root))
            if output_width(sys.stdout) == UNWRAPPED:
                # A pipe or a file with no $COLUMNS: rendered at no width at all, rich centred the heading over
                # 2,000 blanks (`sse-check rules CNT004 | less`); the page is Markdown, so it is written as that.
                sys.stdout.write(page if page.endswith("\n") else page + "\n")
            else:
                console.print(Markdown(page))
            return 0
    if opts.format == "json":
        print(json.dumps([_rule_dict(r) for r in rules], indent=2))
        return 0
    families = {r.family for r in rules}
    if len(families) == 1:
        title, scope = FAMILIES[rules[0].family]
        console.print(f"{rules[0].family}: {title}. {scope}")
    table = Table(box=None, pad_edge=False)
    for column in ("code", "name", "severity", "family", "breaks"):
        table.add_column(column)
    for rule in rules:
        table.add_row(rule.code, rule.name, str(rule.severity), FAMILIES[rule.family][0], ", ".join(rule.clients))
    console.print(table)
    shown = f"{len(rules)} of {len(RULES)} rules" if len(rules) < len(RULES) else f"{len(RULES)} rules"
    console.print(f"{shown}; `sse-check rules CODE` explains one.")
    return 0


# A message quoted from an example is cut here: some quote a whole event.
SEEN_CHARS = 200


def _message_on_example(rule: Rule, root: Path) -> str | None:
    """The message the rule reports on its bad example (linted as `sse-check lint` would, under the first
    profile where it fires), so the reader sees the template filled in; None when it cannot be shown."""
    if not rule.bad or not rule.bad.endswith(".sse") or not (root / rule.bad).is_file():
        return None
    from checker.captures import read_chunks, request_for
    from checker.engine_options import EngineOptions
    from checker.lint_job import linter_for
    from checker.profiles import PROFILES

    path = root / rule.bad
    try:
        for profile in PROFILES.values():
            linter = linter_for(path, request_for(path), EngineOptions(profile=profile))
            for chunk in read_chunks(path):
                linter.feed(chunk)
            message = next((f.message for f in linter.close().findings if f.code == rule.code), None)
            if message is not None:
                return message if len(message) <= SEEN_CHARS else message[:SEEN_CHARS] + "…"
    except (OSError, UsageError):  # an example that cannot be read: the template alone says it
        return None
    return None


def _rule_dict(rule: Rule) -> dict[str, object]:
    return {
        "code": rule.code,
        "name": rule.name,
        "family": FAMILIES[rule.family][0],
        "severity": str(rule.severity),
        "message": rule.message,  # the template: {field} is filled in from the stream
        "summary": rule.summary,
        "why": rule.why,
        "sources": list(rule.sources),
        "clients": list(rule.clients),
        "bad_example": f"captures/{rule.bad}" if rule.bad else None,
        "good_example": f"captures/{rule.good}",
    }
