"""Rule documentation, generated from the registry (ruff's fixed sections).

``python -m checker.rules.docs DIR`` writes ``DIR/<CODE>.md`` per rule and
``DIR/README.md`` as the index; a test checks that the committed docs equal
what this module renders, so they cannot drift from the code.
"""

from __future__ import annotations

import string
import sys
from importlib import resources
from pathlib import Path

from checker.clients import describe
from checker.profiles import PROFILES
from checker.rules import FAMILIES, RULES, Rule

# Example captures are shown inline up to this many lines, each cut at this many characters (an event's JSON
# can be kilobytes long: the excerpt shows the shape, the file has the rest).
EXAMPLE_LINES = 40
EXAMPLE_LINE_CHARS = 120


def examples_root() -> Path:
    """Where the rules' example captures are: ``checker/_examples`` in an installed wheel (pyproject.toml ships
    the folders the rules name), the repository's ``captures/`` in a checkout or an editable install."""
    packaged = Path(str(resources.files("checker") / "_examples"))
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "captures"


def render_message(template: str) -> str:
    """A rule's message template as a reader can take it in: ``{later!r}`` becomes ``<later>``."""
    parts = []
    for literal, field, _spec, _conversion in string.Formatter().parse(template):
        parts.append(literal)
        if field is not None:
            parts.append(f"<{field}>")
    return "".join(parts)


def ordered_rules() -> list[Rule]:
    order = list(FAMILIES)
    return sorted(RULES.values(), key=lambda r: (order.index(r.family), r.code))


def _excerpt(captures: Path, relative: str) -> str:
    path = captures / relative
    try:
        lines = path.read_bytes().decode("utf-8", "replace").splitlines()
    except OSError:
        return f"(missing example capture `captures/{relative}`)"
    shown = lines[:EXAMPLE_LINES]
    more = f"\n… ({len(lines) - EXAMPLE_LINES} more lines)" if len(lines) > EXAMPLE_LINES else ""
    return "```\n" + "\n".join(_cut(_visible(line)) for line in shown) + more + "\n```"


def _cut(line: str) -> str:
    if len(line) <= EXAMPLE_LINE_CHARS:
        return line
    return f"{line[:EXAMPLE_LINE_CHARS]}… ({len(line) - EXAMPLE_LINE_CHARS} more characters)"


def _visible(line: str) -> str:
    # Control characters (CR, BOM, NUL) are the point of some examples: show them.
    return (
        line.replace("\r", "␍").replace("\ufeff", "<BOM>").replace("\x00", "␀")
        if any(ch in line for ch in "\r\ufeff\x00")
        else line
    )


# Families whose findings compare several exchanges: no single capture shows one.
_NO_CAPTURE = {"RPT": "No single capture shows it: it compares the runs of `sse-check probe --repeat`. Its bad and "
                      "good examples are runs against `sse-check serve` with and without a fault "
                      "(tests/live/test_probe_repeat.py, tests/live/test_probe_load.py)."}


def _example(rule: Rule, captures: Path) -> str:
    if not rule.bad:
        return _NO_CAPTURE.get(rule.code[:3],
                               "No stream should produce it: it reports a bug in sse-check itself, found on that stream.")
    return f"`captures/{rule.bad}`:\n\n{_excerpt(captures, rule.bad)}"


def profile_notes(rule: Rule) -> list[str]:
    notes = []
    for profile in PROFILES.values():
        if rule.code in profile.disabled:
            notes.append(f"`{profile.name}`: off")
        elif rule.code in profile.severity:
            notes.append(f"`{profile.name}`: {profile.severity[rule.code]}")
        for deviation in profile.known_deviations:
            if deviation.code == rule.code:
                notes.append(f"`{profile.name}`: known deviation, reported as info ({deviation.description})")
    return notes


def render_rule(rule: Rule, captures: Path, seen: str | None = None) -> str:
    """A rule's page; ``seen``, when given, is the message as the rule reports it on its example."""
    family = FAMILIES[rule.family][0]
    shown = f"\n\nOn its example it reads: `{seen.replace('`', chr(39))}`" if seen else ""
    clients = "\n".join(f"- `{c}`: {describe(c)}" for c in rule.clients) or "- none known to fail outright"
    sources = "\n".join(f"- {s}" for s in rule.sources)
    notes = profile_notes(rule)
    profile_text = "\n".join(f"- {n}" for n in notes) if notes else "- same in every profile"
    return f"""# {rule.code} {rule.name}

Family: {family} · default severity: {rule.severity} · message: `{render_message(rule.message)}`{shown}

## What it does
{rule.summary}

## Why is this bad?
{rule.why}

## Clients it breaks
{clients}

## Profiles
{profile_text}

## Example
{_example(rule, captures)}

## Use instead
`captures/{rule.good}` (conforming).

## References
{sources}
"""


def render_index() -> str:
    lines = [
        "# sse-check rules",
        "",
        "Generated from the rule registry (`python -m checker.rules.docs docs/rules`); do not edit by hand.",
        "",
    ]
    for prefix, (title, scope) in FAMILIES.items():
        lines += [f"## {prefix}: {title}", "", scope, "", "| code | name | severity | summary |", "|---|---|---|---|"]
        for rule in ordered_rules():
            if rule.family == prefix:
                lines.append(f"| [{rule.code}]({rule.code}.md) | {rule.name} | {rule.severity} | {rule.summary} |")
        lines.append("")
    return "\n".join(lines)


README_BEGIN = "<!-- generated from the registry: begin -->"
README_END = "<!-- generated from the registry: end -->"


def render_readme_block() -> str:
    """The README's rule families and profiles tables."""
    lines = [README_BEGIN, f"{len(RULES)} rules in {len(FAMILIES)} families:", "",
             "| prefix | family | rules | what it checks |", "|---|---|---|---|"]
    for prefix, (title, scope) in FAMILIES.items():
        count = sum(1 for r in RULES.values() if r.family == prefix)
        lines.append(f"| `{prefix}` | {title} | {count} | {scope} |")
    lines += ["", "Profiles (`--profile`):", "", "| profile | what it holds a stream to |", "|---|---|"]
    for profile in PROFILES.values():
        lines.append(f"| `{profile.name}` | {profile.description} |")
    lines.append(README_END)
    return "\n".join(lines)


def sync_readme(readme: Path) -> bool:
    """Replace the generated block of the README; True when it changed."""
    text = readme.read_text(encoding="utf-8")
    start, end = text.index(README_BEGIN), text.index(README_END) + len(README_END)
    new = text[:start] + render_readme_block() + text[end:]
    if new != text:
        readme.write_text(new, encoding="utf-8")
        return True
    return False


def render_all(captures: Path) -> dict[str, str]:
    pages = {f"{r.code}.md": render_rule(r, captures) for r in ordered_rules()}
    pages["README.md"] = render_index()
    return pages


def main(argv: list[str]) -> int:
    target = Path(argv[0]) if argv else Path("docs/rules")
    root = Path(__file__).resolve().parents[2]
    target.mkdir(parents=True, exist_ok=True)
    for stale in target.glob("*.md"):
        stale.unlink()
    for name, text in render_all(root / "captures").items():
        (target / name).write_text(text, encoding="utf-8")
    sync_readme(root / "README.md")
    print(f"wrote {len(RULES)} rule pages to {target}; README tables updated")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
