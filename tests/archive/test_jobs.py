"""`lint -j N`: the report is the same as `-j 1` (order, findings, summary) in every format, and stdin keeps
its place among files. Never timed (make bench measures the speed-up)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.archive.helpers import ROOT, run, write_archive

CORPUS = ["captures/rules", "captures/real-world", "captures/http"]


@pytest.mark.parametrize("fmt", ["text", "json", "jsonl", "sarif", "junit"])
def test_two_jobs_give_the_report_of_one(fmt: str) -> None:
    one = run("lint", *CORPUS, "-j", "1", "--format", fmt, "--clients")
    two = run("lint", *CORPUS, "-j", "2", "--format", fmt, "--clients")
    assert one.returncode == two.returncode == 1, (one.stderr, two.stderr)
    assert one.stdout == two.stdout
    assert len(one.stdout) > 10_000  # a real report, not two empty ones


def test_the_default_is_the_usable_cores_and_the_same_report() -> None:
    default = run("lint", "captures/rules", "--format", "json")
    one = run("lint", "captures/rules", "-j", "1", "--format", "json")
    assert default.stdout == one.stdout


def test_stdin_keeps_its_place_among_files(tmp_path: Path) -> None:
    a, b, c = write_archive(tmp_path, 3)
    stdin = (ROOT / "captures/rules/CNT001-content-index-missing.sse").read_bytes()
    out = run("lint", str(a), "-", str(b), str(c), "-j", "2", "--format", "jsonl", stdin=stdin)
    names = [json.loads(line).get("path") for line in out.stdout.splitlines()]
    assert names == [str(a), "<stdin>", str(b), str(c), None]


def test_an_unreadable_capture_is_one_line_and_the_others_are_linted(tmp_path: Path) -> None:
    paths = write_archive(tmp_path, 4)
    paths[1].with_name("bad.sse.gz").write_bytes(b"not gzip at all")
    out = run("lint", str(tmp_path), "-j", "2", "--format", "json")
    assert out.returncode == 2
    report = json.loads(out.stdout)
    assert report["summary"]["files"] == 4
    [error] = report["summary"]["io_errors"]
    assert error.startswith(str(tmp_path / "bad.sse.gz") + ":") and "\n" not in error
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr


@pytest.mark.parametrize("args, message", [
    (["-j", "0"], "must be at least 1"),
    (["-j", "two"], "not a whole number"),
    (["-j", "2", "--dask", "tcp://127.0.0.1:1"], "-j and --dask"),
])
def test_bad_job_options_are_one_line(args: list[str], message: str) -> None:
    out = run("lint", "captures/rules", *args)
    assert out.returncode == 2 and message in out.stderr and "Traceback" not in out.stderr


def test_jsonl_records_follow_the_schema_and_match_the_json_report() -> None:
    import jsonschema

    schema = json.loads((ROOT / "docs/report-schema.json").read_text())
    document = json.loads(run("lint", *CORPUS, "-j", "2", "--format", "json", "--clients").stdout)
    lines = run("lint", *CORPUS, "-j", "2", "--format", "jsonl", "--clients").stdout.splitlines()
    records = [json.loads(line) for line in lines]
    def against(name: str) -> dict:  # the schema's definitions and properties, rooted at one record's
        return {"$schema": schema["$schema"], "$defs": schema["$defs"], "properties": schema["properties"],
                "$ref": f"#/$defs/{name}"}

    for record in records[:-1]:
        jsonschema.validate(record, against("jsonl_file"))
    jsonschema.validate(records[-1], against("jsonl_summary"))
    assert [{k: v for k, v in r.items() if k != "record"} for r in records[:-1]] == document["files"]
    header = {k: v for k, v in document.items() if k != "files"}
    assert {k: v for k, v in records[-1].items() if k != "record"} == header
