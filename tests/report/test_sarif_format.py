"""``--format sarif`` validated against the OASIS SARIF 2.1.0 schema (tests/data, see its README),
and read back the way code-scanning tools use it: rules from the registry, results at file + line."""

from __future__ import annotations

import json
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from checker.rules import RULES

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "tests" / "data" / "sarif-schema-2.1.0.json"
BROKEN = "captures/rules/LIF006-missing-terminal-event.sse"


@cache
def validator() -> jsonschema.Draft4Validator:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator.check_schema(schema)
    # jsonschema checks "uri"/"uri-reference" formats only with rfc3987 installed (it is not a test
    # dependency); test_artifact_uris_are_uri_references checks our URIs directly.
    return jsonschema.Draft4Validator(schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)


def assert_valid(document: Any) -> None:
    errors = sorted(validator().iter_errors(document), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors[:10])


def sarif(*args: str) -> tuple[int, dict[str, Any]]:
    proc = subprocess.run([sys.executable, "-m", "checker", "lint", *args, "--format", "sarif"],
                          capture_output=True, text=True, cwd=ROOT, timeout=300,
                          env={"NO_COLOR": "1", "PATH": "/usr/bin:/bin"})
    assert proc.stderr == "" or proc.returncode != 2, proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def test_the_schema_is_the_official_one() -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    assert schema["id"] == "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
    assert schema["properties"]["version"]["enum"] == ["2.1.0"]


def test_the_schema_rejects_a_broken_log() -> None:
    """The validator bites: a result without a message and an unknown level are errors."""
    bad = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}},
                                          "results": [{"ruleId": "X", "level": "fatal"}]}]}
    assert list(validator().iter_errors(bad))


def test_every_rule_example_gives_a_valid_log() -> None:
    """All the broken examples at once: every rule family, odd bytes in messages, many locations."""
    code, document = sarif("captures/rules", "captures/conforming", "captures/llama.cpp", "--fail-on", "info")
    assert code == 1
    assert_valid(document)
    run = document["runs"][0]
    assert document["version"] == "2.1.0"
    assert run["tool"]["driver"]["name"] == "sse-check"
    assert len(run["results"]) > 100


def test_rules_and_results_read_back() -> None:
    code, document = sarif(BROKEN, "captures/llama.cpp/plain_text.sse", "--profile", "llama.cpp")
    assert code == 1
    assert_valid(document)
    run = document["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    ids = [r["id"] for r in rules]
    assert len(ids) == len(set(ids))
    for result in run["results"]:
        rule = rules[result["ruleIndex"]]
        assert rule["id"] == result["ruleId"]
        registered = RULES[result["ruleId"]]
        assert rule["name"] == registered.name
        assert rule["shortDescription"]["text"] == registered.summary
        assert rule["fullDescription"]["text"] == registered.why
        location = result["locations"][0]["physicalLocation"]
        assert location["region"]["startLine"] >= 1
        assert run["artifacts"][location["artifactLocation"]["index"]]["location"]["uri"] == \
            location["artifactLocation"]["uri"]
        assert result["partialFingerprints"]["sseCheckFingerprint/v1"]
    lif006 = next(r for r in run["results"] if r["ruleId"] == "LIF006")
    assert lif006["level"] == "error"
    assert lif006["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == BROKEN
    assert lif006["locations"][0]["physicalLocation"]["region"]["startLine"] == 76
    assert lif006["properties"]["clients"][0] == "openai-python"
    deviations = [r for r in run["results"] if "knownDeviation" in r["properties"]]
    assert deviations and all(r["level"] == "note" for r in deviations)
    assert run["properties"] == {"command": "lint", "profile": "llama.cpp", "failOn": "warning", "baselined": 0}


@pytest.mark.parametrize("name", ["dir with space/x.sse", "/abs/path/x.sse", "<stdin>"])
def test_artifact_uris_are_uri_references(name: str) -> None:
    import io

    from checker.engine import lint_bytes
    from checker.findings import Severity
    from checker.report import ReportOptions, Summary
    from checker.report.sarif import SarifReporter

    stream = io.StringIO()
    reporter = SarifReporter(stream, ReportOptions(command="lint", profile="openai", fail_on=Severity.WARNING))
    reporter.start()
    reporter.file(name, lint_bytes((ROOT / BROKEN).read_bytes()))
    reporter.finish(Summary(files=1, io_errors=["gone.sse: No such file or directory"]))
    document = json.loads(stream.getvalue())
    assert_valid(document)
    uri = document["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert " " not in uri and "<" not in uri
    invocation = document["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    assert invocation["toolExecutionNotifications"][0]["message"]["text"].startswith("gone.sse")
