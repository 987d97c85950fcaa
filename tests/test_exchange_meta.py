"""The probe/proxy meta record (checker.exchange_meta.ExchangeMeta) and the one recorder of exchange timings.

The meta is the contract between the writers (probe, proxy) and the readers (lint, checker.http_checks):
every saved sidecar in the corpus reads back into the record and writes out as the same JSON, an old or
partial sidecar still reads (with defaults), and the timer keeps the timings the way both writers need.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from checker.exchange_meta import ENDINGS, Ending, ExchangeMeta, header_of, is_exchange_meta
from checker.live.probe import ProbeLimits, build_meta
from checker.live.saving import meta_json
from checker.live.scenarios import BUILTIN
from checker.live.timing import ExchangeTimer

ROOT = Path(__file__).resolve().parents[1]
SIDECARS = sorted((ROOT / "captures").rglob("*.meta.json"))


def test_the_corpus_has_sidecars() -> None:
    assert len(SIDECARS) >= 20


@pytest.mark.parametrize("path", SIDECARS, ids=lambda p: str(p.relative_to(ROOT / "captures")))
def test_every_saved_sidecar_reads_back_and_writes_out_the_same(path: Path) -> None:
    document = json.loads(path.read_text(encoding="utf-8"))
    if not is_exchange_meta(document):
        pytest.skip("not an exchange record")
    meta = ExchangeMeta.from_json(document)
    assert meta is not None
    written = meta.to_json()
    # Every key the record knows comes back with the value saved; keys it does not know are the writer's own
    # (a capture's "about") and are ignored, as checker.http_checks ignores them.
    for key, value in written.items():
        if key in document:
            assert value == document[key], key


def test_the_record_writes_what_build_meta_always_wrote() -> None:
    meta = build_meta(scenario=BUILTIN[0], url="http://127.0.0.1:8080/v1/responses", request={"input": "hi"},
                      status=200, size=10, events=2, timings={"total": 0.1234567}, limits=ProbeLimits(),
                      headers=[["Content-Type", "text/event-stream"], ["X-SSE-Check-Scenario", "plain_text"]])
    assert list(meta) == ["meta_version", "sse_check", "scenario", "summary", "expect", "started_at", "url",
                          "request", "request_headers", "status", "reason", "http_version", "headers",
                          "redirects", "replayed_as", "ending", "partial", "bytes", "events", "timings", "limits",
                          "reference", "connection"]
    assert meta["ending"] == {"kind": "complete", "detail": "", "bytes": 10} and meta["partial"] is False
    assert meta["replayed_as"] == "plain_text" and meta["timings"] == {"total": 0.123457}
    assert ExchangeMeta.from_json(json.loads(meta_json(meta))).to_json() == meta  # type: ignore[union-attr]


def test_an_old_or_partial_sidecar_still_reads() -> None:
    meta = ExchangeMeta.from_json({"meta_version": 1, "ending": {"kind": "idle-timeout"}, "status": "200",
                                   "headers": [["content-type", "text/event-stream"], "junk"], "bytes": 7,
                                   "timings": [], "unknown": True})
    assert meta is not None
    assert meta.status is None and meta.partial and meta.bytes == 7 and meta.timings == {}
    assert meta.header("Content-Type") == "text/event-stream" and meta.expect == "stream"
    assert ExchangeMeta.from_json({"meta_version": 2, "ending": {}}) is None
    assert ExchangeMeta.from_json({"meta_version": 1}) is None
    assert ExchangeMeta.from_json(["not", "a", "record"]) is None


def test_every_ending_says_whether_the_body_is_whole() -> None:
    assert {kind for kind, whole in ENDINGS.items() if whole} == {"complete", "kept-open"}
    assert not Ending("no-such-ending").complete
    assert header_of({"Retry-After": "3"}, "retry-after") == "3" and header_of("junk", "x") is None


def test_the_timer_keeps_the_timings_probe_and_proxy_record() -> None:
    timer = ExchangeTimer(100.0)
    timer.headers(100.1)
    timer.first_byte(100.2)
    timer.body(b'event: response.created\ndata: {}\n\n', 100.2, offset=0, events=1, terminated=False)
    timer.first_byte(100.9)  # only the first one counts
    timer.body(b'data: {"type":"response.output_text.del', 100.5, offset=40, events=1, terminated=False)
    timer.body(b'ta"}\n\n', 100.6, offset=80, events=2, terminated=False)  # ".delta" split across chunks
    timer.body(b"data: {}\n\n", 101.6, offset=90, events=3, terminated=True)
    timer.body_ended(101.7)
    timings = timer.finish(102.0)
    assert timings == pytest.approx({"headers": 0.1, "first_byte": 0.2, "first_event": 0.2, "first_delta": 0.6,
                                     "largest_gap": 1.0, "largest_gap_at_byte": 90, "terminal": 1.6,
                                     "closed_after_terminal": 0.1, "total": 2.0})
    assert list(timings) == ["headers", "first_byte", "first_event", "first_delta", "largest_gap",
                             "largest_gap_at_byte", "terminal", "closed_after_terminal", "total"]


@pytest.mark.parametrize("expect", ["error", "stream", None])
def test_lint_reads_a_hand_edited_sidecar_through_the_record(tmp_path: Path, expect: str | None,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """A status that is not a number reads as absent (it once reached the text report as a string and
    failed there with an internal error)."""
    from checker.cli import main

    source = ROOT / "captures" / "http" / "HTP001-status-not-ok"
    (tmp_path / "x.sse").write_bytes(source.with_suffix(".sse").read_bytes())
    meta = json.loads(source.with_suffix(".meta.json").read_text(encoding="utf-8"))
    meta["status"] = "500"
    if expect is None:
        meta.pop("expect", None)
    else:
        meta["expect"] = expect
    (tmp_path / "x.meta.json").write_text(json.dumps(meta), encoding="utf-8")
    code = main(["lint", str(tmp_path / "x.sse"), "--color", "never"])
    out, err = capsys.readouterr()
    assert code in (0, 1) and "internal error" not in err, err
    assert "no response" in out
