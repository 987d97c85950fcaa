"""``[tool.sse-check]`` in pyproject.toml, through the real CLI: found upward from the checked path (or the
working directory), --config and --isolated, the command line above the file, per-path overrides, one-line
errors for a wrong file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLAIN = (ROOT / "captures" / "llama.cpp" / "plain_text.sse").read_bytes()
CONFORMING = (ROOT / "captures" / "conforming" / "text.sse").read_bytes()


def sse_check(*args: str, cwd: Path, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "checker", *args], capture_output=True, cwd=cwd, input=stdin,
                          env={**os.environ, "NO_COLOR": "1"}, timeout=60)
    out = subprocess.CompletedProcess(proc.args, proc.returncode, proc.stdout.decode(), proc.stderr.decode())
    assert "Traceback" not in out.stderr, out.stderr
    return out


def _summary(*options: str) -> str:
    """The summary line of the llama.cpp capture linted with these options on the command line alone (from
    stdin, so without the sidecars that lie beside it in captures/, as in the test projects; --isolated, so no
    configuration file counts): what a configuration must reproduce."""
    proc = sse_check("lint", "-", "--isolated", *options, cwd=ROOT, stdin=PLAIN)
    line = proc.stdout.strip().splitlines()[-1]
    assert line.startswith("1 capture(s): "), proc.stdout
    return line


# The config file must give exactly what the same options on the command line give.
SUMMARY_OPENAI = _summary("--profile", "openai", "--fail-on", "warning")
SUMMARY_LLAMA = _summary("--profile", "llama.cpp", "--fail-on", "error")


def project(tmp_path: Path, config: str, name: str = "pyproject.toml") -> Path:
    (tmp_path / "streams" / "llama").mkdir(parents=True)
    (tmp_path / "streams" / "llama" / "plain_text.sse").write_bytes(PLAIN)
    (tmp_path / "streams" / "text.sse").write_bytes(CONFORMING)
    (tmp_path / name).write_text(config)
    return tmp_path


LLAMA_CONFIG = """\
[project]
name = "my-server"

[tool.sse-check]
profile = "llama.cpp"
fail-on = "error"
"""


def test_the_nearest_pyproject_upward_from_the_checked_path_is_used(tmp_path: Path) -> None:
    root = project(tmp_path, LLAMA_CONFIG)
    from_root = sse_check("lint", "streams/llama/plain_text.sse", cwd=root)
    assert from_root.returncode == 0 and SUMMARY_LLAMA in from_root.stdout
    deep = sse_check("lint", "plain_text.sse", cwd=root / "streams" / "llama")
    assert deep.returncode == 0 and SUMMARY_LLAMA in deep.stdout
    # from elsewhere: found from the path, not from the working directory
    elsewhere = sse_check("lint", str(root / "streams" / "llama" / "plain_text.sse"), cwd=ROOT / "docs")
    assert elsewhere.returncode == 0 and SUMMARY_LLAMA in elsewhere.stdout
    # stdin: from the working directory
    piped = sse_check("lint", "-", cwd=root / "streams", stdin=PLAIN)
    assert piped.returncode == 0 and "0 failed at --fail-on error" in piped.stdout


def test_the_command_line_wins_and_isolated_ignores_the_file(tmp_path: Path) -> None:
    root = project(tmp_path, LLAMA_CONFIG)
    strict = sse_check("lint", "streams/llama/plain_text.sse", "--profile", "openai", "--fail-on", "warning",
                       cwd=root)
    assert strict.returncode == 1 and SUMMARY_OPENAI in strict.stdout
    isolated = sse_check("lint", "streams/llama/plain_text.sse", "--isolated", cwd=root)
    assert isolated.returncode == 1 and SUMMARY_OPENAI in isolated.stdout


def test_a_pyproject_without_the_table_is_passed_over_and_sse_check_toml_counts(tmp_path: Path) -> None:
    root = project(tmp_path, LLAMA_CONFIG)
    (root / "streams" / "pyproject.toml").write_text("[project]\nname = 'streams'\n")  # no [tool.sse-check]
    proc = sse_check("lint", "llama/plain_text.sse", cwd=root / "streams")
    assert SUMMARY_LLAMA in proc.stdout
    (root / "streams" / "sse-check.toml").write_text('fail-on = "info"\n')  # top-level keys, nearer: it wins
    proc = sse_check("lint", "llama/plain_text.sse", cwd=root / "streams")
    # The nearest file wins whole, as ruff's does: its fail-on, and the default profile (openai), not llama.cpp's.
    assert proc.returncode == 1 and _summary("--profile", "openai", "--fail-on", "info") in proc.stdout


def test_config_names_a_file(tmp_path: Path) -> None:
    root = project(tmp_path, "[tool.other]\n")
    (root / "ci.toml").write_text('[tool.sse-check]\nprofile = "llama.cpp"\nselect = ["LIF015"]\n')
    # --config takes a pyproject-style file of any name only if it is a pyproject.toml: a TOML of top-level keys
    (root / "sse.toml").write_text('profile = "llama.cpp"\nselect = ["LIF015"]\nfail-on = "info"\n')
    proc = sse_check("lint", "streams/llama/plain_text.sse", "--config", "sse.toml", cwd=root)
    assert proc.returncode == 1 and "LIF015" in proc.stdout and "ITM001" not in proc.stdout
    missing = sse_check("lint", "streams/text.sse", "--config", "nope.toml", cwd=root)
    assert missing.returncode == 2 and missing.stderr == "sse-check: --config nope.toml: no such file\n"


def test_limits_select_ignore_and_per_path_overrides(tmp_path: Path) -> None:
    root = project(tmp_path, """\
[tool.sse-check]
ignore = ["SCH"]
fail-on = "warning"

[tool.sse-check.limits]
max-events = 20

[[tool.sse-check.overrides]]
paths = ["streams/llama/*"]
profile = "llama.cpp"
""")
    proc = sse_check("lint", "streams", cwd=root)
    out = proc.stdout
    # max-events = 20 applies to both: the 30- and 25-event streams are cut (SSE027), and nothing else fails
    assert "FAIL streams/text.sse  20 events" in out and "FAIL streams/llama/plain_text.sse  20 events" in out
    assert "2 capture(s): 2 failed at --fail-on warning; 0 error(s), 2 warning(s), 10 info" in out
    # the override gives the llama.cpp capture its profile (its deviations are info), the other keeps openai
    assert "· 10 known deviations" in out and "ITM001" in out
    assert "SCH0" not in out  # ignored everywhere


def test_a_wrong_configuration_is_one_line(tmp_path: Path) -> None:
    cases = {
        '[tool.sse-check]\nprofile = "nope"\n': "[tool.sse-check] profile: 'nope' is not one of",
        '[tool.sse-check]\nfail_on = "error"\n': "[tool.sse-check]: unknown key 'fail_on' (known: profile, select",
        '[tool.sse-check]\n[tool.sse-check.limits]\nmax-bytes = "lots"\n': "limits max-bytes: not a size",
        '[tool.sse-check\n': "not valid TOML",
        # the file and the key are named (it read "--select/--ignore: 'NOPE' matches no rule", no file)
        '[tool.sse-check]\nselect = ["NOPE"]\n': "pyproject.toml: [tool.sse-check] select: 'NOPE' matches no rule",
        '[tool.sse-check]\n[[tool.sse-check.overrides]]\npaths = ["*"]\nignore = ["ITM", "ZZZ9"]\n':
            "pyproject.toml: [tool.sse-check] overrides[0] ignore: 'ZZZ9' matches no rule",
        '[tool.sse-check]\n[[tool.sse-check.overrides]]\nprofile = "codex"\n': "overrides[0]: paths must be",
    }
    for text, message in cases.items():
        root = tmp_path / str(abs(hash(text)))
        project(root, text)
        proc = sse_check("lint", "streams/text.sse", cwd=root)
        assert proc.returncode == 2, (text, proc.stdout)
        assert proc.stdout == "" and proc.stderr.count("\n") == 1 and message in proc.stderr, (text, proc.stderr)


def test_probe_reads_the_configuration_of_the_working_directory(tmp_path: Path) -> None:
    root = project(tmp_path, LLAMA_CONFIG)
    # --list-scenarios needs no server; the configuration is read (a broken one is refused) before anything
    (root / "pyproject.toml").write_text('[tool.sse-check]\nprofile = "nope"\n')
    proc = sse_check("probe", "http://127.0.0.1:9", "--model", "m", cwd=root)
    assert proc.returncode == 2 and "profile: 'nope'" in proc.stderr


def test_show_settings_names_each_setting_and_where_it_came_from(tmp_path: Path) -> None:
    config = LLAMA_CONFIG + '[tool.sse-check.limits]\nmax-events = 1000\n\n[[tool.sse-check.overrides]]\n' \
        'paths = ["streams/llama/*"]\nignore = ["SCH"]\n'
    root = project(tmp_path, config)
    proc = sse_check("lint", "streams/text.sse", "streams/llama/plain_text.sse", "--fail-on", "warning",
                     "--show-settings", cwd=root)
    assert proc.returncode == 0 and proc.stderr == ""
    lines = proc.stdout.splitlines()
    table = "pyproject.toml [tool.sse-check]"  # relative to the working directory, where it is
    assert lines[0] == "configuration: pyproject.toml"
    rows = {line.split()[0]: line.split(None, 1)[1] for line in lines[2:11]}
    assert rows["profile"].split() == ["llama.cpp", *table.split()]
    assert rows["fail-on"].split() == ["warning", "command", "line"]  # the command line wins over the file
    assert rows["select"].split() == ["every", "rule", "default"]
    assert rows["max-events"].split() == ["1,000", *table.split()]
    assert rows["max-line-bytes"].split() == ["16", "MiB", "default"]
    assert "  overrides[0] streams/llama/*: ignore SCH" in lines
    assert "  streams/text.sse: no override applies" in lines
    assert "  streams/llama/plain_text.sse: overrides[0] applies" in lines
    assert "FAIL" not in proc.stdout and "capture(s)" not in proc.stdout  # nothing was checked
    isolated = sse_check("lint", "streams/text.sse", "--isolated", "--show-settings", cwd=root)
    assert isolated.stdout.splitlines()[0] == "configuration files ignored (--isolated)"
    assert "  profile          openai      default" in isolated.stdout.splitlines()
