"""The CI gate against a live (replay) server: probe's baseline also covers lint of the saved streams,
and probe's CI formats are valid (JUnit parses, SARIF validates against the OASIS schema)."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = "plain_text,reasoning_one_call"


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "checker", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=180, env={"NO_COLOR": "1", "PATH": "/usr/bin:/bin"})


def test_probe_baseline_covers_lint_of_the_saved_streams(llama_server: Any, tmp_path: Path) -> None:
    probe = ["probe", llama_server.url, "--model", "m", "--scenario", SCENARIOS]
    assert cli(*probe, cwd=tmp_path).returncode == 1  # the real server fails the openai profile
    written = cli(*probe, "--save", "streams", "--write-baseline", "base.json", cwd=tmp_path)
    assert written.returncode == 0, written.stderr
    scenarios = {e["scenario"] for e in json.loads((tmp_path / "base.json").read_text())["findings"]}
    assert scenarios == {"plain_text", "reasoning_one_call"}

    gated = cli(*probe, "--baseline", "base.json", "--format", "json", cwd=tmp_path)
    assert gated.returncode == 0, gated.stdout
    assert json.loads(gated.stdout)["summary"]["baselined"] > 0
    linted = cli("lint", "streams", "--baseline", "base.json", "--format", "json", cwd=tmp_path)
    assert linted.returncode == 0, linted.stdout
    report = json.loads(linted.stdout)
    assert report["summary"]["baselined"] > 0 and report["summary"]["failed_files"] == 0


def test_probe_junit_and_sarif(llama_server: Any, tmp_path: Path) -> None:
    probe = ["probe", llama_server.url, "--model", "m", "--scenario", SCENARIOS]
    junit = cli(*probe, "--format", "junit", cwd=tmp_path)
    assert junit.returncode == 1
    root = ET.fromstring(junit.stdout)
    names = [c.get("name") for c in root.iter("testcase")]
    assert names == ["plain_text", "reasoning_one_call"]
    assert all(c.get("classname") == "sse-check.probe" for c in root.iter("testcase"))

    sarif = cli(*probe, "--profile", "llama.cpp", "--format", "sarif", cwd=tmp_path)
    assert sarif.returncode == 0
    document = json.loads(sarif.stdout)
    schema = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text())
    jsonschema.Draft4Validator(schema).validate(document)
    assert {r["level"] for r in document["runs"][0]["results"]} == {"note"}  # known deviations only
