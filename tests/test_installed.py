"""sse-check as a user gets it: ``pip install .`` (not editable) into a fresh venv, run from another folder.

An editable install reads the repository (captures/, schemas/, docs/), so it hides everything the wheel
forgets. This test builds the real wheel (pip, with build isolation: hatchling comes from the package
index or pip's cache) and installs it into a temporary venv without its dependencies, which it borrows
from the interpreter running the tests (a ``.pth`` line, so no download is needed for them). It takes
about a minute: one wheel for the whole module.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import pytest

from checker.rules import RULES

ROOT = Path(__file__).resolve().parents[1]


def shipped_example_folders() -> dict[str, str]:
    """pyproject.toml's force-include of example captures: source folder -> folder in the wheel."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    include = config["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]
    return {source: target for source, target in include.items() if target.startswith("checker/_examples/")}


def test_every_example_a_rule_names_is_in_a_shipped_folder() -> None:
    """Fast, no install: a rule added with its example in a new folder must add the folder to the wheel."""
    folders = shipped_example_folders()
    assert all(target == "checker/_examples/" + source.removeprefix("captures/") for source, target in folders.items())
    for rule in RULES.values():
        for example in filter(None, (rule.bad, rule.good)):
            assert any(f"captures/{example}".startswith(folder + "/") for folder in folders), (rule.code, example)
            assert (ROOT / "captures" / example).is_file(), (rule.code, example)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bin/ folder of a venv with sse-check installed from the checkout as a wheel."""
    return _install(tmp_path_factory.mktemp("installed"))


@pytest.fixture(scope="module")
def installed_without_compiler(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same, built where the C compiler cannot be run (CC names none): the pure-Python wheel."""
    return _install(tmp_path_factory.mktemp("installed-pure"), {"CC": "/nonexistent/cc"})


def _install(home: Path, env: dict[str, str] | None = None) -> Path:
    venv = home / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=300)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    # The dependencies (httpx, rich, jsonschema, …) from the test interpreter's site-packages; a directory
    # named in a .pth is only added to sys.path: the editable install's own .pth hooks there stay inert.
    Path(site, "borrowed-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    proc = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-deps", str(ROOT)],
                          capture_output=True, text=True, timeout=900, cwd=home,
                          env={k: v for k, v in os.environ.items() if k != "SSE_CHECK_PURE"} | (env or {}))
    if proc.returncode != 0:
        pytest.fail(f"pip install . failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}", pytrace=False)
    return venv / "bin"


def sse_check(installed: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(installed / "sse-check"), *args], capture_output=True, text=True, timeout=120,
                          cwd=installed.parent.parent, env={"NO_COLOR": "1", "PATH": "/usr/bin:/bin",
                                                            "COLUMNS": "100"})


def test_the_install_is_not_the_checkout(installed: Path) -> None:
    proc = subprocess.run([str(installed / "python"), "-c", "import checker; print(checker.__file__)"],
                          capture_output=True, text=True, cwd=installed.parent.parent, check=True)
    where = Path(proc.stdout.strip()).resolve()
    assert where.is_relative_to(installed.parent.resolve()) and not where.is_relative_to(ROOT), where


def test_the_installed_package_declares_its_types(installed: Path) -> None:
    """PEP 561: the wheel carries checker/py.typed, so a type checker reads the installed package's annotations."""
    proc = subprocess.run([str(installed / "python"), "-c",
                           "import checker, pathlib; print((pathlib.Path(checker.__file__).parent / 'py.typed')"
                           ".is_file())"], capture_output=True, text=True, cwd=installed.parent.parent, check=True)
    assert proc.stdout.strip() == "True"


def test_rules_code_shows_its_example_and_a_readable_message(installed: Path) -> None:
    proc = sse_check(installed, "rules", "ITM011")
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    assert "missing example" not in text
    assert "captures/rules/ITM011-interleaved-items.sse" in text
    assert "response.output_item.added" in text  # the excerpt itself
    assert "<later_type> item <later> added while" in " ".join(text.split())
    assert "On its example it reads: function_call item" in " ".join(text.split())
    assert "{" not in text.split("What it does")[0], "the message template is rendered"


def test_every_rule_explains_itself_with_its_example(installed: Path) -> None:
    script = (
        "from checker.rules import RULES\n"
        "from checker.rules.docs import examples_root, render_rule\n"
        "root = examples_root()\n"
        "assert root.name == '_examples', root\n"
        "bad = [c for c, r in RULES.items() if 'missing example' in render_rule(r, root)\n"
        "       or not (root / r.good).is_file()]\n"
        "print(len(RULES), bad)\n"
    )
    proc = subprocess.run([str(installed / "python"), "-c", script], capture_output=True, text=True,
                          cwd=installed.parent.parent, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"{len(RULES)} []"


def test_rules_family_lists_the_family(installed: Path) -> None:
    proc = sse_check(installed, "rules", "ITM")
    assert proc.returncode == 0, proc.stderr
    codes = re.findall(r"^(ITM\d{3}) ", proc.stdout, re.M)
    assert codes == sorted(c for c in RULES if c.startswith("ITM"))
    assert "SSE001" not in proc.stdout


def test_rules_example_lines_are_capped(installed: Path) -> None:
    """Some examples hold a whole response object on one line: the excerpt shows its start."""
    longest = max((len(line) for rule in RULES.values() if rule.bad
                   for line in (ROOT / "captures" / rule.bad).read_text("utf-8", "replace").splitlines()[:40]))
    assert longest > 200  # otherwise there is nothing to cap
    for code, rule in RULES.items():
        if rule.bad and rule.bad.endswith(".sse"):
            lines = (ROOT / "captures" / rule.bad).read_text("utf-8", "replace").splitlines()[:40]
            if max(map(len, lines), default=0) > 200:
                proc = sse_check(installed, "rules", code, "--format", "text")
                assert "more characters)" in proc.stdout, code
                break


def test_help_points_to_nothing_that_is_not_installed(installed: Path) -> None:
    for command in ("lint", "probe", "serve", "replay", "diff", "proxy", "rules"):
        proc = sse_check(installed, command, "--help")
        assert proc.returncode == 0, (command, proc.stderr)
        assert not re.search(r"\bdocs/\w", proc.stdout), (command, re.findall(r".*docs/.*", proc.stdout))


def _implementation(installed: Path) -> str:
    proc = subprocess.run([str(installed / "python"), "-c", "import checker.native as n; print(n.implementation())"],
                          capture_output=True, text=True, cwd=installed.parent.parent, check=True,
                          env={"PATH": "/usr/bin:/bin"})
    return proc.stdout.strip()


def test_the_wheel_runs_the_compiled_hot_path(installed: Path) -> None:
    """hatch_build.py compiled checker/_speedups.c into the wheel (CI has a C compiler: a wheel without it
    would pass every other test, slower)."""
    command = shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "")
    if not command or shutil.which(command[0]) is None:
        pytest.skip("no C compiler here: the wheel is the pure-Python one")
    assert _implementation(installed) == "compiled (checker._speedups)"


def test_without_a_compiler_the_wheel_is_pure_python_and_lints_the_same(installed: Path,
                                                                        installed_without_compiler: Path) -> None:
    """The extension is optional: a failed compile installs the pure-Python package, which lints the same."""
    assert _implementation(installed_without_compiler) == "pure Python"
    captures = [str(ROOT / "captures" / "conforming"), str(ROOT / "captures" / "rules")]
    pure = sse_check(installed_without_compiler, "lint", *captures, "--format", "json")
    compiled = sse_check(installed, "lint", *captures, "--format", "json")
    assert pure.returncode == compiled.returncode == 1, pure.stderr  # captures/rules: findings
    assert pure.stdout == compiled.stdout
