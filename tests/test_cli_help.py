"""``--help`` and the docs say what the tool does: the options each command takes (and no others), examples
that parse, 80 columns, links that lead somewhere, and one shape for the JSON reports' ``tool`` field."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from checker.cli import COMMANDS, build_parser
from checker.commands.replay import FORMATS
from checker.commands.replay import LIVE_FORMATS

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "checker", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120, env={"NO_COLOR": "1", "PATH": "/usr/bin:/bin", "COLUMNS": "80"})


def help_text(command: str) -> str:
    proc = run(*([command] if command else []), "--help")
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.parametrize("command", ["", *COMMANDS])
def test_help_fits_80_columns(command: str) -> None:
    wide = [line for line in help_text(command).splitlines() if len(line) > 80]
    assert not wide, wide


def example_commands(text: str) -> list[list[str]]:
    """The `sse-check …` lines of a help's examples (continued over `\\` lines), as argument lists."""
    joined = re.sub(r"\\\n\s*", " ", text)
    found = []
    for line in joined.splitlines():
        line = line.strip()
        if line.startswith("sse-check "):
            words = shlex.split(re.split(r"\s{2,}", line)[0])  # the explanation after two spaces is not typed
            found.append(words[1:])
    return found


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_help_example_parses(command: str) -> None:
    examples = example_commands(help_text(command))
    assert examples, f"`sse-check {command} --help` shows no example"
    for words in examples:
        try:
            build_parser(words[0]).parse_args(words)
        except SystemExit as exc:
            pytest.fail(f"`sse-check {' '.join(words)}` from `{command} --help` does not parse (exit {exc.code})")


def test_lint_help_has_examples_and_exit_codes() -> None:
    text = help_text("lint")
    assert "examples:" in text and "Exit codes:" in text
    assert len(example_commands(text)) >= 5


def test_proxy_help_lists_only_the_options_it_takes() -> None:
    text = help_text("proxy")
    assert "--baseline" not in text.replace("--baseline FILE`", "")  # named only as lint's, in the epilogue
    assert "--write-baseline" not in text
    proc = run("proxy", "--upstream", "http://127.0.0.1:9", "--baseline", "known.json")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "proxy does not take --baseline" in proc.stderr and "sse-check lint DIR --baseline" in proc.stderr


def test_replay_writes_its_report_with_o(tmp_path: Path) -> None:
    target = tmp_path / "replay.json"
    proc = run("replay", "cases/reasoning-replay.json", "--format", "json", "-o", str(target))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    assert json.loads(target.read_text())["summary"]["passed"] == 6
    assert "--output FILE, -o FILE" in help_text("replay")


def test_every_json_report_names_the_tool_the_same_way(tmp_path: Path) -> None:
    capture = ROOT / "captures" / "conforming" / "text.sse"
    documents = {
        "lint": run("lint", str(capture), "--format", "json"),
        "replay": run("replay", "cases/reasoning-replay.json", "--format", "json"),
        "diff": run("diff", str(capture), str(capture), "--format", "json"),
    }
    from checker import __version__

    for command, proc in documents.items():
        assert proc.returncode == 0, (command, proc.stderr)
        document = json.loads(proc.stdout)
        assert document["tool"] == {"name": "sse-check", "version": __version__}, command
        assert "tool_version" not in document
    schema = json.loads((DOCS / "report-schema.json").read_text())
    assert schema["properties"]["tool"]["required"] == ["name", "version"]
    assert "tool_version" not in (DOCS / "report-schema.md").read_text() + (DOCS / "replay.md").read_text()


def test_replay_doc_synopsis_lists_the_formats_the_tool_takes() -> None:
    text = (DOCS / "replay.md").read_text(encoding="utf-8")
    case_files = re.search(r"^sse-check replay CASES\.json.*?(?=^sse-check|^```)", text, re.M | re.S)
    live = re.search(r"^sse-check replay --live URL.*?(?=^sse-check|^```)", text, re.M | re.S)
    assert case_files and live
    for block, formats in ((case_files.group(0), FORMATS), (live.group(0), LIVE_FORMATS)):
        listed = re.search(r"--format ([a-z|]+)", block)
        assert listed and tuple(listed.group(1).split("|")) == tuple(formats), block
        assert "-o FILE" in block


# --- the docs -----------------------------------------------------------------------------------------------


def markdown_files() -> list[Path]:
    return [ROOT / "README.md", *sorted(DOCS.glob("*.md")), *sorted(ROOT.glob("captures/**/README.md")),
            *sorted(ROOT.glob("tools/**/README.md")), ROOT / "reference" / "README.md"]


def anchors(path: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens."""
    found = set()
    for heading in re.findall(r"^#+ (.+)$", path.read_text(encoding="utf-8"), re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", "")).replace(" ", "-")
        found.add(slug)
    return found


def test_every_relative_link_in_the_docs_leads_somewhere() -> None:
    broken = []
    for page in markdown_files():
        text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            file, _, anchor = target.partition("#")
            linked = (page.parent / file).resolve() if file else page
            if not linked.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}")
            elif linked == page and not anchor:
                broken.append(f"{page.relative_to(ROOT)}: {target} (a link to itself)")
            elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    assert not broken, broken


def test_the_docs_hold_no_editing_notes() -> None:
    """HTML comments are invisible on GitHub and mean a note left for a later edit, except the README's
    generated-block markers."""
    for page in markdown_files():
        comments = re.findall(r"<!--(.*?)-->", page.read_text(encoding="utf-8"), re.S)
        assert all(c.strip().startswith("generated from the registry") for c in comments), (page, comments)


def test_make_alone_lists_the_targets() -> None:
    """`make` with no target must not start a build: it lists what there is (every .PHONY target)."""
    make = subprocess.run(["make", "--no-print-directory"], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert make.returncode == 0, make.stderr
    phony = re.search(r"^\.PHONY: (.+)$", (ROOT / "Makefile").read_text(encoding="utf-8"), re.M)
    assert phony
    listed = re.findall(r"^  (\S+) +\S", make.stdout, re.M)
    assert listed == phony.group(1).split(), make.stdout
    assert all(len(line) <= 80 for line in make.stdout.splitlines())


def test_rules_code_renders_its_message_and_shows_it_on_its_example() -> None:
    text = " ".join(run("rules", "ITM011").stdout.split())
    assert "message: <later_type> item <later> added while <earlier_type> item <earlier> is not done" in text
    assert "On its example it reads: function_call item 'fc_" in text
    assert "{later" not in text


def test_rules_family_and_prefix_list_their_rules() -> None:
    from checker.rules import RULES

    for prefix in ("ITM", "itm", "RPL1", "SSE00"):
        proc = run("rules", prefix)
        assert proc.returncode == 0, proc.stderr
        listed = re.findall(r"^([A-Z]{3}\d{3}) ", proc.stdout, re.M)
        assert listed and set(listed) == {c for c in RULES if c.startswith(prefix.upper())}, prefix
    proc = run("rules", "XYZ")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "no rule 'XYZ'" in proc.stderr


def documented_commands() -> list[tuple[str, list[str]]]:
    """Every `sse-check …` command line in the README's and docs' code blocks (synopses with [OPTIONS] aside)."""
    found = []
    for page in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]:
        for block in re.findall(r"```(?:sh|bash|console|)\n(.*?)```", page.read_text(encoding="utf-8"), re.S):
            for line in re.sub(r"\\\n\s*", " ", block).splitlines():
                line = line.strip().removeprefix("$ ")
                if not line.startswith("sse-check ") or re.search(r"\s\[", line):
                    continue
                words = shlex.split(line, comments=True)
                end = next((i for i, w in enumerate(words) if w in ("|", "&&", "||", ";", ">", ">>", "&")), None)
                found.append((f"{page.relative_to(ROOT)}: {line}", words[1:end]))
    return found


def test_every_documented_command_parses() -> None:
    commands = documented_commands()
    assert len(commands) > 30
    for where, words in commands:
        try:
            build_parser(words[0]).parse_args(words)
        except SystemExit as exc:
            pytest.fail(f"{where}: does not parse (exit {exc.code})")
        for word in words:  # the bundled files a command names are there (as written: from the checkout)
            if word.startswith(("captures/", "cases/", "tools/", "reference/")):
                assert list(ROOT.glob(word.rstrip("/"))), f"{where}: no {word}"


def test_shell_blocks_set_the_variables_they_use() -> None:
    """A copied block must run: every $VAR is set in the block, or is the user's own API key."""
    expected_from_the_user = {"OPENAI_API_KEY", "ANTHROPIC_API_KEY"}  # the two vendors' keys
    for page in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]:
        for block in re.findall(r"```(?:sh|bash)\n(.*?)```", page.read_text(encoding="utf-8"), re.S):
            assigned = set(re.findall(r"(?:^|[\s;(])([A-Za-z_]\w*)=", block)) | set(re.findall(r"for (\w+) in", block))
            used = set(re.findall(r"\$\{?([A-Za-z_]\w*)", block))
            assert used <= assigned | expected_from_the_user, (page.name, used - assigned)
