"""HTP024 from a real ``sse-check serve`` on loopback: the probe's malformed request (input given as an object)
failed with a 5xx is flagged, refused with serve's 400 it is not; the lint of the saved exchange agrees."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.live.conftest import LLAMA_CAPTURES, ServerProcess, sse_check_json


def probe(url: str, saved: Path, *args: str) -> dict:
    return sse_check_json("probe", url, "--model", "gpt-4.1", "--api", "responses", "--scenario", "malformed_input",
                          "--no-progress", "--save", str(saved), *args)[1]


def linted(saved: Path) -> dict[str, list[str]]:
    return {Path(f["path"]).name: sorted(c["code"] for c in f["findings"])
            for f in sse_check_json("lint", str(saved))[1]["files"]}


@pytest.mark.parametrize("status", ["500", "503"])
def test_a_malformed_request_failed_by_the_server(serve: Callable[..., ServerProcess], tmp_path: Path,
                                                  status: str) -> None:
    server = serve(str(LLAMA_CAPTURES), "--status", status)
    saved = tmp_path / "saved"
    # one answer (--retries 0): the SDKs would send this request twice more, as the finding says
    [entry] = probe(server.url, saved, "--retries", "0")["files"]
    assert [f["code"] for f in entry["findings"]] == ["HTP024"], entry["findings"]
    assert entry["http"]["status"] == int(status)
    assert linted(saved) == {"malformed_input.sse": ["HTP024"]}


def test_a_malformed_request_refused_is_not_flagged(serve: Callable[..., ServerProcess], tmp_path: Path) -> None:
    server = serve(str(LLAMA_CAPTURES))
    saved = tmp_path / "saved"
    [entry] = probe(server.url, saved)["files"]
    assert 400 <= entry["http"]["status"] < 500 and entry["findings"] == [], entry
    assert linted(saved) == {"malformed_input.sse": []}
