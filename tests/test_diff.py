"""``sse-check diff``: reordered, renamed and dropped events, vanished fields, findings, output shape.

Every case starts from a real capture (llama-server's ``reasoning_one_call``, or a conforming stream)
and changes one thing, the way a new server build would.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from checker.diff import Change, compare, shape_of

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT / "captures" / "llama.cpp" / "reasoning_one_call.sse"
CONFORMING = ROOT / "captures" / "conforming" / "reasoning-function-call.sse"


def blocks(data: bytes) -> list[bytes]:
    """The capture's event blocks (LF-framed captures), without the blank lines."""
    return [b for b in data.split(b"\n\n") if b.strip()]


def join(parts: list[bytes]) -> bytes:
    return b"".join(p + b"\n\n" for p in parts)


def event_type(block: bytes) -> str:
    return block.split(b"\n", 1)[0].removeprefix(b"event: ").decode()


def texts(changes: list[Change], aspect: str | None = None) -> list[str]:
    return [c.text for c in changes if aspect is None or c.aspect == aspect]


def test_the_same_stream_has_no_changes() -> None:
    data = REAL.read_bytes()
    assert compare(shape_of(data), shape_of(data)) == []


def test_a_different_text_and_delta_count_is_not_a_change() -> None:
    old = REAL.read_bytes()
    parts = blocks(old)
    deltas = [i for i, b in enumerate(parts) if event_type(b) == "response.reasoning_text.delta"]
    del parts[deltas[1]]  # one delta fewer
    new = join(parts).replace(b'"delta":" weather"', b'"delta":" climate"')
    new = re.sub(rb"rs_[A-Za-z0-9]+", b"rs_OTHERIDOTHERIDOTHERIDOTHERID12", new)
    assert compare(shape_of(old), shape_of(new)) == []


def test_reordered_event_is_named_with_what_it_now_follows() -> None:
    """The real capture delays the reasoning item's done; a build that sends it on time differs by one move."""
    old = REAL.read_bytes()
    parts = blocks(old)
    dones = [i for i, b in enumerate(parts) if event_type(b) == "response.output_item.done"]
    reasoning_done = next(i for i in dones if b'"type":"reasoning"' in parts[i])
    block = parts.pop(reasoning_done)
    second_added = [i for i, b in enumerate(parts) if event_type(b) == "response.output_item.added"][1]
    parts.insert(second_added, block)  # now before the function call is added
    changes = compare(shape_of(join(parts)), shape_of(old))
    assert texts(changes, "grammar") == [
        "the reasoning item's `output_item.done` now arrives after the function call's `output_item.added`"]
    assert changes[0].kind == "moved"
    assert changes[0].details == {"lane": "reasoning", "event": "output_item.done",
                                  "after_lane": "function call", "after_event": "output_item.added"}


def test_renamed_event_type() -> None:
    old = REAL.read_bytes()
    new = old.replace(b"response.reasoning_text.delta", b"response.reasoning.delta")
    changes = compare(shape_of(old), shape_of(new))
    assert texts(changes, "grammar") == ["`reasoning_text.delta` is now `reasoning.delta` (in the reasoning item)"]
    assert changes[0].details["old"] == "reasoning_text.delta" and changes[0].details["new"] == "reasoning.delta"


def test_dropped_event() -> None:
    old = REAL.read_bytes()
    parts = [b for b in blocks(old) if event_type(b) != "response.in_progress"]
    changes = compare(shape_of(old), shape_of(join(parts)))
    assert texts(changes, "grammar") == ["`in_progress` disappeared from the response's lifecycle"]
    assert changes[0].kind == "dropped"


def test_sequence_number_disappeared() -> None:
    old = CONFORMING.read_bytes()
    new = re.sub(rb'"sequence_number":\s*\d+,?', b"", old)
    changes = compare(shape_of(old), shape_of(new))
    assert texts(changes) == [f"`sequence_number` disappeared from every event ({len(shape_of(old).fields)} event types)"]
    assert changes[0].aspect == "fields" and changes[0].details["field"] == "sequence_number"


def test_conforming_build_versus_the_real_llama_server() -> None:
    """Everything the real server does differently, in words."""
    changes = compare(shape_of(CONFORMING.read_bytes()), shape_of(REAL.read_bytes()))
    grammar = texts(changes, "grammar")
    assert "`reasoning_text.done` disappeared from the reasoning item" in grammar
    assert "`function_call_arguments.done` disappeared from the function call" in grammar
    assert "the reasoning item's `output_item.done` now arrives after the function call's `output_item.added`" in grammar
    fields = texts(changes, "fields")
    assert any(t.startswith("`sequence_number` disappeared from every event") for t in fields)
    assert any(t.startswith("`output_index` disappeared from every event") for t in fields)


def test_final_output_shape_and_terminal() -> None:
    old = REAL.read_bytes()
    parts = blocks(old)
    completed = parts[-1]
    body = json.loads(completed.split(b"data: ", 1)[1])
    body["response"]["output"].reverse()
    body["type"] = "response.incomplete"
    body["response"]["status"] = "incomplete"
    body["response"]["incomplete_details"] = {"reason": "max_output_tokens"}
    parts[-1] = b"event: response.incomplete\ndata: " + json.dumps(body).encode()
    changes = compare(shape_of(old), shape_of(join(parts)))
    assert texts(changes, "output") == [
        "the stream now ends with `response.incomplete` (was `response.completed`)",
        "the final output is now [function_call, reasoning] (was [reasoning, function_call])",
    ]


# --- the command ---------------------------------------------------------------------------------------------


def cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "checker", "diff", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=120, env={"NO_COLOR": "1", "PATH": "/usr/bin:/bin"})


def test_cli_exit_codes_and_words(tmp_path: Path) -> None:
    same = cli(str(REAL), str(REAL))
    assert same.returncode == 0, same.stdout + same.stderr
    assert "same" in same.stdout and "0 changed" in same.stdout

    renamed = tmp_path / "new.sse"
    renamed.write_bytes(REAL.read_bytes().replace(b"response.reasoning_text.delta", b"response.reasoning.delta"))
    proc = cli(str(REAL), str(renamed))
    assert proc.returncode == 1
    assert "event grammar" in proc.stdout
    assert "`reasoning_text.delta` is now `reasoning.delta`" in proc.stdout
    # the renamed type is also a new finding (an alias of the canonical event)
    assert "findings" in proc.stdout and "SCH006" in proc.stdout


def test_cli_json_and_directories_paired_by_scenario(tmp_path: Path) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir(), new.mkdir()
    data = REAL.read_bytes()
    (old / "one_call.sse").write_bytes(data)
    (new / "one_call.sse").write_bytes(join([b for b in blocks(data) if event_type(b) != "response.in_progress"]))
    (old / "plain.sse").write_bytes((ROOT / "captures" / "llama.cpp" / "plain_text.sse").read_bytes())
    (new / "plain.sse").write_bytes((ROOT / "captures" / "llama.cpp" / "plain_text.sse").read_bytes())
    (old / "gone.sse").write_bytes(data)
    proc = cli(str(old), str(new), "--format", "json")
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    by_name = {s["scenario"]: s for s in report["scenarios"]}
    assert set(by_name) == {"one_call", "plain", "gone"}
    assert not by_name["plain"]["changed"]
    assert by_name["gone"]["changes"][0]["kind"] == "missing"
    kinds = {(c["aspect"], c["kind"]) for c in by_name["one_call"]["changes"]}
    assert ("grammar", "dropped") in kinds
    assert report["summary"] == {"scenarios": 3, "changed": 2}


@pytest.mark.parametrize("args", [["nope.sse", "nope2.sse"], ["captures/conforming", "captures/conforming/text.sse"]])
def test_cli_usage_errors_exit_2(args: list[str]) -> None:
    proc = cli(*args)
    assert proc.returncode == 2
    assert proc.stderr.startswith("sse-check: ") and "Traceback" not in proc.stderr


def test_many_reorderings_are_capped() -> None:
    from checker.diff import MAX_MOVES_SHOWN, StreamShape

    marks = [(f"message #{i}", "output_item.done") for i in range(40)]
    old = StreamShape(lanes={m[0]: [m[1]] for m in marks}, landmarks=marks)
    new = StreamShape(lanes=old.lanes, landmarks=list(reversed(marks)))
    moves = [c for c in compare(old, new) if c.kind == "moved"]
    assert len(moves) == MAX_MOVES_SHOWN + 1
    assert moves[-1].text.startswith("… and ") and moves[-1].details["more"] > 0


def test_diff_compares_the_http_findings_recorded_in_the_meta(tmp_path: Path) -> None:
    """Two saved probes whose bodies are the same but whose recorded exchanges differ (the later build sends
    text/plain): the change is an HTTP finding, shown as such, and the exit code says something changed."""
    probe = ROOT / "captures" / "llama.cpp-probe"
    for side in ("old", "new"):
        (tmp_path / side).mkdir()
        for suffix in (".sse", ".meta.json", ".expect.json"):
            (tmp_path / side / f"plain_text{suffix}").write_bytes((probe / f"plain_text{suffix}").read_bytes())
    meta_path = tmp_path / "new" / "plain_text.meta.json"
    meta = json.loads(meta_path.read_text())
    meta["headers"] = [[k, "text/plain" if k.lower() == "content-type" else v] for k, v in meta["headers"]]
    meta_path.write_text(json.dumps(meta))
    same = subprocess.run([sys.executable, "-m", "checker", "diff", str(tmp_path / "old"), str(tmp_path / "old"),
                           "--profile", "llama.cpp"], capture_output=True, text=True, cwd=ROOT)
    assert same.returncode == 0, same.stdout + same.stderr
    proc = subprocess.run([sys.executable, "-m", "checker", "diff", str(tmp_path / "old"), str(tmp_path / "new"),
                           "--profile", "llama.cpp", "--format", "json"], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 1, proc.stderr
    (scenario,) = json.loads(proc.stdout)["scenarios"]
    assert [(c["aspect"], c["kind"], c["details"]["code"]) for c in scenario["changes"]] == [("http", "new", "HTP002")]
    text = subprocess.run([sys.executable, "-m", "checker", "diff", str(tmp_path / "old"), str(tmp_path / "new"),
                           "--profile", "llama.cpp"], capture_output=True, text=True, cwd=ROOT,
                          env={"NO_COLOR": "1", "PATH": "/usr/bin:/bin"})
    assert "  HTTP exchange (the probe's X.meta.json)\n    - new finding HTP002 (warning)" in text.stdout, text.stdout
