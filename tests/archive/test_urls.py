"""Captures read from URLs and compressed files: a real S3-compatible server (moto's standalone server, a
subprocess on a loopback port, stopped by its pid), file:// and memory:// URLs, .sse.gz and .sse.zst. Each
gives the findings the same capture gives on disk, with its sidecars."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from checker.errors import UsageError
from tests.archive.helpers import ROOT, by_name, free_port, json_report

# Captures with sidecars that change the findings (a request's max_output_tokens, a probe's X.meta.json).
SOURCES = sorted(p for p in (ROOT / "captures/http").glob("*.sse"))[:6] + sorted(
    (ROOT / "captures/rules").glob("LIF017*.sse"))


def copy_with_sidecars(target: Path) -> None:
    target.mkdir(parents=True, exist_ok=True)
    for capture in SOURCES:
        stem = capture.name[: -len(".sse")]
        for path in capture.parent.glob(f"{stem}.*"):
            if path.name in (f"{stem}.sse", f"{stem}.request.json", f"{stem}.meta.json"):
                shutil.copy(path, target / path.name)


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("local")
    copy_with_sidecars(folder)
    return folder


@pytest.fixture(scope="module")
def expected(local: Path) -> dict[str, dict]:
    report = by_name(json_report("lint", str(local), "-j", "1"))
    assert any(entry["counts"]["error"] for entry in report.values())
    return report


def test_sidecars_matter_here(local: Path, expected: dict[str, dict]) -> None:
    # Without its sidecars some capture reads differently: the URL tests below would miss a lost sidecar.
    bare = local.parent / "bare"
    bare.mkdir()
    for capture in local.glob("*.sse"):
        shutil.copy(capture, bare / capture.name)
    assert by_name(json_report("lint", str(bare), "-j", "1")) != expected


def test_gzip_and_zstd_captures_lint_like_the_plain_ones(local: Path, expected: dict[str, dict],
                                                       tmp_path: Path) -> None:
    import zstandard

    for i, capture in enumerate(sorted(local.glob("*.sse"))):
        data = capture.read_bytes()
        if i % 2:
            (tmp_path / (capture.name + ".gz")).write_bytes(gzip.compress(data))
        else:
            (tmp_path / (capture.name + ".zst")).write_bytes(zstandard.ZstdCompressor().compress(data))
    for sidecar in local.glob("*.json"):
        shutil.copy(sidecar, tmp_path / sidecar.name)
    got = {name.removesuffix(".gz").removesuffix(".zst"): entry
           for name, entry in by_name(json_report("lint", str(tmp_path), "-j", "2")).items()}
    assert got == expected


def test_file_urls(local: Path, expected: dict[str, dict]) -> None:
    report = json_report("lint", local.as_uri(), "-j", "2")
    assert all(f["path"].startswith("file://") for f in report["files"])
    assert by_name(report) == expected


def test_memory_urls_through_the_api_and_the_cli(local: Path, expected: dict[str, dict],
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    import fsspec

    import checker
    from checker.cli import main

    fs = fsspec.filesystem("memory")
    for path in local.iterdir():
        fs.pipe(f"/archive/{path.name}", path.read_bytes())
    name = sorted(expected)[0]
    assert {k: v for k, v in checker.lint_path(f"memory://archive/{name}").items() if k != "path"} == expected[name]
    assert main(["lint", "memory://archive", "-j", "1", "--format", "json", "--isolated"]) == 1
    assert by_name(json.loads(capsys.readouterr().out)) == expected


# -- a real S3-compatible server -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def s3(local: Path) -> Iterator[dict[str, str]]:
    """moto's standalone server on a loopback port, a bucket holding the captures and their sidecars."""
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    env = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1",
           "FSSPEC_S3_ENDPOINT_URL": endpoint}
    try:
        import boto3

        client = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id="testing",
                              aws_secret_access_key="testing", region_name="us-east-1")
        deadline = time.monotonic() + 60
        while True:
            try:
                client.create_bucket(Bucket="traffic")
                break
            except Exception:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise
                time.sleep(0.2)
        for path in local.iterdir():
            client.put_object(Bucket="traffic", Key=f"2026-12-01/{path.name}", Body=path.read_bytes())
        capture = sorted(local.glob("*.sse"))[0]
        client.put_object(Bucket="traffic", Key="compressed/one.sse.gz", Body=gzip.compress(capture.read_bytes()))
        yield env
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def test_an_s3_folder_lints_like_the_local_copy(s3: dict[str, str], expected: dict[str, dict]) -> None:
    report = json_report("lint", "s3://traffic/2026-12-01", "-j", "2", env=s3)
    assert [f["path"] for f in report["files"]] == [f"s3://traffic/2026-12-01/{n}" for n in sorted(expected)]
    assert by_name(report) == expected


def test_an_s3_gzip_capture(s3: dict[str, str], local: Path) -> None:
    import checker

    capture = sorted(local.glob("*.sse"))[0]
    plain = checker.lint_bytes(capture.read_bytes(), name="s3://traffic/compressed/one.sse.gz")  # no sidecars
    [entry] = json_report("lint", "s3://traffic/compressed/one.sse.gz", env=s3)["files"]
    assert entry == plain


def test_missing_s3_objects_are_one_line(s3: dict[str, str]) -> None:
    from tests.archive.helpers import run

    out = run("lint", "s3://traffic/nothing-here.sse", env=s3)
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "nothing-here.sse" in out.stderr
    assert "Traceback" not in out.stderr


def test_without_fsspec_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from checker.captures import expand

    monkeypatch.setitem(sys.modules, "fsspec", None)
    with pytest.raises(UsageError, match=r"sse-check\[archive\]"):
        expand(["s3://bucket/dir"])


def test_without_zstandard_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from checker.captures import read_chunks

    (tmp_path / "x.sse.zst").write_bytes(b"\x28\xb5\x2f\xfd")
    monkeypatch.setitem(sys.modules, "zstandard", None)
    with pytest.raises(UsageError, match=r"sse-check\[archive\]"):
        list(read_chunks(tmp_path / "x.sse.zst"))


def test_http_urls_from_a_real_http_server(local: Path, expected: dict[str, dict]) -> None:
    """https:// and http:// go through fsspec's HTTP file system: a real server on loopback (the standard
    library's), each capture by its URL with its sidecars fetched beside it."""
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
                               "--directory", str(local)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                import urllib.request

                urllib.request.urlopen(base + "/", timeout=2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        urls = [f"{base}/{name}" for name in sorted(expected)]
        report = json_report("lint", *urls, "-j", "2")
        assert [f["path"] for f in report["files"]] == urls
        assert by_name(report) == expected
    finally:
        server.terminate()
        server.wait(timeout=10)
