"""The rule registry loads by family: a lint imports the families its dialect raises, and RULES (the whole
registry: `sse-check rules`, the docs, --select, SARIF) has every family, whatever was imported before."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RULES_DIR = ROOT / "checker" / "rules"
NOT_FAMILIES = {"__init__", "registry", "docs"}


def _in_fresh_process(code: str) -> object:
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_every_family_module_is_listed() -> None:
    from checker.rules import FAMILY_MODULES

    modules = {p.stem for p in RULES_DIR.glob("*.py")} - NOT_FAMILIES
    assert set(FAMILY_MODULES) == modules, "add a new family's module to checker.rules.FAMILY_MODULES"
    assert len(FAMILY_MODULES) == len(set(FAMILY_MODULES))


def test_rules_is_the_whole_registry_whatever_came_first() -> None:
    """RULES is the same set of rules (and the same records) when one family was imported first."""
    code = ("import json, sys\n{first}\nfrom checker.rules import RULES, FAMILIES\n"
            "print(json.dumps({{'codes': list(RULES), 'families': sorted({{c[:3] for c in RULES}}), "
            "'known': sorted(FAMILIES)}}))")
    whole = _in_fresh_process(code.format(first=""))
    after_one = _in_fresh_process(code.format(first="from checker.rules import chat"))
    assert isinstance(whole, dict) and isinstance(after_one, dict)
    assert sorted(whole["codes"]) == sorted(after_one["codes"])
    assert len(whole["codes"]) > 200
    assert whole["families"] == whole["known"]  # every family prefix has rules once RULES is read


def test_get_and_select_see_every_family() -> None:
    result = _in_fresh_process(
        "import json; from checker import rules\n"
        "print(json.dumps([rules.get('ANT001').code, rules.select(['CHT001', 'ITM001'], ['CHT'])]))")
    assert result == ["ANT001", ["CHT001"]]


def test_a_responses_lint_loads_only_its_families() -> None:
    loaded = _in_fresh_process(
        "import json, sys; from checker.cli import main\n"
        "main(['lint', 'captures/conforming/text.sse', '--color', 'never'])\n"
        "print(json.dumps(sorted(m.rsplit('.', 1)[1] for m in sys.modules if m.startswith('checker.rules.'))))")
    assert isinstance(loaded, list)
    for other in ("chat", "messages", "websocket", "replay", "repeat", "flows", "models", "tool_turns", "stored"):
        assert other not in loaded, loaded
    assert {"framing", "lifecycle", "items"} <= set(loaded)


def test_select_still_names_any_family(tmp_path: Path) -> None:
    """--select CHT on a Responses capture is accepted (it names rules, of a family the lint did not load)."""
    proc = subprocess.run([sys.executable, "-m", "checker", "lint", "captures/conforming/text.sse", "--select",
                           "CHT,ANT001", "--color", "never"], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 0, proc.stderr
    proc = subprocess.run([sys.executable, "-m", "checker", "lint", "captures/conforming/text.sse", "--select",
                           "NOPE", "--color", "never"], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 2 and "'NOPE' matches no rule" in proc.stderr
