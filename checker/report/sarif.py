"""SARIF 2.1.0: what GitHub code scanning and other CI dashboards read.

One run per report. The rules of ``tool.driver.rules`` come from the
registry (name, summary, why, clients, sources, default severity), only those
that fired. Each finding is one result located at its capture file and line;
the byte offset, event index and type, JSON pointer, clients and known
deviation travel in the result's ``properties``. ``partialFingerprints`` carries
the baseline fingerprint, so a dashboard can follow a finding across builds
even when it moves to another line. Validated against the OASIS schema in
``tests/report/test_sarif_format.py``.
"""

from __future__ import annotations

import json
from pathlib import PurePath
from typing import IO, Any
from urllib.parse import quote

from checker.version import __version__
from checker.baseline import fingerprint, scenario_key
from checker.clients import describe
from checker.engine import LintResult
from checker.findings import Finding, Severity
from checker.report import ReportOptions, Summary
from checker.report.spool import Spool
from checker.rules import FAMILIES, RULES, Rule

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
INFORMATION_URI = "https://pypi.org/project/sse-check/"
FINGERPRINT_KEY = "sseCheckFingerprint/v1"
LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def artifact_uri(name: str) -> str:
    """A URI reference for a capture: relative paths stay relative (CI resolves them against the checkout)."""
    path = PurePath(name)
    if path.is_absolute():
        return path.as_uri()
    return quote(path.as_posix())


def rule_descriptor(rule: Rule) -> dict[str, Any]:
    clients = "\n".join(f"- `{c}`: {describe(c)}" for c in rule.clients) or "- none known to fail outright"
    sources = "\n".join(f"- {s}" for s in rule.sources)
    markdown = (f"**{rule.summary}**\n\n{rule.why}\n\n**Clients it breaks**\n\n{clients}\n\n"
                f"**Sources**\n\n{sources}\n\nMore: `sse-check rules {rule.code}`")
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.why},
        "help": {"text": f"{rule.summary} {rule.why}", "markdown": markdown},
        "defaultConfiguration": {"level": LEVEL[rule.severity]},
        "properties": {
            "tags": ["sse-check", FAMILIES[rule.family][0]],
            "clients": list(rule.clients),
            "sources": list(rule.sources),
        },
    }


def _unknown_rule(code: str) -> dict[str, Any]:
    # A finding whose code is not registered (a plugin's): described by its code only.
    return {"id": code, "shortDescription": {"text": code}}


class SarifReporter:
    def __init__(self, stream: IO[str], options: ReportOptions) -> None:
        self.stream = stream
        self.options = options
        self.rule_index: dict[str, int] = {}
        self.rules: list[dict[str, Any]] = []
        # Results and artifacts are serialised as each capture finishes and spooled (spilling to disk), so
        # memory stays flat over an archive; the rules that fired are few and stay here.
        self.results = Spool(",\n")
        self.artifacts = Spool(",\n")

    def start(self) -> None:
        pass

    def _index(self, code: str) -> int:
        if code not in self.rule_index:
            self.rule_index[code] = len(self.rules)
            self.rules.append(rule_descriptor(RULES[code]) if code in RULES else _unknown_rule(code))
        return self.rule_index[code]

    def file(self, name: str, result: LintResult) -> None:
        uri = artifact_uri(name)
        artifact = self.artifacts.count
        self.artifacts.add(_item({"location": {"uri": uri}, "length": result.bytes}))
        scenario = scenario_key(name)
        for finding in result.findings:
            self.results.add(_item(self._result(finding, uri, artifact, scenario)))

    def _result(self, finding: Finding, uri: str, artifact: int, scenario: str) -> dict[str, Any]:
        pos = finding.position
        properties: dict[str, Any] = {
            "severity": str(finding.severity),
            "byteOffset": pos.byte,
            "eventIndex": pos.event_index,
            "eventType": pos.event_type,
            "occurrences": finding.occurrences,
            "clients": list(finding.clients),
        }
        if finding.pointer is not None:
            properties["pointer"] = finding.pointer
        if finding.known_deviation:
            properties["knownDeviation"] = finding.known_deviation
        text = finding.message
        if finding.occurrences > 1:
            text += f" (×{finding.occurrences})"
        if finding.known_deviation:
            text += f" — known deviation: {finding.known_deviation}"
        return {
            "ruleId": finding.code,
            "ruleIndex": self._index(finding.code),
            "level": LEVEL[finding.severity],
            "message": {"text": text},
            "locations": [{
                "physicalLocation": {
                    "artifactLocation": {"uri": uri, "index": artifact},
                    "region": {"startLine": max(1, pos.line)},
                },
            }],
            "partialFingerprints": {FINGERPRINT_KEY: fingerprint(finding, scenario)},
            "properties": properties,
        }

    def finish(self, summary: Summary) -> None:
        notifications = [
            {"level": "error", "message": {"text": message}, "descriptor": {"id": "io-error"}}
            for message in summary.io_errors
        ]
        invocation: dict[str, Any] = {"executionSuccessful": not summary.io_errors}
        if notifications:
            invocation["toolExecutionNotifications"] = notifications
        run = {
            "tool": {"driver": {
                "name": "sse-check",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": INFORMATION_URI,
                "rules": self.rules,
            }},
            "invocations": [invocation],
            "artifacts": "\0artifacts",
            "results": "\0results",
            # Lines and columns are counted the way the engine counts them.
            "columnKind": "unicodeCodePoints",
            "properties": {
                "command": self.options.command,
                "profile": self.options.profile,
                "failOn": str(self.options.fail_on),
                "baselined": summary.baselined,
            },
        }
        document = {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}
        text = json.dumps(document, indent=2, ensure_ascii=False)
        # The spooled arrays go where their placeholders are (a capture's text is escaped by json, so no
        # string of the document can contain the NUL of a placeholder).
        before, _, rest = text.partition('"\\u0000artifacts"')
        middle, _, after = rest.partition('"\\u0000results"')
        for chunk, spool in ((before, self.artifacts), (middle, self.results)):
            self.stream.write(chunk + "[\n")
            spool.copy_to(self.stream)
            self.stream.write("\n      ]")
        self.stream.write(after + "\n")


def _item(value: dict[str, Any]) -> str:
    """One element of a top-level array of the run, indented as json.dump(indent=2) would place it."""
    return "        " + json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n        ")
